"""Uniform blocks and push constants are read-only, as in GLSL and HLSL (hardening class 6: a member assignment
compiled and edited a local copy, so the kernel's later reads saw a value no host ever set)."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.errors import TypeMismatchError

from ..conftest import expect_error


@cd.struct
class Params:
    scale: f32
    n: u32


@cd.kernel(workgroup_size=(32, 1, 1))
def k_uniform(o: cd.Buffer[f32], p: cd.Uniform[Params]):
    p.scale = 2.0  # E:uniform
    o[0] = p.scale


@cd.kernel(workgroup_size=(32, 1, 1))
def k_push(o: cd.Buffer[f32], p: Params):
    p.scale += 1.0  # E:push
    o[0] = p.scale


@cd.kernel(workgroup_size=(32, 1, 1))
def k_copy(o: cd.Buffer[f32], p: Params):
    q = p
    q.scale = q.scale * 2.0  # a copy of one's own: allowed
    o[cd.global_invocation_id.x] = q.scale + p.scale



@pytest.mark.parametrize("k,what,marker", [(k_uniform, "uniform block 'p'", "# E:uniform"),
                                           (k_push, "push constant 'p'", "# E:push")])
def test_assigning_a_member_of_a_read_only_parameter_is_an_error(k, what, marker):
    expect_error(k, TypeMismatchError, f"{what} is read-only (as in GLSL and HLSL)", marker, 5)


def test_a_copy_may_be_changed_and_the_parameter_keeps_its_value():
    out = np.zeros(32, np.float32)
    k_copy.launch((1, 1, 1), out, {"scale": 3.0, "n": 1}, device="cpu")
    assert (out == 9.0).all()
