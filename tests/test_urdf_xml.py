"""io/urdf_xml.py reads a URDF as yourdfpy reads it (the parser the project used before,
whose import costs a process ~1.2 s): the same records and the same problems from every URDF
of example-robot-data and of the registry, and from malformed files."""

from pathlib import Path

import numpy as np
import pytest

from planning_collision.io import urdf as U

yourdfpy = pytest.importorskip("yourdfpy")
ROOT = Path(__file__).resolve().parents[1]


def _yourdfpy_robot(path):
    """The robot element as yourdfpy reads it (no meshes, no scene graph), or
    URDFParseError, as io/urdf.py used it."""
    import xml.etree.ElementTree as ET

    try:
        ET.parse(path)
        urdf = yourdfpy.URDF.load(
            str(path),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
            filename_handler=lambda fname: fname,
        )
        if urdf.robot is None or not isinstance(urdf.robot.name, str):
            raise ValueError("no <robot name=...> element")
    except Exception as e:  # noqa: BLE001 - yourdfpy raises anything for a bad file
        raise U.URDFParseError(f"{path}: {e}") from e
    return urdf.robot


def _read(path, parse=None):
    """(records, problems as strings), or the URDFParseError class."""
    try:
        data, problems = U._read(path, None, parse)
    except U.URDFParseError:
        return U.URDFParseError
    return data, [f"{type(p).__name__}: {p}" for p in problems]


def _same(a, b) -> None:
    if a is U.URDFParseError or b is U.URDFParseError:
        assert a is b
        return
    (da, pa), (db, pb) = a, b
    assert pa == pb
    assert (da.name, da.root, list(da.links), list(da.joints)) == (
        db.name, db.root, list(db.links), list(db.joints),
    )  # fmt: skip
    for name, la in da.links.items():
        lb = db.links[name]
        assert len(la.collisions) == len(lb.collisions), name
        for ca, cb in zip(la.collisions, lb.collisions, strict=True):
            assert (ca.kind, ca.filename) == (cb.kind, cb.filename), name
            np.testing.assert_allclose(ca.size, cb.size, err_msg=name)
            np.testing.assert_allclose(ca.scale, cb.scale, err_msg=name)
            np.testing.assert_allclose(ca.origin, cb.origin, atol=1e-12, err_msg=name)
    for name, ja in da.joints.items():
        jb = db.joints[name]
        assert (ja.type, ja.parent, ja.child, ja.mimic) == (jb.type, jb.parent, jb.child, jb.mimic)
        np.testing.assert_allclose(
            [ja.lower, ja.upper, ja.multiplier, ja.offset],
            [jb.lower, jb.upper, jb.multiplier, jb.offset],
        )
        np.testing.assert_allclose(ja.origin, jb.origin, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(ja.axis, jb.axis, atol=1e-15, err_msg=name)


def _all_urdfs() -> list[Path]:
    files = sorted((ROOT / "robots").rglob("*.urdf"))
    try:
        files += sorted((U.example_robot_data_dir() / "robots").rglob("*.urdf"))
    except ImportError:
        pass
    return files


def test_every_urdf_of_example_robot_data_and_the_registry_reads_as_with_yourdfpy():
    files = _all_urdfs()
    assert len(files) >= 10, files
    for f in files:
        _same(_read(f), _read(f, _yourdfpy_robot))


ARM = """<robot name="arm">
  <link name="base"><collision><origin xyz="0 0 0.1" rpy="0.1 -0.2 0.3"/>
    <geometry><box size="0.1, 0.2, 0.3"/></geometry></collision>
    <collision><geometry><cylinder radius="0.05" length="0.2"/></geometry></collision></link>
  <link name="upper"><collision><geometry><sphere radius="0.04"/></geometry></collision>
    {upper}</link>
  <link name="lower"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.2" rpy="1.5707963 0 0.7"/><axis xyz="0 0 2"/>
    <limit lower="-1.5" upper="1.5" velocity="1" effort="10"/></joint>
  <joint name="elbow" type="{elbow}"><parent link="upper"/><child link="lower"/>
    {extra}</joint>
</robot>"""
CASES = {
    "plain": {},
    "continuous, no axis, no origin": {"elbow": "continuous"},
    "mimic with defaults": {"extra": '<mimic joint="shoulder"/>'},
    "mimic with factors": {"extra": '<mimic joint="shoulder" multiplier="-2" offset="0.1"/>'},
    "prismatic without limit": {"elbow": "prismatic"},
    "limits reversed": {"extra": '<limit lower="1" upper="-1"/>'},
    "empty geometry": {"upper": "<collision><geometry/></collision>"},
    "unknown geometry": {"upper": "<collision><geometry><torus/></geometry></collision>"},
    "box of two numbers": {
        "upper": '<collision><geometry><box size="1 2"/></geometry></collision>'
    },
    "negative radius": {
        "upper": '<collision><geometry><sphere radius="-1"/></geometry></collision>'
    },
    "origin of two numbers": {"extra": '<origin xyz="0 1"/>'},
    "zero axis": {
        "extra": '<axis xyz="0 0 0"/><limit lower="0" upper="1"/>',
        "elbow": "revolute",
    },  # fmt: skip
    "not a number": {"extra": '<origin xyz="0 a 1"/>'},
    "unknown type": {"elbow": "planar"},
    "no parent": {"extra": "<parent/>"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_and_unusual_files_give_the_same_records_or_problems(case, tmp_path):
    fields = {"upper": "", "elbow": "fixed", "extra": ""} | CASES[case]
    text = ARM.format(**fields)
    if case == "no parent":
        text = text.replace('<parent link="upper"/>', "")
    f = tmp_path / "arm.urdf"
    f.write_text(text)
    _same(_read(f), _read(f, _yourdfpy_robot))


def test_a_collision_without_geometry_is_named_where_yourdfpy_failed_to_parse(tmp_path):
    f = tmp_path / "arm.urdf"
    f.write_text(ARM.format(upper="<collision/>", elbow="fixed", extra=""))
    assert _read(f, _yourdfpy_robot) is U.URDFParseError
    with pytest.raises(U.URDFLinkError, match="link 'upper' collision 1 has no <geometry>"):
        U.read_urdf(f)


def test_a_mesh_without_a_filename_is_refused_by_name(tmp_path):
    f = tmp_path / "arm.urdf"
    f.write_text(ARM.format(upper="<collision><geometry><mesh/></geometry></collision>",
                            elbow="fixed", extra=""))  # fmt: skip
    with pytest.raises(U.URDFParseError, match="mesh> has no filename"):
        U.read_urdf(f)


def test_an_origin_of_four_numbers_is_refused_where_yourdfpy_took_three():
    import xml.etree.ElementTree as ET

    from planning_collision.io.urdf_xml import _origin

    with pytest.raises(ValueError, match="needs 3 numbers"):
        _origin(ET.fromstring('<origin xyz="0 0 0 1"/>'))
