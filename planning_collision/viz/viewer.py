"""`show`: a scene, a robot, a path and a roadmap in the browser, through a viser server.

::

    from planning_collision import viz

    viewer = viz.show(scene, robot, path=path, roadmap=(vertices, edges))
    print(viewer.url)           # http://127.0.0.1:<port>: open it in a browser
    viewer.set_configuration(q)  # what dragging the joint sliders does
    viewer.stop()

The page shows the obstacles (green), the robot's collision model (orange; a link in
collision red) with one slider per joint, a panel with each link's clearance (its signed
distance to the nearest obstacle), a path as the end effector's curve (magenta) with
translucent robot poses and a playback slider, and a roadmap or tree in end-effector space
(violet: each vertex at its end-effector position, each edge a straight segment between
its ends' positions, not the curve the end effector traces along it).

Every slider update runs forward kinematics, the per-link scene queries and the pose updates in the
callback (`python -m planning_collision.demos.view --fps` times it). Viser runs callbacks on a
thread pool and a `Scene` holds one scratch workspace, so updates are serialised by a lock.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import numpy.typing as npt

from . import _colors
from ._engine import LinkStatus, link_status
from .kinematics import (
    as_configurations,
    as_roadmap,
    densify,
    end_effector_link,
    end_effector_positions,
)
from .meshes import link_meshes, obstacle_drawable

__all__ = ["Viewer", "show"]

FOV = np.deg2rad(45.0)  # vertical field of view of the initial camera
# direction from the scene's centre to the initial camera: in front of the robot (-x),
# to its right (-y) and above, so a shelf in front of the robot is seen into and the arm
# from the side
VIEW_DIRECTION = np.array([-0.75, -1.0, 0.6])
PLAY_RATE = 30.0  # playback updates per second
PLAY_SPEED = 1.0  # waypoints per second


def _import_viser():
    try:
        import viser
    except ImportError as e:
        raise ImportError(
            "planning_collision.viz.show needs viser: pip install 'planning-collision[viz]'"
        ) from e
    return viser


def _safe(name: str) -> str:
    """A viser node name (viser splits names on '/')."""
    return name.replace("/", "_")


class Viewer:
    """A running viser server showing a scene and a robot; made by `show`.

    url : str, the page (``http://127.0.0.1:<port>``).
    server : the ``viser.ViserServer``.
    q : (dof,) float64, the configuration shown.
    status : {link: LinkStatus} at `q` (empty without a scene).
    joint_sliders : one viser slider per active joint, in `robot.joint_names` order.
    path_slider : the playback slider (None without a path); its value is a position along
        the path in waypoints (2.5 = half-way between waypoints 2 and 3).
    camera : ``(position (3,), look_at (3,))`` of the initial camera, m.
    """

    def __init__(self, server, scene, robot, ee_link, path, camera):
        self.server = server
        self.scene = scene
        self.robot = robot
        self.ee_link = ee_link
        self.path = path
        self.q: npt.NDArray[np.float64] | None = None
        self.status: dict[str, LinkStatus] = {}
        # the CollisionChecker behind `status`, built on the first update (it follows scene
        # edits itself)
        self.checker = None
        self.joint_sliders: list = []
        self.path_slider = None
        self._lock = threading.RLock()
        self._syncing = False  # set while set_configuration moves the joint sliders
        self._link_handles: dict[str, tuple[int, object]] = {}
        self._link_colour: dict[str, tuple] = {}
        self._drawn_key = None  # the robot geometry the link nodes show (`_sync_links`)
        self._attached_drawn: set = set()
        self._panel = None
        self._stop = threading.Event()
        self._player: threading.Thread | None = None
        self.camera = camera

    @property
    def url(self) -> str:
        return f"http://{self.server.get_host()}:{self.server.get_port()}"

    # ---------------------------------------------------------------- updates
    def set_configuration(self, q) -> None:
        """Show the robot at q (dof,) rad: link poses, collision colours, the clearance
        panel and the joint sliders."""
        if self.robot is None:
            raise ValueError("this viewer has no robot")
        q = self.robot.validate_q(q)
        with self._lock:
            self._sync_links()
            self.q = q
            T = self.robot.fk_array(q)
            has_obstacles = self.scene is not None and len(self.scene) > 0
            if has_obstacles and self.checker is None:
                from ..checker import CollisionChecker

                # one body per link: each link gets its own colour and clearance
                self.checker = CollisionChecker(self.robot, self.scene, rigid_bodies=False)
            self.status = (
                link_status(self.scene, self.robot, q, self.checker) if has_obstacles else {}
            )
            idx = [i for i, _ in self._link_handles.values()]
            wxyz = _wxyz(T[idx, :3, :3])
            with self.server.atomic():
                for k, (link, (i, h)) in enumerate(self._link_handles.items()):
                    h.position = T[i, :3, 3]
                    h.wxyz = wxyz[k]
                    st = self.status.get(link)
                    colour = _colors.COLLISION if st is not None and st.colliding else _colors.ROBOT
                    if self._link_colour.get(link) != colour:
                        h.color = colour
                        self._link_colour[link] = colour
                if self._panel is not None:
                    self._panel.content = self._clearance_markdown()
                self._syncing = True
                try:
                    for s, v in zip(self.joint_sliders, q, strict=True):
                        s.value = float(v)
                finally:
                    self._syncing = False

    def _sync_links(self) -> None:
        """Draw the robot's links as they are now: after `Robot.attach` or `detach`, the
        object's link appears or goes (the others keep their nodes)."""
        robot = self.robot
        if robot.geometry_key == self._drawn_key:
            return
        attached = set(robot.attached)
        meshes = link_meshes(robot)
        for link in [k for k in self._link_handles if k in self._attached_drawn or k not in meshes]:
            self._link_handles.pop(link)[1].remove()
            self._link_colour.pop(link, None)
        for link, (v, f) in meshes.items():
            if link not in self._link_handles:
                h = self.server.scene.add_mesh_simple(
                    f"/robot/{_safe(link)}", v, f, color=_colors.ROBOT, flat_shading=True
                )
                self._link_handles[link] = (robot.link_index[link], h)
                self._link_colour[link] = _colors.ROBOT
        self._attached_drawn = attached
        self._drawn_key = robot.geometry_key

    def set_path_position(self, t: float) -> None:
        """Show the robot at position t along the path (in waypoints, 0 .. n-1; linear in
        joint space between waypoints)."""
        if self.path is None:
            raise ValueError("this viewer has no path")
        n = len(self.path)
        t = float(np.clip(t, 0.0, n - 1))
        i = min(int(t), n - 2) if n > 1 else 0
        u = t - i
        q = self.path[i] if n == 1 else (1 - u) * self.path[i] + u * self.path[i + 1]
        self.set_configuration(q)

    def _on_joint_slider(self, _event) -> None:
        if not self._syncing:
            self.set_configuration([s.value for s in self.joint_sliders])

    def _clearance_markdown(self) -> str:
        if not self.status:
            return "No obstacles: nothing to collide with."
        hits = [k for k, s in self.status.items() if s.colliding]
        nearest = min(self.status, key=lambda k: self.status[k].clearance)
        if hits:
            head = f"**{len(hits)} link{'s' * (len(hits) > 1)} in collision**"
        else:
            head = f"Clear: nearest {1000 * self.status[nearest].clearance:.1f} mm ({nearest})"
        rows = ["| link | clearance | nearest |", "|---|---:|---|"]
        for link, s in self.status.items():
            name = "" if s.nearest is None else (self.scene.get(s.nearest).name or s.nearest)
            d = f"{1000 * s.clearance:.1f} mm"
            rows.append(f"| {link} | {'**hit** ' + d if s.colliding else d} | {name} |")
        return head + "\n\n" + "\n".join(rows)

    # ---------------------------------------------------------------- playback
    def _play_loop(self, play, speed) -> None:
        dt = 1.0 / PLAY_RATE
        while not self._stop.wait(dt):
            if play.value and self.path_slider is not None:
                n = len(self.path)
                t = self.path_slider.value + speed.value * dt
                self.path_slider.value = round(t if t <= n - 1 else 0.0, 3)

    # ---------------------------------------------------------------- life
    def wait_for_client(self, timeout: float = 10.0) -> bool:
        """True once a browser is connected (False after `timeout` seconds)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.server.get_clients():
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Stop playback and the server (again: nothing)."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._player is not None:
            self._player.join(timeout=2.0)
        self.server.stop()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Viewer({self.url})"


def _wxyz(R: np.ndarray) -> np.ndarray:
    """Quaternions (k, 4), scalar first (viser's order), of rotation matrices R (k, 3, 3)."""
    from viser import transforms

    return np.asarray(transforms.SO3.from_matrix(R).wxyz).reshape(-1, 4)


def _bounds(scene, robot, q) -> tuple[np.ndarray, np.ndarray] | None:
    """World box of what is drawn (bounded obstacles, the robot at q), for the camera."""
    pts = []
    for ob in scene if scene is not None else ():
        d = obstacle_drawable(ob.shape, ob.T)
        for a in (d.vertices, d.points):
            if a is not None and np.all(np.isfinite(a)):
                pts.append(a)
    if robot is not None and q is not None:
        pts += [v for v, _ in link_meshes(robot, robot.piece_poses(q)).values()]
    if not pts:
        return None
    p = np.concatenate(pts)
    return p.min(axis=0), p.max(axis=0)


def default_camera(scene=None, robot=None, q=None) -> tuple[np.ndarray, np.ndarray]:
    """(position, look_at) of the initial camera: looking at the centre of the scene and
    the robot from `VIEW_DIRECTION`, far enough that their bounding sphere fits the view."""
    b = _bounds(scene, robot, q)
    lo, hi = b if b is not None else (-np.ones(3), np.ones(3))
    centre = 0.5 * (lo + hi)
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.1)
    d = VIEW_DIRECTION / np.linalg.norm(VIEW_DIRECTION)
    return centre + d * radius / np.sin(FOV / 2), centre


def show(
    scene=None,
    robot=None,
    path=None,
    roadmap=None,
    port: int | None = None,
    *,
    q=None,
    ee_link: str | None = None,
    camera=None,
    host: str = "127.0.0.1",
) -> Viewer:
    """Serve a 3-D view of a scene and a robot in the browser (module doc); returns at once.

    scene : a `Scene`, or None.
    robot : a `Robot`, or None (needed for q, path and roadmap).
    path : (n, dof) float64, rad, or None: the end effector's curve, translucent poses at
        the waypoints (up to 8) and a playback slider.
    roadmap : ``(vertices (n, dof), edges (m, 2) int)`` or None, drawn in end-effector space.
    port : int or None (None: a free port). host : the address served (local by default).
    q : (dof,) float64, rad, the configuration shown first (default: the path's start, else
        zeros clipped into the joint limits).
    ee_link : the link drawn for paths and roadmaps (default `end_effector_link`).
    camera : ``(position (3,), look_at (3,))`` of the initial camera, m (default
        `default_camera`); z is up.
    """
    viser = _import_viser()
    if robot is None and (path is not None or roadmap is not None or q is not None):
        raise ValueError("path, roadmap and q need a robot (robot=None was given)")
    P = None if path is None else as_configurations(robot, path, "path")
    if P is not None and len(P) == 0:
        raise ValueError("path is empty: give at least one configuration")
    if robot is not None:
        if q is None:
            q = P[0] if P is not None else np.clip(0.0, robot.lower, robot.upper)
        q = robot.validate_q(q)
        ee_link = ee_link or end_effector_link(robot)
        if ee_link not in robot.link_index:
            raise ValueError(f"ee_link {ee_link!r} is not a link of robot {robot.name!r}")
    if roadmap is not None:
        roadmap = as_roadmap(robot, roadmap)
    if camera is None:
        camera = default_camera(scene, robot, q)
    position, look_at = (np.asarray(c, float).reshape(3) for c in camera)

    server = viser.ViserServer(host=host, port=0 if port is None else int(port), verbose=False)
    viewer = Viewer(server, scene, robot, ee_link, P, (position, look_at))
    try:
        _build(viewer, viser, q, roadmap)
    except BaseException:
        server.stop()
        raise
    return viewer


def _build(viewer: Viewer, viser, q, roadmap) -> None:
    server, scene, robot = viewer.server, viewer.scene, viewer.robot
    server.scene.set_up_direction("+z")
    position, look_at = viewer.camera
    server.initial_camera.fov = FOV
    server.initial_camera.up = (0.0, 0.0, 1.0)
    server.initial_camera.position = position
    server.initial_camera.look_at = look_at
    server.scene.add_grid("/floor", width=4.0, height=4.0, cell_size=0.1, section_size=1.0)

    for ob in scene if scene is not None else ():
        d = obstacle_drawable(ob.shape, ob.T)
        name = f"/obstacles/{ob.id} {_safe(ob.name or '')}".rstrip()
        if d.vertices is not None:
            server.scene.add_mesh_simple(
                name,
                d.vertices,
                d.faces,
                color=_colors.OBSTACLE,
                flat_shading=True,
                side="double",
            )
        if d.points is not None:
            server.scene.add_point_cloud(
                name + (" points" if d.vertices is not None else ""),
                d.points,
                colors=_colors.OBSTACLE,
                point_size=0.01,
                point_shape="circle",
            )
    if robot is None:
        return

    viewer._sync_links()

    with server.gui.add_folder("Joints"):
        for d, name in enumerate(robot.joint_names):
            lo, hi = float(robot.lower[d]), float(robot.upper[d])
            s = server.gui.add_slider(
                name, min=lo, max=hi, step=(hi - lo) / 1000, initial_value=float(q[d])
            )
            s.on_update(viewer._on_joint_slider)
            viewer.joint_sliders.append(s)

    if viewer.path is not None:
        _add_path(viewer, q)
    if roadmap is not None:
        _add_roadmap(viewer, roadmap)
    if scene is not None:
        with server.gui.add_folder("Clearance"):
            viewer._panel = server.gui.add_markdown("")
    viewer.set_configuration(q)


def _add_path(viewer: Viewer, q) -> None:
    server, robot, P = viewer.server, viewer.robot, viewer.path
    curve = end_effector_positions(robot, densify(P), viewer.ee_link)
    if len(curve) >= 2:
        segs = np.stack([curve[:-1], curve[1:]], axis=1)
        server.scene.add_line_segments(
            "/path/end_effector", segs, colors=_colors.PATH, thickness=0.006
        )
    ghosts = np.unique(np.round(np.linspace(0, len(P) - 1, min(len(P), 8))).astype(int))
    T = robot.fk_batch(P[ghosts])
    for link, (v, f) in link_meshes(robot).items():
        i = robot.link_index[link]
        server.scene.add_batched_meshes_simple(
            f"/path/poses/{_safe(link)}",
            v,
            f,
            batched_wxyzs=_wxyz(T[:, i, :3, :3]),
            batched_positions=T[:, i, :3, 3],
            batched_colors=_colors.ROBOT,
            opacity=_colors.GHOST_OPACITY,
            flat_shading=True,
        )
    with server.gui.add_folder("Path"):
        n = len(P)
        at = [i for i, p in enumerate(P) if np.array_equal(p, q)]  # q at a waypoint: there
        viewer.path_slider = server.gui.add_slider(
            "waypoint",
            min=0.0,
            max=float(max(n - 1, 1)),
            step=0.001,
            initial_value=float(at[0] if at else 0),
        )
        viewer.path_slider.on_update(lambda _e: viewer.set_path_position(viewer.path_slider.value))
        play = server.gui.add_checkbox("play", False)
        speed = server.gui.add_slider(
            "waypoints/s", min=0.1, max=10.0, step=0.1, initial_value=PLAY_SPEED
        )
        show_poses = server.gui.add_checkbox("show poses", True)

        def _toggle(_e) -> None:
            for link in viewer._link_handles:
                h = server.scene.get_handle_by_name(f"/path/poses/{_safe(link)}")
                if h is not None:
                    h.visible = show_poses.value

        show_poses.on_update(_toggle)
    viewer._player = threading.Thread(
        target=viewer._play_loop, args=(play, speed), name="viz-path-player", daemon=True
    )
    viewer._player.start()


def _add_roadmap(viewer: Viewer, roadmap) -> None:
    server, robot = viewer.server, viewer.robot
    V, E = roadmap
    X = end_effector_positions(robot, V, viewer.ee_link) if len(V) else np.zeros((0, 3))
    nodes = []
    if len(V):
        nodes.append(
            server.scene.add_point_cloud(
                "/roadmap/vertices", X, colors=_colors.ROADMAP, point_size=0.012
            )
        )
    if len(E):
        nodes.append(
            server.scene.add_line_segments(
                "/roadmap/edges",
                np.stack([X[E[:, 0]], X[E[:, 1]]], axis=1),
                colors=_colors.ROADMAP,
                thickness=0.002,
            )
        )
    with server.gui.add_folder("Roadmap"):
        server.gui.add_markdown(f"{len(V)} vertices, {len(E)} edges (at {viewer.ee_link})")
        box = server.gui.add_checkbox("show roadmap", True)

        def _toggle(_e) -> None:
            for h in nodes:
                h.visible = box.value

        box.on_update(_toggle)
