"""MoveIt SRDF reading: the link pairs a robot's SRDF disables collisions for.

`read_srdf(path)` returns the ``<disable_collisions link1="a" link2="b" reason="Never"/>``
elements of an SRDF as records, in file order. A malformed file raises `SRDFError` (a
ValueError) naming the file and the element. Given the robot's link names, entries that name
a link the robot lacks are skipped with one warning listing those links, as MoveIt does (an
SRDF often outlives edits of its URDF: a trimmed mobile base, a removed sensor); with
``strict=True`` they raise `SRDFError` instead, naming every unknown link at once. Skipping
an entry only checks more pairs, never fewer. Other SRDF elements (groups,
group states, end effectors, virtual joints, ``disable_default_collisions``) are not read:
ignoring a disable only checks more pairs, never fewer.

``Robot.from_urdf(urdf, srdf=path)`` allows these pairs in the robot's allowed-collision
matrix (refusing an SRDF none of whose pairs names two of the robot's links: another
robot's). `write_srdf(path, name, entries)` writes a matrix's pairs as MoveIt's setup
assistant does (``robot.write_srdf(path)``), with MoveIt's reasons (`MOVEIT_REASONS`);
read back, each pair has the reason it was written with (`acm_reason`).
"""

from __future__ import annotations

import dataclasses
import logging
import xml.etree.ElementTree as ET
from pathlib import Path

__all__ = [
    "MOVEIT_REASONS",
    "DisabledCollision",
    "SRDFData",
    "SRDFError",
    "acm_reason",
    "read_srdf",
    "write_srdf",
]

log = logging.getLogger(__name__)

# The reasons MoveIt's setup assistant writes, by the allowed-collision matrix's names
# (robot/acm.py): adjacent links, pairs colliding in the default configuration, in
# every or in none of the sampled configurations, and pairs a user disabled.
MOVEIT_REASONS = {
    "adjacent": "Adjacent",
    "default": "Default",
    "always": "Always",
    "never": "Never",
    "user": "User",
}
_FROM_MOVEIT = {v.lower(): k for k, v in MOVEIT_REASONS.items()}


class SRDFError(ValueError):
    """An SRDF problem; the message names the file and the element at fault."""


@dataclasses.dataclass(frozen=True)
class DisabledCollision:
    """One ``<disable_collisions>``: links whose collisions are ignored, and why (the
    SRDF's reason, e.g. "Adjacent", "Never", "Default"; "" when it gives none)."""

    link1: str
    link2: str
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class SRDFData:
    path: Path
    name: str  # the <robot name=...> attribute ("" when absent)
    disabled_collisions: tuple  # of DisabledCollision, file order
    # entries naming links the robot lacks, left out of disabled_collisions (read_srdf)
    skipped: tuple = ()


def _describe(el: ET.Element, i: int) -> str:
    attrs = " ".join(f'{k}="{v}"' for k, v in el.attrib.items())
    return f"<{el.tag}{' ' if attrs else ''}{attrs}/> (disable_collisions #{i + 1})"


def _parse(path: Path) -> ET.Element:
    try:
        root = ET.parse(path).getroot()
    except OSError as e:
        raise SRDFError(f"{path}: cannot read the SRDF: {e}") from e
    except ET.ParseError as e:
        raise SRDFError(f"{path}: not well-formed XML: {e}") from e
    if root.tag != "robot":
        raise SRDFError(f"{path}: the root element must be <robot>, got <{root.tag}>")
    return root


def read_srdf(path, link_names=None, *, strict: bool = False) -> SRDFData:
    """The ``disable_collisions`` pairs of the SRDF at `path`.

    link_names : iterable of str, optional
        The robot's links. When given, a pair naming any other link is left out (in
        `SRDFData.skipped`) and one warning (logger ``planning_collision.io.srdf``) lists
        the unknown links; with ``strict=True`` it raises `SRDFError` listing every unknown
        name instead.

    Raises FileNotFoundError for a missing file and `SRDFError` for a malformed one
    (not XML, another root element, a ``disable_collisions`` without ``link1`` or ``link2``,
    or naming one link twice).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"SRDF file not found: {path}")
    root = _parse(path)
    out = []
    for i, el in enumerate(root.iter("disable_collisions")):
        a, b = el.get("link1", "").strip(), el.get("link2", "").strip()
        for attr, v in (("link1", a), ("link2", b)):
            if not v:
                raise SRDFError(f"{path}: {_describe(el, i)} has no {attr} attribute")
        if a == b:
            raise SRDFError(f"{path}: {_describe(el, i)} names link {a!r} twice")
        out.append(DisabledCollision(a, b, el.get("reason", "").strip()))
    if link_names is None:
        return SRDFData(path, root.get("name", ""), tuple(out))
    known = set(link_names)
    unknown = sorted({n for d in out for n in (d.link1, d.link2)} - known)
    kept = tuple(d for d in out if d.link1 in known and d.link2 in known)
    skipped = tuple(d for d in out if d.link1 not in known or d.link2 not in known)
    if unknown and strict:
        bad = [
            _describe(el, i)
            for i, el in enumerate(root.iter("disable_collisions"))
            if el.get("link1", "").strip() in unknown or el.get("link2", "").strip() in unknown
        ]
        raise SRDFError(
            f"{path}: disable_collisions name links the robot does not have: {unknown} "
            f"(in {len(bad)} elements, first {bad[0]}); the robot's links: "
            f"{sorted(known)}"
        )
    if unknown:
        log.warning(
            "%s: skipped %d of %d disable_collisions entries naming links the robot does not "
            "have: %s (pass strict=True to refuse such an SRDF)",
            path,
            len(skipped),
            len(out),
            unknown,
        )
    return SRDFData(path, root.get("name", ""), kept, skipped)


def acm_reason(reason: str) -> str:
    """The allowed-collision matrix's reason for an SRDF's: MoveIt's own (any case) in the
    matrix's spelling ("Never" -> "never"), "srdf" when the SRDF gives none, any other as
    written."""
    reason = reason.strip()
    return _FROM_MOVEIT.get(reason.lower(), reason) if reason else "srdf"


def write_srdf(path, name: str, entries) -> Path:
    """Write a MoveIt SRDF at `path` for robot `name`: one ``<disable_collisions link1=
    link2= reason=/>`` per entry (link_a, link_b, reason) of an allowed-collision matrix
    (``acm.entries()``), in order, reasons in MoveIt's spelling (`MOVEIT_REASONS`; "srdf",
    an SRDF's pair without a reason, written without one; any other as it is). Returns the
    path. `read_srdf` and ``Robot.from_urdf(srdf=path)`` read back the same pairs and
    reasons."""
    path = Path(path)
    root = ET.Element("robot", name=str(name))
    root.text = "\n  "
    root.append(ET.Comment(" allowed collision pairs, written by planning_collision "))
    for a, b, reason in entries:
        a, b, reason = str(a), str(b), str(reason)
        if not a or not b or a == b:
            raise ValueError(f"an entry needs two different links, got {a!r} and {b!r}")
        attrs = {"link1": a, "link2": b}
        if reason != "srdf":
            attrs["reason"] = MOVEIT_REASONS.get(reason, reason)
        ET.SubElement(root, "disable_collisions", attrs)
    for el in root:
        el.tail = "\n  "
    if len(root):
        root[-1].tail = "\n"
    text = '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode")
    path.write_text(text + "\n", encoding="utf-8")
    return path
