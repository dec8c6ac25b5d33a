"""SPV_NV_cooperative_matrix2 shape rules, checked at compile time with the user's location.

spirv-val checks the shapes of OpCooperativeMatrixReduceNV only when every
dimension is a plain constant; these checks also compare dimensions made of
specialization constants, symbolically (``2 * H`` is twice ``H``; ``H // 2``
is half of it).  A transpose keeps the component type, as GLSL requires
(SPIR-V leaves it open; it is what drivers are tested with).
"""

from __future__ import annotations

from ..errors import ShapeError, TypeMismatchError
from ..ir import types as T
from ..ir.ops.coopmat import USE_ACC, USE_B
from ..ir.ops.coopmat2 import ReduceMode
from .coopcheck import USE_NAME


def require_accumulator(em, t: T.CoopMatType, what: str) -> None:
    """A located ShapeError unless ``t`` is an accumulator (with a use known at compile time)."""
    if t.use != USE_ACC:
        use = USE_NAME.get(t.use, t.use) if isinstance(t.use, int) else f"the specialization-constant {t.use}"
        raise ShapeError(f"{what}: it takes an accumulator matrix (Acc[...]), but {t} has use {use}", em.loc)


def is_half(small: T.Dim, big: T.Dim) -> bool:
    """Whether ``small`` is exactly half of ``big`` (symbolically for specialization constants)."""
    if isinstance(small, int) and isinstance(big, int):
        return 2 * small == big
    return small == T.symbolic("div", (big, 2)) or big == T.symbolic("mul", (small, 2))


def check_reduce(em, t: T.CoopMatType, into, mode: ReduceMode) -> None:
    """The matrix and result types of ``m.reduce(mode, ..., into=into)``."""
    require_accumulator(em, t, "m.reduce")
    if t.elem.kind != "float":
        raise TypeMismatchError(f"m.reduce needs a floating-point matrix (as GLSL_NV_cooperative_matrix2 requires), "
                                f"got {t}", em.loc)
    if not isinstance(into, T.CoopMatType):
        raise TypeMismatchError(f"into= must be an accumulator matrix type such as Acc[{t.elem}, {t.rows}, {t.cols}], "
                                f"got {into!r}", em.loc)
    require_accumulator(em, into, "into= of m.reduce")
    if into.elem != t.elem:
        raise ShapeError(f"m.reduce keeps the component type: into= {into} must hold {t.elem} like {t}", em.loc)
    if into.scope != t.scope:
        raise ShapeError(f"m.reduce keeps the scope: into= {into} must have the scope of {t}", em.loc)
    if mode == ReduceMode.Quad2x2:
        if not (is_half(into.rows, t.rows) and is_half(into.cols, t.cols)):
            raise ShapeError(f"m.reduce(cd.Reduce2x2) halves both dimensions: {t} reduces into "
                             f"{_half_text(t)}, not {into}", em.loc)
    elif mode == ReduceMode.Row and into.rows != t.rows:
        raise ShapeError(f"m.reduce(cd.Row) keeps the rows: the result needs {t.rows} rows like {t}, but into= "
                         f"{into} has {into.rows}", em.loc)
    elif mode == ReduceMode.Column and into.cols != t.cols:
        raise ShapeError(f"m.reduce(cd.Column) keeps the columns: the result needs {t.cols} columns like {t}, but "
                         f"into= {into} has {into.cols}", em.loc)


def _half_text(t: T.CoopMatType) -> str:
    def half(d: T.Dim) -> T.Dim:
        return d // 2 if isinstance(d, int) else T.symbolic("div", (d, 2))
    return str(T.CoopMatType(t.elem, t.scope, half(t.rows), half(t.cols), USE_ACC))


def check_transpose(em, t: T.CoopMatType, into) -> T.CoopMatType:
    """The result type of ``m.transpose(into=into)``: the accumulator's B matrix with rows and columns swapped."""
    require_accumulator(em, t, "m.transpose")
    result = T.CoopMatType(t.elem, t.scope, t.cols, t.rows, USE_B)
    if into is None or into == result:
        return result
    if not isinstance(into, T.CoopMatType):
        raise TypeMismatchError(f"into= must be the matrix type {result}, got {into!r}", em.loc)
    if into.use != USE_B:
        problem = "the result is a B matrix (MatB[...])"
    elif into.elem != t.elem:
        problem = (f"the component type stays {t.elem} (GLSL requires it); convert before or after transposing")
    elif into.scope != t.scope:
        problem = "the scope stays the same"
    else:
        problem = f"rows and columns swap: {t.rows} x {t.cols} becomes {t.cols} x {t.rows}"
    raise ShapeError(f"m.transpose of {t} gives {result}, not {into}: {problem}", em.loc)
