"""Choosing tile shapes from the device, and the portable GEMM example built on it."""

import runpy
from pathlib import Path

import pytest

import coopdsl as cd
from coopdsl.devices import NoShapeError, best_shape, load_profile, mismatches, shapes, shipped_profiles

ROOT = Path(__file__).resolve().parents[2]
PORTABLE = runpy.run_path(str(ROOT / "examples" / "gemm_portable.py"))


@pytest.mark.parametrize("a,c,want", [
    (cd.f16, cd.f32, (16, 16, 16)), (cd.f16, cd.f16, (16, 16, 16)), (cd.bf16, cd.f32, (16, 16, 16)),
    (cd.i8, cd.i32, (16, 16, 32)), (cd.u8, cd.u32, (16, 16, 32)), ("f16", "f32", (16, 16, 16)),
])
def test_best_shape_on_the_h100(a, c, want):
    assert best_shape("nvidia-h100", a=a, c=c) == want


def test_shapes_in_the_drivers_order_and_the_largest_wins():
    assert shapes("nvidia-h100", a=cd.f16, c=cd.f32) == [(16, 16, 16), (16, 8, 16), (16, 8, 8)]
    assert shapes("nvidia-h100", a=cd.i8, c=cd.i32) == [(16, 16, 32), (16, 8, 32)]
    assert shapes("nvidia-h100", a=cd.f16, c=cd.f32, scope=cd.Workgroup) == []


def test_workgroup_scope_falls_back_to_the_flexible_granularity():
    assert best_shape("nvidia-h100", a=cd.f16, c=cd.f32, scope=cd.Workgroup, invocations=128) == (32, 16, 16)
    assert best_shape("nvidia-h100", a=cd.f16, c=cd.f32, scope=cd.Workgroup, invocations=256) == (32, 32, 16)
    with pytest.raises(NoShapeError, match="with 96 invocations"):
        best_shape("nvidia-h100", a=cd.f16, c=cd.f32, scope=cd.Workgroup, invocations=96)


def test_no_shape_names_what_the_device_offers():
    with pytest.raises(NoShapeError) as e:
        best_shape("nvidia-h100", a=cd.f32, c=cd.f32)
    assert str(e.value).startswith("NVIDIA H100 80GB HBM3 offers no cooperative-matrix configuration for "
                                   "f32 x f32 + f32 -> f32 at Subgroup scope; it offers: ")
    assert "f16 x f16 + f32 -> f32 (Subgroup)" in str(e.value)
    with pytest.raises(NoShapeError, match=r"\(KHR only\) offers no .* at Workgroup scope"):
        best_shape(load_profile("nvidia-h100").khr_only(), a=cd.f16, c=cd.f32, scope=cd.Workgroup)
    with pytest.raises(NoShapeError, match="i8 x i8 \\+ i32 -> i32 at Subgroup scope \\(saturating\\)"):
        best_shape("nvidia-h100", a=cd.i8, c=cd.i32, saturating=True)


@pytest.mark.parametrize("profile", [*shipped_profiles(), load_profile("nvidia-h100").khr_only()],
                         ids=lambda p: p if isinstance(p, str) else p.name)
def test_portable_gemm_compiles_for_every_profile(profile):
    spec = PORTABLE["tile_spec"](profile)
    p = load_profile(profile)
    assert (spec["TM"], spec["TN"], spec["TK"]) == best_shape(p, a=cd.f16, c=cd.f32)
    assert spec["WG"] == p.subgroup_size
    gemm = PORTABLE["gemm"]
    gemm.compile(spec=spec, device=profile)
    r = gemm.reflect(spec=spec)
    assert r["workgroup_size"][0] == p.subgroup_size
    (m,) = r["muladds"]
    assert [m[k]["value"] for k in "MNK"] == [spec["TM"], spec["TN"], spec["TK"]]
    assert mismatches(r, p) == []


@pytest.mark.parametrize("kwargs,name", [({"a": None, "c": "f32"}, "a"), ({"a": "f16", "c": 5}, "c"),
                                         ({"a": "f16", "c": "f32", "scope": 3}, "scope"),
                                         ({"a": "f16", "c": "f32", "b": ["f16"]}, "b")])
def test_an_argument_that_is_no_type_is_a_type_error_naming_it(kwargs, name):
    """None, an int or a list was an AttributeError from inside the shape lookup."""
    import coopdsl as cd

    with pytest.raises(TypeError, match=rf"^{name} must be a coopdsl type or scope \(cd.f16, cd.Subgroup\) or its "
                                        rf"name, got "):
        cd.devices.best_shape("nvidia-h100", **kwargs)
