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
