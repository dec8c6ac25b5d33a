"""Typing rules of arithmetic, comparisons and conversions, and their IR.

Rules (close to GLSL's, stricter where GLSL converts silently):

* A Python number next to a runtime value takes that value's (component)
  type; a float literal never becomes an integer.
* Signed and unsigned integers of the same width mix by reinterpreting the
  signed one as unsigned (GLSL's implicit int -> uint).  Everything else must
  match exactly: convert with ``f32(x)``, ``u32(x)`` and friends.
* ``/`` divides floats; ``//`` and ``%`` divide integers and truncate toward
  zero like C (the remainder takes the dividend's sign), not like Python's
  floor division.  Signed ``%`` lowers to OpUMod of the magnitudes (Vulkan
  leaves OpSRem/OpSMod undefined for negative operands).
* bf16 and fp8 values do no arithmetic (SPV_KHR_bfloat16, SPV_EXT_float8):
  convert them to f16/f32 first.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Const, GlobalVar, Op, Value
from ..ir.literals import LiteralError, fit
from .types import Enumerant
from .values import BufferRef

if TYPE_CHECKING:
    from ..ir.builder import Emitter

PY_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floordiv": operator.floordiv, "rem": operator.mod, "and": operator.and_, "or": operator.or_,
    "xor": operator.xor, "shl": operator.lshift, "shr": operator.rshift, "pow": operator.pow,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "rem": "%",
          "and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "pow": "**",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
PY_UNARY: dict[str, Callable[[Any], Any]] = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert}
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
BITWISE = ("and", "or", "xor", "shl", "shr")


NUMBERS = (bool, int, float)  # Python numbers: compile-time values


def is_number(v: object) -> bool:
    return isinstance(v, NUMBERS)


ARITH_TYPES = (T.ScalarType, T.VectorType, T.CoopMatType)  # what arithmetic, math and conversions work on


def describe_operand(v: object) -> str:
    """How an operand is named in an error: in the words kernels are written in."""
    if isinstance(v, Value):
        return f"a runtime {v.type}"
    if isinstance(v, T.Type):
        return f"the type {v}"
    if isinstance(v, Enumerant):
        return f"coopdsl.{v!r}"
    if v is None:
        return "None"
    if isinstance(v, str):
        return f"the string {v!r}"
    if isinstance(v, (tuple, list)):
        return f"a compile-time {type(v).__name__} of {len(v)}"
    if isinstance(v, BufferRef):   # memory: a buffer, shared, local or private array, or an array member in it
        whole = isinstance(v.var, GlobalVar) or isinstance(v.var, Op) and v.var.kind == "variable"
        return f"{v.kind} '{v.name}'" if whole else f"an array in the memory of {v.kind} '{v.name}' (index it)"
    return f"{type(v).__name__} {v!r}"


def operand(em: Emitter, v: Any, what: str) -> Any:
    """The one gate of every arithmetic, math and conversion operand: a Python number or a runtime value.
    Any other compile-time object (a type, an enum, a function, None, a string, a tuple...) is a located
    TypeMismatchError naming ``what`` and the operand. (Runtime values of other types, such as structs or
    arrays, are refused by each operation with its own message.)"""
    if isinstance(v, NUMBERS) or isinstance(v, Value):
        return v
    raise TypeMismatchError(f"{what}: expected a number or a runtime scalar, vector or cooperative matrix, "
                            f"got {describe_operand(v)}", em.loc)


def default_type(v: object) -> T.ScalarType:
    """The type a bare Python number takes when it must become a runtime value (bool, i32, f32)."""
    if isinstance(v, bool):
        return T.boolean
    return T.i32 if isinstance(v, int) else T.f32


def literal(em: Emitter, v: Any, t: T.Type) -> Const:
    """The Python number ``v`` as a constant of ``t``: the one place the language turns numbers into typed
    constants.  A scalar type takes it as it is, a vector or cooperative-matrix type in every component, an
    array type (of any depth) in every element.  A number that does not fit is a located
    TypeMismatchError; whether it fits is :func:`coopdsl.ir.literals.fit`'s decision."""
    if not isinstance(t, T.ArrayType):
        return em.literal(v, t)
    s: T.Type = t
    while isinstance(s, T.ArrayType):
        s = s.elem
    try:
        return em.const(t, fit(v, T.scalar_of(s)))
    except LiteralError as e:
        raise TypeMismatchError(str(e), em.loc) from None


def index_literal(em: Emitter, v: int) -> Const:
    """A Python int used as an index, offset or count: a u32 constant (an i32 one when negative)."""
    return em.literal(v, T.u32 if v >= 0 else T.i32)


def binary(em: Emitter, op: str, a: Any, b: Any) -> Any:
    """``a <op> b`` where either side may be a Python number or an IR value."""
    # (is_number, _no_arrays, T.elem_of and _check_arith_elem are written out in the common cases below:
    # this runs for every operator of a kernel)
    a_value, b_value = isinstance(a, Value), isinstance(b, Value)
    a_number, b_number = isinstance(a, NUMBERS), isinstance(b, NUMBERS)
    if not a_value and not b_value and a_number and b_number:
        return _fold(em, op, a, b)
    if not a_value and not a_number or not b_value and not b_number:
        bad = a if not (a_value or a_number) else b
        raise TypeMismatchError(f"unsupported operand for {SYMBOL[op]}: {_describe(bad)}", em.loc)
    if a_value and isinstance(a.type, T.ArrayType) or b_value and isinstance(b.type, T.ArrayType):
        _no_arrays(em, a, b)
    if op == "pow":
        return _power(em, a, b)
    if a_value and isinstance(a.type, T.CoopMatType) or b_value and isinstance(b.type, T.CoopMatType):
        return _coopmat_binary(em, op, a, b)
    given = b  # (the right operand as written: a constant divisor or shift count is checked below)
    a, b = unify(em, op, a, b)
    t = a.type
    elem = t if type(t) is T.ScalarType else T.elem_of(t)
    if not isinstance(elem, T.ScalarType):
        raise TypeMismatchError(f"'{SYMBOL[op]}' is not defined on {t} values", em.loc)
    if op in _UNDEFINED_AT and elem.is_int:
        _check_constant_operand(em, op, given, elem)
    if elem.is_float and elem.encoding is not None:
        _check_arith_elem(em, op, elem)
    if op == "div" and not elem.is_float:
        raise TypeMismatchError(f"'/' divides floats; use '//' to divide {elem} values", em.loc)
    if op == "floordiv":
        if not elem.is_int:
            raise TypeMismatchError(f"'//' divides integers; use '/' for {elem}", em.loc)
        op = "div"
    if op in BITWISE and not elem.is_int:
        if not (elem.is_bool and op in ("and", "or", "xor")):
            raise TypeMismatchError(f"'{SYMBOL[op]}' needs integer operands, got {t}", em.loc)
        op = {"and": "land", "or": "lor", "xor": "ne"}[op]
        return em.op(op, t, [a, b])
    if op in COMPARE:
        if elem.is_bool and op not in ("eq", "ne"):
            raise TypeMismatchError(f"'{SYMBOL[op]}' does not order bools", em.loc)
        rt = T.VectorType(T.boolean, t.count) if isinstance(t, T.VectorType) else T.boolean
        return em.op(op, rt, [a, b])
    if elem.is_bool:
        raise TypeMismatchError(f"'{SYMBOL[op]}' needs numbers, got bool", em.loc)
    return em.op(op, t, [a, b])


def _power(em: Emitter, a: Any, n: Any) -> Any:
    """``a ** n`` of a runtime ``a`` and a compile-time integer ``n``: multiplications (squaring, then the bits of
    ``n``), as C++ code writes small powers; ``a ** 0`` is 1 of ``a``'s type (Python's ``x ** 0``, NaN too), and for
    floats ``a ** -n`` is ``1 / a ** n``.  A runtime or float exponent is ``cd.pow``'s (GLSL's ``pow``, which
    Vulkan defines only for ``a >= 0``)."""
    if not isinstance(a, Value):
        raise TypeMismatchError(f"'**' with a runtime exponent ({_describe(n)}) is not supported; use cd.pow(x, y) "
                                f"for floats, or a shift (1 << k) for powers of two", em.loc)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeMismatchError(f"'**' of a runtime value takes a compile-time integer exponent (x ** 2), got "
                                f"{_describe(n)} as the exponent; use cd.pow(x, y) for others", em.loc)
    elem = T.scalar_of(a.type) if isinstance(a.type, (T.ScalarType, T.VectorType)) else None
    if elem is None or elem.is_bool:
        raise TypeMismatchError(f"'**' needs a number or a vector of numbers, got {a.type}", em.loc)
    _check_arith_elem(em, "pow", elem)   # (bf16 and fp8: named with '**', not the '*' it would become)
    if n < 0:
        if not elem.is_float:
            raise TypeMismatchError(f"a negative power of {elem} ({n}) is not an integer; convert the base to a "
                                    f"float type first", em.loc)
        return binary(em, "div", 1.0, _power(em, a, -n))
    if n == 0:
        return literal(em, 1, a.type)
    result = None
    base = a
    while n:
        if n & 1:
            result = base if result is None else binary(em, "mul", result, base)
        n >>= 1
        if n:
            base = binary(em, "mul", base, base)
    return result


_UNDEFINED_AT = ("floordiv", "rem", "shl", "shr")  # integer ops undefined in SPIR-V for some right operands


def _check_constant_operand(em: Emitter, op: str, b: Any, elem: T.ScalarType) -> None:
    """A constant right operand for which SPIR-V leaves ``op`` undefined (a zero divisor, a shift count
    outside 0..width-1) is a mistake at the user's line, as C compilers and glslang's folder report it."""
    value = b.value if isinstance(b, Const) else b
    if isinstance(b, Op) and b.kind == "construct" and all(isinstance(c, Const) for c in b.operands):
        value = tuple(cast(Const, c).value for c in b.operands)   # a vector of constants: each component
    if isinstance(value, (tuple, list)):
        for v in value:
            _check_constant_operand(em, op, v, elem)
        return
    if isinstance(value, bool) or not isinstance(value, int):
        return
    if op in ("floordiv", "rem") and value == 0:
        raise ArgumentError(f"integer {'division' if op == 'floordiv' else 'remainder'} by the constant 0: "
                            f"undefined in SPIR-V (OpUDiv/OpSDiv/OpUMod/OpSRem by zero)", em.loc)
    if op in ("shl", "shr") and not 0 <= value < elem.width:
        raise ArgumentError(f"a shift of {elem} by {value}: the count must be from 0 to {elem.width - 1} "
                            f"(SPIR-V leaves larger and negative shift counts undefined)", em.loc)


MAX_FOLD_BITS = 4096  # a compile-time integer larger than this cannot fit any type: refused, not computed


def _fold(em: Emitter, op: str, a: Any, b: Any) -> Any:
    if op in ("pow", "shl") and isinstance(a, int) and isinstance(b, int) and not isinstance(b, bool) and b > 0:
        bits = b if op == "shl" else b * max(abs(a), 1).bit_length() if abs(a) > 1 else 0
        if a and bits > MAX_FOLD_BITS:
            raise ArgumentError(f"compile-time {a!r} {SYMBOL[op]} {b!r} has about {bits} bits; compile-time integers "
                                f"are limited to {MAX_FOLD_BITS} bits (no coopdsl type holds more than 64)", em.loc)
    try:
        return PY_BINARY[op](a, b)
    except TypeError:  # 1.5 << 2, 2.0 & 1: Python's bitwise operators take ints
        raise TypeMismatchError(f"'{SYMBOL[op]}' needs integers, got compile-time {a!r} {SYMBOL[op]} {b!r}",
                                em.loc) from None
    except ZeroDivisionError:
        raise TypeMismatchError("division by zero in a compile-time expression", em.loc) from None
    except ValueError as e:   # 1 << -1: "negative shift count"
        raise TypeMismatchError(f"compile-time {a!r} {SYMBOL[op]} {b!r}: {e}", em.loc) from None
    except OverflowError:  # 10.0 ** 400 (Python says "(34, 'Numerical result out of range')")
        raise ArgumentError(f"compile-time {a!r} {SYMBOL[op]} {b!r} is too large for a float (past "
                            f"{sys.float_info.max:.4g}; no coopdsl type holds it)", em.loc) from None


def _describe(v: object) -> str:
    return describe_operand(v) if not isinstance(v, Value) else str(v.type)


def _check_arith_elem(em: Emitter, op: str, elem: T.Type) -> None:
    if isinstance(elem, T.ScalarType) and elem.is_float and not elem.is_ieee and op not in ("eq", "ne"):
        raise TypeMismatchError(
            f"{elem} values cannot be used with '{SYMBOL.get(op, op)}' (SPV_KHR_bfloat16/SPV_EXT_float8 "
            f"allow conversions only); convert to f32 first", em.loc)


def unify(em: Emitter, op: str, a: Any, b: Any) -> tuple[Value, Value]:
    """Bring two scalar/vector operands (one may be a Python number) to one type."""
    a = operand(em, a, f"'{SYMBOL.get(op, op)}'")
    b = operand(em, b, f"'{SYMBOL.get(op, op)}'")
    if isinstance(a, NUMBERS) and isinstance(b, NUMBERS):   # (no operand gives the type: cd.mod(7.0, 2.0))
        what = f"'{SYMBOL[op]}'" if op in SYMBOL else f"{op}()"   # (the math builtins' words, lang/math.py)
        raise TypeMismatchError(f"{what} needs at least one runtime argument (compile-time math: use Python)",
                                em.loc)
    if isinstance(a, NUMBERS):
        a = literal(em, a, b.type)
    if isinstance(b, NUMBERS):
        b = literal(em, b, a.type)
    ta, tb = a.type, b.type
    if ta is tb or ta == tb:
        return a, b
    # vector <op> scalar: splat the scalar
    if isinstance(ta, T.VectorType) and tb == ta.elem:
        return a, em.op("construct", ta, [b] * ta.count)
    if isinstance(tb, T.VectorType) and ta == tb.elem:
        return em.op("construct", tb, [a] * tb.count), b
    ea, eb = T.elem_of(ta), T.elem_of(tb)
    if isinstance(ea, T.ScalarType) and isinstance(eb, T.ScalarType) and T.with_elem(ta, eb) == tb and \
            ea.is_int and eb.is_int and ea.width == eb.width:
        if op in ("shl", "shr"):   # a shift keeps the type of what it shifts (GLSL, SPIR-V): i32 >> u32 is i32,
            return a, em.op("bitcast", ta, [b])   # an arithmetic shift (the amount, below the width, is the same)
        # GLSL: int converts implicitly to uint of the same width.
        if ea.signed:
            return em.op("bitcast", tb, [a]), b
        return a, em.op("bitcast", ta, [b])
    if op in ("shl", "shr") and isinstance(ea, T.ScalarType) and isinstance(eb, T.ScalarType) and ea.is_int and \
            eb.is_int and (not isinstance(tb, T.VectorType) or T.with_elem(tb, ea) == ta):
        # a count of another width (i64 << u32, as GLSL takes it): in the shifted value's type, which keeps every
        # count below the width (larger ones are undefined in SPIR-V anyway)
        return unify(em, op, a, convert(em, b, T.with_elem(tb, ea)))
    sym = SYMBOL.get(op, op)
    if isinstance(ta, T.VectorType) and isinstance(tb, T.VectorType) and ta.count != tb.count:
        small, big = sorted((ta, tb), key=lambda t: t.count)
        pad = ", ".join(["0"] * (big.count - small.count))
        raise TypeMismatchError(
            f"operands of '{sym}' have different sizes: {ta} and {tb}; take components of the {big} "
            f"(e.g. v.{'xyzw'[:small.count]}) or widen the {small} (e.g. vec{big.count}[{small.elem}](v, {pad}))"
            + ("" if ta.elem == tb.elem else "; the component types must match too"), em.loc)
    # a shift keeps the type of what it shifts: converting that to the count's type could truncate it
    if op in ("shl", "shr") and isinstance(ea, T.ScalarType) and ea.is_int:
        hint = f"a shift keeps the type of the value shifted, so convert the count (e.g. {ta}(n))"
    else:   # (into the numeric side where one side is bool: arithmetic on a bool is its 0 or 1)
        to = ta if isinstance(eb, T.ScalarType) and eb.is_bool and op not in ("and", "or", "xor") else tb
        hint = f"convert one explicitly (e.g. {to}(x))"
    raise TypeMismatchError(
        f"operands of '{sym}' have different types: {ta} and {tb}; {hint}"
        + _number_before_loop(a, tb) + _number_before_loop(b, ta), em.loc)


def _number_before_loop(v: Value, other: T.Type) -> str:
    """Why ``v`` has its type when it is a loop variable that held a Python number as its loop began (the
    number took its default type, i32 or f32), and how to give it ``other``; else ""."""
    if not (isinstance(v, Op) and v.kind == "phi" and v.attrs.get("var") and v.operands and
            isinstance(v.operands[0], Const) and not v.attrs.get("path")):
        return ""
    name, start = v.attrs["var"], v.operands[0].value
    return (f" ('{name}' is {v.type} in this loop because it held the Python number {start!r} when the loop "
            f"began: write {name} = {other}({start!r}) before it)")


def _coopmat_binary(em: Emitter, op: str, a: Any, b: Any) -> Value:
    mat = a if isinstance(a, Value) and isinstance(a.type, T.CoopMatType) else b
    t = mat.type
    assert isinstance(t, T.CoopMatType)  # binary() calls this with a matrix operand
    if op in COMPARE or op in BITWISE or op == "rem":
        raise TypeMismatchError(f"'{SYMBOL[op]}' is not defined on cooperative matrices ({t})", em.loc)
    _check_arith_elem(em, op, t.elem)
    if op == "div" and t.elem.is_int:  # the scalar rules: '/' divides floats, '//' integers
        raise TypeMismatchError(f"'/' divides floats; use '//' to divide {t} values", em.loc)
    if op == "floordiv":
        if not t.elem.is_int:
            raise TypeMismatchError(f"'//' divides integers; use '/' for {t}", em.loc)
        if mat is a:
            _check_constant_operand(em, op, b, t.elem)   # (a constant 0 divisor: undefined, as for scalars)
        op = "div"
    other = operand(em, b if mat is a else a, f"'{SYMBOL[op]}'")
    if isinstance(other, Value) and not isinstance(other.type, (T.ScalarType, T.CoopMatType)):
        raise TypeMismatchError(f"'{SYMBOL[op]}' combines {t} with a scalar or a matrix of the same type, "
                                f"not {describe_operand(other)}", em.loc)
    if is_number(other):
        other = literal(em, other, t.elem)
    if isinstance(other.type, T.ScalarType):
        if other.type != t.elem:
            raise TypeMismatchError(f"cannot combine {t} with a {other.type} scalar; the scalar must be {t.elem}",
                                    em.loc)
        if op == "mul" and t.elem.is_float:
            return em.op("mat_times_scalar", t, [mat, other])
        if op in ("div", "sub") and mat is b:
            other = em.op("splat", t, [other])
            return em.op(op, t, [other, mat])
        if op == "div" and t.elem.is_float:
            inv = em.op("div", t.elem, [literal(em, 1.0, t.elem), other])
            return em.op("mat_times_scalar", t, [mat, inv])
        other = em.op("splat", t, [other])
        return em.op(op, t, [mat, other])
    if other.type != t:
        from .coopcheck import describe_mismatch

        ta = a.type if isinstance(a, Value) else None
        tb = b.type if isinstance(b, Value) else None
        raise TypeMismatchError(
            f"'{SYMBOL[op]}' needs two cooperative matrices of the same type; {describe_mismatch(ta, tb)}", em.loc)
    if op == "div" and t.elem.is_int:
        pass  # OpSDiv / OpUDiv on matrices
    return em.op(op, t, [a, b])


def _no_arrays(em: Emitter, *values: Any) -> None:
    """Arrays are containers: no arithmetic, comparison or conversion applies to them as a whole."""
    for v in values:
        if isinstance(getattr(v, "type", None), T.ArrayType):
            raise TypeMismatchError(f"{v.type} is an array: arrays take no arithmetic, comparisons or "
                                    f"conversions; work on its elements (row[i])", em.loc)


def unary(em: Emitter, op: str, v: Any) -> Any:
    if is_number(v):
        if op == "invert" and isinstance(v, float):
            raise TypeMismatchError(f"'~' needs an integer, got the compile-time float {v!r}", em.loc)
        return PY_UNARY[op](v)
    v = operand(em, v, f"unary '{'-' if op == 'neg' else '+' if op == 'pos' else '~'}'")
    _no_arrays(em, v)
    t = v.type
    elem = T.elem_of(t)
    if op == "pos":
        return v
    if not isinstance(elem, T.ScalarType):
        raise TypeMismatchError(f"'{'-' if op == 'neg' else '~'}' is not defined on {t} values", em.loc)
    if op == "neg":
        _check_arith_elem(em, "sub", elem)
        if elem.is_bool:
            raise TypeMismatchError("cannot negate a bool; use 'not'", em.loc)
        return em.op("neg", t, [v])
    if not elem.is_int or isinstance(t, T.CoopMatType):
        raise TypeMismatchError(f"'~' needs an integer, got {t}", em.loc)
    return em.op("not", t, [v])


def logical_not(em: Emitter, v: Any) -> Any:
    v = operand(em, v, "'not'")
    if is_number(v):
        return not v
    if v.type != T.boolean:
        raise TypeMismatchError(f"'not' needs a bool, got {v.type}; compare explicitly (x != 0)", em.loc)
    return em.op("not", T.boolean, [v])


def convert(em: Emitter, v: Any, target: T.Type) -> Value:
    """``target(v)``: a numeric conversion (constant-folded for Python numbers)."""
    v = operand(em, v, f"{target}(x)")
    if is_number(v):
        if isinstance(target, T.ScalarType) and target.is_int and isinstance(v, bool):
            v = int(v)     # u32(True) is 1, as u32(flag) of a runtime bool (an explicit conversion)
        elif isinstance(target, T.ScalarType) and target.is_int and isinstance(v, float):
            if not math.isfinite(v):
                raise ArgumentError(f"{target}({v!r}): an infinity or NaN has no integer value", em.loc)
            v = int(v)
        elif isinstance(target, T.ScalarType) and target.is_float and (isinstance(v, bool) or not isinstance(v, int)):
            v = float(v)   # (an int stays one: the literal rounds it once into the format, past 2**53 too)
        elif isinstance(target, T.ScalarType) and target.is_bool:
            v = bool(v)
        return literal(em, v, target)
    _no_arrays(em, v)
    src = v.type
    if src == target:
        return cast(Value, v)
    se, te = T.elem_of(src), T.elem_of(target)
    if not isinstance(se, T.ScalarType) or not isinstance(te, T.ScalarType):
        raise TypeMismatchError(f"cannot convert {src} to {target}", em.loc)
    if T.with_elem(src, te) != target:
        if isinstance(src, T.CoopMatType) and isinstance(target, T.CoopMatType):
            from .coopcheck import check_conversion_shape

            check_conversion_shape(em, src, target)
            if src.use != target.use:
                from .coopmat2 import convert_use

                return convert_use(em, v, target)
        else:
            raise TypeMismatchError(f"cannot convert {src} to {target}: shapes differ", em.loc)
    if te.is_bool:
        if isinstance(src, T.CoopMatType):
            raise TypeMismatchError("cooperative matrices cannot hold bools", em.loc)
        zero = literal(em, 0.0, src) if se.is_float else literal(em, 0, src)
        return em.op("ne", target, [v, zero])
    if se.is_bool:
        one, zero = literal(em, 1, target), literal(em, 0, target)
        return em.op("select", target, [v, one, zero])
    return em.op("convert", target, [v])
