"""The typed builtin seam: builtins declare per-parameter conversions that the registry applies once.

Each conversion kind of :mod:`coopdsl.lang.conversions` refuses a wrong argument with a located error
that names the rule (at the user's line and column, never an internal error); the registry applies
each declared conversion exactly once, in parameter order, and hands ``impl`` the converted values as
keyword arguments; a builtin declared without conversions still receives ``(cg, args, kwargs)``; and
every typed builtin's ``impl`` accepts the parameters its signature declares.
"""

from __future__ import annotations

import inspect
import itertools
import textwrap

import pytest

import coopdsl as cd
from coopdsl import Acc, ArgumentError, TypeMismatchError, f32, u32, vec2
from coopdsl.errors import CompileError, InternalCompilerError
from coopdsl.ir import types as T
from coopdsl.ir.core import Const, Value
from coopdsl.lang import conversions as C
from coopdsl.lang import registry as R
from tests.conftest import exec_source

from ..conftest import expect_error

# -- the registry's side: every typed builtin's impl takes what its signature declares -----------------


def _all_builtins():
    out = [(f"cd.{n}", b) for n, b in R.BUILTINS.items()]
    out += [(f"{c.__name__}.{n}", b) for (c, n), b in R.TYPE_METHODS.items()]
    out += [(f"{c.__name__}-value.{n}", b) for (c, n), b in R.VALUE_METHODS.items()]
    return out


def test_typed_builtins_take_the_parameters_their_signature_declares():
    typed = [(spelling, b) for spelling, b in _all_builtins() if b.conversions is not None]
    assert len(typed) >= 60, "the most-used families (math, subgroup, memory, atomics) are typed"
    for spelling, b in typed:
        assert b.params is not None, spelling
        assert set(b.conversions) <= {p.name for p in b.params}, spelling
        sig = inspect.signature(b.impl)
        receiver = () if spelling.startswith("cd.") else ("receiver",)
        args = ("cg", *receiver)
        # every parameter the signature names can be given by keyword, all of them at once
        sig.bind(*args, **{p.name: None for p in b.params})
        # and the required ones alone
        sig.bind(*args, **{p.name: None for p in b.params if p.required})


def test_every_builtin_is_typed():
    """Every builtin, method of a type object and method of a value binds its arguments through the registry
    (the last seven -- atan, partial, range, static_range, map, clamp_value, clip -- moved on 2026-11-27)."""
    assert [spelling for spelling, b in _all_builtins() if b.conversions is None] == []


def test_the_families_migrated_so_far_are_typed():
    for name in ("exp", "max", "clamp", "dot", "select", "isnan", "any", "subgroup_add", "subgroup_shuffle",
                 "subgroup_all", "shared", "local_array", "control_barrier", "barrier", "atomic_add",
                 "atomic_compare_exchange", "bitcast", "muladd", "tensor_layout", "tensor_view", "bitcast_array",
                 "sub_array", "array", "assume_uniform"):
        assert R.BUILTINS[name].conversions is not None, name
    for name in ("load_element", "store_element"):
        assert R.BUILTINS[name].conversions is not None, name
    for name in ("splat", "length", "load", "load_tensor", "from_rows", "from_cols"):
        assert R.TYPE_METHODS[(T.CoopMatType, name)].conversions is not None, name
    for name in ("length", "reduce", "transpose", "store", "store_tensor", "to_rows", "to_cols"):
        assert R.VALUE_METHODS[(T.CoopMatType, name)].conversions is not None, name


# -- probes: one builtin per conversion kind, called from kernels ----------------------------------------
CALLS: list[tuple[str, dict]] = []


def _probe(conv: C.Conversion):
    def impl(cg, x, y=None):
        CALLS.append({"x": x, "y": y})
        return None
    return R.make_builtin("probe", impl, "a test probe", "(x, y=None)", {"x": conv})


class Counting(C.Conversion):
    """Counts its calls (a conversion must run once per argument)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, cg, v, name, param):
        self.calls += 1
        return cg.as_index(v, param)


counting = Counting()
probe_runtime = _probe(C.Runtime(C.numeric, "{name}() takes a numeric scalar or vector, got {type}"))
probe_operand = _probe(C.OPERAND)
probe_index = _probe(C.Index("the probe index"))
probe_flag = _probe(C.CompileTime(bool, "flag"))
probe_literal = _probe(C.Literal(T.u32, lambda v: v > 0, "{param} must be a positive int, got {got}"))
probe_type = _probe(C.TypeObject((T.ScalarType,), "{name}: {param} must be a scalar type, got {got}"))
probe_matrix = _probe(C.Matrix(2, "{name}: {param} must be an accumulator, got {got}"))
probe_enum = _probe(C.Enum("CooperativeMatrixLayout", "{param} must be cd.RowMajor or cd.ColumnMajor, got {got}"))
probe_scope = _probe(C.ScopeArg("the probe scope"))
probe_memory = _probe(C.Memory(("StorageBuffer",), "{name}() takes a buffer parameter, got {got}"))
probe_bool = _probe(C.Bool())
probe_counting = _probe(counting)
probe_legacy = R.make_builtin("legacy", lambda cg, args, kwargs: CALLS.append({"args": args, "kwargs": kwargs}),
                              "a builtin converting its own arguments", "(x)")


@cd.kernel(workgroup_size=(32, 1, 1))
def k_good(o: cd.Buffer[f32], n: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    probe_runtime(o[i])
    probe_operand(2.5)
    probe_index(3)
    probe_flag(True)
    probe_literal(16)
    probe_type(f32)
    probe_matrix(Acc[f32, 16, 16].splat(0.0))
    probe_enum(cd.ColumnMajor)
    probe_scope(cd.Workgroup)
    probe_memory(o)
    probe_bool(False)
    probe_counting(i, y=None)
    probe_legacy(o[i])
    o[i] = 0.0


def test_impl_receives_the_converted_values_once():
    CALLS.clear()
    counting.calls = 0
    k_good.compile()
    got = CALLS
    assert isinstance(got[0]["x"], Value) and got[0]["x"].type == f32
    assert got[1]["x"] == 2.5
    assert isinstance(got[2]["x"], Const) and got[2]["x"].type == u32 and got[2]["x"].value == 3  # the one rule
    assert got[3]["x"] is True
    assert got[4]["x"] == 16
    assert got[5]["x"] is f32
    assert got[6]["x"].type == Acc[f32, 16, 16]
    assert got[7]["x"] is cd.ColumnMajor
    assert got[8]["x"].name == "Workgroup"
    assert got[9]["x"].name == "o"
    assert isinstance(got[10]["x"], Const) and got[10]["x"].value is False
    assert counting.calls == 1 and got[11]["y"] is None  # (an explicit None for a None default stays None)
    assert isinstance(got[11]["x"], Value) and got[11]["x"].type == u32  # the built-in input, loaded
    assert list(got[12]) == ["args", "kwargs"] and got[12]["kwargs"] == {}  # the legacy calling convention


# each kind refuses a wrong argument at the user's line and column, with the rule in the message
@cd.kernel(workgroup_size=(32, 1, 1))
def k_runtime(o: cd.Buffer[f32]):
    probe_runtime(f32)  # E:runtime


@cd.kernel(workgroup_size=(32, 1, 1))
def k_runtime_type(o: cd.Buffer[f32]):
    probe_runtime(o[0] > 0.0)  # E:runtime_type


@cd.kernel(workgroup_size=(32, 1, 1))
def k_operand(o: cd.Buffer[f32]):
    probe_operand(cd.Row)  # E:operand


@cd.kernel(workgroup_size=(32, 1, 1))
def k_index(o: cd.Buffer[f32]):
    probe_index(1.5)  # E:index


@cd.kernel(workgroup_size=(32, 1, 1))
def k_flag(o: cd.Buffer[f32]):
    probe_flag(o[0] > 0.0)  # E:flag


@cd.kernel(workgroup_size=(32, 1, 1))
def k_literal(o: cd.Buffer[f32]):
    probe_literal(0)  # E:literal


@cd.kernel(workgroup_size=(32, 1, 1))
def k_literal_fit(o: cd.Buffer[f32]):
    probe_literal(1 << 40)  # E:literal_fit


@cd.kernel(workgroup_size=(32, 1, 1))
def k_type(o: cd.Buffer[f32]):
    probe_type(vec2[f32])  # E:type


@cd.kernel(workgroup_size=(32, 1, 1))
def k_matrix(o: cd.Buffer[f32]):
    probe_matrix(cd.MatA[cd.f16, 16, 16].splat(0.0))  # E:matrix


@cd.kernel(workgroup_size=(32, 1, 1))
def k_enum(o: cd.Buffer[f32]):
    probe_enum(cd.Workgroup)  # E:enum


@cd.kernel(workgroup_size=(32, 1, 1))
def k_scope(o: cd.Buffer[f32]):
    probe_scope(cd.CrossDevice)  # E:scope


@cd.kernel(workgroup_size=(32, 1, 1))
def k_memory(o: cd.Buffer[f32]):
    s = cd.shared(f32, 32)
    probe_memory(s)  # E:memory


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bool(o: cd.Buffer[f32]):
    probe_bool(o[0])  # E:bool


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bind(o: cd.Buffer[f32]):
    probe_runtime(o[0], o[1], o[2])  # E:bind


REFUSALS = [
    (k_runtime, TypeMismatchError, "expected a runtime value, got the type f32", "# E:runtime", 5),
    (k_runtime_type, TypeMismatchError, "probe() takes a numeric scalar or vector, got bool", "# E:runtime_type", 5),
    (k_operand, TypeMismatchError, "probe(): expected a number or a runtime scalar, vector or cooperative matrix, "
                                   "got coopdsl.Row", "# E:operand", 5),
    (k_index, TypeMismatchError, "the probe index must be an integer, got 1.5", "# E:index", 5),
    (k_flag, TypeMismatchError, "flag must be a compile-time bool, got a runtime bool", "# E:flag", 5),
    (k_literal, ArgumentError, "x must be a positive int, got the number 0", "# E:literal", 5),
    (k_literal_fit, ArgumentError, "x=1099511627776: the literal 1099511627776 does not fit in u32",
     "# E:literal_fit", 5),
    (k_type, TypeMismatchError, "probe: x must be a scalar type, got the type vec2[f32]", "# E:type", 5),
    (k_matrix, TypeMismatchError, "probe: x must be an accumulator, got a runtime MatA[f16, 16, 16]",
     "# E:matrix", 5),
    (k_enum, ArgumentError, "x must be cd.RowMajor or cd.ColumnMajor, got coopdsl.Workgroup", "# E:enum", 5),
    (k_scope, ArgumentError, "the probe scope cannot be CrossDevice in Vulkan", "# E:scope", 5),
    (k_memory, TypeMismatchError, "probe() takes a buffer parameter, got shared array 's'", "# E:memory", 5),
    (k_bool, TypeMismatchError, "probe() takes a bool, got f32", "# E:bool", 5),
    (k_bind, ArgumentError, "probe(x, y=None) takes at most 2 positional arguments, got 3", "# E:bind", 5),
]


@pytest.mark.parametrize("k,cls,message,marker,col", REFUSALS, ids=[r[3][4:] for r in REFUSALS])
def test_each_conversion_kind_refuses_a_wrong_argument_at_the_users_line(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)


# -- real builtins, one per kind they declare ---------------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def k_dot(o: cd.Buffer[f32]):
    y = cd.dot(f32, o[0])  # E:dot


@cd.kernel(workgroup_size=(32, 1, 1))
def k_isnan(n: cd.Buffer[u32]):
    y = cd.isnan(n[0])  # E:isnan


@cd.kernel(workgroup_size=(32, 1, 1))
def k_shuffle_lane(o: cd.Buffer[f32]):
    y = cd.subgroup_shuffle(o[0], 1.5)  # E:lane


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bitcast_target(o: cd.Buffer[f32]):
    y = cd.bitcast(o[0], 3)  # E:bitcast


@cd.kernel(workgroup_size=(32, 1, 1))
def k_barrier_scope(o: cd.Buffer[f32]):
    cd.control_barrier(cd.RowMajor, cd.Workgroup, "AcquireRelease")  # E:barrier


@cd.kernel(workgroup_size=(32, 1, 1))
def k_semantics(o: cd.Buffer[f32]):
    cd.memory_barrier(cd.Device, ("Acquire", "Release"))  # E:semantics


@cd.kernel(workgroup_size=(32, 1, 1))
def k_vote(o: cd.Buffer[f32]):
    y = cd.subgroup_any(o[0])  # E:vote


@cd.kernel(workgroup_size=(32, 1, 1))
def k_shared_elem(o: cd.Buffer[f32]):
    s = cd.shared(Acc[f32, 16, 16], 4)  # E:shared_elem


@cd.kernel(workgroup_size=(32, 1, 1))
def k_shared_length(o: cd.Buffer[f32]):
    s = cd.shared(f32, 1 << 40)  # E:shared_length


@cd.kernel(workgroup_size=(32, 1, 1))
def k_atomic_mem(o: cd.Buffer[f32]):
    y = cd.atomic_add(o[0], 0, 1.0)  # E:atomic_mem


@cd.kernel(workgroup_size=(32, 1, 1))
def k_atomic_order(n: cd.Buffer[u32]):
    y = cd.atomic_add(n, 0, 1, semantics=5)  # E:atomic_order


@cd.kernel(workgroup_size=(32, 1, 1))
def k_atomic_scope(n: cd.Buffer[u32]):
    y = cd.atomic_add(n, 0, 1, scope="Device")  # E:atomic_scope


@cd.kernel(workgroup_size=(32, 1, 1))
def k_layout_rank(o: cd.Buffer[f32]):
    L = cd.tensor_layout(6)  # E:rank


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp(o: cd.Buffer[f32]):
    L = cd.tensor_layout(2, clamp=cd.Workgroup)  # E:clamp


@cd.kernel(workgroup_size=(32, 1, 1))
def k_saturate(o: cd.Buffer[f32]):
    a = cd.MatA[cd.i8, 16, 16].splat(0)
    b = cd.MatB[cd.i8, 16, 16].splat(0)
    c = cd.muladd(a, b, Acc[cd.i32, 16, 16].splat(0), saturate=o[0] > 0.0)  # E:saturate


@cd.kernel(workgroup_size=(32, 1, 1))
def k_reduce_mode(o: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].splat(0.0).reduce(cd.Workgroup, cd.reduce_add)  # E:mode


@cd.kernel(workgroup_size=(32, 1, 1))
def k_aligned(o: cd.Buffer[f32]):
    y = cd.load_element(o, 0, aligned=3)  # E:aligned


@cd.kernel(workgroup_size=(32, 1, 1))
def k_wrong_side(o: cd.Buffer[f32]):
    Acc[f32, 16, 16].splat(0.0).store(o, 0, stride=16, visible=cd.Workgroup)  # E:side


@cd.kernel(workgroup_size=(32, 1, 1))
def k_layout(o: cd.Buffer[f32]):
    a = Acc[f32, 16, 16].load(o, 0, stride=16, layout=cd.Workgroup)  # E:layout


@cd.kernel(workgroup_size=(32, 1, 1))
def k_volatile(o: cd.Buffer[f32]):
    cd.store_element(o, 0, 1.0, volatile=1)  # E:volatile


BUILTIN_REFUSALS = [
    (k_aligned, ArgumentError, "aligned must be a power-of-two number of bytes, got 3", "# E:aligned", 9),
    (k_wrong_side, ArgumentError, "visible= applies to loads; a store takes available=", "# E:side", 5),
    (k_layout, ArgumentError, "layout must be coopdsl.RowMajor, coopdsl.ColumnMajor or a Spec[u32] holding one, "
                              "got coopdsl.Workgroup", "# E:layout", 9),
    (k_volatile, TypeMismatchError, "volatile must be a compile-time bool, got the number 1", "# E:volatile", 5),
    (k_layout_rank, ArgumentError, "a tensor layout has 1 to 5 dimensions (a compile-time int), got the number 6",
     "# E:rank", 9),
    (k_clamp, ArgumentError, "clamp must be cd.ClampUndefined", "# E:clamp", 9),
    (k_saturate, TypeMismatchError, "saturate must be a compile-time bool, got a runtime bool", "# E:saturate", 9),
    (k_reduce_mode, ArgumentError, "the reduce mode must be cd.Row, cd.Column, cd.Row | cd.Column or cd.Reduce2x2, "
                                   "got coopdsl.Workgroup", "# E:mode", 9),
    (k_dot, TypeMismatchError, "expected a runtime value, got the type f32", "# E:dot", 9),
    (k_isnan, TypeMismatchError, "isnan() takes float scalars or vectors, got u32", "# E:isnan", 9),
    (k_shuffle_lane, TypeMismatchError, "the lane must be an integer, got 1.5", "# E:lane", 9),
    (k_bitcast_target, TypeMismatchError, "bitcast target must be a scalar or vector type, got the number 3",
     "# E:bitcast", 9),
    (k_barrier_scope, ArgumentError, "execution must be a scope", "# E:barrier", 5),
    (k_semantics, ArgumentError, "semantics may name at most one ordering, got Acquire, Release", "# E:semantics", 5),
    (k_vote, TypeMismatchError, "subgroup_any() takes a bool, got f32", "# E:vote", 9),
    (k_shared_elem, TypeMismatchError, "shared: cooperative matrices may only live in Function or Private memory",
     "# E:shared_elem", 9),
    (k_shared_length, ArgumentError, "shared: the length 1099511627776 does not fit an array type",
     "# E:shared_length", 9),
    (k_atomic_mem, TypeMismatchError, "atomic_add() works on a buffer parameter or a shared array, got a runtime f32",
     "# E:atomic_mem", 9),
    (k_atomic_order, ArgumentError, "atomic_add(): semantics must be one of Acquire", "# E:atomic_order", 9),
    (k_atomic_scope, ArgumentError, "atomic_add(): scope must be a scope", "# E:atomic_scope", 9),
]


@pytest.mark.parametrize("k,cls,message,marker,col", BUILTIN_REFUSALS, ids=[r[3][4:] for r in BUILTIN_REFUSALS])
def test_typed_builtins_refuse_wrong_arguments_at_the_users_line(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)


# -- no argument of any kind reaches the compiler's internals -------------------------------------------------
NOT_VALUES = ["f32", "Acc", "cd.Row", "cd.Workgroup", "cd.exp", "helper", "(1.0, 2.0)", "None", "'x'", "o",
              "1.5", "-1", "True", "cd.tensor_layout(2)", "o[0]", "o[0] > 0.0", "Acc[f32, 16, 16].splat(0.0)"]
PROBES = ["probe_runtime", "probe_operand", "probe_index", "probe_flag", "probe_literal", "probe_type",
          "probe_matrix", "probe_enum", "probe_scope", "probe_memory", "probe_bool"]
TEMPLATE = '''
import coopdsl as cd
from coopdsl import *
from tests.frontend.test_builtin_seam import {probe}


@cd.func
def helper(x):
    return x


@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[f32]):
    {probe}({arg})
'''


@pytest.mark.parametrize("probe,arg", list(itertools.product(PROBES, NOT_VALUES)))
def test_no_argument_reaches_the_internals(probe, arg, tmp_path):
    src = textwrap.dedent(TEMPLATE).format(probe=probe, arg=arg)
    namespace = exec_source(src, tmp_path / "k_seam.py")
    try:
        namespace["k"].compile()
    except InternalCompilerError as e:  # (a subclass of CompileError: checked first)
        pytest.fail(f"{probe}({arg}) reached the internals: {e}")
    except CompileError as e:
        assert e.loc.line == len(src.rstrip().splitlines()), str(e)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_atan_three(o: cd.Buffer[f32]):
    o[0] = cd.atan(1.0, 2.0, 3.0)  # E:atan3


@cd.kernel(workgroup_size=(1, 1, 1))
def k_atan_forms(o: cd.Buffer[f32]):
    o[0] = cd.atan(o[1])
    o[2] = cd.atan(o[3], o[4])
    o[5] = cd.atan(o[6], x=o[7])


def test_atan_takes_one_or_two_values():
    """GLSL's atan(y_over_x) and atan(y, x) (atan2); a third argument is refused by the registry at the call."""
    import numpy as np

    text = k_atan_forms.disassemble()
    assert text.count(" Atan %") == 1 and text.count(" Atan2 %") == 2
    o = np.array([0, 1.0, 0, 1.0, -1.0, 0, -1.0, -1.0], np.float32)
    k_atan_forms.launch((1, 1, 1), o, device="cpu")
    assert np.allclose(o[[0, 2, 5]], [np.arctan(1.0), np.arctan2(1.0, -1.0), np.arctan2(-1.0, -1.0)])
    expect_error(k_atan_three, ArgumentError, "atan(y, x=None) takes at most 2 positional arguments, got 3",
                 "# E:atan3", 12)
