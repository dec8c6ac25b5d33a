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
def half(x: f32) -> f16:
    return x * 0.5  # E:ret


@cd.func
def pair(x: f32) -> f32:
    return x, x  # E:pair


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


@cd.kernel(workgroup_size=(32, 1, 1))
def tuple_return(o: cd.Buffer[f32]):
    a, b = pair(o[1])
    o[0] = a + b



def test_a_number_takes_the_annotated_type_and_unannotated_helpers_stay_generic():
    out = np.zeros(32, np.float32)
    uses_numbers.launch((1, 1, 1), out, 5, device="cpu")
    assert (out == 16.0).all()
    assert "OpFunctionCall %float %twice" in uses_numbers.disassemble()


def test_an_argument_of_another_type_is_located_at_the_call():
    expect_error(wrong_argument, TypeMismatchError,
                 "twice(): argument 'x' is a runtime u32, but the parameter is annotated f32", "# E:arg", 12)


def test_a_return_of_another_type_is_located_at_the_return():
    expect_error(wrong_return, TypeMismatchError, "half() returns f32, but is annotated -> f16", "# E:ret", 5)
    expect_error(tuple_return, TypeMismatchError, "pair() returns a tuple of 2 values (f32, f32), but is annotated "
                 "-> f32", "# E:pair", 5)


@cd.func
def scaled(v: f32, K: cd.Const[int] = 2) -> f32:
    return v * f32(K)


@cd.func
def element(b: cd.Buffer[f32], i: u32) -> f32:
    return b[i]


@cd.func
def spec_param(v: cd.Spec[u32]) -> u32:  # E:spec
    return v


@cd.kernel(workgroup_size=(1, 1, 1))
def const_runtime(x: cd.Buffer[f32], n: u32):
    x[0] = scaled(x[1], K=n)  # E:crun


@cd.kernel(workgroup_size=(1, 1, 1))
def const_float(x: cd.Buffer[f32]):
    x[0] = scaled(x[1], K=1.5)  # E:cfloat


@cd.kernel(workgroup_size=(1, 1, 1))
def buffer_of_u32(x: cd.Buffer[f32], u: cd.Buffer[u32]):
    x[0] = element(u, 0)  # E:buf


@cd.kernel(workgroup_size=(1, 1, 1))
def spec_in_helper(u: cd.Buffer[u32], n: u32):
    u[0] = spec_param(n)


@cd.kernel(workgroup_size=(1, 1, 1))
def kinds_given_right(x: cd.Buffer[f32]):
    x[0] = scaled(x[1], K=3) + element(x, 2)


def test_parameter_kinds_on_helpers_are_checked_at_the_call():
    """``Const[int]``, ``Buffer[f32]`` on a device function's parameter were ignored: a runtime u32 or 1.5 for
    Const[int] compiled (K became a runtime parameter, or 1.5 was used), a buffer of u32 for Buffer[f32] failed
    later as a return mismatch at the def line; Spec/Push declare kernel parameters only (located at the def)."""
    expect_error(const_runtime, TypeMismatchError,
                 "scaled(): argument 'K' is Const[int] and needs a compile-time int, got a runtime u32", "# E:crun", 12)
    expect_error(const_float, TypeMismatchError,
                 "scaled(): argument 'K' is Const[int] and needs a compile-time int, got the number 1.5",
                 "# E:cfloat", 12)
    expect_error(buffer_of_u32, TypeMismatchError,
                 "element(): argument 'b' is annotated Buffer[f32], got buffer 'u' of u32", "# E:buf", 12)
    expect_error(spec_in_helper, TypeMismatchError, "spec_param(): parameter 'v': Spec[u32] declares a kernel "
                 "parameter; a device function's parameter takes a value: annotate it u32", "# E:spec", 16)
    x = np.arange(4, dtype=np.float32)
    kinds_given_right.launch((1,), x, device="cpu")
    assert x[0] == 1.0 * 3 + 2.0


@cd.func
def add_any(a, b):
    return a + b  # E:generic


@cd.kernel(workgroup_size=(1, 1, 1))
def generic_mixed(x: cd.Buffer[f32], u: cd.Buffer[u32]):
    x[0] = add_any(x[0], u[0])


def test_an_error_inside_a_generic_helper_names_the_call_that_compiled_it():
    """The mistake of an unannotated helper may be its caller's arguments: the error stays where it arises and
    names the call (file, line, column) and the argument types that compiled the helper."""
    import inspect

    here = inspect.getsourcefile(test_an_error_inside_a_generic_helper_names_the_call_that_compiled_it)
    lines = open(here).read().splitlines()
    call = next(i + 1 for i, line in enumerate(lines) if "x[0] = add_any(x[0], u[0])" in line)
    expect_error(generic_mixed, TypeMismatchError,
                 f"operands of '+' have different types: f32 and u32; convert one explicitly (e.g. u32(x)) "
                 f"(in add_any(f32, u32), called at {here}:{call}:12)", "# E:generic", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def unknown_keyword(x: cd.Buffer[f32]):
    x[0] = twice(w=1.0)  # E:kw


def test_an_unknown_keyword_is_named_before_a_missing_argument():
    """Python's bind reports the missing 'x' first; the keyword the user got wrong is the better lead."""
    from coopdsl.errors import ArgumentError

    expect_error(unknown_keyword, ArgumentError, "twice(): unexpected keyword argument 'w'; its parameters are x",
                 "# E:kw", 12)


@cd.func
def keywords_collected(v, **kw):  # E:kwargs
    return v


@cd.kernel(workgroup_size=(1, 1, 1))
def passes_keywords(x: cd.Buffer[f32]):
    x[0] = keywords_collected(x[0], scale=2.0)


@cd.kernel(workgroup_size=(1, 1, 1))
def passes_no_keywords(x: cd.Buffer[f32]):
    x[0] = keywords_collected(x[0])


def test_a_keyword_collecting_parameter_is_refused_at_the_def():
    """``**kw`` on a device function took the keywords into a dict the body never saw: ``scale=2.0`` was
    silently ignored."""
    from coopdsl.errors import UnsupportedSyntaxError

    for k in (passes_keywords, passes_no_keywords):
        err = expect_error(k, UnsupportedSyntaxError, "keywords_collected(): '**kw' would collect keyword arguments "
                           "into a dict, which a device function does not take; name the parameters", "# E:kwargs", 27)
        assert "called at" in err.message


@cd.func
def push_param(v, S: cd.Push[u32]):  # E:push
    return v


@cd.kernel(workgroup_size=(1, 1, 1))
def push_in_helper(x: cd.Buffer[f32]):
    x[0] = push_param(x[0], 2)


@cd.func
def small_default(v: cd.u8 = 300):  # E:default
    return v


@cd.kernel(workgroup_size=(1, 1, 1))
def takes_small_default(x: cd.Buffer[cd.u8]):
    x[0] = small_default()  # E:defaultcall


def test_signature_mistakes_of_a_helper_are_located_at_its_def():
    """A ``Push[...]`` parameter and a default that does not fit its annotated type were reported at the call,
    although the mistake is on the def line; the call is still named."""
    import inspect

    expect_error(push_in_helper, TypeMismatchError, "push_param(): parameter 'S': Push[u32] declares a kernel "
                 "parameter; a device function's parameter takes a value: annotate it u32", "# E:push", 19)
    err = expect_error(takes_small_default, TypeMismatchError, "small_default(): the default of parameter 'v': the "
                       "literal 300 does not fit in u8 (0..255)", "# E:default", 30)
    here = inspect.getsourcefile(test_signature_mistakes_of_a_helper_are_located_at_its_def)
    call = next(i + 1 for i, line in enumerate(open(here).read().splitlines()) if line.endswith("# E:defaultcall"))
    assert f"called at {here}:{call}:12)" in err.message
