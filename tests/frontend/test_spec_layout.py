"""A matrix load's layout held by a specialization constant is checked at every value the constant gets (its
default, compile(spec=...), launch()), as issue 24's class 2 asks: 4202 compiled before."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl.errors import ArgumentError

from ..conftest import marker_line


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_layout(a: cd.Buffer[cd.f16], o: cd.Buffer[cd.f32], LAY: cd.Spec[cd.u32] = 0):
    m = cd.MatA[cd.f16, 16, 16].load(a, 0, stride=16, layout=LAY)  # E:layout
    acc = cd.muladd(m, cd.MatB[cd.f16, 16, 16].load(a, 0, stride=16), cd.Acc[cd.f32, 16, 16].splat(0.0))
    acc.store(o, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bad_default(a: cd.Buffer[cd.f16], o: cd.Buffer[cd.f32], LAY: cd.Spec[cd.u32] = 7):
    m = cd.MatA[cd.f16, 16, 16].load(a, 0, stride=16, layout=LAY)  # E:default
    acc = cd.muladd(m, cd.MatB[cd.f16, 16, 16].load(a, 0, stride=16), cd.Acc[cd.f32, 16, 16].splat(0.0))
    acc.store(o, 0, stride=16)


def test_a_spec_layout_is_checked_at_every_value_it_gets():
    k_spec_layout.compile()
    k_spec_layout.compile(spec={"LAY": 1})
    a, o = np.zeros(256, np.float16), np.zeros(256, np.float32)
    for bad in (lambda: k_spec_layout.compile(spec={"LAY": 4202}),
                lambda: k_spec_layout.launch((1,), a, o, LAY=2, device="cpu"), k_bad_default.compile):
        with pytest.raises(ArgumentError, match="layout: specialization constant 'LAY' holds") as info:
            bad()
        assert (info.value.loc.line, info.value.loc.col) in ((marker_line("# E:layout"), 9),
                                                             (marker_line("# E:default"), 9))


@cd.kernel(workgroup_size=(32, 1, 1))
def k_enum_default(a: cd.Buffer[cd.f16], o: cd.Buffer[cd.f16], CL: cd.Spec[cd.u32] = cd.ClampToEdge,
                   LAY: cd.Spec[cd.u32] = cd.ColumnMajor):
    lay = cd.tensor_layout(2, clamp=CL).dimension(16, 16)
    m = cd.MatA[cd.f16, 16, 16, cd.Workgroup].load_tensor(a, 0, lay)
    m.store_tensor(o, 0, cd.tensor_layout(2).dimension(16, 16))
    cd.MatA[cd.f16, 16, 16].load(a, 0, stride=16, layout=LAY).store(o, 256, stride=16, layout=LAY)


def test_an_enumerant_is_a_spec_default_of_its_value():
    r = k_enum_default.reflect()
    assert [(s["name"], s["default"]) for s in r["spec_constants"]] == [("CL", 2), ("LAY", 1)]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_float_spec_defaults(out: cd.Buffer[cd.f32], HS: cd.Spec[cd.f16] = 0.1, B: cd.Spec[cd.f32] = 0.1,
                          D: cd.Spec[cd.f64] = 0.1, BH: cd.Spec[cd.bf16] = 0.1):
    out[0] = cd.f32(HS) + B + cd.f32(D) + cd.f32(BH)


def test_reflection_gives_a_float_spec_default_as_the_module_holds_it():
    # (an f16 0.1 is 0.0999755859375 in the module: a host reading the reflection sees what the kernel gets)
    r = k_float_spec_defaults.reflect()
    assert [s["default"] for s in r["spec_constants"]] == [float(np.float16(0.1)), float(np.float32(0.1)), 0.1,
                                                           0.10009765625]
    r = k_float_spec_defaults.reflect(spec={"HS": 0.3})
    assert r["spec_constants"][0]["default"] == float(np.float16(0.3))
