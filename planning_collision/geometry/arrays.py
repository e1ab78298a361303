"""Many obstacles as arrays: `ObstacleArrays`, what `Scene.from_arrays` and
`Scene.replace_all` take (a new scene per planning problem without per-object Python).

::

    import numpy as np
    import planning_collision as pc

    T = np.repeat(np.eye(4)[None], 3, axis=0); T[:, 0, 3] = (0.5, 0.6, 0.7)
    obstacles = (
        pc.ObstacleArrays.boxes(extents=np.full((3, 3), 0.1), T=T, names=["a", "b", "c"])
        + pc.ObstacleArrays.cylinders(radii=[0.05], lengths=[0.4], T=np.eye(4)[None])
    )
    scene = pc.Scene.from_arrays(obstacles)        # or scene.replace_all(obstacles)
    obstacles = pc.ObstacleArrays.from_records(records)   # a reader's records (io)

Each obstacle is one sphere, capsule, box, cylinder or cone, in the sizes the shapes take
(geometry/shapes.py: full sizes; a capsule's length between its sphere centres) and posed by
``T (4, 4)``, T_world_object. The arrays are validated once, when made, as the shapes
validate theirs (finite, > 0, within the working range; a capsule's length may be 0), with
a ValueError naming the argument, the obstacle and the value; they are read-only after.
"""

from __future__ import annotations

import numpy as np

from ..kernels.base import layout as L
from .poses import as_poses
from .shapes import Box, Capsule, Cone, Cylinder, Sphere
from .validate import length_array

__all__ = ["KINDS", "ObstacleArrays"]

# kind name -> the layout code `ObstacleArrays.kind` holds, and the shape it stands for
KINDS = {
    "sphere": (L.SPHERE, Sphere),
    "capsule": (L.CAPSULE, Capsule),
    "box": (L.BOX, Box),
    "cylinder": (L.CYLINDER, Cylinder),
    "cone": (L.CONE, Cone),
}
_NAME = {code: name for name, (code, _) in KINDS.items()}
_CODE = {cls: code for code, cls in KINDS.values()}
_CODES = np.array(sorted(_NAME), np.int64)
# per kind code: how many entries of a size row it uses, and what they are
_USED = np.zeros(max(_NAME) + 1, np.int64)
_USED[[L.SPHERE, L.CAPSULE, L.BOX, L.CYLINDER, L.CONE]] = (1, 2, 3, 2, 2)
_WHAT = {
    L.SPHERE: "radius",
    L.CAPSULE: "radius, length (>= 0)",
    L.BOX: "extents",
    L.CYLINDER: "radius, length",
    L.CONE: "radius, length",
}


_EYE = np.eye(4)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _names(names, n: int) -> tuple:
    if names is None:
        return (None,) * n
    if isinstance(names, str):
        raise TypeError(f"names must be a sequence of {n} names, got the string {names!r}")
    names = tuple(names)
    if len(names) != n:
        raise ValueError(f"names has {len(names)} entries for {n} obstacles")
    for k, x in enumerate(names):
        if x is not None and not isinstance(x, str):
            raise TypeError(f"names[{k}] must be a str or None, got {type(x).__name__}")
    return names


def _poses(T, n: int) -> np.ndarray:
    """T (n, 4, 4) validated (geometry.poses.as_poses: one compiled loop for an array), an
    array the ObstacleArrays owns (a sequence of poses is stacked first)."""
    P = T
    if type(P) is not np.ndarray:
        try:
            P = np.stack(P) if len(P) else np.zeros((0, 4, 4))
        except (TypeError, ValueError):
            P = T  # as_poses names the bad one
    P = as_poses(P, "T[{}]")
    if P is T or not P.flags.c_contiguous or P.dtype != np.float64:
        P = np.array(P, dtype=np.float64, order="C")
    if P.shape[0] != n:
        raise ValueError(f"T has {P.shape[0]} poses for {n} obstacles")
    return P


def _positive(name: str, a: np.ndarray, allow_zero: bool = False) -> None:
    bad = ~(a >= 0.0) if allow_zero else ~(a > 0.0)
    if a.ndim > 1:
        bad = bad.any(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        what = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name}[{k}] must be {what}, got {a[k].tolist()!r}")


class ObstacleArrays:
    """n obstacles, each one sphere, capsule, box, cylinder or cone (module doc).

    kind : (n,) int32, the kernels' layout codes (`KINDS`: kernels/base/layout.py);
    size : (n, 3) float64, m: a box's full extents; a sphere's (radius, 0, 0); a capsule's,
        cylinder's or cone's (radius, length, 0);
    T : (n, 4, 4) float64, T_world_object;
    names : n names (str or None).

    ``ObstacleArrays(kind, size, T, names)`` takes kind as names ("box", ...) or codes and
    validates every row (the entries a kind does not use are set to 0); the class methods
    `boxes`, `spheres`, `capsules`, `cylinders`, `cones` name their arguments in errors;
    ``a + b`` and `concat` join them; `from_records` takes a reader's records.
    """

    __slots__ = ("kind", "size", "T", "names")

    def __init__(self, kind, size, T, names=None):
        codes = [KINDS[k][0] if isinstance(k, str) and k in KINDS else k for k in kind]
        kind = np.asarray(codes)
        if kind.ndim != 1 or kind.dtype.kind not in "iu" or not np.isin(kind, _CODES).all():
            raise ValueError(
                f"kind must be a sequence of {', '.join(KINDS)} (or their layout codes), "
                f"got {list(kind)!r}"
            )
        n = kind.size
        size = length_array("size", size, (n, 3)).copy()
        used = np.arange(3)[None, :] < _USED[kind][:, None]
        size[~used] = 0.0
        positive = used.copy()
        positive[kind == L.CAPSULE, 1] = False  # a capsule's length may be 0
        bad = np.flatnonzero((positive & ~(size > 0.0)).any(axis=1) | (size < 0.0).any(axis=1))
        if bad.size:
            k = int(bad[0])
            raise ValueError(
                f"size[{k}] (a {_NAME[int(kind[k])]}: {_WHAT[int(kind[k])]}) must be > 0, got "
                f"{size[k, : _USED[kind[k]]].tolist()}"
            )
        self._set(kind.astype(np.int32), size, _poses(T, n), _names(names, n))

    def _set(self, kind, size, T, names) -> None:
        object.__setattr__(self, "kind", _frozen(kind))
        object.__setattr__(self, "size", _frozen(size))
        object.__setattr__(self, "T", _frozen(T))
        object.__setattr__(self, "names", names)

    def __setattr__(self, name, value):
        raise AttributeError(f"ObstacleArrays is immutable (cannot set {name!r})")

    @classmethod
    def _trusted(cls, kind, size, T, names) -> ObstacleArrays:
        """Arrays already validated (and owned: they are frozen here)."""
        self = object.__new__(cls)
        self._set(kind, size, T, names)
        return self

    # ------------------------------------------------------------------ by kind
    @classmethod
    def boxes(cls, extents, T, names=None) -> ObstacleArrays:
        """Boxes: ``extents (n, 3)`` full side lengths, m; ``T (n, 4, 4)``."""
        e = length_array("extents", extents, (-1, 3)).copy()
        _positive("extents", e)
        return cls._one_kind(L.BOX, e, T, names)

    @classmethod
    def spheres(cls, radii, T, names=None) -> ObstacleArrays:
        """Spheres: ``radii (n,)`` m; ``T (n, 4, 4)`` (their centres are the translations)."""
        r = length_array("radii", radii, (-1,))
        _positive("radii", r)
        size = np.zeros((r.size, 3))
        size[:, 0] = r
        return cls._one_kind(L.SPHERE, size, T, names)

    @classmethod
    def capsules(cls, radii, lengths, T, names=None) -> ObstacleArrays:
        """Capsules along their local z: ``radii (n,)``, ``lengths (n,)`` between the two
        sphere centres (>= 0), m; ``T (n, 4, 4)``."""
        return cls._axial(L.CAPSULE, radii, lengths, T, names, allow_zero=True)

    @classmethod
    def cylinders(cls, radii, lengths, T, names=None) -> ObstacleArrays:
        """Cylinders along their local z, centred: ``radii (n,)``, ``lengths (n,)`` m;
        ``T (n, 4, 4)``."""
        return cls._axial(L.CYLINDER, radii, lengths, T, names)

    @classmethod
    def cones(cls, radii, lengths, T, names=None) -> ObstacleArrays:
        """Cones along their local z (apex at +length/2): ``radii (n,)`` of the base,
        ``lengths (n,)`` m; ``T (n, 4, 4)``."""
        return cls._axial(L.CONE, radii, lengths, T, names)

    @classmethod
    def _axial(cls, code, radii, lengths, T, names, allow_zero=False) -> ObstacleArrays:
        r = length_array("radii", radii, (-1,))
        h = length_array("lengths", lengths, (-1,))
        if h.size != r.size:
            raise ValueError(f"lengths has {h.size} entries for {r.size} radii")
        _positive("radii", r)
        _positive("lengths", h, allow_zero=allow_zero)
        size = np.zeros((r.size, 3))
        size[:, 0] = r
        size[:, 1] = h
        return cls._one_kind(code, size, T, names)

    @classmethod
    def _one_kind(cls, code, size, T, names) -> ObstacleArrays:
        n = size.shape[0]
        return cls._trusted(np.full(n, code, np.int32), size, _poses(T, n), _names(names, n))

    # ------------------------------------------------------------------ joined, converted
    @classmethod
    def concat(cls, parts) -> ObstacleArrays:
        """One ObstacleArrays of several, in order."""
        parts = list(parts)
        for k, p in enumerate(parts):
            if not isinstance(p, ObstacleArrays):
                raise TypeError(f"parts[{k}] must be ObstacleArrays, got {type(p).__name__}")
        if not parts:
            return cls._trusted(np.zeros(0, np.int32), np.zeros((0, 3)), np.zeros((0, 4, 4)), ())
        return cls._trusted(
            np.concatenate([p.kind for p in parts]),
            np.concatenate([p.size for p in parts]),
            np.concatenate([p.T for p in parts]),
            sum((p.names for p in parts), ()),
        )

    def __add__(self, other):
        if not isinstance(other, ObstacleArrays):
            return NotImplemented
        return ObstacleArrays.concat([self, other])

    @classmethod
    def from_records(cls, records) -> ObstacleArrays:
        """The obstacles of records (anything with ``name``, ``shape`` and ``T``, as the
        readers of `planning_collision.io` return, e.g. a MotionBenchMaker problem's
        ``obstacles``) whose shapes are each a Sphere, Capsule, Box, Cylinder or Cone
        (shapes validate their sizes when made: only the poses are checked here).
        TypeError naming the record for any other shape (a compound, a mesh: use
        `Scene.from_records`)."""
        records = list(records)
        n = len(records)
        kind = np.empty(n, np.int32)
        size = np.zeros((n, 3))
        P = np.empty((n, 4, 4))  # the poses, copied as they come when they are 4x4 float64
        names = []
        copied = True
        for k, r in enumerate(records):
            s = r.shape
            code = _CODE.get(type(s))
            if code is None:
                raise TypeError(
                    f"records[{k}] ({r.name!r}) is a {type(s).__name__}: ObstacleArrays holds "
                    "spheres, capsules, boxes, cylinders and cones (Scene.from_records takes "
                    "any shape)"
                )
            kind[k] = code
            if code == L.BOX:
                size[k] = s.extents
            else:
                size[k, 0] = s.radius
                if code != L.SPHERE:
                    size[k, 1] = s.length
            T = _EYE if r.T is None else r.T
            if type(T) is np.ndarray and T.dtype == np.float64 and T.shape == (4, 4):
                P[k] = T
            else:
                copied = False
            names.append(r.name)
        if copied:
            as_poses(P, "T[{}]")  # (names the bad one)
        else:
            P = _poses([_EYE if r.T is None else r.T for r in records], n)
        return cls._trusted(kind, size, P, _names(names, n))

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self.kind.shape[0]

    def shape(self, k: int):
        """Obstacle k as a shape object (Box, Sphere, ...)."""
        code = int(self.kind[k])
        cls = KINDS[_NAME[code]][1]
        s = self.size[k]
        if code == L.BOX:
            return cls(s)
        if code == L.SPHERE:
            return cls(float(s[0]))
        return cls(float(s[0]), float(s[1]))

    def kind_names(self) -> list[str]:
        """Each obstacle's kind as a name ("box", ...)."""
        return [_NAME[int(k)] for k in self.kind]

    def __repr__(self) -> str:
        counts = {name: int((self.kind == code).sum()) for name, (code, _) in KINDS.items()}
        what = ", ".join(f"{c} {name}" for name, c in counts.items() if c)
        return f"ObstacleArrays({len(self)} obstacles{': ' + what if what else ''})"
