"""What a kernel may read from its module and closure (numbers, strings, None, coopdsl objects and tuples of
them, nested too, as the same tuple written in the kernel), the error for anything else at its use, and a
kernel renamed after decoration (kernels a factory makes)."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.errors import NameResolutionError
from tests.conftest import expect_error

SEM = ("AcquireRelease", "UniformMemory")
TILES = ((16, 8), [32, 4])
TYPES = (f32, u32)
TABLE = {"a": 1}


@cd.kernel(workgroup_size=(32, 1, 1))
def k_global_semantics(x: cd.Buffer[f32]):
    x[0] = 1.0
    cd.memory_barrier(cd.Device, SEM)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_inline_semantics(x: cd.Buffer[f32]):
    x[0] = 1.0
    cd.memory_barrier(cd.Device, ("AcquireRelease", "UniformMemory"))


@cd.kernel(workgroup_size=(32, 1, 1))
def k_nested(x: cd.Buffer[f32]):
    x[0] = TYPES[0](TILES[0][1] * TILES[1][0])


@cd.kernel(workgroup_size=(32, 1, 1))
def k_dict(x: cd.Buffer[f32]):
    x[0] = f32(TABLE["a"])  # E:dict


def test_a_global_tuple_of_strings_is_the_tuple_written_in_the_kernel():
    assert "OpMemoryBarrier" in k_global_semantics.disassemble()
    a = k_global_semantics.disassemble().replace("k_global_semantics", "k")
    assert a == k_inline_semantics.disassemble().replace("k_inline_semantics", "k")


def test_nested_tuples_and_lists_of_numbers_and_types_are_constants():
    text = k_nested.disassemble()
    assert "%float_256 = OpConstant %float 256" in text


def test_other_globals_are_refused_at_their_use():
    expect_error(k_dict, NameResolutionError,
                 "global 'TABLE' is a dict, which kernels cannot use (use numbers, strings, coopdsl types and "
                 "builtins, and tuples or lists of them)", "# E:dict", 16)


def _closure_kernel() -> cd.Kernel:
    table = [1.0, (2.0, object())]

    @cd.kernel(workgroup_size=(1, 1, 1))
    def k_closure(x: cd.Buffer[f32]):
        x[0] = f32(table[0])  # E:closure

    return k_closure


def test_a_closure_variable_is_named_as_one_with_the_element_kernels_cannot_use():
    """It was called a global, and a list of numbers with one object in it was 'a list' (lists of numbers are
    constants): the element is named."""
    expect_error(_closure_kernel(), NameResolutionError,
                 "closure variable 'table' is a list whose element [1][1] is an object, which kernels cannot use "
                 "(use numbers, strings, coopdsl types and builtins, and tuples or lists of them)", "# E:closure", 20)


def _factory(tag: str) -> cd.Kernel:
    @cd.kernel(workgroup_size=(32, 1, 1))
    def made(x: cd.Buffer[f32], N: cd.Const[int] = 1):
        x[0] = f32(N)

    made.__name__ = f"made_{tag}"
    return made


def test_renaming_a_kernel_renames_it_and_its_variants():
    k = _factory("a")
    assert k.name == k.__name__ == "made_a" and "made_a" in repr(k)
    assert k.specialize(N=3).name == "made_a"
    with pytest.raises(ValueError, match="a kernel's name must be an identifier, got 'no name'"):
        k.__name__ = "no name"


def _typed_factory(t):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def typed(x: cd.Buffer[t], y: cd.Buffer[f32]):   # t only in an annotation: no closure variable
        y[0] = f32(x[0])

    return typed


def _typed_factory_called(t):
    def typed(x: cd.Buffer[t], y: cd.Buffer[f32]):
        y[0] = f32(x[0])

    return cd.kernel(typed, workgroup_size=(32, 1, 1))


@pytest.mark.parametrize("factory", [_typed_factory, _typed_factory_called])
def test_a_factorys_type_named_only_in_an_annotation_under_future_annotations(factory):
    """This module has ``from __future__ import annotations``: the annotations are strings, evaluated later."""
    import numpy as np

    from coopdsl import f16

    y = np.zeros(1, np.float32)
    factory(f16).launch((1, 1, 1), np.array([3.0], np.float16), y, device="cpu")
    assert y[0] == 3.0
    assert "OpTypeFloat 16" in factory(f16).disassemble()


@cd.kernel(workgroup_size=(1, 1, 1))
def k_append(x: cd.Buffer[f32], n: cd.u32):
    xs = []
    xs.append(f32(n))  # E:append
    x[0] = xs[0]


def test_a_list_method_says_lists_are_built_whole():
    """``xs = []; xs.append(v)`` said only 'a compile-time tuple of 0 has no attribute append'."""
    expect_error(k_append, NameResolutionError, "a compile-time tuple of 0 has no attribute 'append': a list in a "
                 "kernel is a compile-time tuple of its items, built whole ([f(i) for i in cd.static_range(n)], "
                 "xs = xs + [v]), not changed in place", "# E:append", 5)


@cd.func
def _nothing(x):
    x[1] = 1.0


@cd.kernel(workgroup_size=(1, 1, 1))
def k_store_none(x: cd.Buffer[f32]):
    x[0] = _nothing(x)  # E:none


def test_storing_what_a_function_without_return_gives_says_so():
    """It was 'cannot store NoneType None into buffer x'."""
    from coopdsl.errors import TypeMismatchError

    expect_error(k_store_none, TypeMismatchError, "cannot store None (what a call of a function that returns "
                 "nothing gives) into buffer 'x'", "# E:none", 5)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_shadowed_range(x: cd.Buffer[f32]):
    range = 3
    for j in range(4):  # E:range
        x[j] = f32(range)


def test_a_for_loop_over_a_shadowed_range_names_the_shadow():
    from coopdsl.errors import UnsupportedSyntaxError

    expect_error(k_shadowed_range, UnsupportedSyntaxError, "for loops iterate over range(...), coopdsl.range(...) or "
                 "coopdsl.static_range(...) ('range' here is the number 3: a name of the kernel's hides it)",
                 "# E:range", 14)


NP_SCALE = np.float32(0.5)
NP_COUNT = np.int64(3)
NP_TABLE = (np.float32(1.5), 2)
NP_LONG = np.longdouble(1.5)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_numpy_globals(x: cd.Buffer[f32]):
    x[0] = x[0] * NP_SCALE + f32(NP_COUNT) + NP_TABLE[0]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_numpy_longdouble(x: cd.Buffer[f32]):
    x[0] = NP_LONG  # E:longdouble


def test_a_numpy_scalar_global_is_its_python_value_as_a_launch_takes_it():
    """np.float32(0.5) was refused ("is a float32, which kernels cannot use") where np.float64, a float subclass,
    was taken; a numpy scalar is its Python value, as a launch's arguments are (np.longdouble has none)."""
    x = np.array([2.0], np.float32)
    k_numpy_globals.launch((1, 1, 1), x, device="cpu")
    assert x[0] == 2.0 * 0.5 + 3 + 1.5
    expect_error(k_numpy_longdouble, NameResolutionError, "global 'NP_LONG' is a longdouble, which kernels cannot "
                 "use", "# E:longdouble", 12)


@cd.func
def _scaled(v, s=NP_SCALE, k=NP_TABLE):
    return v * s + k[0]


NP_K = np.int64(2)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_numpy_defaults(x: cd.Buffer[f32], K: cd.Const[int] = NP_K):
    x[0] = _scaled(x[0]) + f32(K)


def test_numpy_scalar_defaults_are_their_python_values_too():
    """A device function's default and a Const parameter's default (and specialize's value) take a numpy scalar
    as a global does: it was 'unsupported operand' in the helper and 'must be an int' for the Const."""
    x = np.array([2.0], np.float32)
    k_numpy_defaults.launch((1, 1, 1), x, device="cpu")
    assert x[0] == 2.0 * 0.5 + 1.5 + 2
    x = np.array([2.0], np.float32)
    k_numpy_defaults.specialize(K=np.int64(5)).launch((1, 1, 1), x, device="cpu")
    assert x[0] == 2.0 * 0.5 + 1.5 + 5
