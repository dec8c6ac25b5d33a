"""cd.assume_uniform: the escape hatch of the uniformity check emits no instruction and validates."""

import re

import pytest

import coopdsl as cd
from coopdsl import Acc, ArgumentError, TypeMismatchError, UniformityError, f32, u32
from coopdsl.passes.uniformity import WORKGROUP, analyze

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def flag_in_shared(c: cd.Buffer[f32], n: u32):
    flag = cd.shared(u32, 1)
    if cd.local_invocation_index == 0:
        flag[0] = n
    cd.barrier()
    if cd.assume_uniform(flag[0] > 2):
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)


def test_assumed_uniform_condition_compiles_to_the_plain_branch():
    text = compile_checked(flag_in_shared)
    cond = re.search(r"(%\w+) = OpUGreaterThan %bool", text).group(1)
    assert re.search(rf"OpBranchConditional {cond} ", text)  # the comparison itself: no copy, no extra instruction
    assert "OpCopyObject" not in text


@cd.kernel(workgroup_size=(32, 1, 1))
def loop_carried(c: cd.Buffer[f32], x: cd.Buffer[u32], n: u32):
    count = u32(0)
    i = u32(0)
    while i < n:
        count = cd.assume_uniform(count + x[i + cd.local_invocation_index])
        i += 1
    for j in range(count):
        Acc[f32, 16, 16].splat(0.0).store(c, j * 256, stride=16)


def test_assumed_value_flowing_around_a_loop_validates():
    """The op's result is its operand's id, also where a phi names it before it is written."""
    compile_checked(loop_carried)
    module = loop_carried.ir()
    u = analyze(module)
    assumed = next(op for op in module.entry.ops() if op.kind == "assume_uniform")
    assert u.level(assumed) == WORKGROUP
    assert u.level(assumed.operands[0]) < WORKGROUP


@cd.kernel(workgroup_size=(32, 1, 1))
def constant_argument(c: cd.Buffer[f32], S: cd.Spec[u32] = 3):
    if cd.assume_uniform(S) > 2 and cd.assume_uniform(True):
        c[0] = 1.0


def test_compile_time_values_are_returned_as_they_are():
    compile_checked(constant_argument)
    assert not any(op.kind == "assume_uniform" for op in constant_argument.ir().entry.ops())


@cd.kernel(workgroup_size=(32, 1, 1))
def two_arguments(c: cd.Buffer[f32]):
    x = cd.assume_uniform(c[0], c[1])  # E:two


@cd.kernel(workgroup_size=(32, 1, 1))
def matrix_argument(c: cd.Buffer[f32]):
    x = cd.assume_uniform(Acc[f32, 16, 16].splat(0.0))  # E:mat


def test_bad_arguments():
    expect_error(two_arguments, ArgumentError, "assume_uniform(value) takes exactly one argument", "# E:two", 9)
    expect_error(matrix_argument, TypeMismatchError, "assume_uniform() takes a runtime scalar or vector",
                 "# E:mat", 9)


def test_outside_a_kernel():
    with pytest.raises(TypeError, match="can only be called inside a @coopdsl.kernel"):
        cd.assume_uniform(1)


@cd.kernel(workgroup_size=(32, 1, 1))
def assumed_too_late(c: cd.Buffer[f32]):
    x = cd.local_invocation_index
    if x < 3:  # C:late
        y = cd.assume_uniform(x)
        Acc[f32, 16, 16].splat(0.0).store(c, y, stride=16)  # E:late


def test_assuming_inside_the_branch_does_not_hide_its_condition():
    err = expect_error(assumed_too_late, UniformityError, "the matrix store (.store)", "# E:late", 9)
    assert "the condition at line" in err.message
