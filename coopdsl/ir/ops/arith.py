"""Arithmetic, comparison, logic, selection and conversion ops (scalars, vectors, matrices)."""

from __future__ import annotations

from .. import types as T
from ..core import Op
from ..layout import size_of
from .base import (
    bool_like,
    define,
    fail,
    is_bool,
    is_float,
    is_int,
    is_numeric,
    matrix,
    operands_equal,
    result_is,
    same_shape,
    types_of,
)

ARITHMETIC = ("add", "sub", "mul", "div", "rem")
BITWISE = ("and", "or", "xor")
SHIFTS = ("shl", "shr")
COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")


def _arithmetic(op: Op) -> None:
    operands_equal(op)
    if not is_numeric(op.operands[0].type):
        fail(op, f"needs numbers, got {op.operands[0].type}")
    result_is(op, op.operands[0].type)


def _bitwise(op: Op) -> None:
    operands_equal(op)
    if not is_int(op.operands[0].type):
        fail(op, f"needs integers, got {op.operands[0].type}")
    result_is(op, op.operands[0].type)


def _shift(op: Op) -> None:
    a, b = types_of(op)
    if not (is_int(a) and is_int(b) and same_shape(a, b)):
        fail(op, f"shifts integers by integers of one shape, got {a} and {b}")
    result_is(op, a)


def _compare(op: Op) -> None:
    operands_equal(op)
    t = op.operands[0].type
    if isinstance(t, T.CoopMatType) or not (is_numeric(t) or is_bool(t)):
        fail(op, f"compares scalars or vectors, got {t}")
    result_is(op, bool_like(t))


def _neg(op: Op) -> None:
    if not is_numeric(op.operands[0].type):
        fail(op, f"needs a number, got {op.operands[0].type}")
    result_is(op, op.operands[0].type)


def _not(op: Op) -> None:
    t = op.operands[0].type
    if not (is_int(t) or is_bool(t)) or isinstance(t, T.CoopMatType):
        fail(op, f"needs an integer or bool, got {t}")
    result_is(op, t)


def _logical(op: Op) -> None:
    operands_equal(op)
    if not is_bool(op.operands[0].type):
        fail(op, f"needs bools, got {op.operands[0].type}")
    result_is(op, op.operands[0].type)


def _select(op: Op) -> None:
    c, a, b = types_of(op)
    if a != b or c not in (T.boolean, bool_like(a)):
        fail(op, f"needs a bool condition and two values of one type, got {c}, {a}, {b}")
    if isinstance(a, T.CoopMatType):
        fail(op, "cannot select between cooperative matrices (SPIR-V forbids OpSelect on them)")
    result_is(op, a)


def _mat_times_scalar(op: Op) -> None:
    m = matrix(op, 0)
    if op.operands[1].type != m.elem:
        fail(op, f"scalar must be {m.elem}, got {op.operands[1].type}")
    result_is(op, m)


def _convert(op: Op) -> None:
    src = op.operands[0].type
    if not (is_numeric(src) and is_numeric(op.type) and same_shape(src, op.type)):
        fail(op, f"converts numbers of one shape, got {src} -> {op.type}")


def _bitcast(op: Op) -> None:
    src = op.operands[0].type
    if isinstance(src, T.CoopMatType) != isinstance(op.type, T.CoopMatType):
        fail(op, f"cannot bitcast {src} to {op.type}")
    if not isinstance(src, T.CoopMatType) and size_of(src) != size_of(op.type):
        fail(op, f"bitcast changes the size: {src} -> {op.type}")


def _fmod(op: Op) -> None:
    operands_equal(op)
    if not is_float(op.operands[0].type):
        fail(op, "needs floats")
    result_is(op, op.operands[0].type)


def _dot(op: Op) -> None:
    operands_equal(op)
    t = op.operands[0].type
    if not (isinstance(t, T.VectorType) and is_float(t)):
        fail(op, f"needs float vectors, got {t}")
    result_is(op, t.elem)


def _classify(op: Op) -> None:
    t = op.operands[0].type
    if not is_float(t) or isinstance(t, T.CoopMatType):
        fail(op, f"needs floats, got {t}")
    result_is(op, bool_like(t))


def _reduce_bools(op: Op) -> None:
    t = op.operands[0].type
    if not (isinstance(t, T.VectorType) and t.elem == T.boolean):
        fail(op, f"needs a bool vector, got {t}")
    result_is(op, T.boolean)


for _k in ARITHMETIC:
    define(_k, 2, verify=_arithmetic, doc=f"element-wise {_k} of two values of one numeric type")
for _k in BITWISE:
    define(_k, 2, verify=_bitwise, doc=f"bitwise {_k} of two integers of one type")
for _k in SHIFTS:
    define(_k, 2, verify=_shift, doc=f"shift {'left' if _k == 'shl' else 'right (arithmetic for signed)'}")
for _k in COMPARISONS:
    define(_k, 2, verify=_compare, doc=f"comparison {_k}; bool (vector) result")
define("neg", 1, verify=_neg, doc="arithmetic negation")
define("not", 1, verify=_not, doc="bitwise complement (ints) / logical not (bools)")
define("land", 2, verify=_logical, doc="logical and of bools")
define("lor", 2, verify=_logical, doc="logical or of bools")
define("select", 3, verify=_select, doc="cond ? a : b per component (both evaluated)")
define("mat_times_scalar", 2, verify=_mat_times_scalar, tangled="matrix",
       doc="cooperative matrix times a scalar of its component type")
define("convert", 1, verify=_convert, doc="numeric conversion to the result type (value-preserving where it can)")
define("bitcast", 1, verify=_bitcast, doc="reinterpret the bits as the result type")
define("fmod", 2, verify=_fmod, doc="GLSL mod on floats: x - y * floor(x / y)")
define("dot", 2, verify=_dot, doc="dot product of two float vectors")
define("isnan", 1, verify=_classify, doc="true where the float is NaN")
define("isinf", 1, verify=_classify, doc="true where the float is infinite")
define("any", 1, verify=_reduce_bools, doc="true if any component of the bool vector is")
define("all", 1, verify=_reduce_bools, doc="true if every component of the bool vector is")
