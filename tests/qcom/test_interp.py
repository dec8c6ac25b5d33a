"""The QCOM instructions on the CPU interpreter have the spec's semantics: invocation i owns row i of A and
accumulators and column i of B; invocations past the rows (columns) are ignored when building and get
undefined values when extracting; u32 arrays pack components little-endian."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, i32, u8, u32
from coopdsl.interp import InterpreterError

from ..conftest import marker_line

LANES = 32


def lanes_rows(n: int, dtype, seed: int = 0) -> np.ndarray:
    """One row of ``n`` values per invocation (LANES x n)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-4, 4, (LANES, n)).astype(dtype)
    return rng.integers(0, 2**31, (LANES, n)).astype(dtype)


@cd.kernel(workgroup_size=(32, 1, 1))
def a_from_rows(src: cd.Buffer[f16], out: cd.Buffer[f16]):
    lane = cd.subgroup_invocation_id
    row = cd.array(f16, 16)
    for i in cd.static_range(16):
        row[i] = src[lane * 16 + i]
    MatA[f16, 16, 16].from_rows(row).store(out, 0, stride=16)    # 16 rows: lanes 16..31 are ignored


@cd.kernel(workgroup_size=(32, 1, 1))
def b_from_cols(src: cd.Buffer[f32], out: cd.Buffer[f32]):
    lane = cd.subgroup_invocation_id
    col = cd.array(f32, 8)
    for i in cd.static_range(8):
        col[i] = src[lane * 8 + i]
    MatB[f32, 8, 32].from_cols(col).store(out, 0, stride=32)     # row-major 8 x 32


def test_invocation_i_gives_row_i_of_a_and_column_i_of_b():
    src = lanes_rows(16, np.float16)
    out = np.zeros((16, 16), np.float16)
    a_from_rows.launch((1,), src, out, device="cpu")
    np.testing.assert_array_equal(out, src[:16])
    src32 = lanes_rows(8, np.float32)
    out32 = np.zeros((8, 32), np.float32)
    b_from_cols.launch((1,), src32, out32, device="cpu")
    np.testing.assert_array_equal(out32, src32.T)


@cd.kernel(workgroup_size=(32, 1, 1))
def rows_back(src: cd.Buffer[f32], out: cd.Buffer[f32], ints: cd.Buffer[i32]):
    lane = cd.subgroup_invocation_id
    row = Acc[f32, 16, 8].load(src, 0, stride=8).to_rows()       # 16 rows for 32 invocations
    irow = Acc[i32, 16, 8].splat(7).to_rows()
    for i in cd.static_range(8):
        out[lane * 8 + i] = row[i]
        ints[lane * 8 + i] = irow[i]


def test_extracted_rows_and_undefined_tails():
    src = np.arange(128, dtype=np.float32).reshape(16, 8)
    out = np.zeros((32, 8), np.float32)
    ints = np.zeros((32, 8), np.int32)
    rows_back.launch((1,), src, out, ints, device="cpu")
    np.testing.assert_array_equal(out[:16], src)
    assert np.isnan(out[16:]).all()                              # undefined: NaN
    assert (ints[:16] == 7).all() and (ints[16:].view(np.uint32) == 0xA5A5A5A5).all()


@cd.kernel(workgroup_size=(32, 1, 1))
def packed(src: cd.Buffer[u32], a_out: cd.Buffer[f16], u8_out: cd.Buffer[u8], acc_out: cd.Buffer[f16],
           words: cd.Buffer[u32]):
    lane = cd.subgroup_invocation_id
    w8 = cd.array(u32, 8)
    w16 = cd.array(u32, 16)
    for i in cd.static_range(8):
        w8[i] = src[lane * 16 + i]
    for i in cd.static_range(16):
        w16[i] = src[lane * 16 + i]
    MatA[f16, 32, 16].from_rows(w8).store(a_out, 0, stride=16)          # 2 f16 per word
    MatA[u8, 32, 32].from_rows(w8).store(u8_out, 0, stride=32)          # 4 u8 per word
    acc = Acc[f16, 32, 32].from_rows(w16)                               # f16 accumulator: u32[cols // 2]
    acc.store(acc_out, 0, stride=32)
    back = acc.to_rows(u32)
    for i in cd.static_range(16):
        words[lane * 16 + i] = back[i]


def test_packed_u32_forms_are_little_endian_bitcasts():
    src = lanes_rows(16, np.uint32, seed=1) & np.uint32(0x3BFF3BFF)  # finite f16 halves
    a_out, acc_out = np.zeros((32, 16), np.float16), np.zeros((32, 32), np.float16)
    u8_out, words = np.zeros((32, 32), np.uint8), np.zeros((32, 16), np.uint32)
    packed.launch((1,), src, a_out, u8_out, acc_out, words, device="cpu")
    np.testing.assert_array_equal(a_out, src[:, :8].copy().view(np.float16))
    np.testing.assert_array_equal(u8_out, src[:, :8].copy().view(np.uint8))
    np.testing.assert_array_equal(acc_out, src.view(np.float16))
    np.testing.assert_array_equal(words, src)


@cd.kernel(workgroup_size=(32, 1, 1))
def casts_and_slices(src: cd.Buffer[f16], bits: cd.Buffer[u32], sliced: cd.Buffer[f16]):
    lane = cd.subgroup_invocation_id
    row = cd.array(f16, 16)
    for i in cd.static_range(16):
        row[i] = src[lane * 16 + i]
    w = cd.bitcast_array(row, u32)
    for i in cd.static_range(8):
        bits[lane * 8 + i] = w[i]
    part = cd.sub_array(row, lane % 13, 4)                       # a different start in every invocation
    for i in cd.static_range(4):
        sliced[lane * 4 + i] = part[i]


def test_bitcast_and_sub_array():
    src = lanes_rows(16, np.float16, seed=2)
    bits, sliced = np.zeros((32, 8), np.uint32), np.zeros((32, 4), np.float16)
    casts_and_slices.launch((1,), src, bits, sliced, device="cpu")
    np.testing.assert_array_equal(bits, src.view(np.uint32))
    np.testing.assert_array_equal(sliced, [src[j, j % 13: j % 13 + 4] for j in range(32)])


@cd.kernel(workgroup_size=(32, 1, 1))
def past_the_end(out: cd.Buffer[f32], at: u32):
    row = cd.array(f32, 8, 1.0)
    part = cd.sub_array(row, at + cd.subgroup_invocation_id, 4)  # E:pastend
    out[cd.subgroup_invocation_id] = part[0]


def test_a_runtime_slice_past_the_end_is_reported():
    with pytest.raises(InterpreterError, match=r"sub-array 5\.\.8 is out of range for f32\[8\]") as e:
        past_the_end.launch((1,), np.zeros(32, np.float32), 0, device="cpu")
    assert e.value.loc.line == marker_line("# E:pastend")


@cd.kernel(workgroup_size=(32, 1, 1))
def thirty_two_rows(out: cd.Buffer[f16]):
    MatA[f16, 32, 16].from_rows(cd.array(f16, 16, 1.0)).store(out, 0, stride=16)  # E:rows


def test_more_rows_than_the_subgroup_has_invocations(monkeypatch):
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "16")
    with pytest.raises(InterpreterError, match=r"MatA\[f16, 32, 16\] has 32 rows, one per invocation, but the "
                                               r"subgroup has 16 invocations") as e:
        thirty_two_rows.launch((1,), np.zeros(512, np.float16), device="cpu")
    assert e.value.loc.line == marker_line("# E:rows")


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_shapes(src: cd.Buffer[f16], out: cd.Buffer[f16], N: cd.Spec[u32] = 32):
    lane = cd.subgroup_invocation_id
    row = cd.array(f16, N)
    for i in range(N):
        row[i] = src[lane * N + i]
    acc = Acc[f16, 32, N].from_rows(row)
    acc.store(out, 0, stride=32, layout=ColumnMajor)        # column c of the matrix: out[c]


@pytest.mark.parametrize("n", [8, 32])
def test_specialization_constant_lengths_and_dimensions(n):
    src = lanes_rows(n, np.float16, seed=3)
    out = np.zeros((n, 32), np.float16)
    spec_shapes.launch((1,), src, out, N=n, device="cpu")
    np.testing.assert_array_equal(out, src.T)


# the proposal's neural-texture snippet, transcribed: 64-row matrices need 64-wide subgroups
@cd.kernel(workgroup_size=(64, 1, 1))
def ntc_as_in_the_proposal(input_a: cd.Buffer[f16], input_b0: cd.Buffer[f16], input_b1: cd.Buffer[f16],
                           out: cd.Buffer[f16]):
    mat_c1 = Acc[f16, 64, 16].splat(0.0)
    mat_c2 = Acc[f16, 64, 16].splat(0.0)
    mat_b0 = MatB[f16, 16, 16].load(input_b0, 0, stride=16)
    mat_b1 = MatB[f16, 16, 16].load(input_b1, 0, stride=16)
    input_coord = cd.subgroup_invocation_id * 16
    vec_a0 = cd.array(f16, 16)
    for i in range(16):
        vec_a0[i] = input_a[input_coord + i]
    mat_a0 = MatA[f16, 64, 16].from_rows(vec_a0)
    mat_c1 = cd.muladd(mat_a0, mat_b0, mat_c1)
    vec_a1 = mat_c1.to_rows()
    mat_a1 = MatA[f16, 64, 16].from_rows(vec_a1)
    mat_c2 = cd.muladd(mat_a1, mat_b1, mat_c2)
    vec_c2 = mat_c2.to_rows()
    for i in range(16):
        out[input_coord + i] = vec_c2[i]


def test_the_proposals_64_row_tiles_at_subgroup_size_64():
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (64, 16)).astype(np.float16)
    b0, b1 = (rng.uniform(-0.5, 0.5, (16, 16)).astype(np.float16) for _ in range(2))
    out = np.zeros((64, 16), np.float16)
    ntc_as_in_the_proposal.launch((1,), a, b0, b1, out, device="cpu", subgroup_size=64)
    h = (a.astype(np.float32) @ b0.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(out, (h.astype(np.float32) @ b1.astype(np.float32)).astype(np.float16))
    with pytest.raises(InterpreterError, match="has 64 rows, one per invocation, but the subgroup has 32"):
        ntc_as_in_the_proposal.launch((1,), a, b0, b1, out, device="cpu")


@cd.kernel(workgroup_size=(32, 1, 1))
def runtime_updates(out: cd.Buffer[u32], n: u32):
    lane = cd.subgroup_invocation_id
    row = cd.array(u32, 8)
    for k in range(n):
        row[(k + lane) % 8] = row[(k + lane) % 8] + k      # runtime indices, a loop-carried array
    for i in cd.static_range(8):
        out[lane * 8 + i] = row[i]


def test_arrays_updated_at_runtime_indices():
    out = np.zeros((32, 8), np.uint32)
    runtime_updates.launch((1,), out, 20, device="cpu")
    want = np.zeros((32, 8), np.uint32)
    for lane in range(32):
        for k in range(20):
            want[lane, (k + lane) % 8] += k
    np.testing.assert_array_equal(out, want)


def test_array_values_on_the_interpreter():
    from .test_arrays import build_and_update, nested_and_vectors, spec_length

    src = np.arange(40, dtype=np.float32)
    out = np.zeros(32, np.float32)
    build_and_update.launch((1,), src, out, device="cpu")
    np.testing.assert_array_equal(out, 3 * src[:32] + src[1:33] + 4)
    out = np.zeros(4, np.float32)
    nested_and_vectors.launch((1,), out, device="cpu")           # constants of arrays of arrays and vectors
    assert out[0] == 2.0
    spec_length.launch((1,), out, K=6, device="cpu")               # zeros of a specialized length
    assert out[0] == 2.0 + 0.0 + 6 + 3
