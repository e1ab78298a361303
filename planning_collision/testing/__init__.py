"""References shared by the tests and the benchmarks: obviously-correct numpy versions
(naive.py), the peer engines coal and python-fcl in our conventions (peers.py), seeded
random shapes, poses and pairs (sampling.py), and the pair oracle (oracle.py).

Needs the ``test`` extra (coal, python-fcl); the engine never imports this package.
"""
