"""GLSL.std.450 math builtins on scalars and vectors, declared as one table.

Each entry names the GLSL.std.450 instruction(s) (float, signed, unsigned
forms), how many arguments it takes, which component kinds it accepts, and
whether it is limited to 16/32-bit floats.  Python number arguments take the
type of the other arguments.  bf16/fp8 values must be converted first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from ..ir.ops.math import NORM_FORMATS, norm_glsl, norm_top
from . import arith
from .conversions import OPERAND, RUNTIME, Operand, Runtime, bool_vector, float_scalar_or_vector
from .registry import BUILTINS as BUILTINS
from .registry import Builtin, call, make_builtin

if TYPE_CHECKING:
    from .context import Builder

# name -> (float op, signed op, unsigned op, arity, 16/32-bit floats only, doc)
TABLE = {
    "exp": ("Exp", None, None, 1, True, "e**x"), "exp2": ("Exp2", None, None, 1, True, "2**x"),
    "log": ("Log", None, None, 1, True, "natural log"), "log2": ("Log2", None, None, 1, True, "log base 2"),
    "sqrt": ("Sqrt", None, None, 1, False, "square root"),
    "inversesqrt": ("InverseSqrt", None, None, 1, False, "1 / sqrt(x)"),
    "floor": ("Floor", None, None, 1, False, "round down"), "ceil": ("Ceil", None, None, 1, False, "round up"),
    "trunc": ("Trunc", None, None, 1, False, "round toward zero"),
    "round": ("Round", None, None, 1, False, "round to nearest; which way a value halfway between two integers "
              "goes is the device's choice (the interpreter: away from zero; lavapipe: to even), so use "
              "round_even where halves matter"),
    "round_even": ("RoundEven", None, None, 1, False, "round half to even"),
    "fract": ("Fract", None, None, 1, False, "x - floor(x)"),
    "sin": ("Sin", None, None, 1, True, "sine"), "cos": ("Cos", None, None, 1, True, "cosine"),
    "tan": ("Tan", None, None, 1, True, "tangent"), "asin": ("Asin", None, None, 1, True, "arc sine"),
    "acos": ("Acos", None, None, 1, True, "arc cosine"),
    "atan": ("Atan", None, None, 1, True, "arc tangent; atan(y, x) is atan2"),
    "sinh": ("Sinh", None, None, 1, True, "hyperbolic sine"),
    "cosh": ("Cosh", None, None, 1, True, "hyperbolic cosine"),
    "tanh": ("Tanh", None, None, 1, True, "hyperbolic tangent"),
    "atan2": ("Atan2", None, None, 2, True, "atan(y / x) in the right quadrant: atan2(y, x)"),
    "pow": ("Pow", None, None, 2, True, "x**y"),
    "abs": ("FAbs", "SAbs", None, 1, False, "absolute value"),
    "sign": ("FSign", "SSign", None, 1, False, "-1, 0 or 1"),
    "min": ("FMin", "SMin", "UMin", 2, False, "smaller of two; min(vector, scalar) splats the scalar"),
    "max": ("FMax", "SMax", "UMax", 2, False, "larger of two; max(vector, scalar) splats the scalar"),
    "clamp": ("FClamp", "SClamp", "UClamp", 3, False, "clamp(x, lo, hi); a vector x may take scalar bounds"),
    "mix": ("FMix", None, None, 3, False, "x * (1 - a) + y * a; a bool (vector) a picks y where true (OpSelect)"),
    "step": ("Step", None, None, 2, False, "0.0 if x < edge else 1.0: step(edge, x)"),
    "smoothstep": ("SmoothStep", None, None, 3, False, "Hermite step: smoothstep(e0, e1, x)"),
    "fma": ("Fma", None, None, 3, False, "a * b + c, fused where the device fuses it (Vulkan allows a "
                                                 "multiply and an add; the interpreter fuses f32 and f16, not f64)"),
    "length": ("Length", None, None, 1, False, "Euclidean length (scalar result)"),
    "distance": ("Distance", None, None, 2, False, "length(a - b) (scalar result)"),
    "normalize": ("Normalize", None, None, 1, False, "x / length(x)"),
    "cross": ("Cross", None, None, 2, False, "cross product of two 3-vectors"),
    "find_lsb": (None, "FindILsb", "FindILsb", 1, False,
                 "index of the lowest 1 bit, -1 (all ones) for 0; 32-bit integers (GLSL findLSB)"),
    "find_msb": (None, "FindSMsb", "FindUMsb", 1, False, "index of the highest 1 bit (of a negative signed value: "
                 "the highest 0 bit), -1 (all ones) if none; 32-bit integers (GLSL findMSB)"),
}
BITS_32 = {"find_lsb", "find_msb"}   # GLSL.std.450 takes these on 32-bit integers only (:func:`int32`)
SCALAR_RESULT = {"length", "distance"}
SCALAR_ARGS = {"min", "max", "clamp"}  # later arguments may be scalars of the vector's component type
PARAMS = ("x", "y", "z")  # the parameters of a math builtin, as many as it takes
NAMED = {"atan2": ("y", "x")}  # ... except where GLSL names them otherwise: atan2's first operand is y


def _is_bool(v: object) -> bool:
    return isinstance(v, bool) or isinstance(v, Value) and T.elem_of(v.type) == T.boolean


def _mix_bool(cg: Builder, vals: list[Any]) -> Value:
    """GLSL mix(x, y, a) with a bool (vector) ``a``: y where a is true, else x (OpSelect)."""
    x, y, a = vals
    if arith.is_number(x) and arith.is_number(y):
        raise TypeMismatchError("mix() needs at least one runtime value among x and y", cg.em.loc)
    x, y = arith.unify(cg.em, "mix", x, y)
    if arith.is_number(a):
        a = arith.literal(cg.em, a, T.boolean)
    want = T.VectorType(T.boolean, x.type.count) if isinstance(x.type, T.VectorType) else T.boolean
    if a.type != want:
        raise TypeMismatchError(f"mix() with a bool selector needs {want} for {x.type} values, got {a.type}",
                                cg.em.loc)
    return cg.em.op("select", x.type, [a, y, x])


def _make(name: str, row: tuple[Any, ...]) -> Builtin:
    fop, sop, uop, arity, small_only, doc = row
    params = NAMED.get(name, PARAMS[:arity])
    kinds = ", ".join(k for k, op in (("floats", fop), ("signed ints", sop), ("unsigned ints", uop)) if op)

    def impl(cg: Builder, **args: Any) -> Value:
        """The operands arrive through the one operand gate (numbers and runtime values only)."""
        vals = [args[p] for p in params]
        if name == "mix" and _is_bool(vals[2]):
            return _mix_bool(cg, vals)
        typed = [v for v in vals if isinstance(v, Value)]
        if not typed:
            raise TypeMismatchError(f"{name}() needs at least one runtime argument (compile-time math: use Python)",
                                    cg.em.loc)
        t = typed[0].type
        # the first runtime argument's type is checked before the numbers take it (a bool there would blame a
        # number: "cannot use the number 0.0 as a bool")
        elem = T.elem_of(t)
        if not isinstance(t, (T.ScalarType, T.VectorType)) or not isinstance(elem, T.ScalarType):
            raise TypeMismatchError(f"{name}() takes scalars or vectors, got {t}", cg.em.loc)
        if elem.is_float and not elem.is_ieee:
            raise TypeMismatchError(f"{name}() cannot take {elem} values; convert to f32 first", cg.em.loc)
        if name in BITS_32 and not int32(t):
            raise TypeMismatchError(f"{name}() takes 32-bit integers (GLSL.std.450), got {t}", cg.em.loc)
        op = fop if elem.is_float else (sop if elem.signed else uop) if elem.is_int else None
        if op is None:
            raise TypeMismatchError(f"{name}() takes {kinds}, got {t}", cg.em.loc)
        vals = [arith.literal(cg.em, v, t) if arith.is_number(v) else v for v in vals]
        if name in SCALAR_ARGS:  # GLSL min(vec, float), clamp(vec, float, float)
            vals = [vals[0]] + [_splat(cg, v, t, name) if v.type != t else v for v in vals[1:]]
        if name not in ("mix", "step", "smoothstep"):
            for v in vals[1:]:
                if v.type != t:
                    raise TypeMismatchError(f"{name}() arguments must have one type, got {t} and {v.type}", cg.em.loc)
        if small_only and elem.width == 64:
            raise TypeMismatchError(f"{name}() takes 16- or 32-bit floats (GLSL.std.450), got {t}", cg.em.loc)
        if name == "cross" and t != T.VectorType(elem, 3):
            raise TypeMismatchError(f"cross() takes 3-component vectors, got {t}", cg.em.loc)
        if name in ("mix", "step", "smoothstep"):
            vals = [v if v.type == t else _splat(cg, v, t, name) for v in vals]
        result = elem if name in SCALAR_RESULT else t
        return cg.em.op("math", result, vals, fn=name)

    impl.__name__ = name
    sig = "(" + ", ".join(params) + ")"
    ops = ", ".join(dict.fromkeys(op for op in (fop, sop, uop) if op))  # each kind's instruction, once
    return make_builtin(name, impl, f"{doc} (GLSL.std.450 {ops}; takes {kinds})", sig,
                        dict.fromkeys(params, OPERAND))


def _splat(cg: Builder, v: Value, t: T.Type, name: str) -> Value:
    if isinstance(t, T.VectorType) and isinstance(v, Value) and v.type == t.elem:
        return cg.em.op("construct", t, [v] * t.count)
    raise TypeMismatchError(f"{name}() arguments must have one type, got {t} and {v.type}", cg.em.loc)


MATH = {name: _make(name, row) for name, row in TABLE.items()}
_ATAN = MATH["atan"]


def _atan(cg: Builder, y: Any, x: Any = None) -> Value:
    """GLSL's atan: atan(y_over_x), and atan(y, x), which is atan2 (the one math builtin whose arity varies)."""
    return cast(Value, call(cg, _ATAN, [y], {}) if x is None else call(cg, MATH["atan2"], [y, x], {}))


_atan.__name__ = "atan"
MATH["atan"] = make_builtin("atan", _atan, _ATAN.doc, "(y, x=None)", {})
BUILTINS.update(MATH)


def _dot_impl(cg: Builder, a: Value, b: Value) -> Value:
    if a.type != b.type or not isinstance(a.type, T.VectorType) or not a.type.elem.is_float:
        raise TypeMismatchError(f"dot() takes two float vectors of one type, got {a.type} and {b.type}", cg.em.loc)
    return cg.em.op("dot", a.type.elem, [a, b])


def _fmod_impl(cg: Builder, x: Any, y: Any) -> Value:
    a, b = arith.unify(cg.em, "mod", x, y)
    e = T.elem_of(a.type)
    if not isinstance(e, T.ScalarType) or not e.is_float or not e.is_ieee:
        raise TypeMismatchError(f"mod() takes floats (GLSL mod); use % for integers, got {a.type}", cg.em.loc)
    return cg.em.op("fmod", a.type, [a, b])


def _is_impl(kind: str) -> Callable[..., Value]:
    def impl(cg: Builder, x: Value) -> Value:
        rt = T.VectorType(T.boolean, x.type.count) if isinstance(x.type, T.VectorType) else T.boolean
        return cg.em.op(kind, rt, [x])
    return impl


def _anyall(kind: str) -> Callable[..., Value]:
    def impl(cg: Builder, v: Value) -> Value:
        return cg.em.op(kind, T.boolean, [v])
    return impl


def _select_impl(cg: Builder, cond: Value, a: Any, b: Any) -> Value:
    if arith.is_number(a) and arith.is_number(b):
        raise TypeMismatchError("select() needs at least one runtime value among a and b", cg.em.loc)
    a, b = arith.unify(cg.em, "select", a, b)
    want = T.VectorType(T.boolean, a.type.count) if isinstance(a.type, T.VectorType) else T.boolean
    if cond.type not in (T.boolean, want):
        if isinstance(cond.type, T.VectorType) and cond.type.elem == T.boolean:
            raise TypeMismatchError(f"select() condition and values differ in size: a {cond.type} condition picks "
                                    f"between {a.type} values, which need {want}", cg.em.loc)
        raise TypeMismatchError(f"select() condition must be bool (or a bool vector), got {cond.type}", cg.em.loc)
    return cg.em.op("select", a.type, [cond, a, b])


_IS = Runtime(float_scalar_or_vector, "{name}() takes float scalars or vectors, got {type}")
_BOOL_VECTOR = Runtime(bool_vector, "{name}() takes a bool vector, got {type}")
_MOD = Operand("'mod'")
_SELECT = Operand("'select'")
for _name, _impl, _doc, _sig, _conversions in (
        ("dot", _dot_impl, "dot product of two float vectors (OpDot)", "(a, b)", {"a": RUNTIME, "b": RUNTIME}),
        ("mod", _fmod_impl, "GLSL mod: x - y * floor(x / y) on floats (OpFMod)", "(x, y)", {"x": _MOD, "y": _MOD}),
        ("isnan", _is_impl("isnan"), "true where x is NaN (OpIsNan)", "(x)", {"x": _IS}),
        ("isinf", _is_impl("isinf"), "true where x is infinite (OpIsInf)", "(x)", {"x": _IS}),
        ("any", _anyall("any"), "true if any component of a bool vector is (OpAny)", "(v)", {"v": _BOOL_VECTOR}),
        ("all", _anyall("all"), "true if every component of a bool vector is (OpAll)", "(v)", {"v": _BOOL_VECTOR}),
        ("select", _select_impl, "cond ? a : b per component, both evaluated (OpSelect)", "(cond, a, b)",
         {"cond": RUNTIME, "a": _SELECT, "b": _SELECT})):
    BUILTINS[_name] = make_builtin(_name, _impl, _doc, _sig, _conversions)


# -- erf: GLSL.std.450 has no instruction for it (nor GLSL, HLSL or Slang a function); exact GELU needs it ----------
ERF_P = 0.3275911   # Abramowitz & Stegun 7.1.26 (the approximation ggml's Vulkan GELU uses): |error| < 1.5e-7
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf_impl(cg: Builder, x: Any) -> Value:
    """erf(x) = sign(x) (1 - (a1 t + ... + a5 t^5) exp(-x^2)), t = 1 / (1 + p |x|), evaluated in f32 (an f16
    argument converted, and the result back)."""
    if not isinstance(x, Value):
        raise TypeMismatchError("erf() needs a runtime argument (compile-time math: use Python's math.erf)",
                                cg.em.loc)
    t = x.type
    elem = T.elem_of(t)
    if not isinstance(t, (T.ScalarType, T.VectorType)) or not isinstance(elem, T.ScalarType) or \
            not elem.is_float or not elem.is_ieee or elem.width == 64:
        raise TypeMismatchError(f"erf() takes f16 or f32 scalars or vectors, got {t}", cg.em.loc)
    em = cg.em
    wide: T.Type = T.VectorType(T.f32, t.count) if isinstance(t, T.VectorType) else T.f32
    v = x if wide == t else arith.convert(em, x, wide)
    a = call(cg, MATH["abs"], [v], {})
    u = arith.binary(em, "div", 1.0, arith.binary(em, "add", 1.0, arith.binary(em, "mul", a, ERF_P)))
    poly = arith.binary(em, "mul", u, ERF_A[4])
    for c in reversed(ERF_A[:4]):   # Horner: ((((a5 u + a4) u + a3) u + a2) u + a1) u
        poly = arith.binary(em, "mul", arith.binary(em, "add", poly, c), u)
    decay = call(cg, MATH["exp"], [arith.binary(em, "mul", arith.binary(em, "mul", a, a), -1.0)], {})
    y = arith.binary(em, "sub", 1.0, arith.binary(em, "mul", poly, decay))
    r = arith.binary(em, "mul", call(cg, MATH["sign"], [v], {}), y)
    return r if wide == t else arith.convert(em, r, t)


BUILTINS["erf"] = make_builtin(
    "erf", _erf_impl, "the error function, for exact GELU (0.5 x (1 + erf(x / sqrt(2)))): Abramowitz & Stegun "
    "7.1.26 in f32 arithmetic (absolute error below 1.5e-7 in exact arithmetic; GLSL.std.450 has no erf), on f16 "
    "or f32 scalars and vectors", "(x)", {"x": OPERAND})


# -- bit functions (SPIR-V core: OpBitCount, OpBitReverse, OpBitFieldS/UExtract, OpBitFieldInsert) ---------------
def int32(t: T.Type) -> bool:
    """Whether ``t`` is a 32-bit integer scalar or vector: what Vulkan takes the bit instructions and
    GLSL.std.450's Find* on."""
    e = T.elem_of(t)
    return isinstance(t, (T.ScalarType, T.VectorType)) and isinstance(e, T.ScalarType) and e.is_int and e.width == 32


def _bit_value(cg: Builder, name: str, x: Any) -> Value:
    """The integer argument of a bit function: a 32-bit integer scalar or vector (:func:`int32`)."""
    if not int32(x.type):
        raise TypeMismatchError(f"{name}() takes 32-bit integer scalars or vectors (i32, u32, vecN[i32], "
                                f"vecN[u32]), got {x.type}", cg.em.loc)
    return cast(Value, x)


def _bit_scalar(cg: Builder, name: str, what: str, v: Any) -> Value:
    """An offset or a count: an integer scalar (a Python int becomes a u32)."""
    if arith.is_number(v):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 32:
            raise TypeMismatchError(f"{name}() {what} must be an integer from 0 to 32, got {v!r}", cg.em.loc)
        return arith.literal(cg.em, v, T.u32)
    if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
        raise TypeMismatchError(f"{name}() {what} must be an integer scalar, got {v.type}", cg.em.loc)
    return cast(Value, v)


def _bit_count(cg: Builder, x: Value) -> Value:
    x = _bit_value(cg, "bit_count", x)
    return cg.em.op("bits", x.type, [x], fn="count")


def _bit_reverse(cg: Builder, x: Value) -> Value:
    x = _bit_value(cg, "bit_reverse", x)
    return cg.em.op("bits", x.type, [x], fn="reverse")


def _bit_field(cg: Builder, name: str, offset: Any, bits: Any) -> tuple[Value, Value]:
    """(offset, bits) of a bit field; two numbers that end past bit 31 are an error (undefined in SPIR-V)."""
    o, n = _bit_scalar(cg, name, "offset", offset), _bit_scalar(cg, name, "bits", bits)
    if arith.is_number(offset) and arith.is_number(bits) and offset + bits > 32:
        raise TypeMismatchError(f"{name}() field from bit {offset} to {offset + bits} reaches past bit 31 (offset + "
                                f"bits must be at most 32)", cg.em.loc)
    return o, n


def _bitfield_extract(cg: Builder, x: Value, offset: Any, bits: Any) -> Value:
    x = _bit_value(cg, "bitfield_extract", x)
    o, n = _bit_field(cg, "bitfield_extract", offset, bits)
    return cg.em.op("bits", x.type, [x, o, n], fn="extract")


def _bitfield_insert(cg: Builder, base: Value, insert: Any, offset: Any, bits: Any) -> Value:
    base = _bit_value(cg, "bitfield_insert", base)
    ins = arith.literal(cg.em, insert, base.type) if arith.is_number(insert) else insert
    if ins.type != base.type:
        raise TypeMismatchError(f"bitfield_insert() insert must be {base.type} like base, got {ins.type}",
                                cg.em.loc)
    o, n = _bit_field(cg, "bitfield_insert", offset, bits)
    return cg.em.op("bits", base.type, [base, ins, o, n], fn="insert")


_BIT = Operand("a bit function")
for _name, _impl, _doc, _sig, _conversions in (
        ("bit_count", _bit_count, "number of 1 bits, per component (OpBitCount; GLSL bitCount)", "(x)",
         {"x": RUNTIME}),
        ("bit_reverse", _bit_reverse, "the bits in reverse order, per component (OpBitReverse; GLSL "
         "bitfieldReverse)", "(x)", {"x": RUNTIME}),
        ("bitfield_extract", _bitfield_extract, "bits [offset, offset + bits) of x, sign-extended for signed x "
         "(OpBitFieldSExtract / OpBitFieldUExtract; GLSL bitfieldExtract)", "(x, offset, bits)",
         {"x": RUNTIME, "offset": _BIT, "bits": _BIT}),
        ("bitfield_insert", _bitfield_insert, "base with bits [offset, offset + bits) replaced by the low bits of "
         "insert (OpBitFieldInsert; GLSL bitfieldInsert)", "(base, insert, offset, bits)",
         {"base": RUNTIME, "insert": _BIT, "offset": _BIT, "bits": _BIT})):
    BUILTINS[_name] = make_builtin(_name, _impl, _doc, _sig, _conversions)


def _pack_half_2x16(cg: Builder, v: Value) -> Value:
    if v.type != T.VectorType(T.f32, 2):
        raise TypeMismatchError(f"pack_half_2x16() takes a vec2[f32], got {v.type}", cg.em.loc)
    return cg.em.op("pack_half", T.u32, [v])


def _unpack_half_2x16(cg: Builder, p: Value) -> Value:
    if p.type != T.u32:
        raise TypeMismatchError(f"unpack_half_2x16() takes a u32, got {p.type}", cg.em.loc)
    return cg.em.op("unpack_half", T.VectorType(T.f32, 2), [p])


def _norm_packing(fmt: str, spelled: str) -> tuple[Callable[..., Value], Callable[..., Value]]:
    """The builtins pack_``spelled`` and unpack_``spelled`` of normalized packing ``fmt``."""
    vec = T.VectorType(T.f32, NORM_FORMATS[fmt][0])

    def pack(cg: Builder, v: Value) -> Value:
        if v.type != vec:
            raise TypeMismatchError(f"pack_{spelled}() takes a {vec}, got {v.type}", cg.em.loc)
        return cg.em.op("pack_norm", T.u32, [v], fmt=fmt)

    def unpack(cg: Builder, p: Value) -> Value:
        if p.type != T.u32:
            raise TypeMismatchError(f"unpack_{spelled}() takes a u32, got {p.type}", cg.em.loc)
        return cg.em.op("unpack_norm", vec, [p], fmt=fmt)

    return pack, unpack


for _fmt, (_n, _bits, _signed) in NORM_FORMATS.items():
    _spelled, _glsl, _top = f"{_fmt[:5]}_{_fmt[5:]}", norm_glsl(_fmt), norm_top(_fmt)   # unorm_4x8, Unorm4x8
    _range = "[-1, 1]" if _signed else "[0, 1]"
    _pack, _unpack = _norm_packing(_fmt, _spelled)
    BUILTINS[f"pack_{_spelled}"] = make_builtin(
        f"pack_{_spelled}", _pack, f"the {_n} components clamped to {_range}, times {_top}, rounded to "
        f"{'signed ' if _signed else ''}{_bits}-bit integers and packed in a u32, the first in the low bits "
        f"(GLSL.std.450 Pack{_glsl}; GLSL pack{_glsl})", "(v)", {"v": RUNTIME})
    BUILTINS[f"unpack_{_spelled}"] = make_builtin(
        f"unpack_{_spelled}", _unpack, f"the {_n} {'signed ' if _signed else ''}{_bits}-bit integers of a u32, "
        f"the low bits first, over {_top} as a vec{_n}[f32]{' (at least -1)' if _signed else ''} (GLSL.std.450 "
        f"Unpack{_glsl}; GLSL unpack{_glsl})", "(p)", {"p": RUNTIME})


BUILTINS["pack_half_2x16"] = make_builtin(
    "pack_half_2x16", _pack_half_2x16, "the two components rounded to f16 and packed in a u32, the first in the "
    "low 16 bits (GLSL.std.450 PackHalf2x16; GLSL packHalf2x16)", "(v)", {"v": RUNTIME})
BUILTINS["unpack_half_2x16"] = make_builtin(
    "unpack_half_2x16", _unpack_half_2x16, "the two f16 of a u32, the low 16 bits first, as a vec2[f32] "
    "(GLSL.std.450 UnpackHalf2x16; GLSL unpackHalf2x16)", "(p)", {"p": RUNTIME})
