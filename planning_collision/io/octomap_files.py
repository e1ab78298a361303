"""OctoMap files checked before OctoMap reads them: what they would make it allocate.

OctoMap's readers trust the file. Its node stream is read recursively with no check of the
stream or the depth, so bytes that are not a tree (random bytes after a valid header, a
truncated file) make it create nodes until memory runs out (a 3 kB ``.ot`` file grew past
8 GB); and `extractPointCloud` expands each pruned occupied leaf into all the cells it
covers, 8^(16 - depth) of them, so a tiny file can ask for 10^13 cells. `check_octomap_file`
walks the stream first, in Python, allocating nothing per node: the header as OctoMap reads
it, every node within the file and the tree's 16 levels, the stream ending where the file
ends, the node count the header states, a resolution in range, and the occupied cells the
map expands to at most `MAX_CELLS`. Anything else is a ValueError naming the file.

The two formats (OctoMap's ``OcTree::writeBinary`` and ``AbstractOcTree::write``):

- ``.bt``: each inner node is two bytes, two bits per child (01 free leaf, 10 occupied leaf,
  11 inner node, 00 none: bit 2i first), followed by its inner children, depth first;
- ``.ot``: each node is its log-odds (float32) and a byte of child bits, followed by its
  children, depth first; a node without children is a leaf, occupied from log-odds 0
  (OctoMap's default threshold, probability 0.5).
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import NamedTuple

from ..kernels.base.tolerances import WORLD_LIMIT

__all__ = ["MAX_CELLS", "MIN_RESOLUTION", "OctoMapFile", "check_octomap_file"]

DEPTH = 16  # OctoMap's OcTree: 16 levels below the root
MAX_CELLS = 20_000_000  # occupied cells a map may expand to (~0.5 GB of cell indices)
MIN_RESOLUTION = 1e-6  # m: a finer "map" is no map (and 1e-300 divided by zero)
_HEADERS = {".bt": b"# Octomap OcTree binary file", ".ot": b"# Octomap OcTree file"}


class OctoMapFile(NamedTuple):
    """What `check_octomap_file` found: the resolution (m), the nodes and the occupied
    cells the map expands to."""

    resolution: float
    nodes: int
    cells: int


def _header(data: bytes, suffix: str, where: str) -> tuple[dict, int]:
    """({"id", "size", "res"}, where the node stream starts) of the file's bytes."""
    first, _, rest = data.partition(b"\n")
    if not first.startswith(_HEADERS[suffix]):
        raise ValueError(f"{where}: not an OctoMap {suffix} file (first line {first[:60]!r})")
    fields, pos = {}, len(first) + 1
    for line in rest.split(b"\n", 64)[:64]:
        pos += len(line) + 1
        words = line.split()
        if not words or words[0].startswith(b"#"):
            continue
        if words == [b"data"]:
            missing = {"id", "size", "res"} - set(fields)
            if missing:
                raise ValueError(f"{where}: its header lacks {sorted(missing)}")
            return fields, pos
        if words[0] not in (b"id", b"size", b"res") or len(words) != 2:
            raise ValueError(f"{where}: unexpected header line {line[:60]!r}")
        fields[words[0].decode()] = words[1].decode(errors="replace")
    raise ValueError(f"{where}: its header never reaches 'data' (truncated, or not OctoMap's)")


# per byte of a .bt node: (children, occupied leaves, inner children) of its four 2-bit codes
_BT = [
    (
        sum((b >> (2 * i)) & 3 != 0 for i in range(4)),
        sum((b >> (2 * i)) & 3 == 2 for i in range(4)),
        sum((b >> (2 * i)) & 3 == 3 for i in range(4)),
    )
    for b in range(256)
]
_BITS = [bin(b).count("1") for b in range(256)]


def _walk_bt(body: bytes, where: str) -> tuple[int, int]:
    """(nodes, occupied cells) of a binary node stream (module doc)."""
    pos, nodes, cells, n = 0, 1, 0, len(body)
    stack = [0]  # depths of the inner nodes whose bytes come next, depth first
    while stack and cells <= MAX_CELLS:
        depth = stack.pop()
        if pos + 2 > n:
            raise ValueError(f"{where}: its node stream ends inside a node (truncated)")
        a, b = _BT[body[pos]], _BT[body[pos + 1]]
        pos += 2
        nodes += a[0] + b[0]
        cells += (a[1] + b[1]) * 8 ** (DEPTH - depth - 1)
        inner = a[2] + b[2]
        if inner:
            if depth + 1 >= DEPTH:
                raise ValueError(f"{where}: a node {depth + 2} levels deep (OctoMap has 16)")
            stack.extend([depth + 1] * inner)
    if cells <= MAX_CELLS and pos != n:
        raise ValueError(f"{where}: {n - pos} bytes follow its tree")
    return nodes, cells


def _walk_ot(body: bytes, where: str) -> tuple[int, int]:
    """(nodes, occupied cells) of a full node stream (module doc)."""
    pos, nodes, cells, n = 0, 0, 0, len(body)
    stack = [0]
    value_at = struct.Struct("<f").unpack_from
    while stack and cells <= MAX_CELLS:
        depth = stack.pop()
        if pos + 5 > n:
            raise ValueError(f"{where}: its node stream ends inside a node (truncated)")
        (value,) = value_at(body, pos)
        bits = body[pos + 4]
        pos += 5
        nodes += 1
        if not math.isfinite(value):
            raise ValueError(f"{where}: node {nodes - 1} has log-odds {value}")
        if bits == 0:
            if value >= 0.0:  # OctoMap's isNodeOccupied at its default threshold
                cells += 8 ** (DEPTH - depth)
            continue
        if depth >= DEPTH:
            raise ValueError(f"{where}: a node {depth + 2} levels deep (OctoMap has 16)")
        stack.extend([depth + 1] * _BITS[bits])
    if cells <= MAX_CELLS and pos != n:
        raise ValueError(f"{where}: {n - pos} bytes follow its tree")
    return nodes, cells


def check_octomap_file(path) -> OctoMapFile:
    """The checks of the module doc on the OctoMap file `path` (``.bt`` or ``.ot``), before
    OctoMap reads it. ValueError naming the file; FileNotFoundError when there is none."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no OctoMap file at {str(p)!r}")
    where = f"OctoMap file {str(p)!r}"
    if p.suffix not in _HEADERS:
        raise ValueError(f"{where} must end in .bt (binary) or .ot (full)")
    data = p.read_bytes()
    fields, start = _header(data, p.suffix, where)
    if fields["id"] != "OcTree":
        raise ValueError(f"{where}: holds a {fields['id']!r}, not an OcTree")
    try:
        size, res = int(fields["size"]), float(fields["res"])
    except ValueError:
        got = f"size {fields['size']!r}, res {fields['res']!r}"
        raise ValueError(f"{where}: its header says {got}: not numbers") from None
    if not (MIN_RESOLUTION <= res <= WORLD_LIMIT):
        raise ValueError(
            f"{where}: resolution {fields['res']} m is outside [{MIN_RESOLUTION:g}, "
            f"{WORLD_LIMIT:g}] m"
        )
    if size == 0 and start >= len(data):  # OctoMap writes an empty tree so
        raise ValueError(f"{where}: no occupied cell")
    walk = _walk_bt if p.suffix == ".bt" else _walk_ot
    nodes, cells = walk(data[start:], where)
    if cells > MAX_CELLS:
        raise ValueError(
            f"{where}: its occupied leaves cover more than {MAX_CELLS:,} cells of "
            f"{res:g} m (a pruned leaf covers all the cells under it)"
        )
    if nodes != size:
        raise ValueError(f"{where}: its header says {size} nodes, its tree has {nodes}")
    if cells == 0:
        raise ValueError(f"{where}: no occupied cell")
    return OctoMapFile(res, nodes, cells)
