"""A checker workspace made in one block (checker/blocks.py) is the workspace the declared
allocators make: the same arrays (types, shapes, contents where declared), each in its own
memory, and an address table that is what `array_table` writes for them."""

import numpy as np
import pytest

import planning_collision as pc
from planning_collision import robots
from planning_collision.checker import model as M
from planning_collision.kernels.base.records import FIELDS, allocate
from planning_collision.kernels.checker.check_types import CheckBuffers
from planning_collision.kernels.checker.handles import array_table, rows
from planning_collision.kernels.scene.scratch import WARM_SLOTS, Scratch, new_scratch


@pytest.fixture(scope="module")
def model():
    scene = pc.Scene()
    scene.add(pc.Box((0.2, 0.2, 0.2)), name="box")
    scene.add(pc.Sphere(0.1), name="ball")
    return pc.CollisionChecker(robots.load("planar_arm"), scene).model


def _declared(model, cache):
    """The workspace's records as the declared allocators make them."""
    r = model.robot
    n_pieces = r.piece_link.shape[0]
    scratch = new_scratch(  # with room for a scene of a few more objects (model.py)
        M.workspace_room(model.scene.n_obj[0]),
        M.workspace_room(model.scene.tab.kind.shape[0]),
        WARM_SLOTS if cache else 0,
    )
    buffers = allocate(
        CheckBuffers,
        n_links=r.link_start.shape[0] - 1,
        n_pieces=n_pieces,
        n_bodies=r.R.shape[0],
        dof=r.R.shape[1],
        intervals=M.INTERVALS,
        front_rows=n_pieces * M.FRONT,
        endpoints=M.ENDPOINTS,
        queue=M.QUEUE,
    )
    return scratch, buffers


@pytest.mark.parametrize("cache", [True, False])
def test_a_block_workspace_is_the_declared_one(model, cache):
    M.workspace_layout.cache_clear()
    made = [M.CheckWorkspace(model, cache) for _ in range(3)]
    info = M.workspace_layout.cache_info()
    assert (info.misses, info.hits) == (1, 2)  # one layout learnt, then reused
    want = _declared(model, cache)
    for ws in made:
        for rec, ref in zip((ws.scratch, ws.buffers), want, strict=True):
            assert type(rec) is type(ref)
            for f, a, b in zip(FIELDS[type(rec)], rec, ref, strict=True):
                assert (a.dtype, a.shape) == (b.dtype, b.shape), f.name
                assert a.flags.c_contiguous and a.flags.writeable, f.name
                if f.fill is not None:  # uninitialised fields are written before read
                    np.testing.assert_array_equal(a, b, err_msg=f.name)
        np.testing.assert_array_equal(ws.table, array_table(rows(ws.scratch) + rows(ws.buffers)))
        assert (ws.table[:, 0] % 64 == 0).all()
    # every array its own memory, in no other workspace
    arrays = [a for ws in made for a in (*ws.scratch, *ws.buffers) if a.size]
    for i, a in enumerate(arrays):
        for b in arrays[i + 1 :]:
            assert not np.shares_memory(a, b)


def test_writes_to_one_workspace_leave_the_next_fresh(model):
    ws = M.CheckWorkspace(model)
    ws.scratch.best[:] = 7.0
    ws.buffers.ec_q[:] = 1.0
    ws.buffers.front_n[:] = 3
    fresh = M.CheckWorkspace(model)
    assert np.isinf(fresh.scratch.best[:, 0]).all() and (fresh.scratch.best[:, 1:] == 0).all()
    assert np.isnan(fresh.buffers.ec_q).all()
    assert (fresh.buffers.front_n == -1).all()
    assert Scratch is type(fresh.scratch)
