"""Subgroup operations over the active invocations, at subgroup sizes 8 to 64."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.interp import InterpreterError

from ..conftest import marker_line


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_ops(x: cd.Buffer[u32], out: cd.Buffer[u32], fo: cd.Buffer[f32]):
    i = cd.local_invocation_index
    v = x[i]
    k = 12
    out[i * k] = cd.subgroup_add(v)
    out[i * k + 1] = cd.subgroup_inclusive_add(v)
    out[i * k + 2] = cd.subgroup_exclusive_max(v)
    out[i * k + 3] = u32(cd.subgroup_elect())
    out[i * k + 4] = cd.subgroup_broadcast(v, 3)
    out[i * k + 5] = cd.subgroup_shuffle_xor(v, 1)
    out[i * k + 6] = cd.subgroup_shuffle_down(v, 2)
    out[i * k + 7] = cd.subgroup_ballot(v % 2 == 1).x
    if v % 3 != 0:  # divergent: only these invocations take part below
        out[i * k + 8] = cd.subgroup_add(v)
        out[i * k + 9] = cd.subgroup_broadcast_first(v)
        out[i * k + 10] = u32(cd.subgroup_all(v > 1)) + u32(cd.subgroup_any(v > 60)) * 2 + \
            u32(cd.subgroup_all_equal(v % 3 == 1)) * 4
        out[i * k + 11] = cd.subgroup_inclusive_min(v)
    fo[i] = cd.subgroup_mul(f32(v % 4) * 0.5 + 1.0)


@pytest.mark.parametrize("sgs", [8, 16, 32, 64])
def test_subgroup_operations_with_divergence(sgs):
    x = np.random.default_rng(sgs).permutation(np.arange(64)).astype(np.uint32)
    out = np.zeros(64 * 12, np.uint32)
    fo = np.zeros(64, np.float32)
    subgroup_ops.launch((1,), x, out, fo, device="cpu", subgroup_size=sgs)
    r = out.reshape(64, 12).astype(np.int64)
    for s in range(64 // sgs):
        lanes = slice(s * sgs, (s + 1) * sgs)
        v = x[lanes].astype(np.int64)
        rs = r[lanes]
        assert (rs[:, 0] == v.sum()).all()
        np.testing.assert_array_equal(rs[:, 1], np.cumsum(v))
        np.testing.assert_array_equal(rs[:, 2], np.r_[0, np.maximum.accumulate(v)[:-1]])
        np.testing.assert_array_equal(rs[:, 3], np.arange(sgs) == 0)
        assert (rs[:, 4] == v[3]).all()
        np.testing.assert_array_equal(rs[:, 5], v[np.arange(sgs) ^ 1])
        down = np.arange(sgs) + 2
        np.testing.assert_array_equal(rs[:, 6], np.where(down < sgs, v[np.minimum(down, sgs - 1)], v))
        ballot = sum(1 << int(lane) for lane in np.nonzero(v % 2 == 1)[0] if lane < 32)
        assert (rs[:, 7] == ballot).all()
        act = v % 3 != 0
        assert (rs[act, 8] == v[act].sum()).all()
        assert (rs[act, 9] == v[act][0]).all()
        flags = int((v[act] > 1).all()) + 2 * int((v[act] > 60).any()) + 4 * int(len(set(v[act] % 3 == 1)) == 1)
        assert (rs[act, 10] == flags).all()
        np.testing.assert_array_equal(rs[act, 11], np.minimum.accumulate(v[act]))
        assert (rs[~act, 8:] == 0).all()
        np.testing.assert_allclose(fo[lanes], np.prod((x[lanes] % 4) * 0.5 + 1.0), rtol=1e-5)


@cd.kernel(workgroup_size=(32, 1, 1))
def wrapping(x: cd.Buffer[u32], out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    out[i] = cd.subgroup_add(x[i]) // 5
    out[i + 32] = cd.subgroup_inclusive_add(x[i]) // 3


def test_subgroup_sums_wrap_at_the_component_width():
    # found by scripts/fuzz_interp.py: numpy widens uint32 sums to 64 bits unless told otherwise
    x = np.full(32, 2**31 + 7, np.uint32)
    out = np.zeros(64, np.uint32)
    wrapping.launch((1,), x, out, device="cpu")
    assert (out[:32] == (32 * (2**31 + 7)) % 2**32 // 5).all()
    np.testing.assert_array_equal(out[32:], (np.arange(1, 33) * (2**31 + 7)) % 2**32 // 3)


@cd.kernel(workgroup_size=(64, 1, 1))
def ballot_bits(x: cd.Buffer[u32], out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    bal = cd.subgroup_ballot(x[i] % 3 == 0)
    o = i * 8
    out[o] = cd.subgroup_ballot_bit_count(bal)
    out[o + 1] = cd.subgroup_ballot_inclusive_bit_count(bal)
    out[o + 2] = cd.subgroup_ballot_exclusive_bit_count(bal)
    out[o + 3] = cd.subgroup_ballot_find_lsb(bal)
    out[o + 4] = cd.subgroup_ballot_find_msb(bal)
    out[o + 5] = u32(cd.subgroup_inverse_ballot(bal))
    out[o + 6] = u32(cd.subgroup_ballot_bit_extract(bal, 5))
    out[o + 7] = u32(cd.subgroup_ballot_bit_extract(bal, (cd.subgroup_invocation_id + 1) % cd.subgroup_size))


@pytest.mark.parametrize("sgs", [8, 32, 64])
def test_ballot_bit_queries_against_numpy(sgs):
    """Counts (all, up to and below this lane), lowest and highest set bit, this lane's bit, a given bit; bits
    past the subgroup size (a ballot of 64 lanes in two words) counted as the subgroup has them."""
    x = np.random.default_rng(40 + sgs).integers(0, 100, 64).astype(np.uint32)
    x[:sgs] += (x[:sgs] % 3 == 0)                 # the first subgroup: no bit set (find_* undefined: 0xFFFFFFFF)
    out = np.zeros(64 * 8, np.uint32)
    ballot_bits.launch((1,), x, out, device="cpu", subgroup_size=sgs)
    r = out.reshape(64, 8).astype(np.int64)
    for s in range(64 // sgs):
        g = (x[s * sgs:(s + 1) * sgs] % 3 == 0)
        rs = r[s * sgs:(s + 1) * sgs]
        lane = np.arange(sgs)
        assert (rs[:, 0] == g.sum()).all()
        np.testing.assert_array_equal(rs[:, 1], np.cumsum(g))
        np.testing.assert_array_equal(rs[:, 2], np.cumsum(g) - g)
        set_bits = np.nonzero(g)[0]
        assert (rs[:, 3] == (set_bits[0] if len(set_bits) else 0xFFFFFFFF)).all()
        assert (rs[:, 4] == (set_bits[-1] if len(set_bits) else 0xFFFFFFFF)).all()
        np.testing.assert_array_equal(rs[:, 5], g)
        assert (rs[:, 6] == g[5]).all()
        np.testing.assert_array_equal(rs[:, 7], g[(lane + 1) % sgs])


@cd.kernel(workgroup_size=(32, 1, 1))
def inverse_of_a_per_lane_mask(out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    mask = cd.vec4[u32](u32(1) << (i % 32), 0, 0, 0)
    out[i] = u32(cd.subgroup_inverse_ballot(mask))  # E:inverse


def test_the_interpreter_refuses_a_ballot_that_differs_between_invocations_for_inverse_ballot():
    """SPIR-V: OpGroupNonUniformInverseBallot's Value must be the same in every invocation that executes it."""
    with pytest.raises(InterpreterError, match=r"the ballot given to cd.subgroup_inverse_ballot\(\) must be the "
                                                  r"same in every invocation of the subgroup \(dynamically uniform\), "
                                                  r"but it differs; in .*invocation 1") as info:
        inverse_of_a_per_lane_mask.launch((1,), np.zeros(32, np.uint32), device="cpu")
    assert (info.value.loc.line, info.value.loc.col) == (marker_line("# E:inverse"), 18)


@cd.kernel(workgroup_size=(64, 1, 1))
def active_lanes(out: cd.Buffer[u32], n: u32):
    i = cd.local_invocation_index
    if i < n:
        out[i] = cd.subgroup_ballot_bit_count(cd.subgroup_ballot(True))   # GLSL's subgroupBallot(true)


def test_a_ballot_of_true_counts_the_active_invocations():
    out = np.zeros(64, np.uint32)
    active_lanes.launch((1,), out, 40, device="cpu", subgroup_size=16)
    np.testing.assert_array_equal(out, [16] * 32 + [8] * 8 + [0] * 24)


@cd.kernel(workgroup_size=(32, 1, 1))
def extract_past_the_subgroup(out: cd.Buffer[u32], k: u32):
    i = cd.local_invocation_index
    out[i] = u32(cd.subgroup_ballot_bit_extract(cd.subgroup_ballot(True), k))  # E:past


def test_a_bit_index_past_the_subgroup_is_reported():
    """SPIR-V leaves OpGroupNonUniformBallotBitExtract's result undefined for an index past the group's size."""
    out = np.zeros(32, np.uint32)
    extract_past_the_subgroup.launch((1,), out, 7, device="cpu", subgroup_size=8)
    assert out.all()
    with pytest.raises(InterpreterError, match=r"the bit index of cd.subgroup_ballot_bit_extract\(\) is 8, past the "
                                               r"subgroup's 8 invocations: SPIR-V leaves the result undefined") as info:
        extract_past_the_subgroup.launch((1,), out, 8, device="cpu", subgroup_size=8)
    assert (info.value.loc.line, info.value.loc.col) == (marker_line("# E:past"), 18)


@cd.kernel(workgroup_size=(64, 1, 1))
def lane_masks(out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    for w in cd.static_range(4):
        out[i * 20 + w] = cd.subgroup_eq_mask[w]
        out[i * 20 + 4 + w] = cd.subgroup_ge_mask[w]
        out[i * 20 + 8 + w] = cd.subgroup_gt_mask[w]
        out[i * 20 + 12 + w] = cd.subgroup_le_mask[w]
        out[i * 20 + 16 + w] = cd.subgroup_lt_mask[w]


@pytest.mark.parametrize("sgs", [8, 32, 64])
def test_lane_masks_against_numpy(sgs):
    """Bit j of each mask compares lane j with this invocation's lane; bits past the subgroup size are 0."""
    out = np.zeros(64 * 20, np.uint32)
    lane_masks.launch((1,), out, device="cpu", subgroup_size=sgs)
    got = out.reshape(64, 5, 4)
    bit = np.arange(128)
    for i in range(64):
        lane = i % sgs
        for k, rel in enumerate((bit == lane, bit >= lane, bit > lane, bit <= lane, bit < lane)):
            want = np.packbits(rel & (bit < sgs), bitorder="little").view("<u4")
            np.testing.assert_array_equal(got[i, k], want, err_msg=f"invocation {i}, mask {k}")
