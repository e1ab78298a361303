"""Demos: what a user runs to see the project work, each as ``python -m demos.<name>``
(``--help`` says what it shows and how long it takes).

- ``plan_shelf``: the main demo, the Panda reaching into a shelf, planned by OMPL with
  certified edges (also ``python demos/plan_shelf.py``);
- ``plan_piano``: a free-flying piano through a doorway (position and yaw-pitch-roll);
- ``plan_planar``: a planar arm through a gap, with a picture of the roadmap and the path;
- ``view``: a scene and a robot (from the registry or your URDF) in the browser, or as glTF;
- ``query_demo``: pair queries (collide, distance, penetration), convenient and explicit;
- ``benchmark``: the planning benchmark (``planning_collision.demos.bench.planning``).

``planning_collision.demos.bench``: benchmarks against the peers (python-fcl, coal, MPlib), with
their baselines. ``planning_collision.demos.dev``: developer tools (first-call compile times,
compile profile, certification and containment checks, the full oracle sweep, a long PRM memory
run). ``cli``, ``scenes`` and ``viewing`` are what the planning demos share.
"""
