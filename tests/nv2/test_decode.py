"""Decode functions (block loads): block structs with fixed arrays, the block pointer, the coordinate arrays."""

import re

import coopdsl as cd
from coopdsl import Acc, MatA, f16, f32, u8, u16, u32
from coopdsl.ir import types as T
from coopdsl.ir.layout import size_of

from ..conftest import compile_checked


@cd.struct
class Q8Block:
    d: f16
    qs: cd.array[u8, 32]


@cd.struct(layout_rule="scalar")
class Mixed:
    a: u8
    v: cd.array[cd.vec2[f32], 3]


def test_fixed_array_members_are_laid_out_with_their_stride():
    assert Q8Block.members[1][1] == T.ArrayType(u8, 32, 1)
    assert (Q8Block.offsets, size_of(Q8Block)) == ((0, 2), 34)
    assert Mixed.members[1][1] == T.ArrayType(cd.vec2[f32], 3, 8)
    assert Mixed.offsets == (0, 4)


@cd.func
def dequant_q8(bl, bc, cib):
    return f16(i8_of(bl.qs[cib[1]])) * bl.d


@cd.func
def i8_of(x):
    return cd.i32(x) - 256 if x > 127 else cd.i32(x)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_decode(w: cd.Ptr[Q8Block], wb: cd.Buffer[Q8Block], o: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 32).dimension(n, n).stride(n // 32, 1)
    V = cd.tensor_view(2, perm=(1, 0))
    a = MatA[f16, 16, 32].load_tensor(w, 0, L.slice(0, 16, 0, 32), decode=dequant_q8)
    b = MatA[f16, 16, 32].load_tensor(wb, 0, L.slice(0, 16, 0, 32), view=V, decode=dequant_q8)
    acc = cd.muladd(a, cd.MatB[f16, 32, 16].splat(1.0), Acc[f32, 16, 16].splat(0.0))
    acc.store_tensor(o, 0, cd.tensor_layout(2).dimension(16, 16))


def test_decode_functions_through_pointers_and_buffers():
    text = compile_checked(
        k_decode, r"OpCapability CooperativeMatrixBlockLoadsNV", r"OpMemoryModel PhysicalStorageBuffer64 Vulkan",
        r"OpDecorate %_arr_uchar_uint_32 ArrayStride 1",
        r"OpMemberDecorate %Q8Block 1 Offset 2",
        r"(%\w+) = OpTypeFunction %half %_ptr_PhysicalStorageBuffer_Q8Block (%_arr_uint_uint_2) \2\n",
        r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ Aligned 16 DecodeFunc %dequant_q8\n",
        r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None TensorView\|DecodeFunc %\w+ %dequant_q8\n",
        r"OpAccessChain %_ptr_PhysicalStorageBuffer_uchar %\w+ %uint_1 %\w+\n\s+%\w+ = OpLoad %uchar %\w+ Aligned 1",
        r"OpAccessChain %_ptr_PhysicalStorageBuffer_half %\w+ %uint_0\n\s+%\w+ = OpLoad %half %\w+ Aligned 2",
        r"OpFunctionCall %int %i8_of")
    assert len(re.findall(r"= OpFunction %half", text)) == 1  # one function for both loads


@cd.func
def ignore_block(bl, bc, cib):
    k = cib[0] + bc[1] * 32
    for i in range(2):
        k = k + cib[i]  # a runtime index into an array parameter
    return f32(k)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_no_pointer_use(wb: cd.Buffer[Q8Block], o: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    Acc[f32, 16, 16].load_tensor(wb, 0, L, decode=ignore_block).store_tensor(o, 0, cd.tensor_layout(2).dimension(n, n))


def test_a_decode_function_may_ignore_its_block_and_index_its_arrays_at_runtime():
    compile_checked(k_no_pointer_use, r"OpMemoryModel PhysicalStorageBuffer64 Vulkan",
                    r"OpVariable %_ptr_Function__arr_uint_uint_2 Function",
                    r"OpAccessChain %_ptr_Function_uint %\w+ %\w+")


@cd.struct
class Packed16:
    d: f16
    qs: cd.array[u16, 8]


@cd.func
def from_halfwords(bl, bc, cib):
    i = cib[1]
    word = u32(bl.qs[(i % 16) // 2])
    return f16(i32_nibble(word, i)) * bl.d


@cd.func
def i32_nibble(word, i):
    return cd.i32((word >> ((i % 2) * 8 + (i // 16) * 4)) & 15) - 8


@cd.kernel(workgroup_size=(32, 1, 1))
def k_packed16(w: cd.Ptr[Packed16], o: cd.Buffer[f16], n: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampToEdge).block_size(1, 32).dimension(n, n).stride(n // 32, 1)
    m = Acc[f16, 16, 32].load_tensor(w, 0, L.slice(0, 16, 0, 32), decode=from_halfwords)
    m.store_tensor(o, 0, cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(n, n).slice(0, 16, 0, 32))


def test_llama_cpp_packed16_blocks():
    compile_checked(k_packed16, r"OpLoad %ushort %\w+ Aligned 2", r"OpCapability StorageBuffer16BitAccess")
