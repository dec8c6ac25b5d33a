"""Verdicts of kernels against device profiles, without a GPU, and what the errors say."""

import dataclasses
import runpy
import traceback
from pathlib import Path

import pytest

import coopdsl as cd
from coopdsl.devices import DeviceMismatchError, load_profile, mismatches, shipped_profiles

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]
KFILE = str(Path(K.__file__).resolve())
H100 = load_profile("nvidia-h100")
KHR_ONLY = H100.khr_only()
# A test fixture, not a device: the H100's lists with a subgroup size of 64 (as AMD drivers report).
WIDE_SUBGROUPS = dataclasses.replace(H100, name="test profile (subgroup size 64)", subgroup_size=64)


def _example_kernels():
    for path in sorted((ROOT / "examples").glob("*.py")):
        if path.name.startswith("qcom_"):  # for VK_QCOM_cooperative_matrix_conversion devices (tests/qcom)
            continue
        ns = runpy.run_path(str(path))
        for k in ns.values():
            if isinstance(k, cd.Kernel):
                yield pytest.param(k, ns.get("tile_spec"), id=f"{path.stem}.{k.name}")


@pytest.mark.parametrize("kernel,tile_spec", list(_example_kernels()))
def test_examples_pass_on_the_h100_profile(kernel, tile_spec):
    spec = tile_spec(H100) if tile_spec else None
    kernel.compile(spec=spec, device="nvidia-h100")
    assert mismatches(kernel.reflect(spec=spec), H100) == []


# kernel, {profile: passes?}
VERDICTS = [
    (K.f32_16x16x8, {H100: False, KHR_ONLY: False}),
    (K.f16_32x32x16, {H100: True, KHR_ONLY: False}),      # NV2 flexible dimensions (granularity 16)
    (K.workgroup_64x64x16, {H100: True, KHR_ONLY: False}),  # 128 invocations, a flexible Workgroup entry
    (K.odd_matrix, {H100: False, KHR_ONLY: False}),
    (K.int8_saturating, {H100: False, KHR_ONLY: False}),  # the H100 lists no saturating configuration
    (K.u8_as_signed, {H100: False, KHR_ONLY: False}),     # nor mixed signedness
    (K.spec_tiles, {H100: True, KHR_ONLY: False}),        # 16 x 32 x 16: flexible only
]


@pytest.mark.parametrize("kernel,verdicts", VERDICTS, ids=[k.name for k, _ in VERDICTS])
def test_verdicts(kernel, verdicts):
    for profile, ok in verdicts.items():
        assert (mismatches(kernel.reflect(), profile) == []) is ok, (kernel.name, profile.name)


@pytest.mark.parametrize("name", shipped_profiles())
def test_f32_16x16x8_is_refused_by_every_shipped_profile(name):
    with pytest.raises(DeviceMismatchError):
        K.f32_16x16x8.compile(device=name)


def test_f32_16x16x8_error_names_the_line_the_need_and_the_nearest_offers():
    with pytest.raises(DeviceMismatchError) as info:
        K.f32_16x16x8.compile(device="nvidia-h100")
    e = info.value
    assert isinstance(e, cd.CompileError)
    assert (e.loc.file, e.loc.line, e.loc.col) == (KFILE, K.line("f32-muladd"), 11)
    assert e.message.startswith("NVIDIA H100 80GB HBM3 offers no MulAdd (M x N x K) 16x16x8 f32 x f32 + f32 -> f32 "
                                "at Subgroup scope; nearest offered: ")
    nearest = e.mismatches[0].nearest
    assert nearest[0] == "16x16x16 f16 x f16 + f32 -> f32 at Subgroup scope"  # same C/Result types, closest shape
    assert all("-> f32" in n for n in nearest)
    text = str(e)
    assert text.startswith(f"{KFILE}:{K.line('f32-muladd')}:11: error: ")
    assert "acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))" in text
    assert f"{KFILE}:{K.line('f32-a')}:10: note: also NVIDIA H100 80GB HBM3 offers no cooperative-matrix type " \
           f"MatA[f32, 16, 8]" in text
    frames = traceback.extract_tb(info.tb)
    assert not any("/coopdsl/devices/" in f.filename or "/coopdsl/frontend/" in f.filename for f in frames), frames


def test_32x32x16_without_flexible_dimensions():
    with pytest.raises(DeviceMismatchError) as info:
        K.f16_32x32x16.compile(device=KHR_ONLY)
    e = info.value
    assert e.loc.line == K.line("big-muladd")
    assert "offers no MulAdd (M x N x K) 32x32x16 f16 x f16 + f32 -> f32" in e.message
    assert e.mismatches[0].nearest[0] == "16x16x16 f16 x f16 + f32 -> f32 at Subgroup scope"


def test_a_matrix_type_no_configuration_has():
    with pytest.raises(DeviceMismatchError) as info:
        K.odd_matrix.compile(device="nvidia-h100")
    e = info.value
    assert (e.loc.line, e.loc.col) == (K.line("odd-a"), 9)
    assert e.message.startswith("NVIDIA H100 80GB HBM3 offers no cooperative-matrix type MatA[f16, 8, 16] at "
                                "Subgroup scope; nearest offered: MatA[f16, 16, 16]")


def test_saturating_and_signedness_must_match():
    (m,) = mismatches(K.int8_saturating.reflect(), H100)
    assert "16x16x32 i8 x i8 + i32 -> i32 at Subgroup scope, saturating" in m.what
    assert m.nearest[0] == "16x16x32 i8 x i8 + i32 -> i32 at Subgroup scope"
    (m,) = mismatches(K.u8_as_signed.reflect(), H100)
    assert "i8 x u8 + i32 -> i32" in m.what and m.loc.line == K.line("mixed-muladd")


def test_workgroup_scope_needs_the_feature_and_the_exact_invocation_count():
    first = mismatches(K.workgroup_64x64x16.reflect(), KHR_ONLY)[0]
    assert first.loc.line == K.line("wg-a")
    assert "needs cooperativeMatrixWorkgroupScope (VK_NV_cooperative_matrix2)" in first.what
    # 96 invocations: no flexible Workgroup entry has that count
    (m, *types) = mismatches(K.workgroup_64x64x16.reflect(spec={"WG": 96}), H100)
    assert m.loc.line == K.line("wg-muladd") and "in a workgroup of 96 invocations" in m.what
    assert "with 128 invocations" in m.nearest[0] or "with 64 invocations" in m.nearest[0]
    assert len(types) == 3
    # 512 invocations: over cooperativeMatrixWorkgroupScopeMaxWorkgroupSize
    found = mismatches(K.workgroup_64x64x16.reflect(spec={"WG": 512}), H100)
    assert "allows at most 256 (cooperativeMatrixWorkgroupScopeMaxWorkgroupSize)" in found[0].what


def test_subgroup_scope_needs_whole_subgroups_in_x():
    gemm = runpy.run_path(str(ROOT / "examples" / "gemm_khr.py"))["gemm"]
    (m,) = mismatches(gemm.reflect(), WIDE_SUBGROUPS)
    assert "the workgroup x size (32) must be a multiple of the subgroup size of test profile " \
           "(subgroup size 64) (64)" in m.what
    ns = runpy.run_path(str(ROOT / "examples" / "gemm_portable.py"))
    spec = ns["tile_spec"](WIDE_SUBGROUPS)
    assert spec["WG"] == 64 and mismatches(ns["gemm"].reflect(spec=spec), WIDE_SUBGROUPS) == []


def test_spec_values_given_at_check_time():
    r = K.spec_tiles.reflect()
    assert mismatches(r, H100) == []
    (m, *_) = mismatches(r, H100, {"TK": 8})
    assert "16x32x8" in m.what and m.loc.line == K.line("spec-muladd")
    (m, *_) = mismatches(r, KHR_ONLY, {"TM": 8})  # TN = 2 * TM
    assert "offers no MulAdd (M x N x K) 8x16x16 f16" in m.what
    assert "MatA[f16, TM, TK] (here 8 x 16)" in mismatches(r, KHR_ONLY, {"TM": 8})[1].what


def test_compile_with_device_keeps_the_module_and_the_cache():
    gemm = runpy.run_path(str(ROOT / "examples" / "gemm_khr.py"))["gemm"]
    assert gemm.compile(device="nvidia-h100") == gemm.compile()


def test_scope_from_a_specialization_constant():
    r = K.spec_scope.reflect()
    assert r["cooperative_matrices"][0]["scope"] == {"spec_id": 0, "name": "S", "value": 3, "type": "u32"}
    assert mismatches(r, H100) == []
    first = mismatches(r, H100, {"S": 1})[0]
    assert first.loc.line == K.line("scope-a")
    assert first.what == "MatA[f16, 16, 16, S] has scope Device; only Subgroup and Workgroup scope matrices exist"
    assert "needs cooperativeMatrixWorkgroupScope" in mismatches(r, KHR_ONLY, {"S": 2})[0].what


@pytest.mark.parametrize("arg, says", [
    ({}, "a mapping without 'entry_point', 'workgroup_size'"),
    ({"entry_point": "main"}, "a mapping without 'workgroup_size'"),
    ([1, 2], "got list"),
    (K.f32_16x16x8, "pass the kernel's reflection, kernel.reflect(), not the kernel"),
])
def test_what_is_not_a_reflection_is_a_type_error_saying_what_to_pass(arg, says):
    for check in (lambda: cd.devices.verify(arg, "nvidia-h100"), lambda: mismatches(arg, "nvidia-h100"),
                  lambda: cd.devices.check.declared_problems(arg)):
        with pytest.raises(TypeError, match="coopdsl.devices: ") as info:
            check()
        assert says in str(info.value)
    assert mismatches(K.f32_16x16x8.reflect(), "nvidia-h100")   # (a reflection still works)
