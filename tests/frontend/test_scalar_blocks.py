"""Structs in the scalar layout (``@cd.struct(layout_rule="scalar")``, GLSL's ``layout(scalar)``) as buffer,
push-constant, uniform and device-pointer blocks: the module is validated with spirv-val's
``--scalar-block-layout`` and says it needs the scalarBlockLayout feature (reflection), which the runtime checks
(before, every such block was an internal error: spirv-val refused the offsets under the default rules)."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f16, f32, vec4
from coopdsl.runtime.features import DeviceFeatureError, check_supported, requirements

from ..conftest import compile_checked

P = cd.struct(type("P", (), {"__annotations__": {"a": f16, "b": vec4[f32]}}), layout_rule="scalar")
Q = cd.struct(type("Q", (), {"__annotations__": {"a": f16, "b": vec4[f32]}}))   # the same members, std430
P_DTYPE = np.dtype({"names": ["a", "b"], "formats": [np.float16, (np.float32, 4)], "offsets": [0, 4],
                    "itemsize": 20})


@cd.kernel(workgroup_size=(4, 1, 1))
def k_buffer(o: cd.Buffer[f32], p: cd.Buffer[P]):
    i = cd.global_invocation_id.x
    o[i] = p[i].b.y + f32(p[i].a)


@cd.kernel(workgroup_size=(4, 1, 1))
def k_push(o: cd.Buffer[f32], p: P):
    o[cd.global_invocation_id.x] = p.b.z + f32(p.a)


@cd.kernel(workgroup_size=(4, 1, 1))
def k_uniform(o: cd.Buffer[f32], p: cd.Uniform[P]):
    o[cd.global_invocation_id.x] = p.b.w * f32(p.a)


@cd.kernel(workgroup_size=(4, 1, 1))
def k_std430(o: cd.Buffer[f32], p: cd.Buffer[Q]):
    o[0] = p[0].b.x


@pytest.mark.parametrize("k", [k_buffer, k_push, k_uniform])
def test_scalar_blocks_validate_and_say_they_need_scalar_block_layout(k):
    compile_checked(k, r"OpMemberDecorate %\w+ 1 Offset 4")
    assert k.reflect()["scalar_block_layout"] is True


def test_std430_blocks_need_nothing_more():
    compile_checked(k_std430, r"OpMemberDecorate %Q 1 Offset 16")
    assert k_std430.reflect()["scalar_block_layout"] is False


def test_the_runtime_asks_the_device_for_scalar_block_layout():
    from coopdsl.aot.requirements import requirements as aot_requirements

    assert "scalarBlockLayout" in aot_requirements(k_buffer.reflect()).features   # (build specs' C headers)
    assert "scalarBlockLayout" not in aot_requirements(k_std430.reflect()).features
    assert "scalarBlockLayout" in requirements([], scalar_block_layout=True)[1]
    assert "scalarBlockLayout" not in requirements([])[1]
    with pytest.raises(DeviceFeatureError, match="missing: feature scalarBlockLayout"):
        check_supported("a device", [], {}, 0, [], scalar_block_layout=True)


def _p_data() -> np.ndarray:
    p = np.zeros(4, P_DTYPE)
    p["a"] = [1, 2, 3, 4]
    p["b"] = np.arange(16, dtype=np.float32).reshape(4, 4)
    return p


def test_scalar_blocks_on_the_interpreter():
    p = _p_data()
    o = np.zeros(4, np.float32)
    k_buffer.launch((1,), o, p, device="cpu")
    assert o.tolist() == (p["b"][:, 1] + p["a"].astype(np.float32)).tolist()
    o = np.zeros(4, np.float32)
    k_push.launch((1,), o, {"a": 2.0, "b": (1.0, 2.0, 3.0, 4.0)}, device="cpu")
    assert o.tolist() == [5.0] * 4


def test_scalar_buffer_blocks_on_a_vulkan_device(device):
    if not device.info.features.get("scalarBlockLayout"):
        pytest.skip(f"{device.info.name} has no scalarBlockLayout")
    p = _p_data()
    got, want = np.zeros(4, np.float32), np.zeros(4, np.float32)
    k_buffer.launch((1,), got, p, device=device)
    k_buffer.launch((1,), want, p, device="cpu")
    assert got.tolist() == want.tolist()


@cd.struct
class Inner:
    a: f32
    v: vec4[f32]          # std430: Inner aligns to 16


@cd.struct(layout_rule="scalar")
class Outer:
    h: f32
    inner: Inner          # at offset 4 in the scalar layout


@cd.struct
class OuterPtr:
    o: cd.Ptr[Outer]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_ptr_member_stores(out: cd.Buffer[f32], pp: OuterPtr):
    pp.o[0].inner = pp.o[1].inner     # a whole std430 struct member at offset 4
    pp.o[0].inner.v.yz = pp.o[1].inner.v.xy
    out[0] = pp.o[0].h


def test_a_store_through_a_device_pointer_promises_the_alignment_its_offset_has():
    # Aligned is the member's natural alignment unless its offset promises less: Inner at offset 4 of a scalar
    # struct is 4-byte aligned (it was "Aligned 16", a promise the address does not keep; found by a check
    # written from the docs alone, the interpreter reporting the misaligned write)
    text = compile_checked(k_ptr_member_stores)
    stores = [line.split("Aligned ")[1] for line in text.splitlines() if "OpStore" in line and "Aligned" in line]
    assert stores == ["4", "4", "4"]      # the struct, then v.y (offset 24) and v.z (offset 28)
    # Outer strides 36 bytes: h at 0, inner.a at 4, inner.v at 20 (Inner's own offset 16): floats 0, 1, 5-8
    raw = np.zeros(2 * 9, np.float32)
    raw[9:] = np.arange(9, dtype=np.float32) + 1.0          # o[1]: h 1, a 2, (padding 3-5), v 6 7 8 9
    k_ptr_member_stores.launch((1,), np.zeros(1, np.float32), {"o": raw}, device="cpu")
    assert raw[[0, 1, 5, 6, 7, 8]].tolist() == [0.0, 2.0, 6.0, 6.0, 7.0, 9.0]
