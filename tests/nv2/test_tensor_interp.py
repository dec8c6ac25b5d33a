"""Tensor addressing on the CPU interpreter, against numpy written from the spec's pseudo-code: clamp modes,
negative offsets, views (permutation, clip, fill), strides, blocks and decode functions, dropped stores."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, f32, u32
from coopdsl.interp import InterpreterError

R = 20  # the source tensor is R x R
ROW0, COL0 = -3, 10  # the 16 x 16 region read starts here: 3 rows above the tensor, 6 columns past its right edge


def _kernel(clamp):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(src: cd.Buffer[f32], dst: cd.Buffer[f32], n: u32):
        L = cd.tensor_layout(2, clamp=clamp).dimension(n, n).clamp_value(7.5, f32).slice(ROW0, 16, COL0, 16)
        m = Acc[f32, 16, 16].load_tensor(src, 0, L)
        m.store_tensor(dst, 0, cd.tensor_layout(2).dimension(16, 16))

    return k


def _reference(mode: str, src: np.ndarray) -> np.ndarray:
    rows = np.arange(16)[:, None] + ROW0
    cols = np.arange(16)[None, :] + COL0

    def fix(c):
        if mode == "edge":
            return np.clip(c, 0, R - 1)
        if mode == "repeat":
            return np.mod(c, R)
        c = np.mod(c, 2 * R - 2)  # mirrored: ... 2 1 0 1 2 ... R-2 R-1 R-2 ...
        return np.where(c >= R, 2 * R - 2 - c, c)

    if mode == "constant":
        inside = (rows >= 0) & (rows < R) & (cols >= 0) & (cols < R)
        return np.where(inside, src[np.clip(rows, 0, R - 1), np.clip(cols, 0, R - 1)], 7.5)
    return src[fix(rows), fix(cols)]


@pytest.mark.parametrize("clamp,mode", [(cd.ClampConstant, "constant"), (cd.ClampToEdge, "edge"),
                                        (cd.ClampRepeat, "repeat"), (cd.ClampRepeatMirrored, "mirrored")])
def test_clamp_modes_read_outside_the_tensor_as_the_spec_says(clamp, mode):
    src = np.arange(R * R, dtype=np.float32).reshape(R, R)
    dst = np.zeros((16, 16), np.float32)
    _kernel(clamp).launch((1,), src, dst, R, device="cpu")
    np.testing.assert_array_equal(dst, _reference(mode, src))


def test_clamp_undefined_outside_the_tensor_is_reported():
    src = np.zeros((R, R), np.float32)
    with pytest.raises(InterpreterError, match="outside dimension 0 of a ClampUndefined layout"):
        _kernel(cd.ClampUndefined).launch((1,), src, np.zeros((16, 16), np.float32), R, device="cpu")


@cd.kernel(workgroup_size=(64, 1, 1))
def k_views(src: cd.Buffer[f32], dst: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(n, n).stride(n, 1)
    t = cd.tensor_view(2, perm=(1, 0))
    a = Acc[f32, 16, 16].load_tensor(src, 0, L.slice(4, 16, 2, 16), view=t)          # a[r, c] = src[4 + c, 2 + r]
    clip = cd.tensor_view(2).clip(2, 4, 1, 8)                                          # rows 2..5, columns 1..8
    b = Acc[f32, 16, 16].load_tensor(src, 0, L.slice(0, 4, 0, 8), view=clip, fill=-1.0)
    out = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(16, 40).stride(40, 1)
    a.store_tensor(dst, 0, out.slice(0, 16, 0, 16))
    b.store_tensor(dst, 0, out.slice(0, 16, 16, 16))
    a.store_tensor(dst, 0, out.slice(0, 16, 32, 16))  # columns 40..47 fall outside: dropped


def test_views_permute_clip_and_fill_and_stores_outside_are_dropped():
    n = 24
    src = np.arange(n * n, dtype=np.float32).reshape(n, n)
    dst = np.full((16, 40), np.nan, np.float32)
    k_views.launch((1,), src, dst, n, device="cpu")
    np.testing.assert_array_equal(dst[:, :16], src[4:20, 2:18].T)
    b = np.full((16, 16), -1.0, np.float32)
    b[2:6, 1:9] = src[0:4, 0:8]  # the clip region, numbered row by row, fills the 4 x 8 slice
    np.testing.assert_array_equal(dst[:, 16:32], b)
    np.testing.assert_array_equal(dst[:, 32:40], src[4:20, 2:18].T[:, :8])


@cd.struct
class Scaled:
    scale: f32
    q: cd.array[u32, 4]


@cd.func
def scaled(block, block_coords, coord_in_block):
    return f32(block.q[coord_in_block[1]]) * block.scale + f32(block_coords[0] * 1000)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_blocks(w: cd.Ptr[Scaled], dst: cd.Buffer[f32], rows: u32, cols: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 4).dimension(rows, cols).slice(0, 16, 0, 16)
    m = Acc[f32, 16, 16].load_tensor(w, 0, L, decode=scaled)
    m.store_tensor(dst, 0, cd.tensor_layout(2).dimension(16, 16))


def test_decode_functions_get_each_elements_block_and_coordinates():
    rows, cols = 10, 12  # 10 x 12 elements in blocks of 1 x 4: 10 x 3 blocks
    blocks = np.zeros((rows, cols // 4), np.dtype([("scale", "<f4"), ("q", "<u4", (4,))]))
    blocks["scale"] = np.arange(blocks.size).reshape(blocks.shape) + 1
    blocks["q"] = np.arange(blocks.size * 4).reshape(blocks.shape + (4,)) % 7
    dst = np.zeros((16, 16), np.float32)
    k_blocks.launch((1,), blocks.view(np.uint8).reshape(-1), dst, rows, cols, device="cpu")
    values = (blocks["q"] * blocks["scale"][..., None]).reshape(rows, cols) + np.arange(rows)[:, None] * 1000
    want = np.zeros((16, 16), np.float32)
    want[:rows, :cols] = values
    np.testing.assert_array_equal(dst, want)


@cd.func
def tile_at(L, r0):
    return L.slice(r0, 16, 0, 16)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_layout_flow(a: cd.Buffer[f32], o: cd.Buffer[f32], n: u32, through_function: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(n, 16)
    acc = Acc[f32, 16, 16].splat(0.0)
    for i in range(0, n, 16):
        tile = tile_at(L, i) if through_function > 0 else L.slice(i, 16, 0, 16)
        acc = acc + Acc[f32, 16, 16].load_tensor(a, 0, tile)
    acc.store_tensor(o, 0, cd.tensor_layout(2).dimension(16, 16))


@pytest.mark.parametrize("through_function", [0, 1])
def test_layouts_as_values_in_loops_branches_and_device_functions(through_function):
    a = np.arange(48 * 16, dtype=np.float32).reshape(48, 16)
    o = np.zeros((16, 16), np.float32)
    k_layout_flow.launch((1,), a, o, 40, through_function, device="cpu")
    padded = np.zeros((48, 16), np.float32)
    padded[:40] = a[:40]  # rows 40.. read as the clamp value 0
    np.testing.assert_array_equal(o, padded[0:16] + padded[16:32] + padded[32:48])


@cd.struct
class Codes:
    code: cd.array[cd.u8, 4]


@cd.func
def from_table(block, block_coords, coord_in_block, table, bias):
    return table[u32(block.code[coord_in_block[1]])] + bias


@cd.kernel(workgroup_size=(32, 1, 1))
def k_table(w: cd.Buffer[Codes], table: cd.Buffer[f32], dst: cd.Buffer[f32], bias: f32):
    L = cd.tensor_layout(2).block_size(1, 4).dimension(16, 16).slice(0, 16, 0, 16)
    decode = cd.partial(from_table, table=table, bias=bias)  # the decoder reads a kernel buffer and a push constant
    Acc[f32, 16, 16].load_tensor(w, 0, L, decode=decode).store_tensor(dst, 0, cd.tensor_layout(2).dimension(16, 16))


def test_a_decode_function_reads_buffers_and_push_constants_bound_with_partial():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 8, (16, 4, 4), dtype=np.uint8)
    table = rng.uniform(-1, 1, 8).astype(np.float32)
    dst = np.zeros((16, 16), np.float32)
    k_table.launch((1,), codes.reshape(-1), table, dst, 0.25, device="cpu")
    np.testing.assert_array_equal(dst, table[codes.reshape(16, 16)] + np.float32(0.25))
    assert "OpFunctionParameter" in k_table.disassemble()


@cd.kernel(workgroup_size=(32, 1, 1))
def fill_runtime_scalar(a: cd.Buffer[cd.f16], o: cd.Buffer[cd.f16], n: cd.u32, pad: cd.f32):
    """A clamped load whose outside elements take a runtime f16 (GLSL's coopMatLoadTensorNV keeps the
    matrix's previous elements there; coopdsl's fill: valid code that was refused)."""
    layout = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(n, n)
    view = cd.tensor_view(2).clip(0, n, 0, n)
    m = cd.Acc[cd.f16, 16, 16].load_tensor(a, 0, layout.slice(0, 16, 0, 16), view=view, fill=cd.f16(pad))
    m.store(o, 0, stride=16)


def test_a_runtime_scalar_fills_the_clipped_elements():
    a = np.arange(256, dtype=np.float16)
    o = np.zeros(256, np.float16)
    fill_runtime_scalar.launch((1, 1, 1), a, o, 8, 7.5, device="cpu")
    text = fill_runtime_scalar.disassemble()   # validated by spirv-val when compiled
    splat = next(line.split("=")[0].strip() for line in text.splitlines() if "OpCompositeConstruct" in line)
    assert any("OpCooperativeMatrixLoadTensorNV" in line and f" {splat} " in line for line in text.splitlines())
    got = o.reshape(16, 16)
    assert (got[8:, :] == 7.5).all() and (got[:, 8:] == 7.5).all()
