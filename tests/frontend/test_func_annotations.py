"""``@cd.func`` parameter and return annotations mean what they say (hardening class 6: they were ignored):
a number argument takes the annotated type, a runtime argument of another type and a return of another type
are located errors, as typed parameters are in GLSL, HLSL and Slang. Unannotated helpers stay generic."""

from __future__ import annotations

import numpy as np

import coopdsl as cd
from coopdsl import f16, f32, u32
from coopdsl.errors import TypeMismatchError

from ..conftest import expect_error


@cd.func
def twice(x: f32) -> f32:
    return x * 2.0


@cd.func
def half(x: f32) -> f16:  # E:ret
    return x * 0.5


@cd.func
def generic(x):
    return x + x


@cd.kernel(workgroup_size=(32, 1, 1))
def uses_numbers(o: cd.Buffer[f32], n: u32):
    o[cd.global_invocation_id.x] = twice(3) + f32(generic(n))


@cd.kernel(workgroup_size=(32, 1, 1))
def wrong_argument(o: cd.Buffer[f32], n: u32):
    o[0] = twice(n)  # E:arg


@cd.kernel(workgroup_size=(32, 1, 1))
def wrong_return(o: cd.Buffer[f32]):
    o[0] = f32(half(o[1]))



def test_a_number_takes_the_annotated_type_and_unannotated_helpers_stay_generic():
    out = np.zeros(32, np.float32)
    uses_numbers.launch((1, 1, 1), out, 5, device="cpu")
    assert (out == 16.0).all()
    assert "OpFunctionCall %float %twice" in uses_numbers.disassemble()


def test_an_argument_of_another_type_is_located_at_the_call():
    expect_error(wrong_argument, TypeMismatchError,
                 "twice(): argument 'x' is a runtime u32, but the parameter is annotated f32", "# E:arg", 12)


def test_a_return_of_another_type_is_located_at_the_function():
    expect_error(wrong_return, TypeMismatchError, "half() returns f32, but is annotated -> f16", "# E:ret", 1)
