"""Benchmarks, side by side with what Python users have today, each as
``python -m planning_collision.demos.bench.<name>``:

- ``planning``: OMPL planners on the MotionBenchMaker Panda sets or a user's problem file,
  our checker against python-fcl + OMPL's DiscreteMotionValidator and MPlib, every path
  re-checked on the exact meshes; OMPL benchmark logs and Planner Arena's database
  (``python -m planning_collision.demos.benchmark`` runs it too);
- ``checker``: states and edges per second against the python-fcl and coal pipelines;
- ``queries``: pair queries against coal and python-fcl;
- ``scene``: the KCD scene against a flat BVH, no broadphase and coal's manager, on the
  factory hall of ``factory_scene``;
- ``robot``: forward kinematics, model loading and ACM sampling.

``problems`` reads the planning benchmark's inputs (docs/benchmark.md has the problem file
format), ``reports`` writes its outputs; ``baselines`` holds the peers that are not OMPL
validators (MPlib, in its own interpreter). docs/performance.md has today's figures.
"""
