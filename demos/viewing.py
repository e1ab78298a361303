"""`--view` and `--export` for the planning demos: the solution path (and the planner's
roadmap or tree) in the browser or as a glTF file, through planning_collision.viz."""

from __future__ import annotations

import time

HOW_TO_SEE = (
    "To see the path, run the same command with --view (in the browser; the viz extra:\n"
    "pip install -e '.[viz]') or with --export path.glb (a glTF file any 3-D viewer opens)."
)


def add_arguments(p) -> None:
    """The two flags, on an argparse parser."""
    p.add_argument("--view", action="store_true", help="show the path in the browser (viz extra)")
    p.add_argument("--export", metavar="FILE.glb", help="write the scene, robot and path as glTF")


def show(scene, robot, path, args, roadmap=None) -> None:
    """The path (n, dof) as the flags ask: a glTF file (--export), the browser (--view: serves
    until Ctrl-C). roadmap: (vertices (m, dof), edges (k, 2)) to draw with --view."""
    if not (args.view or args.export):
        print(HOW_TO_SEE)
        return
    try:
        from planning_collision import viz
    except ImportError as e:  # pragma: no cover - the viz extra is missing
        print(f"--view / --export need the viz extra (pip install -e '.[viz]'): {e}")
        return
    if args.export:
        viz.export_glb(args.export, scene, robot, configurations=[path[-1]], path=path)
        print(f"wrote {args.export}")
    if args.view:
        viewer = viz.show(scene, robot, path=path, roadmap=roadmap)
        print(f"viewer at {viewer.url} (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(1.0)
        except KeyboardInterrupt:
            viewer.stop()
