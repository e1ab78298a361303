"""3-D views of scenes, robots, paths and roadmaps: glTF files and a browser viewer.

::

    from planning_collision import robots
    import planning_collision as pc
    from planning_collision import viz

    scene = pc.Scene.from_file(viz.BOOKSHELF)       # a shelf in front of a robot base
    panda = robots.load("panda", fixed_joints={"panda_finger_joint1": 0.065,
                                               "panda_finger_joint2": 0.065})
    viz.export_glb("scene.glb", scene, panda, configurations=[q], path=path)
    viewer = viz.show(scene, panda, path=path, roadmap=(vertices, edges))
    viewer.url                                     # open in a browser; viewer.stop()

`export_glb` needs only trimesh (a core dependency); `show` needs viser
(``pip install 'planning-collision[viz]'``), and `browser.screenshot` Playwright and a
system Chromium. Shapes are tessellated as `meshes` describes: inscribed in the shape,
with its exact world bounds. The engine never imports this package.
"""

from importlib import resources
from pathlib import Path

from ._engine import LinkStatus, engine_link_bounds, engine_obstacle_bounds, link_status
from .glb import export_glb
from .kinematics import end_effector_link
from .meshes import shape_mesh
from .viewer import Viewer, show

# The shelf scene shipped with the project (planning_collision/data/bookshelf.json).
BOOKSHELF = Path(str(resources.files("planning_collision") / "data" / "bookshelf.json"))

__all__ = [
    "BOOKSHELF",
    "LinkStatus",
    "Viewer",
    "end_effector_link",
    "engine_link_bounds",
    "engine_obstacle_bounds",
    "export_glb",
    "link_status",
    "shape_mesh",
    "show",
]
