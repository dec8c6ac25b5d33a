"""Compile-time values (folded numbers, tuples and lists, comprehensions, static_range, type subscripts) at their
limits: each mistake is a located CompileError, never an internal error, a hang or a MemoryError, and a
comprehension's name is its own, as in Python 3 (found by a mutation fuzzer run against the docs)."""

import numpy as np

import coopdsl as cd
from coopdsl import f32, u32, vec2
from coopdsl.errors import ArgumentError, DeclarationError, TypeMismatchError

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(8, 1, 1))
def scoped(x: cd.Buffer[f32], t: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    vals = [t[i] for i in cd.static_range(4)]   # its own i: the body's i is untouched
    x[i] = vals[0] + vals[3] + f32(i)


def test_a_comprehension_name_is_its_own():
    """The comprehension bound the body's ``i`` to 3: every invocation wrote x[3]."""
    x, t = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    scoped.launch((1,), x, t, device="cpu")
    np.testing.assert_array_equal(x, np.arange(8) + 3.0)


@cd.kernel(workgroup_size=(8, 1, 1))
def shadowing(q: cd.Buffer[u32]):
    g = [j * 2 for j in range(4)]
    h = [q for q in range(4)]      # q: the comprehension's, not the buffer
    q[cd.global_invocation_id.x] = u32(g[3] + h[3])


def test_a_comprehension_does_not_rebind_a_parameter():
    q = np.zeros(8, np.uint32)
    shadowing.launch((1,), q, device="cpu")
    assert q.tolist() == [9] * 8


@cd.kernel(workgroup_size=(32, 1, 1))
def zero_step(x: cd.Buffer[f32]):
    g = [0 for q in cd.static_range(0, 4, 0)]  # ZERO STEP
    x[0] = f32(len(g))


@cd.kernel(workgroup_size=(32, 1, 1))
def huge_comprehension(x: cd.Buffer[f32]):
    g = [0 for q in cd.static_range(10**30)]  # HUGE COMPREHENSION
    x[0] = f32(len(g))


@cd.kernel(workgroup_size=(32, 1, 1))
def huge_loop(x: cd.Buffer[f32]):
    for q in cd.static_range(10**30):  # HUGE LOOP
        x[q] = 1.0


@cd.kernel(workgroup_size=(32, 1, 1))
def repeated(x: cd.Buffer[f32]):
    g = (0,) * 10**12  # REPEATED
    x[0] = f32(len(g))


@cd.kernel(workgroup_size=(32, 1, 1))
def negative_shift(x: cd.Buffer[f32]):
    g = 1 << -1  # NEGATIVE SHIFT
    x[0] = f32(g)


@cd.kernel(workgroup_size=(32, 1, 1))
def empty_type(x: cd.Buffer[f32]):
    g = vec2[()]  # EMPTY TYPE
    x[0] = 1.0


def test_compile_time_mistakes_are_located_errors():
    expect_error(zero_step, TypeMismatchError, "static_range(0, 4, 0): range() arg 3 must not be zero",
                 "# ZERO STEP", 21)
    expect_error(huge_comprehension, ArgumentError, "unrolls 1000000000000000000000000000000 iterations; at most 65536",
                 "# HUGE COMPREHENSION", 21)
    expect_error(huge_loop, ArgumentError, "unrolls 1000000000000000000000000000000 iterations; at most 65536",
                 "# HUGE LOOP", 14)
    expect_error(repeated, ArgumentError, "a compile-time sequence of 1 repeated 1000000000000 times has "
                 "1000000000000 items; at most 65536", "# REPEATED", 9)
    expect_error(negative_shift, TypeMismatchError, "compile-time 1 << -1: negative shift count", "# NEGATIVE SHIFT", 9)
    expect_error(empty_type, TypeMismatchError, "vec2[()] names no type parameters", "# EMPTY TYPE", 9)


def test_an_empty_parameter_subscript_is_a_declaration_error(tmp_path):
    import pytest

    from tests.conftest import exec_source

    src = ("import coopdsl as cd\n\n\n@cd.kernel(workgroup_size=(1, 1, 1))\n"
           "def fill(x: cd.Buffer[()]):\n    pass\n")
    with pytest.raises(DeclarationError, match=r"Buffer\[...\] takes one scalar, vector or struct element type, "
                                               r"e.g. Buffer\[f16\]; got nothing") as e:
        exec_source(src, tmp_path / "empty_buffer.py")
    assert e.value.loc.line == 5


@cd.kernel(workgroup_size=(32, 1, 1))
def mod_of_numbers(x: cd.Buffer[f32]):
    x[0] = cd.mod(7.0, 2.0)  # MOD OF NUMBERS


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_perm(x: cd.Buffer[f32], P: cd.Spec[u32] = 1):
    v = cd.tensor_view(2, perm=(P, 0))  # SPEC PERM
    x[0] = 1.0


def test_more_compile_time_mistakes_are_located_errors():
    """Found by a fuzzer over cooperative matrices, NV2, structs and pointers: cd.mod of two numbers and a
    Spec in a tensor view's perm were internal errors (AttributeError, TypeError)."""
    expect_error(mod_of_numbers, TypeMismatchError, "mod() needs at least one runtime argument (compile-time math: "
                 "use Python)", "# MOD OF NUMBERS", 12)
    expect_error(spec_perm, ArgumentError, "perm must be a permutation of 0 .. 1 (each once, a compile-time tuple), "
                 "got (a runtime u32, 0)", "# SPEC PERM", 9)


def test_func_decorates_a_function_only(tmp_path):
    """cd.func(abs) reached the compiler ('builtin_function_or_method' object has no attribute '__code__'); a bound
    method compiled with its self dropped. Both are refused where they are decorated."""
    import pytest

    from tests.conftest import exec_source

    for i, target in enumerate(("abs", "Box().scaled")):
        src = ("import coopdsl as cd\n\n\nclass Box:\n    def scaled(self, v):\n        return v * 2\n\n\n"
               f"g = cd.func({target})\n")
        with pytest.raises(DeclarationError, match=r"@coopdsl.func decorates a function \(def name\(params\): ...\), "
                                                   r"got (builtin_function_or_method|a method bound to Box)") as e:
            exec_source(src, tmp_path / f"func{i}.py")
        assert (e.value.loc.line, e.value.loc.col) == (9, 8)   # g = cd.func(...): at "func"


DEBUG_FLAG = True


@cd.kernel(workgroup_size=(1, 1, 1))
def bool_conversions(out: cd.Buffer[cd.u32], x: cd.i32):
    f = x > 3
    if DEBUG_FLAG:
        f = True
    out[0] = cd.u32(True) + cd.u32(DEBUG_FLAG) + cd.u32(cd.i32(1 < 2)) + cd.u32(f)
    out[1] = cd.u32(False)
    v = cd.vec2[cd.u32](True, False)
    out[2] = v.x + v.y + cd.u32(cd.f32(True))


def test_an_explicit_conversion_of_a_compile_time_bool_is_0_or_1():
    """``u32(flag)`` converts bools (docs/language.md): a compile-time one too (``u32(True)``, ``u32(DEBUG)``,
    ``i32(1 < 2)`` were refused as 'cannot use True as u32'); implicit uses of a bool as a number stay errors."""
    import numpy as np

    compile_checked(bool_conversions, r"OpConstant %uint 1")
    out = np.zeros(3, np.uint32)
    bool_conversions.launch((1,), out, 0, device="cpu")
    assert out.tolist() == [4, 0, 2]
