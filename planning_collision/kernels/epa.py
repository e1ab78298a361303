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

import numpy as np

from ._jit import hot_kernel
from .gjk import LAM, SA, SB, WS_SIZE, W
from .support import AT0, AT3, support_world
from .tolerances import EPA_ABS_TOL, EPA_REL_TOL, EPA_VISIBLE_TOL

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
EPA_WS_END = _TMP + 6
# Convergence and visibility tolerances: kernels/tolerances.py says why they are what they are.
VISIBLE_TOL = EPA_VISIBLE_TOL
# _face_setup's `inner`: the start tetrahedron's centroid (V[4]), or none (np.int64: see
# support.AT0)
_CENTROID = np.int64(4)
_KEEP_WINDING = np.int64(-1)


@hot_kernel
def _support(tab_a, ia, T_a, tab_b, ib, T_b, dx, dy, dz, tmp):
    support_world(tab_a, ia, T_a, dx, dy, dz, tmp, AT0)
    support_world(tab_b, ib, T_b, -dx, -dy, -dz, tmp, AT3)


@hot_kernel
def _face_setup(V, F, FN, FD, f, inner):
    """Outward unit normal and origin distance of face f; `inner` is a point inside the
    polytope used to orient the initial faces (pass -1 to keep the winding). Returns False
    for a degenerate face."""
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
    if nn <= 1e-30:
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
    nv = n
    if nv == 1:
        # grow a point to a segment: the farthest support along the axes
        best = 0.0
        bx = 0.0
        by = 0.0
        bz = 0.0
        for ax in range(6):
            dx = 0.0
            dy = 0.0
            dz = 0.0
            if ax == 0:
                dx = 1.0
            elif ax == 1:
                dx = -1.0
            elif ax == 2:
                dy = 1.0
            elif ax == 3:
                dy = -1.0
            elif ax == 4:
                dz = 1.0
            else:
                dz = -1.0
            _support(tab_a, ia, T_a, tab_b, ib, T_b, dx, dy, dz, tmp)
            ex = tmp[0] - tmp[3] - V[0, 0]
            ey = tmp[1] - tmp[4] - V[0, 1]
            ez = tmp[2] - tmp[5] - V[0, 2]
            e = ex * ex + ey * ey + ez * ez
            if e > best:
                best = e
                bx, by, bz = dx, dy, dz
        scale = max(scale, math.sqrt(best))
        if best <= (1e-12 + 1e-9 * scale) ** 2:
            # D is a single point (two point cores at the same place)
            _flat_answer(ws, n, 1.0, 0.0, 0.0, out)
            return 1
        _support(tab_a, ia, T_a, tab_b, ib, T_b, bx, by, bz, tmp)
        for r in range(3):
            VA[1, r] = tmp[r]
            VB[1, r] = tmp[3 + r]
            V[1, r] = tmp[r] - tmp[3 + r]
        nv = 2
    if nv == 2:
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
        if best <= (1e-12 + 1e-9 * scale) ** 2:
            # D is a segment through the origin: depth 0 in every perpendicular direction
            _flat_answer(ws, n, ux, uy, uz, out)
            return 2
        _support(tab_a, ia, T_a, tab_b, ib, T_b, bsx, bsy, bsz, tmp)
        for r in range(3):
            VA[2, r] = tmp[r]
            VB[2, r] = tmp[3 + r]
            V[2, r] = tmp[r] - tmp[3 + r]
        nv = 3
    if nv == 3:
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
        if nl <= 1e-300:
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
        if best <= 1e-12 + 1e-9 * scale:
            # D is flat and contains the origin: depth 0 along its normal
            _flat_answer(ws, n, nx, ny, nz, out)
            return 3
        _support(tab_a, ia, T_a, tab_b, ib, T_b, sign * nx, sign * ny, sign * nz, tmp)
        for r in range(3):
            VA[3, r] = tmp[r]
            VB[3, r] = tmp[3 + r]
            V[3, r] = tmp[r] - tmp[3 + r]
        nv = 4

    F = ws[_F:_FN].reshape((MAX_FACES, 3))
    FN = ws[_FN:_FD].reshape((MAX_FACES, 3))
    FD = ws[_FD:_E]
    E = ws[_E:_TMP].reshape((MAX_EDGES, 2))
    # inner point of the tetrahedron (centroid) orients the four faces outward
    for r in range(3):
        V[4, r] = 0.25 * (V[0, r] + V[1, r] + V[2, r] + V[3, r])
    faces0 = ((0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2))
    # F[0:nf] are the live faces only: a face that goes is replaced by the last one, so
    # every scan touches live faces (faces hold no adjacency, so moving them is free).
    nf = np.int64(0)  # not 0: _face_setup would compile once more for the literal
    for fa, fb, fc in faces0:
        F[nf, 0] = fa
        F[nf, 1] = fb
        F[nf, 2] = fc
        if _face_setup(V, F, FN, FD, nf, _CENTROID):
            nf += 1
    # the answer: the nearest face when the loop stops (kept apart, its slot may be reused)
    bd = 0.0
    bnx = 1.0
    bny = 0.0
    bnz = 0.0
    ba = -1
    bb = 0
    bc = 0
    for _ in range(MAX_VERTS):
        # nearest live face
        best_f = -1
        bd = 1e300
        for f in range(nf):
            if FD[f] < bd:
                bd = FD[f]
                best_f = f
        if best_f < 0:
            ba = -1
            break
        bnx = FN[best_f, 0]
        bny = FN[best_f, 1]
        bnz = FN[best_f, 2]
        ba = int(F[best_f, 0])
        bb = int(F[best_f, 1])
        bc = int(F[best_f, 2])
        _support(tab_a, ia, T_a, tab_b, ib, T_b, bnx, bny, bnz, tmp)
        px = tmp[0] - tmp[3]
        py = tmp[1] - tmp[4]
        pz = tmp[2] - tmp[5]
        dw = bnx * px + bny * py + bnz * pz
        if dw - bd <= EPA_ABS_TOL + EPA_REL_TOL * abs(bd) or nv >= MAX_VERTS - 1:
            break
        # faces visible from the new point go; their unshared edges form the horizon
        ne = 0
        best_gone = False
        f = 0
        while f < nf:
            a = int(F[f, 0])
            s = FN[f, 0] * (px - V[a, 0]) + FN[f, 1] * (py - V[a, 1]) + FN[f, 2] * (pz - V[a, 2])
            if not s > VISIBLE_TOL * (1.0 + scale):
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
        if not best_gone or nf + ne > MAX_FACES:
            # round-off: the nearest face is not visible from its own support point (or
            # no room for the new faces): answer with the nearest face
            break
        V[nv, 0] = px
        V[nv, 1] = py
        V[nv, 2] = pz
        for r in range(3):
            VA[nv, r] = tmp[r]
            VB[nv, r] = tmp[3 + r]
        ok = True
        for e in range(ne):
            F[nf, 0] = E[e, 0]
            F[nf, 1] = E[e, 1]
            F[nf, 2] = nv
            if _face_setup(V, F, FN, FD, nf, _KEEP_WINDING):
                # the polytope only grows, so no face can come nearer the origin than the
                # one split; if one does, round-off has broken convexity: stop at bd
                if FD[nf] < bd - VISIBLE_TOL * (1.0 + scale):
                    ok = False
                nf += 1
            else:
                ok = False
        nv += 1
        if not ok:
            break
    if ba < 0:
        _flat_answer(ws, n, 1.0, 0.0, 0.0, out)
        return nv
    # witness points: barycentric coordinates of the origin's projection on the face
    d = bd
    nx = bnx
    ny = bny
    nz = bnz
    px = d * nx
    py = d * ny
    pz = d * nz
    a = ba
    b = bb
    c = bc
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
