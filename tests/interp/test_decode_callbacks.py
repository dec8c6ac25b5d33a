"""Callbacks on the CPU see the calling workgroup: its shared memory (as stored before a barrier) and built-ins.

NV_cooperative_matrix2 decode functions and per-element functions run, on a
GPU, in the invocations of the matrix's scope: llama.cpp's IQ4_NL decode reads
a shared lookup table and its q4_K decode per-row scales staged in shared
memory before a barrier.  The interpreter runs a callback for an element in
the invocation holding that element (docs/interpreter.md), so built-ins are
that invocation's and shared memory is its workgroup's.
"""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u8, u32, vec2

from ..conftest import compile_checked
from .conftest import expect_interp_error

W = cd.Workgroup
KVALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.float16)


@pytest.fixture(params=[32, 16], ids=["sg32", "sg16"])
def subgroup_size(request, monkeypatch):
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", str(request.param))
    return request.param


# -- IQ4_NL: a 16-entry shared table ------------------------------------------------------------------
@cd.struct
class BlockIQ4NL:
    d: f16                     # scale
    qs: cd.array[u8, 16]       # 32 four-bit indices into the table: byte j holds j (low) and j + 16 (high)


IQ4 = np.dtype([("d", np.float16), ("qs", np.uint8, 16)])


@cd.func
def decode_iq4_nl(block, block_coords, coord_in_block, kvalues):
    i = coord_in_block[1]
    q = (u32(block.qs[i & 15]) >> ((i & 16) >> 2)) & 15
    return kvalues[q] * block.d  # @iq4-read


@cd.kernel(workgroup_size=(128, 1, 1))
def iq4_nl_matmul(w: cd.Buffer[BlockIQ4NL], table: cd.Buffer[f16], x: cd.Buffer[f16], y: cd.Buffer[f32],
                  M: u32, K: u32, BARRIER: cd.Spec[u32] = 1, FILL: cd.Spec[u32] = 1):
    kvalues = cd.shared(f16, 16)
    if FILL == 1 and cd.local_invocation_index < 16:      # subgroup 0 fills the table
        kvalues[cd.local_invocation_index] = table[cd.local_invocation_index]
    if BARRIER == 1:
        cd.barrier()
    row0 = cd.workgroup_id.x * 32
    lw = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 32).dimension(M, K).stride(K // 32, 1)
    lx = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(K, 16)
    acc = Acc[f32, 32, 16, W].splat(0.0)
    for k0 in range(0, K, 32):
        a = MatA[f16, 32, 32, W].load_tensor(w, 0, lw.slice(row0, 32, k0, 32),
                                             decode=cd.partial(decode_iq4_nl, kvalues=kvalues))
        b = MatB[f16, 32, 16, W].load_tensor(x, 0, lx.slice(k0, 32, 0, 16))
        acc = cd.muladd(a, b, acc)
    acc.store_tensor(y, 0, cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, 16).slice(row0, 32, 0, 16))


def _iq4_nl(m: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random IQ4_NL blocks of an m x k matrix, and the matrix they decode to (f16 products, as f32)."""
    blocks = np.zeros(m * k // 32, IQ4)
    blocks["d"] = rng.uniform(0.001, 0.02, len(blocks)).astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, (len(blocks), 16))
    lo, hi = blocks["qs"] & 15, blocks["qs"] >> 4
    idx = np.concatenate([lo, hi], axis=1)                      # element j of a block: index idx[:, j]
    w = (KVALUES[idx] * blocks["d"][:, None]).astype(np.float16)  # f16 multiply, as the decode function
    return blocks, w.reshape(m, k).astype(np.float32)


def test_iq4_nl_decode_reads_the_shared_table(subgroup_size):
    rng = np.random.default_rng(0)
    m, k = 96, 64
    blocks, w = _iq4_nl(m, k, rng)
    x = rng.uniform(-1, 1, (k, 16)).astype(np.float16)
    y = np.zeros((m, 16), np.float32)
    iq4_nl_matmul.launch((m // 32,), blocks, KVALUES, x, y, m, k, device="cpu")
    np.testing.assert_allclose(y, w @ x.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_iq4_nl_kernel_compiles_for_the_h100():
    compile_checked(iq4_nl_matmul, r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None DecodeFunc "
                                   r"%decode_iq4_nl\n",
                    r"%decode_iq4_nl = OpFunction(.*\n)*?.*OpAccessChain %_ptr_Workgroup_half %kvalues")
    iq4_nl_matmul.compile(device="nvidia-h100")


def test_a_decode_read_of_an_unwritten_table_is_reported_at_its_line():
    blocks, _ = _iq4_nl(32, 32, np.random.default_rng(1))
    run = lambda: iq4_nl_matmul.launch((1,), blocks, KVALUES, np.zeros((32, 16), np.float16),  # noqa: E731
                                       np.zeros((32, 16), np.float32), 32, 32, FILL=0, device="cpu")
    err = expect_interp_error(run, "read of shared array 'kvalues' at byte", "# @iq4-read")
    assert "before anything was stored there" in err.message
    assert "in workgroup (0, 0, 0), local invocation 0 (subgroup 0, lane 0), running the decode function for " \
           "element (0, 0) of the matrix" in err.message


def test_a_decode_read_racing_with_the_table_fill_is_reported():
    # no barrier: the table was written by subgroup 0, and the invocation that decodes an element is
    # unspecified at workgroup scope, so every read of it is a race
    blocks, _ = _iq4_nl(32, 32, np.random.default_rng(2))
    run = lambda: iq4_nl_matmul.launch((1,), blocks, KVALUES, np.zeros((32, 16), np.float16),  # noqa: E731
                                       np.zeros((32, 16), np.float32), 32, 32, BARRIER=0, device="cpu")
    err = expect_interp_error(run, "data race on shared array 'kvalues': this access reads element", "# @iq4-read")
    assert "written by subgroup 0 since the last barrier" in err.message
    assert "running the decode function for element" in err.message


# -- q4_K style: per-row scales staged in shared memory --------------------------------------------------
BM = 32


@cd.struct
class BlockQ4:
    qs: cd.array[u8, 16]       # 32 four-bit values; the row's scale and min come from shared memory


Q4 = np.dtype([("qs", np.uint8, 16)])


@cd.func
def decode_q4_scaled(block, block_coords, coord_in_block, scales, bm):
    i = coord_in_block[1]
    q = (u32(block.qs[i & 15]) >> ((i & 16) >> 2)) & 15
    s = scales[block_coords[0] % bm]  # (d * scale, dmin * min) of this element's row, as ggml's shAscales
    return f16(s.x * f32(q) - s.y)


@cd.kernel(workgroup_size=(64, 1, 1))
def q4_scaled_matmul(w: cd.Buffer[BlockQ4], row_dm: cd.Buffer[vec2[f32]], sc: cd.Buffer[u8],
                     x: cd.Buffer[f16], y: cd.Buffer[f32], M: u32, K: u32):
    scales = cd.shared(vec2[f32], BM)
    tid = cd.local_invocation_index
    row0 = cd.workgroup_id.y * BM
    if tid < BM:                                          # one invocation per row of the tile
        dm = row_dm[row0 + tid]
        scales[tid] = vec2[f32](dm.x * f32(sc[2 * (row0 + tid)]), dm.y * f32(sc[2 * (row0 + tid) + 1]))
    cd.barrier()
    lw = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 32).dimension(M, K).stride(K // 32, 1)
    lx = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(K, 16)
    dec = cd.partial(decode_q4_scaled, scales=scales, bm=BM)
    acc = Acc[f32, 16, 16].splat(0.0)                     # subgroup scope: each subgroup 16 rows of the tile
    r = row0 + (cd.subgroup_id % 2) * 16
    for k0 in range(0, K, 32):
        a = MatA[f16, 16, 32].load_tensor(w, 0, lw.slice(r, 16, k0, 32), decode=dec)
        b = MatB[f16, 32, 16].load_tensor(x, 0, lx.slice(k0, 32, 0, 16))
        acc = cd.muladd(a, b, acc)
    if cd.subgroup_id < 2:
        acc.store_tensor(y, 0, cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, 16).slice(r, 16, 0, 16))


def test_q4_k_style_decode_reads_per_row_scales_staged_in_shared_memory():
    # 64 invocations: two subgroups of 32 (each decodes 16 rows; row r of the tile is at r % BM), or four of 16
    # (subgroups 2 and 3 repeat 0 and 1); three workgroups along y, each its own scales
    rng = np.random.default_rng(3)
    m, k = 3 * BM, 64
    blocks = np.zeros(m * k // 32, Q4)
    blocks["qs"] = rng.integers(0, 256, (len(blocks), 16))
    dm = rng.uniform(0.001, 0.01, (m, 2)).astype(np.float32)
    sc = rng.integers(0, 64, (m, 2)).astype(np.uint8)
    x = rng.uniform(-1, 1, (k, 16)).astype(np.float16)
    y = np.zeros((m, 16), np.float32)
    compile_checked(q4_scaled_matmul, r"%decode_q4_scaled = OpFunction(.*\n)*?.*OpUMod %uint %\w+ %uint_32\n"
                                      r"(.*\n)*?.*OpAccessChain %_ptr_Workgroup_v2float %scales")
    q4_scaled_matmul.compile(device="nvidia-h100")
    for sgs in (32, 16):
        y[:] = 0
        q4_scaled_matmul.launch((1, m // BM), blocks, dm, sc, x, y, m, k, device="cpu", subgroup_size=sgs)
        q = np.concatenate([blocks["qs"] & 15, blocks["qs"] >> 4], axis=1).reshape(m, k).astype(np.float32)
        s = dm * sc.astype(np.float32)                                # per row: (d * scale, dmin * min)
        w = (s[:, :1] * q - s[:, 1:]).astype(np.float16).astype(np.float32)
        np.testing.assert_allclose(y, w @ x.astype(np.float32), rtol=1e-3, atol=1e-3)


# -- built-ins --------------------------------------------------------------------------------------
@cd.struct
class Plain:
    v: f32


@cd.func
def tagged(block, block_coords, coord_in_block):
    wid = cd.workgroup_id
    return block.v + f32(wid.x * 1000 + wid.y * 100 + cd.num_workgroups.x * 10 + cd.subgroup_id)


@cd.kernel(workgroup_size=(64, 1, 1))
def tag_subgroup(src: cd.Buffer[Plain], out: cd.Buffer[f32]):
    base = ((cd.workgroup_id.y * cd.num_workgroups.x + cd.workgroup_id.x) * 2 + cd.subgroup_id) * 256
    layout = cd.tensor_layout(2).dimension(16, 16)
    Acc[f32, 16, 16].load_tensor(src, base, layout, decode=tagged).store_tensor(out, base, layout)


@cd.kernel(workgroup_size=(128, 1, 1))
def tag_workgroup(src: cd.Buffer[Plain], out: cd.Buffer[f32]):
    base = (cd.workgroup_id.y * cd.num_workgroups.x + cd.workgroup_id.x) * 1024
    layout = cd.tensor_layout(2).dimension(32, 32)
    Acc[f32, 32, 32, W].load_tensor(src, base, layout, decode=tagged).store_tensor(out, base, layout)


def test_decode_functions_see_their_workgroup_id_and_subgroup():
    src = np.arange(3 * 2 * 2 * 256, dtype=np.float32) * 0.5
    out = np.zeros_like(src)
    tag_subgroup.launch((3, 2), src, out, device="cpu")
    wg = np.arange(6)
    expect = (wg % 3) * 1000 + (wg // 3) * 100 + 30
    got = (out - src).reshape(6, 2, 256)
    np.testing.assert_array_equal(got, np.broadcast_to(expect[:, None, None] + np.arange(2)[None, :, None],
                                                       got.shape))
    tag_subgroup.compile(device="nvidia-h100")


def test_decode_functions_of_workgroup_matrices_see_their_workgroup_id():
    src = np.arange(3 * 2 * 1024, dtype=np.float32) * 0.25
    out = np.zeros_like(src)
    tag_workgroup.launch((3, 2), src, out, device="cpu", subgroup_size=32)
    wg = np.arange(6)
    expect = (wg % 3) * 1000 + (wg // 3) * 100 + 30
    # subgroup_id is that of the invocation holding the element: 8 elements each, 32 invocations a subgroup
    holder_subgroup = (np.arange(1024) // 8) // 32
    np.testing.assert_array_equal((out - src).reshape(6, 1024), expect[:, None] + holder_subgroup[None, :])
    tag_workgroup.compile(device="nvidia-h100")


# the rule for per-invocation built-ins: a callback runs in the invocation holding its element
@cd.func
def who_decodes(block, block_coords, coord_in_block):
    return f32(cd.local_invocation_index * 100 + cd.subgroup_invocation_id)


@cd.func
def who_maps(row, col, x):
    return f32(cd.local_invocation_index * 100 + cd.subgroup_invocation_id)


@cd.kernel(workgroup_size=(128, 1, 1))
def who(src: cd.Buffer[Plain], out: cd.Buffer[f32]):
    layout = cd.tensor_layout(2).dimension(32, 32)
    m = Acc[f32, 32, 32, W].load_tensor(src, 0, layout, decode=who_decodes)
    m.store_tensor(out, 0, layout)
    m.map(who_maps).store_tensor(out, 1024, layout)
    s = Acc[f32, 16, 16].load_tensor(src, 0, cd.tensor_layout(2).dimension(16, 16), decode=who_decodes)
    s.store_tensor(out, 2048 + cd.subgroup_id * 256, cd.tensor_layout(2).dimension(16, 16))


def test_per_invocation_built_ins_are_those_of_the_invocation_holding_the_element(subgroup_size):
    out = np.zeros(2048 + 256 * (128 // subgroup_size), np.float32)
    who.launch((1,), np.zeros(1024, np.float32), out, device="cpu")
    flat = np.arange(1024)
    holder = flat // 8                                  # 32 x 32 over 128 invocations: 8 elements each
    expect = holder * 100 + holder % subgroup_size
    np.testing.assert_array_equal(out[:1024], expect)   # the decode function ...
    np.testing.assert_array_equal(out[1024:2048], expect)  # ... and a per-element function agree
    per = 256 // subgroup_size                          # 16 x 16 over a subgroup
    lane = np.arange(256) // per
    for sg in range(128 // subgroup_size):
        part = out[2048 + sg * 256:2048 + (sg + 1) * 256]
        np.testing.assert_array_equal(part, (sg * subgroup_size + lane) * 100 + lane)


# -- per-element functions ----------------------------------------------------------------------------
@cd.func
def row_scaled(row, col, x, table):
    return x * table[row]


@cd.func
def top_rows_scaled(row, col, x, table):
    s = f32(1.0)
    if row < 8:
        s = table[row]  # @top-read
    return x * s


@cd.kernel(workgroup_size=(64, 1, 1))
def map_shared(a: cd.Buffer[f32], t: cd.Buffer[f32], o: cd.Buffer[f32]):
    table = cd.shared(f32, 16)
    tid = cd.local_invocation_index
    if tid >= 48:                                         # the last subgroup (of 32 or 16) fills the table
        table[tid - 48] = t[tid - 48]
    cd.barrier()
    s = Acc[f32, 16, 16].load(a, 0, stride=16).map(cd.partial(row_scaled, table=table))
    s.store(o, cd.subgroup_id * 256, stride=16)
    g = Acc[f32, 16, 16, W].load(a, 0, stride=16).map(cd.partial(row_scaled, table=table))
    g.store(o, 1024, stride=16)


@cd.kernel(workgroup_size=(64, 1, 1))
def map_racing(a: cd.Buffer[f32], t: cd.Buffer[f32], o: cd.Buffer[f32]):
    table = cd.shared(f32, 16)
    tid = cd.local_invocation_index
    if tid < 8:                                           # subgroup 0, with no barrier after it
        table[tid] = t[tid]
    g = Acc[f32, 16, 16, W].load(a, 0, stride=16).map(cd.partial(top_rows_scaled, table=table))
    g.store(o, 0, stride=16)


def test_per_element_functions_read_shared_memory_written_before_a_barrier(subgroup_size):
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    t = rng.uniform(-2, 2, 16).astype(np.float32)
    o = np.zeros(1024 + 256, np.float32)
    map_shared.launch((1,), a, t, o, device="cpu")
    for sg in range(64 // subgroup_size):
        np.testing.assert_array_equal(o[sg * 256:(sg + 1) * 256].reshape(16, 16), a * t[:, None])
    np.testing.assert_array_equal(o[1024:].reshape(16, 16), a * t[:, None])
    map_shared.compile(device="nvidia-h100")


def test_a_workgroup_matrix_callback_reading_shared_memory_without_a_barrier_is_a_race():
    # rows 0-7 are held by invocations of subgroup 0, which wrote the table: still a race, as a GPU may
    # run the callback for them in any invocation of the workgroup
    run = lambda: map_racing.launch((1,), np.ones((16, 16), np.float32), np.ones(16, np.float32),  # noqa: E731
                                    np.zeros(256, np.float32), device="cpu", subgroup_size=32)
    err = expect_interp_error(run, "data race on shared array 'table': this access reads element 0", "# @top-read")
    assert "written by subgroup 0 since the last barrier" in err.message
