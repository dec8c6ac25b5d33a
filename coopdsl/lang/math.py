"""GLSL.std.450 math builtins on scalars and vectors, declared as one table.

Each entry names the GLSL.std.450 instruction(s) (float, signed, unsigned
forms), how many arguments it takes, which component kinds it accepts, and
whether it is limited to 16/32-bit floats.  Python number arguments take the
type of the other arguments.  bf16/fp8 values must be converted first.
"""

from __future__ import annotations

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from . import arith
from .registry import BUILTINS, Builtin, make_builtin

# name -> (float op, signed op, unsigned op, arity, 16/32-bit floats only, doc)
TABLE = {
    "exp": ("Exp", None, None, 1, True, "e**x"), "exp2": ("Exp2", None, None, 1, True, "2**x"),
    "log": ("Log", None, None, 1, True, "natural log"), "log2": ("Log2", None, None, 1, True, "log base 2"),
    "sqrt": ("Sqrt", None, None, 1, False, "square root"),
    "inversesqrt": ("InverseSqrt", None, None, 1, False, "1 / sqrt(x)"),
    "floor": ("Floor", None, None, 1, False, "round down"), "ceil": ("Ceil", None, None, 1, False, "round up"),
    "trunc": ("Trunc", None, None, 1, False, "round toward zero"),
    "round": ("Round", None, None, 1, False, "round to nearest"),
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
    "fma": ("Fma", None, None, 3, False, "a * b + c, fused"),
    "length": ("Length", None, None, 1, False, "Euclidean length (scalar result)"),
    "distance": ("Distance", None, None, 2, False, "length(a - b) (scalar result)"),
    "normalize": ("Normalize", None, None, 1, False, "x / length(x)"),
    "cross": ("Cross", None, None, 2, False, "cross product of two 3-vectors"),
}
SCALAR_RESULT = {"length", "distance"}
SCALAR_ARGS = {"min", "max", "clamp"}  # later arguments may be scalars of the vector's component type


def _is_bool(v) -> bool:
    return isinstance(v, bool) or isinstance(v, Value) and T.elem_of(v.type) == T.boolean


def _mix_bool(cg, vals):
    """GLSL mix(x, y, a) with a bool (vector) ``a``: y where a is true, else x (OpSelect)."""
    x, y, a = vals
    if arith.is_number(x) and arith.is_number(y):
        raise TypeMismatchError("mix() needs at least one runtime value among x and y", cg.em.loc)
    x, y = arith.unify(cg.em, "mix", x, y)
    if arith.is_number(a):
        a = cg.em.const(T.boolean, a)
    want = T.VectorType(T.boolean, x.type.count) if isinstance(x.type, T.VectorType) else T.boolean
    if a.type != want:
        raise TypeMismatchError(f"mix() with a bool selector needs {want} for {x.type} values, got {a.type}",
                                cg.em.loc)
    return cg.em.op("select", x.type, [a, y, x])


def _make(name: str, row) -> Builtin:
    fop, sop, uop, arity, small_only, doc = row
    kinds = "floats" + (", signed ints" if sop else "") + (", unsigned ints" if uop else "")

    def impl(cg, args, kwargs):
        if name == "atan" and not kwargs and len(args) == 2:  # GLSL atan(y, x)
            return MATH["atan2"].impl(cg, args, kwargs)
        if name == "mix" and not kwargs and len(args) == 3 and _is_bool(cg.as_operand(args[2])):
            return _mix_bool(cg, [cg.as_operand(a) for a in args])
        if kwargs or len(args) != arity:
            raise ArgumentError(f"{name}() takes {arity} argument{'s' if arity > 1 else ''}", cg.em.loc)
        vals = [arith.operand(cg.em, cg.as_operand(a), f"{name}()") for a in args]
        typed = [v for v in vals if isinstance(v, Value)]
        if not typed:
            raise TypeMismatchError(f"{name}() needs at least one runtime argument (compile-time math: use Python)",
                                    cg.em.loc)
        t = typed[0].type
        vals = [cg.em.literal(v, t) if arith.is_number(v) else v for v in vals]
        if name in SCALAR_ARGS:  # GLSL min(vec, float), clamp(vec, float, float)
            vals = [vals[0]] + [_splat(cg, v, t, name) if v.type != t else v for v in vals[1:]]
        if name not in ("mix", "step", "smoothstep"):
            for v in vals[1:]:
                if v.type != t:
                    raise TypeMismatchError(f"{name}() arguments must have one type, got {t} and {v.type}", cg.em.loc)
        elem = T.elem_of(t)
        if not isinstance(t, (T.ScalarType, T.VectorType)) or not isinstance(elem, T.ScalarType):
            raise TypeMismatchError(f"{name}() takes scalars or vectors, got {t}", cg.em.loc)
        if elem.kind == "float" and not elem.is_ieee:
            raise TypeMismatchError(f"{name}() cannot take {elem} values; convert to f32 first", cg.em.loc)
        op = {"float": fop, "int": sop if elem.kind == "int" and elem.signed else uop}.get(elem.kind)
        if op is None:
            raise TypeMismatchError(f"{name}() takes {kinds}, got {t}", cg.em.loc)
        if small_only and elem.width == 64:
            raise TypeMismatchError(f"{name}() takes 16- or 32-bit floats (GLSL.std.450), got {t}", cg.em.loc)
        if name == "cross" and t != T.VectorType(elem, 3):
            raise TypeMismatchError(f"cross() takes 3-component vectors, got {t}", cg.em.loc)
        if name in ("mix", "step", "smoothstep"):
            vals = [v if v.type == t else _splat(cg, v, t, name) for v in vals]
        result = elem if name in SCALAR_RESULT else t
        return cg.em.op("math", result, vals, fn=name)

    impl.__name__ = name
    sig = "(" + ", ".join("xyz"[:arity]) + ")"
    return make_builtin(name, impl, f"{doc} (GLSL.std.450 {fop}; takes {kinds})", sig)


def _splat(cg, v, t, name):
    if isinstance(t, T.VectorType) and isinstance(v, Value) and v.type == t.elem:
        return cg.em.op("construct", t, [v] * t.count)
    raise TypeMismatchError(f"{name}() arguments must have one type, got {t} and {v.type}", cg.em.loc)


MATH = {name: _make(name, row) for name, row in TABLE.items()}
BUILTINS.update(MATH)


def _dot_impl(cg, args, kwargs):
    if kwargs or len(args) != 2:
        raise ArgumentError("dot() takes 2 arguments", cg.em.loc)
    a, b = (cg.as_runtime(x) for x in args)
    if a.type != b.type or not isinstance(a.type, T.VectorType) or a.type.elem.kind != "float":
        raise TypeMismatchError(f"dot() takes two float vectors of one type, got {a.type} and {b.type}", cg.em.loc)
    return cg.em.op("dot", a.type.elem, [a, b])


def _fmod_impl(cg, args, kwargs):
    if kwargs or len(args) != 2:
        raise ArgumentError("mod() takes 2 arguments", cg.em.loc)
    a, b = arith.unify(cg.em, "mod", cg.as_operand(args[0]), cg.as_operand(args[1]))
    e = T.elem_of(a.type)
    if not isinstance(e, T.ScalarType) or e.kind != "float" or not e.is_ieee:
        raise TypeMismatchError(f"mod() takes floats (GLSL mod); use % for integers, got {a.type}", cg.em.loc)
    return cg.em.op("fmod", a.type, [a, b])


def _is_impl(kind):
    def impl(cg, args, kwargs):
        if kwargs or len(args) != 1:
            raise ArgumentError(f"{kind}() takes 1 argument", cg.em.loc)
        v = cg.as_runtime(args[0])
        e = T.elem_of(v.type)
        if not isinstance(v.type, (T.ScalarType, T.VectorType)) or not isinstance(e, T.ScalarType) \
                or e.kind != "float":
            raise TypeMismatchError(f"{kind}() takes float scalars or vectors, got {v.type}", cg.em.loc)
        rt = T.VectorType(T.boolean, v.type.count) if isinstance(v.type, T.VectorType) else T.boolean
        return cg.em.op(kind, rt, [v])
    return impl


def _anyall(kind):
    def impl(cg, args, kwargs):
        if kwargs or len(args) != 1:
            raise ArgumentError(f"{kind}() takes 1 argument", cg.em.loc)
        v = cg.as_runtime(args[0])
        if not isinstance(v.type, T.VectorType) or v.type.elem != T.boolean:
            raise TypeMismatchError(f"{kind}() takes a bool vector, got {v.type}", cg.em.loc)
        return cg.em.op(kind, T.boolean, [v])
    return impl


def _select_impl(cg, args, kwargs):
    if kwargs or len(args) != 3:
        raise ArgumentError("select(cond, a, b) takes 3 arguments", cg.em.loc)
    c = cg.as_runtime(args[0])
    a, b = arith.unify(cg.em, "select", cg.as_operand(args[1]), cg.as_operand(args[2])) \
        if not (arith.is_number(args[1]) and arith.is_number(args[2])) else (None, None)
    if a is None:
        raise TypeMismatchError("select() needs at least one runtime value among a and b", cg.em.loc)
    want = T.VectorType(T.boolean, a.type.count) if isinstance(a.type, T.VectorType) else T.boolean
    if c.type not in (T.boolean, want):
        raise TypeMismatchError(f"select() condition must be bool (or a bool vector), got {c.type}", cg.em.loc)
    return cg.em.op("select", a.type, [c, a, b])


for _name, _impl, _doc, _sig in (
        ("dot", _dot_impl, "dot product of two float vectors (OpDot)", "(a, b)"),
        ("mod", _fmod_impl, "GLSL mod: x - y * floor(x / y) on floats (OpFMod)", "(x, y)"),
        ("isnan", _is_impl("isnan"), "true where x is NaN (OpIsNan)", "(x)"),
        ("isinf", _is_impl("isinf"), "true where x is infinite (OpIsInf)", "(x)"),
        ("any", _anyall("any"), "true if any component of a bool vector is (OpAny)", "(v)"),
        ("all", _anyall("all"), "true if every component of a bool vector is (OpAll)", "(v)"),
        ("select", _select_impl, "cond ? a : b per component, both evaluated (OpSelect)", "(cond, a, b)")):
    BUILTINS[_name] = make_builtin(_name, _impl, _doc, _sig)
