"""The planning benchmark: ``python -m planning_collision.demos.benchmark`` runs
`planning_collision.demos.bench.planning` (OMPL planners on the shipped MotionBenchMaker Panda sets
or on a user's problem file, our certified checker beside the baselines; its ``--help`` says what
each option does)."""

from planning_collision.demos.bench.planning import main

if __name__ == "__main__":
    raise SystemExit(main())
