"""Hulls rebuilt from their stored faces (geometry/hull.py): the same arrays qhull gives, and
faces that are not the hull refused."""

import numpy as np
import pytest

from planning_collision import robots
from planning_collision.geometry import Convex, HullFaces, convex_hull
from planning_collision.geometry.hull import (
    faces_arrays,
    faces_from_arrays,
    hull_from_faces,
    hull_with_faces,
)


def _point_sets():
    rng = np.random.default_rng(36)
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    sets = {
        "random": rng.normal(size=(60, 3)),
        "few": rng.normal(size=(4, 3)),
        # coplanar facets, duplicates and points on edges: qhull's triangulated output
        "grid": np.array([[x, y, z] for x in range(3) for y in range(3) for z in range(3)], float),
        "cube, repeated": np.concatenate([cube, cube, 0.5 * cube + 0.25]),
        "flat": np.c_[rng.normal(size=(30, 2)), np.full(30, 0.2)],
        "triangle": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]),
        "collinear": np.outer(rng.normal(size=10), [1.0, 2.0, 3.0]),
        "one point": np.ones((5, 3)),
        "far from the origin": rng.normal(size=(40, 3)) * 1e-3 + 50.0,
    }
    f = next(robots.robot_dir("free_flyer").glob("geometry-*.npz"))
    with np.load(f) as z:
        ps = z["pstart"]
        for i in range(len(ps) - 1):
            if ps[i + 1] > ps[i]:
                sets[f"free_flyer piece {i}"] = z["points"][ps[i] : ps[i + 1]]
    return sets


SETS = _point_sets()


def _same(a, b) -> bool:
    return a.dim == b.dim and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a[:3], b[:3], strict=True)
    )


@pytest.mark.parametrize("name", sorted(SETS))
def test_a_hull_rebuilt_from_its_faces_has_the_arrays_qhull_gives(name):
    p = SETS[name]
    hull, faces = hull_with_faces(p)
    assert _same(hull, convex_hull(p))
    if hull.dim <= 1:  # a point or a segment needs no qhull, and so no faces
        assert faces is None
        return
    assert faces is not None
    got, used = hull_from_faces(p, faces)
    assert used is faces and _same(got, hull)
    s = Convex.with_hull_faces(p, 0.01, faces)
    assert _same(s.hull, hull) and s.hull_faces is faces and s == Convex(p, 0.01)


def _solid():
    p = SETS["random"]
    return p, hull_with_faces(p)[1]


def _with(faces=None, order=None):
    p, f = _solid()
    return p, HullFaces(f.order if order is None else order, f.faces if faces is None else faces)


@pytest.mark.parametrize(
    "case",
    [
        lambda: _with(faces=_solid()[1].faces[:-2]),  # a hole
        lambda: _with(faces=_solid()[1].faces[:, [0, 2, 1]]),  # turned inside out
        lambda: _with(faces=np.r_[_solid()[1].faces[:-1], _solid()[1].faces[-1:, [0, 2, 1]]]),
        lambda: _with(faces=np.r_[_solid()[1].faces[:-1], _solid()[1].faces[:1]]),  # repeated
        lambda: _with(order=_solid()[1].order[::-1].copy()),  # other points, same faces
        lambda: _with(order=_solid()[1].order + 1000),  # out of range
        lambda: _with(faces=_solid()[1].faces + 1),
        # a vertex replaced by a point inside the hull: points lie outside its faces
        lambda: _with(order=np.r_[_solid()[1].order[:-1], [
            int(np.setdiff1d(np.arange(60), _solid()[1].order)[0])]].astype(np.int32)),
        # a polygon whose ring skips a vertex
        lambda: (SETS["flat"], HullFaces(hull_with_faces(SETS["flat"])[1].order[1:],
                                         np.zeros((0, 3), np.int32))),
        lambda: (SETS["flat"], HullFaces(hull_with_faces(SETS["flat"])[1].order[::-1].copy(),
                                         np.zeros((0, 3), np.int32))),  # clockwise
    ],
)  # fmt: skip
def test_faces_that_are_not_the_hull_are_refused(case):
    p, faces = case()
    with pytest.raises(ValueError):
        hull_from_faces(p, faces)
    with pytest.raises(ValueError):
        Convex.with_hull_faces(p, 0.0, faces)


def test_a_ring_for_a_set_that_is_not_flat_gives_the_hull_computed_anew():
    """Whether a set is flat is decided on the loading machine: a polygon's ring stored for
    a set that is not flat here is not used, and the hull is qhull's."""
    flat, solid = SETS["flat"], SETS["random"]
    got, used = hull_from_faces(solid, hull_with_faces(flat)[1])
    assert used is None and _same(got, convex_hull(solid))


def test_the_two_sides_of_a_flat_set_are_no_solid():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]])
    sides = HullFaces(np.arange(4, dtype=np.int32),
                      np.array([[0, 1, 2], [0, 2, 3], [1, 0, 3], [1, 3, 2]], np.int32))  # fmt: skip
    with pytest.raises(ValueError, match="enclose no solid"):
        hull_from_faces(square, sides)


def test_faces_go_through_a_cache_entrys_arrays_and_older_entries_are_refused():
    faces = [hull_with_faces(SETS[n])[1] for n in ("random", "one point", "flat", "grid")]
    z = faces_arrays(faces)
    back = faces_from_arrays(z, len(faces))
    assert back[1] is None
    for a, b in zip(faces, back, strict=True):
        if a is not None:
            assert np.array_equal(a.order, b.order) and np.array_equal(a.faces, b.faces)
    with pytest.raises(ValueError, match="an older version wrote it"):
        faces_from_arrays({k: v for k, v in z.items() if k != "hull_faces"}, len(faces))
    with pytest.raises(ValueError, match="do not cover"):
        faces_from_arrays(z, len(faces) + 1)
    bad = dict(z, hull_faces_start=z["hull_faces_start"][::-1].copy())
    with pytest.raises(ValueError, match="do not cover"):
        faces_from_arrays(bad, len(faces))
