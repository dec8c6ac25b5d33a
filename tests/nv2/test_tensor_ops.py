"""Tensor layouts and views and tensor-addressed loads/stores: every instruction and operand kind, checked by
spirv-val (vulkan1.3) and in the disassembly."""

import re

import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32

from ..conftest import compile_checked

NV2 = (r"OpCapability TensorAddressingNV", r"OpCapability CooperativeMatrixTensorAddressingNV",
       r'OpExtension "SPV_NV_tensor_addressing"', r'OpExtension "SPV_NV_cooperative_matrix2"')


@cd.kernel(workgroup_size=(32, 1, 1))
def k_layout_state(a: cd.Buffer[f16], o: cd.Buffer[f16], M: u32, K: u32, r0: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).block_size(1, 1).dimension(M, K).stride(K, 1)
    L = L.slice(r0, 16, -4, 16).clamp_value(7)
    V = cd.tensor_view(2, has_dims=True, perm=(1, 0)).dimension(16, 16).stride(16, 1).clip(0, 8, 0, 16)
    m = MatA[f16, 16, 16].load_tensor(a, 0, L, view=V)
    Acc[f16, 16, 16].load_tensor(a, 0, L).store_tensor(o, 0, L, view=V)
    m2 = MatB[f16, 16, 16].load_tensor(a, 0, L)


def test_every_layout_and_view_instruction():
    text = compile_checked(
        k_layout_state, *NV2,
        r"(%\w+) = OpTypeTensorLayoutNV %uint_2 %uint_1\n",
        r"OpTypeTensorViewNV %uint_2 %true %uint_1 %uint_0\n",
        r"(%\w+) = OpCreateTensorLayoutNV (%\w+)\n\s+(%\w+) = OpTensorLayoutSetBlockSizeNV \2 \1 %uint_1 %uint_1\n"
        r"\s+(%\w+) = OpTensorLayoutSetDimensionNV \2 \3 %\w+ %\w+\n"
        r"\s+(%\w+) = OpTensorLayoutSetStrideNV \2 \4 %\w+ %uint_1\n",
        r"OpTensorLayoutSliceNV %\w+ %\w+ %\w+ %uint_16 %int_n4 %uint_16\n",
        r"OpTensorLayoutSetClampValueNV %\w+ %\w+ %uint_7\n",
        r"(%\w+) = OpCreateTensorViewNV (%\w+)\n\s+(%\w+) = OpTensorViewSetDimensionNV \2 \1 %uint_16 %uint_16\n"
        r"\s+(%\w+) = OpTensorViewSetStrideNV \2 \3 %uint_16 %uint_1\n"
        r"\s+%\w+ = OpTensorViewSetClipNV \2 \4 %uint_0 %uint_8 %uint_0 %uint_16\n",
        r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None TensorView %\w+\n",
        r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ None None\n",
        r"OpCooperativeMatrixStoreTensorNV %\w+ %\w+ %\w+ None TensorView %\w+\n")
    assert len(re.findall(r"OpCooperativeMatrixLoadTensorNV", text)) == 3


@pytest.mark.parametrize("clamp,value", [(cd.ClampUndefined, 0), (cd.ClampConstant, 1), (cd.ClampToEdge, 2),
                                         (cd.ClampRepeat, 3), (cd.ClampRepeatMirrored, 4)])
def test_every_clamp_mode(clamp, value):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(a: cd.Buffer[f32], n: u32):
        L = cd.tensor_layout(2, clamp=clamp).dimension(n, n)
        Acc[f32, 16, 16].load_tensor(a, 0, L.slice(0, 16, 0, 16)).store_tensor(a, 0, L.slice(0, 16, 0, 16))

    compile_checked(k, *NV2, rf"OpTypeTensorLayoutNV %uint_2 %uint_{value}\n")


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5])
def test_every_dimension_count(dim):
    dims = (1,) * (dim - 2) + (16, 16) if dim >= 2 else (256,)
    slices = tuple(x for d in dims for x in (0, d))
    perm = tuple(reversed(range(dim)))

    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(a: cd.Buffer[f32]):
        L = cd.tensor_layout(dim).dimension(dims).slice(slices)
        V = cd.tensor_view(dim, perm=perm)
        Acc[f32, 16, 16].load_tensor(a, 0, L, view=V).store_tensor(a, 0, L)

    ids = " ".join(f"%uint_{p}" for p in perm)
    compile_checked(k, rf"OpTypeTensorLayoutNV %uint_{dim} %uint_0\n",
                    rf"OpTypeTensorViewNV %uint_{dim} %false {ids}\n",
                    rf"OpTensorLayoutSliceNV(?: %\w+){{{2 + 2 * dim}}}\n")


NEG_INF = float("-inf")


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_clamp(a: cd.Buffer[f16], n: u32, CLAMP: cd.Spec[u32] = 1):
    L = cd.tensor_layout(2, clamp=CLAMP).dimension(n, n).slice(0, 16, 0, 16).clamp_value(NEG_INF, f16)
    Acc[f16, 16, 16].load_tensor(a, 0, L).store_tensor(a, 0, L)


def test_clamp_mode_from_a_specialization_constant_and_a_clamp_value_from_a_number():
    compile_checked(k_spec_clamp, r"%CLAMP = OpSpecConstant %uint 1\n", r"OpTypeTensorLayoutNV %uint_2 %CLAMP\n",
                    r"OpTensorLayoutSetClampValueNV %\w+ %\w+ %uint_64512\n")


@cd.kernel(workgroup_size=(32, 1, 1))
def k_memories(a: cd.Buffer[f16], p: cd.Ptr[f16], o: cd.Buffer[f16], n: u32):
    sh = cd.shared(f16, 256)
    L = cd.tensor_layout(2, clamp=cd.ClampToEdge).dimension(n, n).slice(0, 16, 0, 16)
    S = cd.tensor_layout(2).dimension(16, 16)
    x = Acc[f16, 16, 16].load_tensor(p, 8, L, visible=cd.Device, nontemporal=True)
    x.store_tensor(sh, 0, S, available=cd.Workgroup)
    cd.barrier()
    y = Acc[f16, 16, 16].load_tensor(sh, 0, S, fill=x, aligned=32)
    y.store_tensor(p, 16, L, volatile=True)
    y.store_tensor(o, 0, L)


def test_loads_and_stores_through_buffers_shared_arrays_and_pointers_with_memory_operands():
    compile_checked(
        k_memories,
        r"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ Aligned\|Nontemporal\|MakePointerVisible\|"
        r"NonPrivatePointer 16 %uint_1 None\n",
        r"OpCooperativeMatrixStoreTensorNV %\w+ %\w+ %\w+ MakePointerAvailable\|NonPrivatePointer %uint_2 None\n",
        r"= OpCooperativeMatrixLoadTensorNV %\w+ %\w+ (%\w+) %\w+ Aligned 32 None\n",
        r"OpCooperativeMatrixStoreTensorNV %\w+ %\w+ %\w+ Volatile\|Aligned 16 None\n",
        r"OpCooperativeMatrixStoreTensorNV %\w+ %\w+ %\w+ None None\n",
        r"OpMemoryModel PhysicalStorageBuffer64 Vulkan")


def test_a_fill_matrix_is_the_object_operand():
    text = compile_checked(k_memories)
    x = re.search(r"(%\w+) = OpCooperativeMatrixLoadTensorNV %\w+ %\w+ %\w+ %\w+ Aligned\|Nontemporal", text)
    assert re.search(rf"OpCooperativeMatrixLoadTensorNV %\w+ %\w+ {x.group(1)} %\w+ Aligned 32 None", text)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_layouts_flow(a: cd.Buffer[f32], n: u32, flip: u32):
    L = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(n, n)
    V = cd.tensor_view(2, perm=(1, 0))
    W = V.clip(0, 8, 0, 16) if flip > 0 else V
    acc = Acc[f32, 16, 16].splat(0.0)
    for _ in range(0, n, 16):
        L = L.slice(0, 16, 16, 16)  # moves 16 columns each iteration: the layout is a loop-carried value
        acc = acc + Acc[f32, 16, 16].load_tensor(a, 0, L, view=W)
    if flip > 1:
        L = L.clamp_value(1)
    acc.store_tensor(a, 0, L)


def test_layouts_and_views_flow_through_loops_and_branches_as_phis():
    text = compile_checked(k_layouts_flow, r"OpLoopMerge", r"OpSelectionMerge")
    types = dict(re.findall(r"(%\w+) = OpType(TensorLayoutNV|TensorViewNV)", text))
    phis = re.findall(r"= OpPhi (%\w+)", text)
    assert sorted(types[t] for t in phis if t in types) == ["TensorLayoutNV", "TensorLayoutNV", "TensorViewNV"]
    assert "OpSelect " not in text
