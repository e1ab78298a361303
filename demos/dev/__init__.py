"""Developer tools, each as ``python -m planning_collision.demos.dev.<name>``: measurements and
checks that back the figures and guarantees in the docs rather than show the API.

- ``cold_start``: each public entry point's first call, from an empty numba cache;
- ``compile_profile``: where that compile time goes, per compiled function and LLVM pass;
- ``certify``: the certified edge methods against dense sampling on thousands of edges;
- ``model_containment``: do the link models contain every triangle of their meshes;
- ``oracle_sweep``: every convex pair type against coal and python-fcl, 20,000 pairs each;
- ``prm_memory``: memory stays flat over a long PRM session (bounded caches).
"""
