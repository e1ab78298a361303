"""RRTConnect compiled with the checker: the planning loop and the checks it asks in one
compiled call, no Python between them (docs/architecture.md, "Planner").

A planner asks two questions thousands of times per solve; through OMPL's Python bindings
each costs a crossing into Python and back (~1 us) and OMPL's own bookkeeping around it
(~23 % of a solve on the MotionBenchMaker Panda). Here the loop calls the checker's kernels
directly: `dichotomy` (kernels/checker/edges.py) for every motion of a returned path, so
each is certified free as the plugin's motion validator certifies it (same kernel, model,
workspace and settings).

Lazily (`lazy`, after `lazy_after` motions): a motion the trees grow by is probed, its end
and its states at most range / lazy apart checked (a boolean check each, within the
certificate's contact distance), and certified only when a solution takes it: when the
trees join, each probed motion of the solution is certified, root-ward from the join; the
first found colliding removes its node and the branch below it (`_remove_branch`: DEAD, its
configurations NaN, which no nearest-neighbour scan picks) and the search goes on. A free
certified motion costs ~14 distance queries (~27 us on cage), its probes ~4 us: a hard
problem's trees grow many motions no solution takes. After `lazy_failures` refuted
solutions every motion is certified as it is tried (a scene whose obstacles slip between
the probes).

The search is RRT-Connect (Kuffner & LaValle 2000) with VAMP's balance and sampling
(Thomason et al. 2024): two trees, the smaller one grown (`balance`); a sample pulls the
nearest node of the growing tree one step of at most `range` toward it; when that motion is
free, the other tree's nearest node grows toward the new node in equal steps of at most
`range`, each certified, and the two meet when every step is free (OMPL's connect; with
`connect` 0, VAMP's: the tree that grew goes on toward the other's nearest node, which on
random box scenes and the MotionBenchMaker Panda sets took 5-30 % longer). A node's
dynamic domain (Yershova et al. 2005) skips samples farther from it than a radius that
shrinks where its motions collide and grows where they succeed: in a cage, long motions
from a boxed-in node stop being tried. Before any search, the straight motion from each
start to each goal (states half a range apart first, a boolean check each: when it
collides, it mostly does between the edge check's few probes, whose certificate would cost
50-150 distance queries).

Trees, their nodes' parents and radii, the sampler's state and the solution live in a
`PlanTrees` record the caller allocates (planning_collision/planning.py); the run stops
when a path is found (SOLVED), when its time slice ends (SEARCHING: call again, it goes on
where it stopped) or when a tree is full (FULL: the caller grows the record and calls
again). Nodes are stored one column per node (`x[tree, k, node]`) so the nearest-neighbour
scan runs along contiguous rows, which LLVM vectorises.

Continuous joints (`cont[k]`) are angles: differences are taken the short way round
(wrapped into [-pi, pi)), nodes are stored wrapped, and every motion is checked from its
start node to that node plus the wrapped difference, which is the motion OMPL's SO2
interpolation makes.

Samples come from a randomised Halton sequence (each coordinate's radical inverse in its own
prime base, shifted by a random offset per coordinate, Cranley-Patterson) or from
xoshiro256** uniform draws; both are repeatable from their seed.
"""

import math

import numpy as np

from .._jit import hot_kernel, inline_kernel, with_python_twin
from ..base.clock import monotonic_ns
from ..base.codes import FREE, FULL, NO, SEARCHING, SOLVED
from ..base.records import F1, F2, F3, L1, Field, record
from ..checker.check_core import pose, robot_at, unpack
from ..checker.edge_state import set_q
from ..checker.edges import dichotomy
from ..checker.states import posed_collides
from .joint_space import TWO_PI, column, diff, most_steps, nearest, step_end, unwrap_end, wrap

# The most states the straight motions from starts to goals are sampled at before their
# certified check (`_direct`): a power of two
DIRECT_STATES = 64

# the first primes: Halton bases of coordinates 0, 1, ... (robots up to 16 joints)
PRIMES = np.array([2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53], np.int64)

PlanTrees = record(
    "PlanTrees",
    __name__,
    "An RRT-Connect search: two trees, the sampler, the solution (kernels/planner/rrt_connect.py).",
    [
        Field("x", F3, (2, "dof", "capacity"), "each tree's nodes, one column per node", None),
        Field("parent", ("int64", 2), (2, "capacity"), "each node's parent (-1: a root)"),
        Field("radius", F2, (2, "capacity"), "each node's dynamic-domain radius (inf: none)"),
        Field(
            "cert",
            ("int64", 2),
            (2, "capacity"),
            "each node's motion from its parent: "
            "CERTIFIED, PROBED (lazy: not yet certified) or DEAD",
        ),
        Field("size", L1, (2,), "nodes in each tree"),
        Field("d2", F1, ("capacity",), "scratch: squared distances of the last scan", None),
        Field("q", F2, (4, "dof"), "scratch configurations", None),
        Field("out", F1, (4,), "an edge check's results"),
        Field("offset", F2, (2, "dof"), "each tree's Halton shift per coordinate"),
        Field("rng", ("uint64", 1), (4,), "xoshiro256** state"),
        Field("state", L1, (12,), "the search's counters (the S_* indices)"),
        Field("path", F2, ("2 * capacity + 2", "dof"), "the solution, start to goal", None),
    ],
)

# PlanTrees.state: the tree that grows next, iterations, edges checked, the solution's
# length, the connecting nodes (tree 0 / tree 1), whether the direct motions from the starts
# to the goals were tried, the start and the goal (roots) the path joins, and each tree's
# Halton index (S_HALTON + tree)
S_ACTIVE, S_ITER, S_EDGES, S_PATH, S_JOIN0, S_JOIN1, S_DIRECT, S_START, S_GOAL, S_HALTON = range(10)
S_FAILED = 11  # a lazy search's solutions whose certificate found a collision (after S_HALTON + 1)

# The search's settings, one float64 array (`plan_settings`): what the run reads of it
PlanSettings = (
    "range",  # the longest motion one step makes (rad of joint space, Euclidean)
    "balance",  # grow the smaller tree (1) or alternate (0)
    "tree_ratio",  # balance: swap when |na - nb| / na < this (VAMP's rule)
    "dynamic_domain",  # 1: per-node sampling radius (Yershova et al. 2005)
    "dd_radius",  # a node's radius after its first colliding motion
    "dd_alpha",  # radius growth after a free motion, shrink after a colliding one
    "dd_min_radius",  # the radius never shrinks below this
    "sampler",  # 0: randomised Halton, 1: xoshiro256** uniform
    "direct",  # 1: try the straight motion from each start to each goal first
    "connect",  # 0: the grown tree goes on toward the other's nearest node (VAMP); 1: the
    #             other tree's nearest node connects to the new node (OMPL)
    "lazy",  # n > 0: motions probed as the trees grow (their end and states at most range / n
    #          apart), certified when the trees join (only the solution's: a collision
    #          found then removes the branch below it); 0: each certified when tried
    "lazy_failures",  # a lazy search certifies each motion when tried once this many of
    #                   its solutions were found to collide
    "lazy_after",  # ... and only after this many motions were checked (an easy problem's
    #                motions mostly make its solution: probing them first costs more)
)
SETTING = {name: k for k, name in enumerate(PlanSettings)}

# PlanTrees.cert: a node's motion from its parent (a root's: CERTIFIED) certified free,
# only probed (module doc: lazily), or found to collide when certified, which removes the
# node and every node below it (DEAD: its configuration NaN, so no nearest-neighbour scan
# picks it)
CERTIFIED, PROBED, DEAD = 1, 0, -1


def plan_settings(**values) -> np.ndarray:
    """The float64 array of the settings named by keywords (every one of `PlanSettings`)."""
    missing = set(PlanSettings) - set(values)
    extra = set(values) - set(PlanSettings)
    if missing or extra:
        raise ValueError(f"plan settings: missing {sorted(missing)}, unknown {sorted(extra)}")
    return np.array([float(values[k]) for k in PlanSettings], np.float64)


# ---------------------------------------------------------------------------------------
# sampling


def _python_next_u64(s):
    """xoshiro256** (Blackman & Vigna 2018) on Python ints: the compiled step's twin (numpy
    uint64 scalars would warn on the wrap-around the algorithm relies on)."""
    m = (1 << 64) - 1
    s0, s1, s2, s3 = (int(v) for v in s)
    r = ((((s1 * 5) & m) << 7 | ((s1 * 5) & m) >> 57) & m) * 9 & m
    t = (s1 << 17) & m
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = ((s3 << 45) | (s3 >> 19)) & m
    s[0], s[1], s[2], s[3] = s0, s1, s2, s3
    return r


@with_python_twin(_python_next_u64)
@inline_kernel
def _next_u64(s):
    """The next 64 random bits of the xoshiro256** state s (4,) uint64 (Blackman & Vigna,
    "Scrambled linear pseudorandom number generators", 2018)."""
    x = s[1] * np.uint64(5)
    r = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = (s[3] << np.uint64(45)) | (s[3] >> np.uint64(19))
    return r


@inline_kernel
def _uniform(s):
    """A double uniform in [0, 1) from the top 53 bits of the next draw."""
    return float(_next_u64(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@inline_kernel
def _radical_inverse(i, b):
    """i's digits in base b mirrored behind the point: the Halton coordinate of index i."""
    f = 1.0
    r = 0.0
    inv = 1.0 / b
    while i > 0:
        f *= inv
        r += f * (i % b)
        i //= b
    return r


@inline_kernel
def _sample(tr, t, halton, lower, upper, cont, q):
    """q <- the next sample for tree t: uniform over the joint limits, continuous joints
    over [-pi, pi). Each tree has a Halton sequence of its own (index and shift): the trees
    mostly take turns, and one sequence dealt out in turns gives each tree every other
    point, whose first coordinate (base 2) then lies in one half of its range for one
    tree and in the other half for the other (on cage, 15 % more iterations and 17 % more
    edges per solve)."""
    i = tr.state[S_HALTON + t]
    tr.state[S_HALTON + t] = i + 1
    for k in range(q.shape[0]):
        if halton:
            u = _radical_inverse(i + 1, PRIMES[k]) + tr.offset[t, k]
            u -= math.floor(u)
        else:
            u = _uniform(tr.rng)
        if cont[k]:
            q[k] = -math.pi + u * TWO_PI
        else:
            q[k] = lower[k] + u * (upper[k] - lower[k])


@inline_kernel
def _add(tr, t, q, parent, lower, upper, cont, cert):
    """Node q (continuous joints wrapped, limited ones clamped to their limits against
    round-off) appended to tree t with its parent and its motion's `cert`; returns its
    index."""
    n = tr.size[t]
    for k in range(q.shape[0]):
        v = q[k]
        if cont[k]:
            v = wrap(v)
        else:
            v = min(max(v, lower[k]), upper[k])
        tr.x[t, k, n] = v
    tr.parent[t, n] = parent
    tr.radius[t, n] = math.inf
    tr.cert[t, n] = cert
    tr.size[t] = n + 1
    return n


# ---------------------------------------------------------------------------------------
# the search


@inline_kernel
def _free(hm, hw, request, q0, q1, tr):
    """The motion q0 -> q1 certified free (q0 is a node: known free)."""
    tr.state[S_EDGES] += 1
    return dichotomy(hm, hw, q0, q1, request, tr.out) == FREE and tr.out[0] == FREE


@inline_kernel
def _probed_free(hm, hw, request, q0, q1, tr, spacing):
    """The motion q0 -> q1 probed (q0 is a node): its end and its states at most `spacing`
    apart are free (a boolean check each, within the certificate's contact distance,
    bisection order). A proof of collision when false; when true, the motion is certified
    later, if a solution takes it (`_certify_branch`)."""
    tr.state[S_EDGES] += 1
    self_collision = robot_at(hm).pairs.shape[0] > 0
    contact = request[0] + request[1]  # EdgeRequest's margin + eta, as the probes take it
    pose(hm, hw, q1, NO)
    if posed_collides(hm, hw, contact, self_collision, 0.0):
        return False
    return not _sampled_collision(hm, hw, q0, q1, contact, spacing)


@inline_kernel
def _shrunk(r, dd_radius, alpha, min_radius):
    """A node's dynamic-domain radius after one of its motions collided: `dd_radius` the
    first time (inf: none yet), then `alpha` smaller, never below `min_radius`."""
    return dd_radius if r == math.inf else max(r * (1.0 - alpha), min_radius)


@inline_kernel
def _lazy(settings, st):
    """Whether motions are probed now (PlanSettings `lazy`, `lazy_failures`, `lazy_after`):
    lazy is on, fewer solutions than `lazy_failures` were refuted and at least `lazy_after`
    motions were checked. Both counts only grow: once on, it stays on until the refutations
    reach their bound."""
    return settings[10] != 0.0 and st[S_FAILED] < settings[11] and st[S_EDGES] >= settings[12]


@inline_kernel
def _remove_branch(tr, t, c):
    """Node c of tree t and every node below it DEAD (module doc: `cert`). A child is
    added after its parent, so one pass in index order finds them all."""
    tr.cert[t, c] = DEAD
    for k in range(tr.x.shape[1]):
        tr.x[t, k, c] = math.nan
    for i in range(c + 1, tr.size[t]):
        if tr.cert[t, tr.parent[t, i]] == DEAD:
            tr.cert[t, i] = DEAD
            for k in range(tr.x.shape[1]):
                tr.x[t, k, i] = math.nan


@inline_kernel
def _certify_branch(hm, hw, request, tr, t, i, cont, dd, dd_radius, alpha, min_radius):
    """Certify each motion from node i of tree t up to its root that is only PROBED (the
    stored nodes, continuous joints the short way, as the solution runs). True when all
    are free; at the first that is not, its node's branch is removed (`_remove_branch`),
    its parent's dynamic domain shrinks as after a colliding motion, and False."""
    q0, q1 = tr.q[0], tr.q[1]
    while tr.parent[t, i] >= 0:
        p = tr.parent[t, i]
        if tr.cert[t, i] == PROBED:
            column(tr.x[t], p, q0)
            column(tr.x[t], i, q1)
            unwrap_end(q0, q1, cont)
            if not _free(hm, hw, request, q0, q1, tr):
                _remove_branch(tr, t, i)
                if dd:
                    tr.radius[t, p] = _shrunk(tr.radius[t, p], dd_radius, alpha, min_radius)
                return False
            tr.cert[t, i] = CERTIFIED
        i = p
    return True


@inline_kernel
def _path(tr, a, ia, b, ib, cont):
    """The solution into tr.path: tree a's branch from its root to node ia, then tree b's
    from node ib (the same configuration as ia: skipped) to its root, start tree first;
    continuous joints unwrapped along it (each row within pi of the one before)."""
    P = tr.path
    dof = P.shape[1]
    n = 0
    i = ia
    while i >= 0:  # ia up to its root: reversed below
        for k in range(dof):
            P[n, k] = tr.x[a, k, i]
        n += 1
        tr.state[S_START if a == 0 else S_GOAL] = i
        i = tr.parent[a, i]
    tr.state[S_GOAL if a == 0 else S_START] = ib
    for r in range(n // 2):
        for k in range(dof):
            v = P[r, k]
            P[r, k] = P[n - 1 - r, k]
            P[n - 1 - r, k] = v
    i = tr.parent[b, ib]
    while i >= 0:
        for k in range(dof):
            P[n, k] = tr.x[b, k, i]
        n += 1
        tr.state[S_GOAL if a == 0 else S_START] = i
        i = tr.parent[b, i]
    if a == 1:  # built goal first: reverse it
        for r in range(n // 2):
            for k in range(dof):
                v = P[r, k]
                P[r, k] = P[n - 1 - r, k]
                P[n - 1 - r, k] = v
    for r in range(1, n):
        for k in range(dof):
            if cont[k]:
                P[r, k] = P[r - 1, k] + wrap(P[r, k] - P[r - 1, k])
    tr.state[S_PATH] = n
    return n


@inline_kernel
def _sampled_collision(hm, hw, q0, q1, contact, spacing):
    """True when some state of the motion q0 -> q1 at most `spacing` (rad) apart, the ends
    excluded, collides within `contact` (a boolean check each, bisection order: a wall in
    the middle first). A proof that the motion is not free, never a proof that it is."""
    _, _, buf = unpack(hm, hw)
    self_collision = robot_at(hm).pairs.shape[0] > 0
    d2 = 0.0
    for k in range(q0.shape[0]):
        d2 += (q1[k] - q0[k]) ** 2
    n = 2
    while n < DIRECT_STATES and n * spacing < math.sqrt(d2):
        n *= 2
    s = n // 2
    while s >= 1:
        for j in range(s, n, 2 * s):
            set_q(buf.q, q0, q1, j / n)
            pose(hm, hw, buf.q, NO)
            if posed_collides(hm, hw, contact, self_collision, 0.0):
                return True
        s //= 2
    return False


@inline_kernel
def _direct(hm, hw, request, tr, cont, spacing):
    """The straight motion from each start (tree 0's roots) to each goal (tree 1's): True,
    with the path, when one is free. Such a motion is long and, when a search is needed,
    mostly collides where the edge check's few probes do not look (its certificate then
    costs 50-150 distance queries): states `spacing` apart are checked first."""
    q0, q1 = tr.q[0], tr.q[1]
    contact = request[0] + request[1]  # EdgeRequest's margin + eta, as the probes take it
    for i in range(tr.size[0]):
        column(tr.x[0], i, q0)
        for j in range(tr.size[1]):
            column(tr.x[1], j, q1)
            unwrap_end(q0, q1, cont)
            if _sampled_collision(hm, hw, q0, q1, contact, spacing):
                tr.state[S_EDGES] += 1
                continue
            if _free(hm, hw, request, q0, q1, tr):
                tr.state[S_JOIN0] = tr.state[S_START] = i
                tr.state[S_JOIN1] = tr.state[S_GOAL] = j
                P = tr.path
                for k in range(q0.shape[0]):
                    P[0, k] = q0[k]
                    P[1, k] = q1[k]
                tr.state[S_PATH] = 2
                return True
    return False


@hot_kernel
def rrt_connect(hm, hw, request, tr, settings, lower, upper, cont, deadline_ns):
    """Run the search (module doc) from tree 0's roots (the starts) to tree 1's (the goals)
    until SOLVED (tr.path[:tr.state[S_PATH]] is the path), SEARCHING (the monotonic clock
    passed deadline_ns) or FULL (a tree may not have room for the nodes one iteration
    adds, `most_steps` + 1: the caller grows tr and calls again). hm, hw:
    the checker's model and workspace tables; request: its edge settings (`EdgeRequest`,
    check_start off: every motion starts at a node); lower, upper (dof,): the joint
    limits; cont (dof,) int64: 1 for a continuous joint."""
    step = settings[0]
    balance = settings[1] != 0.0
    ratio = settings[2]
    dd = settings[3] != 0.0
    dd_radius, alpha, min_radius = settings[4], settings[5], settings[6]
    halton = settings[7] == 0.0
    from_other = settings[9] != 0.0
    cap = tr.x.shape[2]
    qs, q1, dq, qn = tr.q[0], tr.q[1], tr.q[2], tr.q[3]
    st = tr.state
    spacing = step / settings[10] if settings[10] != 0.0 else step
    if st[S_DIRECT] == 0 and settings[8] != 0.0:
        st[S_DIRECT] = 1
        if _direct(hm, hw, request, tr, cont, 0.5 * step):
            return SOLVED
    room = most_steps(lower, upper, cont, step) + 1  # nodes one iteration may add
    while True:
        if monotonic_ns() > deadline_ns:
            return SEARCHING
        if tr.size[0] + room > cap or tr.size[1] + room > cap:
            return FULL
        a = st[S_ACTIVE]
        na = tr.size[a]
        nb = tr.size[1 - a]
        if not balance or abs(na - nb) / max(na, 1) < ratio:
            a = 1 - a
        st[S_ACTIVE] = a
        b = 1 - a
        st[S_ITER] += 1
        lazy = _lazy(settings, st)
        _sample(tr, a, halton, lower, upper, cont, qs)
        i, dist = nearest(tr.x[a], tr.size[a], qs, cont, tr.d2)
        r_i = tr.radius[a, i]
        if dd and r_i < dist:
            continue
        column(tr.x[a], i, qn)
        diff(qn, qs, cont, dq)
        s = 1.0 if dist <= step else step / dist
        step_end(qn, dq, s, q1, lower, upper, cont)
        if lazy:
            ok = _probed_free(hm, hw, request, qn, q1, tr, spacing)
        else:
            ok = _free(hm, hw, request, qn, q1, tr)
        if not ok:
            if dd:
                tr.radius[a, i] = _shrunk(r_i, dd_radius, alpha, min_radius)
            continue
        new = _add(tr, a, q1, i, lower, upper, cont, PROBED if lazy else CERTIFIED)
        if dd and r_i != math.inf:
            tr.radius[a, i] = r_i * (1.0 + alpha)
        # the trees joined by the new node and the other tree's nearest node, in equal steps
        # of at most `range`: grown from the new node (g = a) or from that nearest node (g = b)
        column(tr.x[a], new, qn)
        j, dist_b = nearest(tr.x[b], tr.size[b], qn, cont, tr.d2)
        g, last, goal = (b, j, new) if from_other else (a, new, j)
        column(tr.x[1 - g], goal, qs)
        column(tr.x[g], last, qn)
        n_steps = max(1, int(math.ceil(dist_b / step)))
        diff(qn, qs, cont, dq)
        reached = True
        for e in range(n_steps):
            column(tr.x[g], last, qn)
            if e == n_steps - 1:  # the last step ends on the other tree's node exactly
                for k in range(qn.shape[0]):
                    q1[k] = qs[k]
                unwrap_end(qn, q1, cont)
            else:
                step_end(qn, dq, 1.0 / n_steps, q1, lower, upper, cont)
            if lazy:
                ok = _probed_free(hm, hw, request, qn, q1, tr, spacing)
            else:
                ok = _free(hm, hw, request, qn, q1, tr)
            if not ok:
                reached = False
                break
            last = _add(tr, g, q1, last, lower, upper, cont, PROBED if lazy else CERTIFIED)
        if reached and settings[10] != 0.0:  # the solution's motions certified, or a branch removed
            for t, i in ((g, last), (1 - g, goal)):
                if reached:
                    reached = _certify_branch(
                        hm, hw, request, tr, t, i, cont, dd, dd_radius, alpha, min_radius
                    )
            if not reached:
                st[S_FAILED] += 1
        if reached:
            st[S_JOIN0 if g == 0 else S_JOIN1] = last
            st[S_JOIN1 if g == 0 else S_JOIN0] = goal
            _path(tr, g, last, 1 - g, goal, cont)
            return SOLVED


# ---------------------------------------------------------------------------------------
# shortening a path


@hot_kernel
def shortcut(hm, hw, request, P, n, cont, out):
    """Shorten the path P[:n] (each motion certified) in place: from each kept state, the
    farthest later state it reaches by one certified motion replaces everything between
    (OMPL's reduceVertices, greedy). A motion whose continuous joints turn more than pi is
    not tried (OMPL would interpolate it the other way round). Returns the new length."""
    w = 0
    i = 0
    dof = P.shape[1]
    while i < n - 1:
        j = n - 1
        while j > i + 1:
            ok = True
            for k in range(dof):
                if cont[k] and abs(P[j, k] - P[i, k]) > math.pi:
                    ok = False
            if ok and dichotomy(hm, hw, P[i], P[j], request, out) == FREE and out[0] == FREE:
                break
            j -= 1
        w += 1
        for k in range(dof):
            P[w, k] = P[j, k]
        i = j
    return w + 1
