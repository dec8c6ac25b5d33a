"""The uniformity error names the operand of a tensor load that is not uniform by what it is (pointer, fill,
layout, view, decode function), whether or not the optional ones are present (hardening class 8: the fill
operand was missing from the name table, so every later operand was named after the one before it)."""

from __future__ import annotations

import pytest

import coopdsl as cd
from coopdsl import Acc, f32, u32
from coopdsl.errors import UniformityError

from ..conftest import expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def layout_varies(a: cd.Buffer[f32], n: u32):
    lay = cd.tensor_layout(2).dimension(n, cd.subgroup_invocation_id + 16)
    m = Acc[f32, 16, 16].load_tensor(a, 0, lay.slice(0, 16, 0, 16))  # E:layout
    m.store(a, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def view_varies(a: cd.Buffer[f32], n: u32):
    view = cd.tensor_view(2).clip(0, cd.subgroup_invocation_id, 0, 16)
    m = Acc[f32, 16, 16].load_tensor(a, 0, cd.tensor_layout(2).dimension(n, n), view=view)  # E:view
    m.store(a, 0, stride=16)



@pytest.mark.parametrize("k,name,marker", [(layout_varies, "the tensor layout", "# E:layout"),
                                           (view_varies, "the tensor view", "# E:view")])
def test_the_operand_is_named_for_what_it_is(k, name, marker):
    err = expect_error(k, UniformityError, f"{name} of the cooperative-matrix operation", marker, 9)
    assert err.message.startswith(f"{name} of the cooperative-matrix operation")
