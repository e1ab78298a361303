"""EPA: penetration depth of two intersecting cores (van den Bergen, "Proximity queries and
penetration depth computation on 3D game objects", GDC 2001).

Starts from GJK's final simplex (which contains the origin), grows it to a tetrahedron, then
repeatedly splits the face of the polytope nearest the origin with the support point of
D = A - B along that face's normal, until the support point is no farther out than the face.
The nearest face then gives the depth, its outward normal the direction from A to B, and
the origin's projection onto it (in barycentric form) the witness points.

Degenerate Minkowski differences are answered exactly instead of iterated: if D is a point,
a segment or flat (a sphere core inside a flat hull, two crossing capsule segments...), it has
no interior, the core depth is 0 and the normal is any direction perpendicular to D.

The polytope lives in the caller's workspace (``ws[EPA_BASE:]``, see `EPA_WS_SIZE`): pair
kernels compile without numba's runtime (no allocation, no reference counting), and EPA is
called from them. Face and edge indices are stored as floats there (exact below 2**53).
"""

import math

from .._jit import hot_kernel, inline_kernel
from ..base.codes import FOUR, MISSING, ONE, THREE, TWO, ZERO
from ..base.tolerances import (
    DIVISION_GUARD,
    EPA_ABS_TOL,
    EPA_FACE_MIN_CROSS,
    EPA_FLAT_ABS,
    EPA_FLAT_REL,
    EPA_REL_TOL,
    EPA_VISIBLE_TOL,
)
from .gjk import LAM, SA, SB, WS_SIZE, W
from .support import support_world

MAX_VERTS = 256
MAX_FACES = 4 * MAX_VERTS + 64
MAX_EDGES = 6 * MAX_VERTS  # horizon edges of one split (at most 3 per visible face)

# Workspace layout after GJK's part and a 10-float result buffer (pair.py's _EPA_OUT).
EPA_BASE = WS_SIZE + 10
_V = EPA_BASE
_VA = _V + 3 * MAX_VERTS
_VB = _VA + 3 * MAX_VERTS
_F = _VB + 3 * MAX_VERTS
_FN = _F + 3 * MAX_FACES
_FD = _FN + 3 * MAX_FACES
_E = _FD + MAX_FACES
_TMP = _E + 2 * MAX_EDGES
EPA_WS_END = _TMP + 9  # tmp: a support pair (6), a flat answer's normal (3)
# Convergence and visibility tolerances: kernels/base/tolerances.py says why they are what they are.
VISIBLE_TOL = EPA_VISIBLE_TOL


@hot_kernel
def _support(tab_a, ia, T_a, tab_b, ib, T_b, dx, dy, dz, tmp):
    support_world(tab_a, ia, T_a, dx, dy, dz, tmp, ZERO)
    support_world(tab_b, ib, T_b, -dx, -dy, -dz, tmp, THREE)


@hot_kernel
def _face_setup(V, F, FN, FD, f, inner):
    """Outward unit normal and origin distance of face f; `inner` is a point inside the
    polytope used to orient the initial faces (MISSING, -1: keep the winding). Returns
    False for a degenerate face."""
    a = int(F[f, 0])
    b = int(F[f, 1])
    c = int(F[f, 2])
    abx = V[b, 0] - V[a, 0]
    aby = V[b, 1] - V[a, 1]
    abz = V[b, 2] - V[a, 2]
    acx = V[c, 0] - V[a, 0]
    acy = V[c, 1] - V[a, 1]
    acz = V[c, 2] - V[a, 2]
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nn <= EPA_FACE_MIN_CROSS:
        return False
    nx /= nn
    ny /= nn
    nz /= nn
    if inner >= 0:
        s = (
            nx * (V[inner, 0] - V[a, 0])
            + ny * (V[inner, 1] - V[a, 1])
            + nz * (V[inner, 2] - V[a, 2])
        )
        if s > 0.0:
            F[f, 1] = c
            F[f, 2] = b
            nx = -nx
            ny = -ny
            nz = -nz
    FN[f, 0] = nx
    FN[f, 1] = ny
    FN[f, 2] = nz
    FD[f] = nx * V[a, 0] + ny * V[a, 1] + nz * V[a, 2]
    return True


@hot_kernel
def _perp(dx, dy, dz):
    """A unit vector perpendicular to (dx, dy, dz) (non-zero)."""
    ax = abs(dx)
    ay = abs(dy)
    az = abs(dz)
    if ax <= ay and ax <= az:
        px, py, pz = 0.0, dz, -dy  # d x e_x
    elif ay <= az:
        px, py, pz = -dz, 0.0, dx  # d x e_y
    else:
        px, py, pz = dy, -dx, 0.0  # d x e_z
    n = math.sqrt(px * px + py * py + pz * pz)
    return px / n, py / n, pz / n


@hot_kernel
def _flat_answer(ws, n, nx, ny, nz, out):
    """Core depth 0 along (nx, ny, nz); witnesses from GJK's barycentric weights."""
    out[0] = 0.0
    for r in range(3):
        pa = 0.0
        pb = 0.0
        for k in range(n):
            pa += ws[LAM + k] * ws[SA + 3 * k + r]
            pb += ws[LAM + k] * ws[SB + 3 * k + r]
        out[1 + r] = pa
        out[4 + r] = pb
    out[7] = nx
    out[8] = ny
    out[9] = nz


@inline_kernel
def _append(V, VA, VB, k, tmp):
    """Vertex k of the polytope from the support pair in tmp (tmp[0:3] on A, tmp[3:6] on
    B): the point of D = A - B and its two witnesses."""
    for r in range(3):
        VA[k, r] = tmp[r]
        VB[k, r] = tmp[3 + r]
        V[k, r] = tmp[r] - tmp[3 + r]


@inline_kernel
def _flat_tol(scale):
    """How far D must extend past the simplex along a direction to have extent there
    (kernels/base/tolerances.py, EPA_FLAT_ABS, EPA_FLAT_REL)."""
    return EPA_FLAT_ABS + EPA_FLAT_REL * scale


# ---------------------------------------------------------------------------------------
# growing GJK's simplex to a tetrahedron: each step adds the support point farthest from
# the simplex; when there is none, D has no interior and the answer is depth 0. The steps
# are inlined into epa_core: compiled apart, each links the support functions of every
# shape kind and runs LLVM's module passes over them again (~1.5 s more for a first
# `distance()`, measured with python -m planning_collision.demos.dev.cold_start --entries distance)


@inline_kernel
def _grow_point(tab_a, ia, T_a, tab_b, ib, T_b, V, VA, VB, tmp, scale):
    """A point to a segment: the farthest support along the axes. Returns the new scale,
    or -1.0 when D is a single point (two point cores at the same place)."""
    best = 0.0
    bx = 0.0
    by = 0.0
    bz = 0.0
    for ax in range(6):
        d = 1.0 if ax % 2 == 0 else -1.0
        dx = d if ax < 2 else 0.0
        dy = d if 2 <= ax < 4 else 0.0
        dz = d if ax >= 4 else 0.0
        _support(tab_a, ia, T_a, tab_b, ib, T_b, dx, dy, dz, tmp)
        ex = tmp[0] - tmp[3] - V[0, 0]
        ey = tmp[1] - tmp[4] - V[0, 1]
        ez = tmp[2] - tmp[5] - V[0, 2]
        e = ex * ex + ey * ey + ez * ez
        if e > best:
            best = e
            bx, by, bz = dx, dy, dz
    scale = max(scale, math.sqrt(best))
    if best <= _flat_tol(scale) ** 2:
        return -1.0
    _support(tab_a, ia, T_a, tab_b, ib, T_b, bx, by, bz, tmp)
    _append(V, VA, VB, ONE, tmp)
    return scale


@inline_kernel
def _grow_segment(tab_a, ia, T_a, tab_b, ib, T_b, V, VA, VB, tmp, scale, flat_n):
    """A segment to a triangle: the support farthest from its line, searched in 60 degree
    steps around it. Returns the new scale, or -1.0 when D is a segment through the origin
    (depth 0 in every perpendicular direction: one written to flat_n)."""
    dx = V[1, 0] - V[0, 0]
    dy = V[1, 1] - V[0, 1]
    dz = V[1, 2] - V[0, 2]
    dl = math.sqrt(dx * dx + dy * dy + dz * dz)
    ux, uy, uz = _perp(dx, dy, dz)
    # w = d x u completes the frame: rotate u around d in 60 degree steps
    wx = (dy * uz - dz * uy) / dl
    wy = (dz * ux - dx * uz) / dl
    wz = (dx * uy - dy * ux) / dl
    best = 0.0
    bsx = 0.0
    bsy = 0.0
    bsz = 0.0
    for j in range(6):
        ang = j * (math.pi / 3.0)
        c = math.cos(ang)
        s = math.sin(ang)
        sx = c * ux + s * wx
        sy = c * uy + s * wy
        sz = c * uz + s * wz
        _support(tab_a, ia, T_a, tab_b, ib, T_b, sx, sy, sz, tmp)
        px = tmp[0] - tmp[3] - V[0, 0]
        py = tmp[1] - tmp[4] - V[0, 1]
        pz = tmp[2] - tmp[5] - V[0, 2]
        # distance from the line through V0, V1
        t = (px * dx + py * dy + pz * dz) / (dl * dl)
        qx = px - t * dx
        qy = py - t * dy
        qz = pz - t * dz
        e = qx * qx + qy * qy + qz * qz
        if e > best:
            best = e
            bsx, bsy, bsz = sx, sy, sz
    scale = max(scale, dl)
    if best <= _flat_tol(scale) ** 2:
        flat_n[0] = ux
        flat_n[1] = uy
        flat_n[2] = uz
        return -1.0
    _support(tab_a, ia, T_a, tab_b, ib, T_b, bsx, bsy, bsz, tmp)
    _append(V, VA, VB, TWO, tmp)
    return scale


@inline_kernel
def _grow_triangle(tab_a, ia, T_a, tab_b, ib, T_b, V, VA, VB, tmp, scale, flat_n):
    """A triangle to a tetrahedron: the farther support along its normal, either side.
    Returns the new scale, or -1.0 when D is flat and holds the origin (depth 0 along the
    normal, written to flat_n)."""
    abx = V[1, 0] - V[0, 0]
    aby = V[1, 1] - V[0, 1]
    abz = V[1, 2] - V[0, 2]
    acx = V[2, 0] - V[0, 0]
    acy = V[2, 1] - V[0, 1]
    acz = V[2, 2] - V[0, 2]
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    nl = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nl <= DIVISION_GUARD:
        nx, ny, nz = _perp(abx, aby, abz)
    else:
        nx /= nl
        ny /= nl
        nz /= nl
    best = -1.0
    sign = 1.0
    for sgn in (1.0, -1.0):
        _support(tab_a, ia, T_a, tab_b, ib, T_b, sgn * nx, sgn * ny, sgn * nz, tmp)
        h = abs(
            nx * (tmp[0] - tmp[3] - V[0, 0])
            + ny * (tmp[1] - tmp[4] - V[0, 1])
            + nz * (tmp[2] - tmp[5] - V[0, 2])
        )
        if h > best:
            best = h
            sign = sgn
    scale = max(scale, math.sqrt(abx * abx + aby * aby + abz * abz))
    if best <= _flat_tol(scale):
        flat_n[0] = nx
        flat_n[1] = ny
        flat_n[2] = nz
        return -1.0
    _support(tab_a, ia, T_a, tab_b, ib, T_b, sign * nx, sign * ny, sign * nz, tmp)
    _append(V, VA, VB, THREE, tmp)
    return scale


# ---------------------------------------------------------------------------------------
# expanding the polytope


@inline_kernel
def _nearest_face(FD, nf):
    """The live face nearest the origin and its distance, or (-1, 1e300) when none is."""
    best_f = -1
    bd = 1e300
    for f in range(nf):
        if FD[f] < bd:
            bd = FD[f]
            best_f = f
    return best_f, bd


@inline_kernel
def _remove_visible(V, F, FN, FD, E, nf, best_f, px, py, pz, visible):
    """Remove the faces visible from the new point p (farther out than `visible`); their
    unshared edges, the horizon, go to E. F[0:nf] are the live faces only: a face that goes
    is replaced by the last one (faces hold no adjacency, so moving them is free). Returns
    (nf, horizon edges, best_f where it moved to, whether best_f went)."""
    ne = 0
    best_gone = False
    f = 0
    while f < nf:
        a = int(F[f, 0])
        s = FN[f, 0] * (px - V[a, 0]) + FN[f, 1] * (py - V[a, 1]) + FN[f, 2] * (pz - V[a, 2])
        if not s > visible:
            f += 1
            continue
        best_gone = best_gone or f == best_f
        for q in range(3):
            e0 = F[f, q]
            e1 = F[f, (q + 1) % 3]
            found = -1
            for e in range(ne):
                if E[e, 0] == e1 and E[e, 1] == e0:
                    found = e
                    break
            if found >= 0:
                ne -= 1
                E[found, 0] = E[ne, 0]
                E[found, 1] = E[ne, 1]
            else:
                E[ne, 0] = e0
                E[ne, 1] = e1
                ne += 1
        # the last face moves here and is tested next
        nf -= 1
        if best_f == nf:
            best_f = f
        for r in range(3):
            F[f, r] = F[nf, r]
            FN[f, r] = FN[nf, r]
        FD[f] = FD[nf]
    return nf, ne, best_f, best_gone


@inline_kernel
def _add_faces(V, F, FN, FD, E, nf, ne, nv, bd, visible):
    """A face from each horizon edge to new vertex nv. Returns (nf, ok): not ok when a
    face is degenerate or nearer the origin than the face split (bd): the polytope only
    grows, so round-off has broken its convexity."""
    ok = True
    for e in range(ne):
        F[nf, 0] = E[e, 0]
        F[nf, 1] = E[e, 1]
        F[nf, 2] = nv
        if _face_setup(V, F, FN, FD, nf, MISSING):  # keep the winding
            if FD[nf] < bd - visible:
                ok = False
            nf += 1
        else:
            ok = False
    return nf, ok


@inline_kernel
def _witnesses(V, VA, VB, a, b, c, d, nx, ny, nz, out):
    """The answer from face (a, b, c) at distance d along its normal n: the origin's
    projection d n in barycentric coordinates gives the deepest points of A's and B's
    cores."""
    px = d * nx
    py = d * ny
    pz = d * nz
    area = _tri_area_n(
        V[a, 0], V[a, 1], V[a, 2], V[b, 0], V[b, 1], V[b, 2], V[c, 0], V[c, 1], V[c, 2], nx, ny, nz
    )
    la = (
        _tri_area_n(px, py, pz, V[b, 0], V[b, 1], V[b, 2], V[c, 0], V[c, 1], V[c, 2], nx, ny, nz)
        / area
    )
    lb = (
        _tri_area_n(V[a, 0], V[a, 1], V[a, 2], px, py, pz, V[c, 0], V[c, 1], V[c, 2], nx, ny, nz)
        / area
    )
    lc = 1.0 - la - lb
    out[0] = max(d, 0.0)
    for r in range(3):
        out[1 + r] = la * VA[a, r] + lb * VA[b, r] + lc * VA[c, r]
        out[4 + r] = la * VB[a, r] + lb * VB[b, r] + lc * VB[c, r]
    out[7] = nx
    out[8] = ny
    out[9] = nz


@inline_kernel
def _start_tetrahedron(V, F, FN, FD):
    """The four faces of the tetrahedron V[0:4], oriented outward by its centroid (kept in
    V[4] until vertex 4 is added). Returns how many are not degenerate."""
    for r in range(3):
        V[4, r] = 0.25 * (V[0, r] + V[1, r] + V[2, r] + V[3, r])
    nf = ZERO  # not 0: _face_setup would compile once more for the literal
    for fa, fb, fc in ((0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2)):
        F[nf, 0] = fa
        F[nf, 1] = fb
        F[nf, 2] = fc
        if _face_setup(V, F, FN, FD, nf, FOUR):  # oriented by V[4], the centroid
            nf += 1
    return nf


@hot_kernel
def epa_core(tab_a, ia, T_a, tab_b, ib, T_b, ws, n, out):
    """Penetration of the cores of shape ia (T_a) and ib (T_b), from GJK's simplex in ws.

    n: the size of GJK's final simplex (1..4; its weights in ws[LAM:]).
    Writes out[0] = core depth (>= 0), out[1:4] = deepest point of A's core (world),
    out[4:7] = of B's core, out[7:10] = unit normal from A to B, so that
    out[1:4] - out[4:7] = depth * normal. Returns the number of polytope vertices used.
    """
    V = ws[_V:_VA].reshape((MAX_VERTS, 3))
    VA = ws[_VA:_VB].reshape((MAX_VERTS, 3))
    VB = ws[_VB:_F].reshape((MAX_VERTS, 3))
    tmp = ws[_TMP:EPA_WS_END]
    for k in range(n):
        for r in range(3):
            V[k, r] = ws[W + 3 * k + r]
            VA[k, r] = ws[SA + 3 * k + r]
            VB[k, r] = ws[SB + 3 * k + r]
    # size of D for relative tolerances
    scale = 0.0
    for k in range(n):
        scale = max(scale, abs(V[k, 0]), abs(V[k, 1]), abs(V[k, 2]))
    if n == 1:
        scale = _grow_point(tab_a, ia, T_a, tab_b, ib, T_b, V, VA, VB, tmp, scale)
        if scale < 0.0:
            _flat_answer(ws, n, 1.0, 0.0, 0.0, out)
            return 1
    if n <= 2:
        scale = _grow_segment(tab_a, ia, T_a, tab_b, ib, T_b, V, VA, VB, tmp, scale, tmp[6:9])
        if scale < 0.0:
            _flat_answer(ws, n, tmp[6], tmp[7], tmp[8], out)
            return 2
    if n <= 3:
        scale = _grow_triangle(tab_a, ia, T_a, tab_b, ib, T_b, V, VA, VB, tmp, scale, tmp[6:9])
        if scale < 0.0:
            _flat_answer(ws, n, tmp[6], tmp[7], tmp[8], out)
            return 3
    F = ws[_F:_FN].reshape((MAX_FACES, 3))
    FN = ws[_FN:_FD].reshape((MAX_FACES, 3))
    FD = ws[_FD:_E]
    E = ws[_E:_TMP].reshape((MAX_EDGES, 2))
    nf = _start_tetrahedron(V, F, FN, FD)
    visible = VISIBLE_TOL * (1.0 + scale)
    nv = 4
    # the answer: the nearest face when the loop stops (kept apart, its slot may be reused)
    bd = 0.0
    bn = (1.0, 0.0, 0.0)
    ba = -1
    bb = 0
    bc = 0
    for _ in range(MAX_VERTS):
        best_f, bd = _nearest_face(FD, nf)
        if best_f < 0:
            ba = -1
            break
        bn = (FN[best_f, 0], FN[best_f, 1], FN[best_f, 2])
        ba = int(F[best_f, 0])
        bb = int(F[best_f, 1])
        bc = int(F[best_f, 2])
        _support(tab_a, ia, T_a, tab_b, ib, T_b, bn[0], bn[1], bn[2], tmp)
        px = tmp[0] - tmp[3]
        py = tmp[1] - tmp[4]
        pz = tmp[2] - tmp[5]
        dw = bn[0] * px + bn[1] * py + bn[2] * pz
        if dw - bd <= EPA_ABS_TOL + EPA_REL_TOL * abs(bd) or nv >= MAX_VERTS - 1:
            break
        # faces visible from the new point go; their unshared edges form the horizon
        nf, ne, best_f, best_gone = _remove_visible(
            V, F, FN, FD, E, nf, best_f, px, py, pz, visible
        )
        if not best_gone or nf + ne > MAX_FACES:
            # round-off: the nearest face is not visible from its own support point (or
            # no room for the new faces): answer with the nearest face
            break
        _append(V, VA, VB, nv, tmp)
        nf, ok = _add_faces(V, F, FN, FD, E, nf, ne, nv, bd, visible)
        nv += 1
        if not ok:  # round-off has broken convexity: stop at bd
            break
    if ba < 0:
        _flat_answer(ws, n, 1.0, 0.0, 0.0, out)
        return nv
    _witnesses(V, VA, VB, ba, bb, bc, bd, bn[0], bn[1], bn[2], out)
    return nv


@hot_kernel
def _tri_area_n(ax, ay, az, bx, by, bz, cx, cy, cz, nx, ny, nz):
    """Twice the signed area of triangle abc measured along n."""
    ux = bx - ax
    uy = by - ay
    uz = bz - az
    vx = cx - ax
    vy = cy - ay
    vz = cz - az
    return nx * (uy * vz - uz * vy) + ny * (uz * vx - ux * vz) + nz * (ux * vy - uy * vx)
