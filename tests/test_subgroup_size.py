"""``@coopdsl.kernel(subgroup_size=N)``: a kernel that requires subgroups of N invocations.

The decorator checks the value (located at the decorator), reflection and C headers carry it, the
interpreter runs at that size, and the device checks (compile time and launch) refuse a device that
cannot run it.  The GPU side (the pipeline's requiredSubgroupSize) is in tests/gpu/test_subgroup_size.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, f16, f32, u32
from coopdsl.autotune import kernel_fingerprint
from coopdsl.devices import DeviceMismatchError, mismatches
from coopdsl.devices.profile import profiles_dir


@cd.kernel(workgroup_size=(64, 1, 1), subgroup_size=16)
def sizes16(out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    out[i] = cd.subgroup_size


@cd.kernel(workgroup_size=(64, 1, 1))
def sizes_any(out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    out[i] = cd.subgroup_size


@cd.kernel(workgroup_size=(32, 1, 1),
           subgroup_size=32)
def mm32(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16, layout=RowMajor),
                    MatB[f16, 16, 16].load(b, 0, stride=16, layout=RowMajor), Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16, layout=RowMajor)


@cd.kernel(workgroup_size=(32, 1, 1))
def mm_any(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16, layout=RowMajor),
                    MatB[f16, 16, 16].load(b, 0, stride=16, layout=RowMajor), Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16, layout=RowMajor)


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


# -- the decorator -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [48, 0, 256, -32, True, 32.0, "32"])
def test_a_size_that_is_not_a_power_of_two_up_to_128_is_refused_at_the_decorator(bad):
    with pytest.raises(cd.CompileError) as e:
        @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=bad)
        def k(out: cd.Buffer[u32]):
            pass
    assert f"k: subgroup_size must be a power of two from 1 to 128 (or None), got {bad!r}" in str(e.value)
    loc = e.value.loc
    assert (loc.file, loc.line) == (__file__, _line_of("subgroup_size=bad)"))
    assert loc.col == len("        @cd.kernel(workgroup_size=(32, 1, 1), ") + 1


def test_the_error_points_at_the_line_that_gives_the_size_in_a_decorator_over_several_lines():
    with pytest.raises(cd.CompileError) as e:
        @cd.kernel(workgroup_size=(32, 1, 1),
                   subgroup_size=3)
        def k(out: cd.Buffer[u32]):
            pass
    assert (e.value.loc.line, e.value.loc.col) == (_line_of("subgroup_size=3)"), 20)


def test_the_size_is_kept_by_specialize_and_shown_by_repr():
    assert sizes16.subgroup_size == 16 and sizes_any.subgroup_size is None
    assert "subgroup_size=16" in repr(sizes16) and "subgroup_size" not in repr(sizes_any)


def test_the_size_is_part_of_the_autotune_fingerprint():
    plain = cd.Kernel(sizes16.fn, sizes16.workgroup_size)
    assert kernel_fingerprint(plain) != kernel_fingerprint(sizes16)
    assert kernel_fingerprint(cd.Kernel(sizes16.fn, sizes16.workgroup_size, subgroup_size=16)) == \
        kernel_fingerprint(sizes16)


def test_the_spirv_does_not_change():
    # Vulkan has no SPIR-V form for a required subgroup size: it is pipeline state
    assert cd.Kernel(sizes16.fn, sizes16.workgroup_size).compile() == sizes16.compile()


# -- reflection and headers ----------------------------------------------------------------------------
def test_reflection_carries_the_size_and_where_it_was_given():
    r = sizes16.reflect()
    assert r["subgroup_size"] == 16
    col = len("@cd.kernel(workgroup_size=(64, 1, 1), ") + 1
    assert r["subgroup_size_loc"] == f"{__file__}:{_line_of('subgroup_size=16)')}:{col}"
    r = sizes_any.reflect()
    assert r["subgroup_size"] is None and r["subgroup_size_loc"] is None
    json.dumps(sizes16.reflect())  # plain data


def test_a_header_holds_the_size_and_the_host_must_enable_subgroup_size_control():
    from coopdsl.aot import compile_artifact, render_header, requirements

    art = compile_artifact(sizes16, source="test")
    text = render_header([art], "t")
    assert "#define SIZES16_REQUIRED_SUBGROUP_SIZE 16u" in text
    assert "subgroupSizeControl" in requirements(art.reflection).features
    plain = compile_artifact(sizes_any, source="test")
    assert "REQUIRED_SUBGROUP_SIZE" not in render_header([plain], "t")
    assert "subgroupSizeControl" not in requirements(plain.reflection).features


# -- the interpreter -----------------------------------------------------------------------------------
def test_the_interpreter_runs_the_required_size():
    out = np.zeros(64, np.uint32)
    sizes16.launch((1,), out, device="cpu")
    assert set(out.tolist()) == {16}
    sizes16.launch((1,), out, device="cpu", subgroup_size=16)  # repeating it is fine
    assert set(out.tolist()) == {16}


def test_the_required_size_wins_over_the_environment_but_not_over_a_contrary_launch(monkeypatch):
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "64")
    out = np.zeros(64, np.uint32)
    sizes16.launch((1,), out, device="cpu")
    assert set(out.tolist()) == {16}
    sizes_any.launch((1,), out, device="cpu")
    assert set(out.tolist()) == {64}
    from coopdsl.interp import LaunchArgumentError

    where = f"{__file__}:{_line_of('subgroup_size=16)')}:{len('@cd.kernel(workgroup_size=(64, 1, 1), ') + 1}"
    with pytest.raises(LaunchArgumentError) as e:
        sizes16.launch((1,), out, device="cpu", subgroup_size=32)
    assert str(e.value) == (f"sizes16 requires subgroups of 16 invocations (@coopdsl.kernel(subgroup_size=16) at "
                            f"{where}); the launch asks for subgroup_size=32: leave it out")


def test_a_bad_subgroup_size_in_the_environment_names_the_variable(monkeypatch):
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "3")
    with pytest.raises(ValueError, match=r"COOPDSL_SUBGROUP_SIZE=3: the subgroup size must be one of"):
        sizes_any.launch((1,), np.zeros(64, np.uint32), device="cpu")


# -- device checks -------------------------------------------------------------------------------------
def _profile(**changes) -> dict:
    (entry,) = json.loads((profiles_dir() / "amd-rdna3-radv.json").read_text())
    entry = {**entry, **changes}
    return entry


def test_radv_runs_wave32_on_request_and_reports_other_sizes_at_the_decorator():
    assert mismatches(mm32.reflect(), "amd-rdna3-radv") == []
    with pytest.raises(DeviceMismatchError) as e:
        sizes16.compile(device="amd-rdna3-radv")
    assert str(e.value).endswith(
        "error: the kernel requires subgroups of 16 invocations (subgroup_size=16); AMD RDNA3 GPU (RADV GFX11) "
        "runs subgroups of 32 to 64 (minSubgroupSize to maxSubgroupSize)\n"
        "    @cd.kernel(workgroup_size=(64, 1, 1), subgroup_size=16)\n"
        "                                          ^")
    assert e.value.loc.line == _line_of("subgroup_size=16)")


def test_without_a_required_size_a_wave64_device_cannot_run_a_32_wide_workgroup_of_subgroup_matrices():
    found = mismatches(mm_any.reflect(), "amd-rdna3-radv")
    assert [m.what for m in found] == [
        "MatA[f16, 16, 16] has Subgroup scope, so the workgroup x size (32) must be a multiple of the subgroup "
        "size of AMD RDNA3 GPU (RADV GFX11) (64)"]


def test_the_h100_runs_only_32():
    assert mismatches(mm32.reflect(), "nvidia-h100") == []
    (m,) = mismatches(sizes16.reflect(), "nvidia-h100")
    assert m.what.endswith("NVIDIA H100 80GB HBM3 runs only subgroups of 32")


def test_a_device_without_subgroup_size_control_runs_only_its_own_size():
    fixed = _profile(features={"subgroupSizeControl": False}, subgroup_size=64, min_subgroup_size=32,
                     max_subgroup_size=64)
    (m,) = mismatches(mm32.reflect(), fixed)
    assert m.what.endswith("runs subgroups of 32 to 64 (minSubgroupSize to maxSubgroupSize) and cannot require a "
                           "size (no subgroupSizeControl)")
    only32 = _profile(features={"subgroupSizeControl": False}, subgroup_size=32, min_subgroup_size=32,
                      max_subgroup_size=32)
    assert mismatches(mm32.reflect(), only32) == []


def test_a_profile_without_the_range_has_only_its_subgroup_size():
    old = _profile(subgroup_size=32)
    del old["min_subgroup_size"], old["max_subgroup_size"]
    assert mismatches(mm32.reflect(), old) == []
    assert mismatches(sizes16.reflect(), old)[0].what.endswith("runs only subgroups of 32")


def test_a_workgroup_needing_more_subgroups_than_the_device_allows_is_refused():
    small = _profile(max_compute_workgroup_subgroups=2, min_subgroup_size=16)
    (m,) = mismatches(sizes16.reflect(), small)
    assert m.what == ("a workgroup of 64 invocations in subgroups of 16 needs 4 subgroups; AMD RDNA3 GPU (RADV GFX11) "
                      "allows at most 2 (maxComputeWorkgroupSubgroups)")
    assert (m.loc.line, m.loc.col) == (_line_of("subgroup_size=16)"), len("@cd.kernel(workgroup_size=(64, 1, 1), ") + 1)
