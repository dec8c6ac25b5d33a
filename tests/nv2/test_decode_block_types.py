"""A decode function whose block type differs from the memory's element type (issue 24, class 9).

SPV_NV_cooperative_matrix2 gives a decode function "a pointer computed by
multiplying the index ... by the size of the pointee type": the pointee of the
function's own first parameter, whatever the memory the load's Pointer points
into holds.  ggml relies on it: its cm2 matmul declares ``data_a`` as
``block_q4_0[]`` and decodes it through ``decodeBufQ4_0 { block_q4_0_packed16 }``,
its flash attention reads ``float`` memory as ``vec4`` blocks and ``uint8_t``
memory as raw blocks.  In coopdsl the function's first parameter names the
block struct (``def fn(block: Packed16, ...)``), as the GLSL signature does.
"""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i32, u8, u16, u32
from coopdsl.errors import TypeMismatchError
from coopdsl.ir import types as T
from coopdsl.ir.ops import tensor as rules

from ..conftest import compile_checked, expect_error


# -- the blocks: q4_0 as bytes and as halfwords (the same 18 bytes), four floats, q8_0 ------------------
@cd.struct
class Q4_0:
    d: f16
    qs: cd.array[u8, 16]


@cd.struct
class Q4_0Packed16:
    d: f16
    qs: cd.array[u16, 8]


@cd.struct
class F32x4:
    v: cd.vec4[f32]


@cd.struct
class Q8_0:
    d: f16
    qs: cd.array[u8, 32]


Q4_DTYPE = np.dtype([("d", np.float16), ("qs", np.uint8, 16)])
Q8_DTYPE = np.dtype([("d", np.float16), ("qs", np.uint8, 32)])


@cd.func
def dequant_q4_0_packed16(block: Q4_0Packed16, block_coords, coord_in_block):
    i = coord_in_block[1]
    half = u32(block.qs[(i & 14) >> 1])                 # ggml's dequantFuncQ4_0
    q = ((half >> ((i & 1) * 8)) >> ((i & 16) >> 2)) & 15
    return (f16(q) - f16(8.0)) * block.d


@cd.func
def dequant_f32x4(block: F32x4, block_coords, coord_in_block):
    return f16(block.v[coord_in_block[1]])            # ggml's dequantFuncF32


@cd.func
def dequant_q8_0(block: Q8_0, block_coords, coord_in_block):
    q = i32(block.qs[coord_in_block[1]])
    return f16(q - 256 if q > 127 else q) * block.d


@cd.kernel(workgroup_size=(32, 1, 1))
def q4_as_packed16(w: cd.Buffer[Q4_0], x: cd.Buffer[f16], y: cd.Buffer[f32], M: u32, K: u32):
    lw = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 32).dimension(M, K).stride(K // 32, 1)
    lx = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(K, 16)
    acc = Acc[f32, 16, 16].splat(0.0)
    for k0 in range(0, K, 32):
        a = MatA[f16, 16, 32].load_tensor(w, 0, lw.slice(cd.workgroup_id.x * 16, 16, k0, 32),
                                          decode=dequant_q4_0_packed16)
        b = MatB[f16, 32, 16].load_tensor(x, 0, lx.slice(k0, 32, 0, 16))
        acc = cd.muladd(a, b, acc)
    acc.store_tensor(y, 0, cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, 16)
                     .slice(cd.workgroup_id.x * 16, 16, 0, 16))


@cd.kernel(workgroup_size=(32, 1, 1))
def f32_as_vec4(w: cd.Ptr[f32], y: cd.Buffer[f16], M: u32, K: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 4).dimension(M, K)
    a = Acc[f16, 16, 16].load_tensor(w, 0, L.slice(0, 16, 0, 16), decode=dequant_f32x4)
    a.store_tensor(y, 0, cd.tensor_layout(2).dimension(16, 16))


@cd.kernel(workgroup_size=(32, 1, 1))
def bytes_as_q8(w: cd.Buffer[u8], y: cd.Buffer[f16], M: u32, K: u32, first_block: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 32).dimension(M, K).stride(K // 32, 1)
    a = Acc[f16, 16, 32].load_tensor(w, first_block * 34, L.slice(0, 16, 0, 32), decode=dequant_q8_0)
    a.store_tensor(y, 0, cd.tensor_layout(2).dimension(16, 32))


def _q4_0(m: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    blocks = np.zeros(m * k // 32, Q4_DTYPE)
    blocks["d"] = rng.uniform(0.01, 0.1, len(blocks)).astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, (len(blocks), 16))
    q = np.concatenate([blocks["qs"] & 15, blocks["qs"] >> 4], axis=1).astype(np.float16)
    w = ((q - np.float16(8)) * blocks["d"][:, None]).astype(np.float16)
    return blocks, w.reshape(m, k).astype(np.float32)


def test_q4_0_memory_decoded_through_packed16_blocks_validates():
    compile_checked(q4_as_packed16,
                    r"(%\w+) = OpTypeFunction %half %_ptr_PhysicalStorageBuffer_Q4_0Packed16 (%_arr_uint_uint_2) "
                    r"\2\n",
                    r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None DecodeFunc %dequant_q4_0_packed16\n",
                    r"OpLoad %ushort %\w+ Aligned 2")


def test_q4_0_memory_decoded_through_packed16_blocks_matches_numpy():
    rng = np.random.default_rng(0)
    m, k = 32, 64
    blocks, w = _q4_0(m, k, rng)
    x = rng.uniform(-1, 1, (k, 16)).astype(np.float16)
    y = np.zeros((m, 16), np.float32)
    q4_as_packed16.launch((m // 16,), blocks, x, y, m, k, device="cpu")
    np.testing.assert_allclose(y, w @ x.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_f32_memory_decoded_as_vec4_blocks():
    compile_checked(f32_as_vec4, r"OpTypeFunction %half %_ptr_PhysicalStorageBuffer_F32x4 ",
                    r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ Aligned 16 DecodeFunc %dequant_f32x4\n")
    rng = np.random.default_rng(1)
    src = rng.uniform(-4, 4, (16, 20)).astype(np.float32)
    y = np.zeros((16, 16), np.float16)
    f32_as_vec4.launch((1,), src, y, 16, 20, device="cpu")
    np.testing.assert_array_equal(y, src[:, :16].astype(np.float16))


def test_raw_byte_memory_decoded_as_q8_0_blocks():
    compile_checked(bytes_as_q8, r"OpTypeFunction %half %_ptr_PhysicalStorageBuffer_Q8_0 ")
    rng = np.random.default_rng(2)
    m, k = 16, 64
    blocks = np.zeros(m * k // 32 + 8, Q8_DTYPE)  # 8 blocks before the tensor: its offset counts bytes
    blocks["d"] = rng.uniform(0.01, 0.1, len(blocks)).astype(np.float16)
    blocks["qs"] = rng.integers(0, 256, (len(blocks), 32))
    q = blocks["qs"][8:].astype(np.int32)
    w = (np.where(q > 127, q - 256, q).astype(np.float16) * blocks["d"][8:, None]).astype(np.float16)
    y = np.zeros((16, 32), np.float16)
    bytes_as_q8.launch((1,), blocks.view(np.uint8), y, m, k, 8, device="cpu")
    np.testing.assert_array_equal(y, w.reshape(m, k)[:, :32])


def test_an_annotation_naming_the_memorys_own_element_changes_nothing():
    @cd.func
    def plain(block, block_coords, coord_in_block):
        return f16(block.qs[coord_in_block[1] % 16]) * block.d

    @cd.func
    def annot(block: Q4_0, block_coords, coord_in_block):  # a name as long as "plain"
        return f16(block.qs[coord_in_block[1] % 16]) * block.d

    def kernel(fn):
        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(w: cd.Buffer[Q4_0], y: cd.Buffer[f16], n: u32):
            L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
            Acc[f16, 16, 16].load_tensor(w, 0, L, decode=fn).store_tensor(y, 0, cd.tensor_layout(2).dimension(n, n))
        return k

    a, b = kernel(plain).compile(), kernel(annot).compile()
    assert a.replace(b"plain", b"annot") == b


# -- blocks that cannot work ---------------------------------------------------------------------------
@cd.func
def reads_q4(block: Q4_0Packed16, block_coords, coord_in_block):
    return block.d


@cd.kernel(workgroup_size=(32, 1, 1))
def q4_blocks_in_words(w: cd.Buffer[u32], y: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=reads_q4).store_tensor(  # @words
        y, 0, cd.tensor_layout(2).dimension(n, n))


@cd.kernel(workgroup_size=(32, 1, 1))
def q4_blocks_in_q8_memory(w: cd.Ptr[Q8_0], y: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=reads_q4).store_tensor(  # @q8
        y, 0, cd.tensor_layout(2).dimension(n, n))


@cd.func
def ptr_annotated(block: cd.Ptr[Q4_0], block_coords, coord_in_block):
    return block.d


@cd.kernel(workgroup_size=(32, 1, 1))
def annotated_ptr(w: cd.Buffer[Q4_0], y: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=ptr_annotated).store_tensor(  # @ptr
        y, 0, cd.tensor_layout(2).dimension(n, n))


@cd.func
def scalar_annotated(block: f32, block_coords, coord_in_block):
    return f16(1.0)


@cd.kernel(workgroup_size=(32, 1, 1))
def annotated_scalar(w: cd.Buffer[f32], y: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2).block_size(1, 4).dimension(n, n)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=scalar_annotated).store_tensor(  # @scalar
        y, 0, cd.tensor_layout(2).dimension(n, n))


@cd.func
def unannotated(block, block_coords, coord_in_block):
    return f16(1.0)


@cd.kernel(workgroup_size=(32, 1, 1))
def scalars_without_a_block(w: cd.Buffer[f32], y: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2).block_size(1, 4).dimension(n, n)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=unannotated).store_tensor(  # @none
        y, 0, cd.tensor_layout(2).dimension(n, n))


@cd.func
def bad_annotation(block: NoSuchBlock, block_coords, coord_in_block):  # noqa: F821
    return f16(1.0)


@cd.kernel(workgroup_size=(32, 1, 1))
def unknown_annotation(w: cd.Buffer[Q4_0], y: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=bad_annotation).store_tensor(  # @unknown
        y, 0, cd.tensor_layout(2).dimension(n, n))


@pytest.mark.parametrize("kernel, marker, message", [
    (q4_blocks_in_words, "# @words", "reads Q4_0Packed16 blocks of 18 bytes from memory of u32 (4 bytes each)"),
    (q4_blocks_in_q8_memory, "# @q8", "reads Q4_0Packed16 blocks of 18 bytes from memory of Q8_0 (34 bytes each)"),
    (annotated_ptr, "# @ptr", "annotated Ptr[Q4_0], a pointer to an array; it receives a pointer to one block"),
    (annotated_scalar, "# @scalar", "first parameter is annotated f32; it receives a pointer to one block"),
    (scalars_without_a_block, "# @none", "or the function's first parameter must name the block struct it reads"),
    (unknown_annotation, "# @unknown", "cannot evaluate the annotation 'NoSuchBlock' of parameter 'block'"),
], ids=["size-not-dividing", "struct-sizes-not-dividing", "ptr-annotation", "scalar-annotation",
        "scalars-without-annotation", "unknown-annotation"])
def test_blocks_that_cannot_work_are_located_errors(kernel, marker, message):
    expect_error(kernel, TypeMismatchError, message, marker, 5)


@pytest.mark.parametrize("elem, block, ok", [
    (T.u8, Q8_0, True), (T.f32, F32x4, True), (Q4_0, Q4_0Packed16, True), (Q4_0, Q4_0, True),
    (cd.vec4[f32], F32x4, True), (cd.vec4[f32], cd.struct(type("W", (), {"__annotations__": {"w": u32}})), True),
    (T.u32, Q4_0Packed16, False), (Q8_0, Q4_0Packed16, False), (T.f32, T.f32, False), (T.boolean, F32x4, False),
])
def test_the_ir_rule_for_decode_blocks(elem, block, ok):
    problem = rules.memory_problem(elem, block)
    assert (problem is None) == ok, problem


# -- glslang's spv.coopmat2_tensor.comp: an fp16Buf { float16_t f; } block over f16 and f16vec2 memory -----
@cd.struct
class Fp16Buf:
    f: f16


@cd.struct
class S:
    x: cd.vec2[f16]


@cd.func
def decode(b: Fp16Buf, block_coords, coord_in_block):
    return b.f


@cd.kernel(workgroup_size=(64, 1, 1))
def glslang_tensor(x: cd.Buffer[f16], s: cd.Buffer[S], y: cd.Buffer[f16]):
    t = cd.tensor_layout(2).dimension(64, 32)
    v = cd.tensor_view(2, has_dims=True, perm=(1, 0)).dimension(32, 64)
    a = MatA[f16, 64, 32, cd.Workgroup].load_tensor(x, 0, t, decode=decode)
    b = MatA[f16, 64, 32, cd.Workgroup].load_tensor(s, 4, t, view=v, decode=decode)
    a.store_tensor(y, 0, t)
    b.store_tensor(y, 2048, t)


def test_glslangs_decode_of_another_block_type_ports():
    compile_checked(glslang_tensor, r"OpTypeFunction %half %_ptr_PhysicalStorageBuffer_Fp16Buf ",
                    r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None TensorView\|DecodeFunc %\w+ %decode\n")
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, 64 * 32).astype(np.float16)
    s = rng.uniform(-2, 2, (4 + 1024, 2)).astype(np.float16)  # S elements: two f16 each
    y = np.zeros(2 * 64 * 32, np.float16)
    glslang_tensor.launch((1,), x, s, y, device="cpu")
    np.testing.assert_array_equal(y[:2048], x)
    flat = s[4:].reshape(-1)[:2048]  # the f16 blocks from element 4 of s on, 2 per S
    np.testing.assert_array_equal(y[2048:].reshape(64, 32), flat.reshape(32, 64).T)


@cd.func
def scaled(block: F32x4, block_coords, coord_in_block, factor):
    return f16(block.v[coord_in_block[1]] * factor)


@cd.kernel(workgroup_size=(32, 1, 1))
def f32_as_vec4_scaled(w: cd.Buffer[f32], y: cd.Buffer[f16], factor: cd.Spec[f32] = 2.0):
    L = cd.tensor_layout(2).block_size(1, 4).dimension(16, 16)
    Acc[f16, 16, 16].load_tensor(w, 0, L, decode=cd.partial(scaled, factor=factor)).store_tensor(
        y, 0, cd.tensor_layout(2).dimension(16, 16))


def test_a_partial_keeps_the_block_annotation():
    compile_checked(f32_as_vec4_scaled, r"OpTypeFunction %half %_ptr_PhysicalStorageBuffer_F32x4 ")
    src = np.arange(256, dtype=np.float32).reshape(16, 16) / 4
    y = np.zeros((16, 16), np.float16)
    f32_as_vec4_scaled.launch((1,), src, y, device="cpu")
    np.testing.assert_array_equal(y, (src * 2).astype(np.float16))
