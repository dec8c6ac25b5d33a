"""The profiles read from Mesa's driver sources: RADV on RDNA3 (GFX11) and ANV on Arc A770 (DG2).

Their lists are what radv_GetPhysicalDeviceCooperativeMatrixPropertiesKHR and
anv_GetPhysicalDeviceCooperativeMatrixPropertiesKHR return at the commits the
profiles' ``source`` objects name (docs/devices.md).  These tests pin the lists,
then check kernels against them as ``compile(device=...)`` does.
"""

import json
import runpy
from pathlib import Path

import pytest

import coopdsl as cd
from coopdsl.devices import DeviceMismatchError, best_shape, load_profile, mismatches, shapes, shipped_profiles
from coopdsl.devices.profile import profiles_dir

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]
KFILE = str(Path(K.__file__).resolve())
PORTABLE = runpy.run_path(str(ROOT / "examples" / "gemm_portable.py"))
RDNA3, ARC = "amd-rdna3-radv", "intel-arc-a770-anv"
SOURCES = {
    RDNA3: ("c869971d053d4694476121005bb377fc0c22de59", "src/amd/vulkan/radv_physical_device.c",
            "radv_GetPhysicalDeviceCooperativeMatrixPropertiesKHR"),
    ARC: ("ddf2aa3a4d305fddbe30b8e9b366887fc904d3ba", "src/intel/vulkan/anv_physical_device.c",
          "anv_GetPhysicalDeviceCooperativeMatrixPropertiesKHR"),
}


def _listing(name):
    return [(c.M, c.N, c.K, *c.types, c.saturating) for c in load_profile(name).configs]


@pytest.mark.parametrize("name", [RDNA3, ARC])
def test_shipped_by_name_with_their_source(name):
    assert name in shipped_profiles()
    p = load_profile(name)
    assert p.source["kind"] == "driver source"
    commit, path, function = SOURCES[name]
    assert p.source["commit"] == commit and "mesa" in p.source["repository"]
    (main,) = [f for f in p.source["files"] if f["path"] == path]
    assert main["commit"] == commit and function in main["functions"]
    assert p.source["date"] and p.source["not_determined"]
    # no VK_NV_cooperative_matrix2 in the default configuration of either driver
    assert not p.flexible and not p.workgroup_scope and not p.flexible_dimensions
    assert p.max_workgroup_invocations == 1024 and p.data["max_shared_memory"] == 65536
    assert all(c.scope == "Subgroup" for c in p.configs)


@pytest.mark.parametrize("name", [RDNA3, ARC])
def test_the_file_is_a_devices_json_listing(name, tmp_path):
    """Same keys as `coopdsl devices --json` (plus `source`), and a copy loads from a path the same way."""
    (entry,) = json.loads((profiles_dir() / f"{name}.json").read_text())
    measured = json.loads((ROOT / "docs" / "h100-devices.json").read_text())[0]
    assert set(entry) == set(measured) | {"source"}
    path = tmp_path / "p.json"
    path.write_text(json.dumps([entry]))
    assert load_profile(str(path)) == load_profile(name)
    assert load_profile(str(path)).source == entry["source"]


def test_rdna3_lists_what_radv_lists_on_gfx11():
    p = load_profile(RDNA3)
    assert (p.name, p.subgroup_size, p.driver) == ("AMD RDNA3 GPU (RADV GFX11)", 64, "radv Mesa (git-c869971d05)")
    ints = [(16, 16, 16, a, b, c, c, sat) for a in ("u8", "i8") for b in ("u8", "i8") for c in ("u32", "i32")
            for sat in (False, True) if not (c == "u32" and sat)]
    assert _listing(RDNA3) == [(16, 16, 16, "f16", "f16", "f16", "f16", False),
                               (16, 16, 16, "f16", "f16", "f32", "f32", False), *ints]
    assert len(ints) == 12
    assert not p.data["bfloat16_coopmat"] and "shaderBFloat16CooperativeMatrix" not in p.data["features"]


def test_arc_lists_what_anv_lists_on_dg2():
    p = load_profile(ARC)
    assert (p.name, p.subgroup_size, p.data["device_id"]) == ("Intel(R) Arc(tm) A770 Graphics (DG2)", 32, 0x56A0)
    assert _listing(ARC) == [(8, 8, 16, "f16", "f16", "f32", "f32", False),
                             (8, 8, 16, "bf16", "bf16", "f32", "f32", False),
                             (8, 8, 32, "i8", "i8", "i32", "i32", False),
                             (8, 8, 32, "u8", "u8", "u32", "u32", False)]
    assert p.data["bfloat16_coopmat"] and p.data["features"]["shaderBFloat16CooperativeMatrix"]


@pytest.mark.parametrize("name,kernel", [
    (RDNA3, K.f16_16x16x16), (RDNA3, K.int8_16x16x16), (RDNA3, K.mixed_int8_16x16x16),
    (ARC, K.f16_8x8x16), (ARC, K.odd_matrix),
], ids=lambda v: v if isinstance(v, str) else v.name)
def test_an_offered_configuration_compiles_clean(name, kernel):
    assert kernel.compile(device=name) == kernel.compile()
    assert mismatches(kernel.reflect(), name) == []


def test_rdna3_refuses_f32_at_its_line_with_the_offers():
    with pytest.raises(DeviceMismatchError) as info:
        K.f32_16x16x8_wg64.compile(device=RDNA3)
    e = info.value
    assert isinstance(e, cd.CompileError)
    assert (e.loc.file, e.loc.line, e.loc.col) == (KFILE, K.line("f32-64-muladd"), 11)
    assert e.message.startswith("AMD RDNA3 GPU (RADV GFX11) offers no MulAdd (M x N x K) 16x16x8 f32 x f32 + f32 "
                                "-> f32 at Subgroup scope; nearest offered: 16x16x16 f16 x f16 + f32 -> f32 at "
                                "Subgroup scope; 16x16x16 f16 x f16 + f16 -> f16 at Subgroup scope")
    assert f"{KFILE}:{K.line('f32-64-muladd')}:11: error: AMD RDNA3" in str(e)


def test_rdna3_needs_whole_wave64_subgroups():
    """A 32-invocation workgroup is half an RDNA3 subgroup (RADV reports subgroupSize 64)."""
    (m, *others) = mismatches(K.int8_saturating.reflect(), RDNA3)
    assert "the workgroup x size (32) must be a multiple of the subgroup size of AMD RDNA3 GPU (RADV GFX11) (64)" \
        in m.what
    assert "16x16x32 i8 x i8 + i32 -> i32 at Subgroup scope, saturating" in others[0].what  # RADV's K is 16
    assert others[0].nearest[0] == "16x16x16 i8 x i8 + i32 -> i32 at Subgroup scope, saturating"
    # the same saturating i8 MulAdd at 16x16x16 in a 64-wide workgroup is offered
    assert mismatches(K.int8_16x16x16.reflect(), RDNA3) == []


def test_arc_refuses_16_row_tiles_naming_the_8x8_offers():
    with pytest.raises(DeviceMismatchError) as info:
        K.f16_16x16x16.compile(device=ARC)
    e = info.value
    assert (e.loc.file, e.loc.line) == (KFILE, K.line("f16-16-muladd"))
    assert e.message.startswith("Intel(R) Arc(tm) A770 Graphics (DG2) offers no MulAdd (M x N x K) 16x16x16 "
                                "f16 x f16 + f32 -> f32 at Subgroup scope; nearest offered: 8x8x16 f16 x f16 + "
                                "f32 -> f32 at Subgroup scope")
    assert [m.loc.line for m in e.mismatches[1:]] == [K.line("f16-16-a"), K.line("f16-16-a") + 1,
                                                      K.line("f16-16-muladd")]
    assert "offers no cooperative-matrix type MatA[f16, 16, 16]" in e.mismatches[1].what
    assert e.mismatches[1].nearest[0] == "MatA[f16, 8, 16]"


def test_arc_has_no_saturating_or_mixed_int8():
    """ANV lists saturating copies only below verx10 125 (or with INTEL_LOWER_DPAS); DG2 is 125."""
    (m, *_) = mismatches(K.int8_16x16x16.reflect(), ARC)
    assert "16x16x16 i8 x i8 + i32 -> i32 at Subgroup scope, saturating" in m.what
    assert m.nearest[0] == "8x8x32 i8 x i8 + i32 -> i32 at Subgroup scope"
    assert not any(c.saturating for c in load_profile(ARC).configs)


@pytest.mark.parametrize("name,a,c,want", [
    (RDNA3, cd.f16, cd.f32, (16, 16, 16)), (RDNA3, cd.f16, cd.f16, (16, 16, 16)), (RDNA3, cd.i8, cd.i32, (16, 16, 16)),
    (RDNA3, cd.u8, cd.u32, (16, 16, 16)),
    (ARC, cd.f16, cd.f32, (8, 8, 16)), (ARC, cd.bf16, cd.f32, (8, 8, 16)), (ARC, cd.i8, cd.i32, (8, 8, 32)),
    (ARC, cd.u8, cd.u32, (8, 8, 32)),
])
def test_best_shape_is_the_offered_shape(name, a, c, want):
    assert best_shape(name, a=a, c=c) == want
    assert shapes(name, a=a, c=c) == [want]


@pytest.mark.parametrize("name,a,c", [(RDNA3, cd.bf16, cd.f32), (RDNA3, cd.f32, cd.f32), (ARC, cd.f16, cd.f16),
                                      (ARC, cd.f32, cd.f32)])
def test_best_shape_refuses_what_is_not_offered(name, a, c):
    with pytest.raises(cd.devices.NoShapeError, match="offers no cooperative-matrix configuration"):
        best_shape(name, a=a, c=c)


@pytest.mark.parametrize("name", [RDNA3, ARC])
def test_portable_gemm_takes_the_device_tile(name):
    spec = PORTABLE["tile_spec"](name)
    p = load_profile(name)
    assert (spec["TM"], spec["TN"], spec["TK"]) == best_shape(name, a=cd.f16, c=cd.f32)
    assert spec["WG"] == p.subgroup_size
    PORTABLE["gemm"].compile(spec=spec, device=name)
    # the H100's tile and workgroup do not fit either of them
    h100 = PORTABLE["tile_spec"]("nvidia-h100")
    assert mismatches(PORTABLE["gemm"].reflect(spec=h100), name)
