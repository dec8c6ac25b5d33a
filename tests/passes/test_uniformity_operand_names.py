"""The uniformity error names the operand of a tensor load that is not uniform by what it is (pointer, fill,
layout, view, decode function), whether or not the optional ones are present (hardening class 8: the fill
operand was missing from the name table, so every later operand was named after the one before it)."""

from __future__ import annotations

import pytest

import coopdsl as cd
from coopdsl import Acc, f32, u32
from coopdsl.errors import UniformityError


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


def _line(marker):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line)


@pytest.mark.parametrize("k,name,marker", [(layout_varies, "the tensor layout", "# E:layout"),
                                           (view_varies, "the tensor view", "# E:view")])
def test_the_operand_is_named_for_what_it_is(k, name, marker):
    with pytest.raises(UniformityError) as e:
        k.compile()
    assert str(e.value).split(": error: ")[1].startswith(f"{name} of the cooperative-matrix operation")
    assert e.value.loc.line == _line(marker)
