"""Cooperative-matrix rules checked at compile time, with the user's location.

spirv-val checks MulAdd shapes only when every dimension is a plain constant;
the SPIR-V spec requires them for specialization constants too, so these
checks compare dimensions *symbolically* (``SymDim`` equality), as glslang's
``coopMatMulAdd`` checks do since 16.1.0.
"""

from __future__ import annotations

from ..errors import ShapeError, TypeMismatchError
from ..ir import types as T

USE_NAME = {0: "A (MatA)", 1: "B (MatB)", 2: "accumulator (Acc)"}


def _use(d) -> str:
    return USE_NAME.get(d, str(d)) if isinstance(d, int) else f"use {d}"


def describe_mismatch(ta, tb) -> str:
    if ta is None or tb is None:
        return "one operand is not a cooperative matrix"
    diffs = []
    for field, label in (("elem", "component types"), ("rows", "rows"), ("cols", "columns"),
                         ("use", "uses"), ("scope", "scopes")):
        va, vb = getattr(ta, field), getattr(tb, field)
        if va != vb:
            if field == "use":
                va, vb = _use(va), _use(vb)
            diffs.append(f"{label} {va} vs {vb}")
    return f"{ta} and {tb} differ in " + ", ".join(diffs)


def describe_value(v) -> str:
    """A value as users write it: "a runtime f32", "the number 0.0", "the type MatA[f16, 16, 16]"."""
    t = getattr(v, "type", None)
    if isinstance(t, T.Type):
        return f"a runtime {t}"
    if isinstance(v, (bool, int, float)):
        return f"the number {v!r}"
    if isinstance(v, T.Type):
        return f"the type {v}"
    return f"a {type(v).__name__}"


def require_coopmat(em, v, what: str) -> T.CoopMatType:
    t = getattr(v, "type", None)
    if not isinstance(t, T.CoopMatType):
        raise TypeMismatchError(f"{what} must be a cooperative matrix, got {describe_value(v)}", em.loc)
    return t


def check_muladd(em, a, b, c) -> frozenset:
    """Check A*B+C; return the names of the operands with signed integer components."""
    ta = require_coopmat(em, a, "the first operand (A) of muladd")
    tb = require_coopmat(em, b, "the second operand (B) of muladd")
    if not isinstance(getattr(c, "type", None), T.CoopMatType):
        raise TypeMismatchError(
            f"the third operand (C) of muladd must be an accumulator matrix (Acc[...]), got "
            f"{describe_value(c)}; to start from zero, pass Acc[T, M, N].splat(0)", em.loc)
    tc = c.type
    for t, want, pos in ((ta, 0, "first"), (tb, 1, "second"), (tc, 2, "third")):
        if not isinstance(t.use, int):
            raise ShapeError(
                f"the {pos} operand of muladd has a specialization-constant use ({t.use}); muladd needs "
                f"matrices whose use is known when the kernel is compiled: {_use(want)}", em.loc)
        if t.use != want:
            raise ShapeError(
                f"the {pos} operand of muladd must have use {_use(want)}, but {t} has use {_use(t.use)}", em.loc)
    if not (ta.scope == tb.scope == tc.scope):  # symbolically: a spec-constant scope equals only itself
        raise ShapeError(f"muladd operands have different scopes: {ta}, {tb}, {tc}", em.loc)
    if ta.rows != tc.rows:
        raise ShapeError(f"muladd M mismatch: A has {ta.rows} rows but C has {tc.rows}", em.loc)
    if tb.cols != tc.cols:
        raise ShapeError(f"muladd N mismatch: B has {tb.cols} columns but C has {tc.cols}", em.loc)
    if ta.cols != tb.rows:
        raise ShapeError(f"muladd K mismatch: A has {ta.cols} columns but B has {tb.rows} rows", em.loc)
    ka, kb, kc = ta.elem.kind, tb.elem.kind, tc.elem.kind
    if ka != kb:
        raise TypeMismatchError(f"muladd A and B must both be float or both be integer, got {ta.elem} and {tb.elem}",
                                em.loc)
    if ka != kc:
        raise TypeMismatchError(
            f"muladd of {ta.elem} x {tb.elem} products needs a {'float' if ka == 'float' else 'integer'} "
            f"accumulator, got {tc.elem}", em.loc)
    if kc == "float" and not tc.elem.is_ieee:
        raise TypeMismatchError(f"the accumulator component type must be f16, f32 or f64, not {tc.elem}", em.loc)
    if kc == "int" and tc.elem.width < max(ta.elem.width, tb.elem.width):
        raise TypeMismatchError(
            f"an integer accumulator must be at least as wide as A and B, got {tc.elem} for {ta.elem} x {tb.elem}",
            em.loc)
    return frozenset(name for t, name in ((ta, "a"), (tb, "b"), (tc, "c"), (tc, "result"))
                     if t.elem.kind == "int" and t.elem.signed)


def check_conversion_shape(em, src: T.CoopMatType, dst: T.CoopMatType) -> None:
    if src.rows != dst.rows or src.cols != dst.cols or src.scope != dst.scope:
        raise ShapeError(f"cannot convert {src} to {dst}: rows, columns and scope must match", em.loc)
    if src.use != dst.use and not (src.use == 2 and dst.use in (0, 1)):
        raise ShapeError(
            f"cannot convert {src} to {dst}: a conversion keeps the use, or changes it from an accumulator to "
            f"A or B (SPV_NV_cooperative_matrix2); {_use(src.use)} matrices cannot become {_use(dst.use)} ones "
            f"(to get an accumulator, multiply by an identity matrix with cd.muladd)", em.loc)
