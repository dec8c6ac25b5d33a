"""SPV_NV_cooperative_matrix2 ops on matrices: reductions, per-element functions, use changes, transposes.

The callbacks of ``coop_reduce`` and ``coop_per_element`` are operands that
name a function (:class:`~coopdsl.ir.core.FuncRef`), never calls.

The extension's rules are pure functions returning ``None`` or a
:class:`~coopdsl.ir.ops.base.Problem`: the builtins of ``coopdsl.lang.coopmat2``
(through ``coopdsl.lang.coopmat2_checks``) apply them at the user's line, the
verifier to every op.  spirv-val checks the shapes of
OpCooperativeMatrixReduceNV only when every dimension is a plain constant;
these rules also compare dimensions made of specialization constants,
symbolically (``2 * H`` is twice ``H``; ``H // 2`` is half of it).  A
transpose keeps the component type, as GLSL requires (SPIR-V leaves it open;
it is what drivers are tested with).  Every op of the extension needs SPIR-V
1.6 (:data:`NV2`, which spirv-val does not check): each declares it, and the
IR builder checks it at the user's line.
"""

from __future__ import annotations

import enum

from .. import types as T
from ..core import FuncRef, Op
from ..targets import Availability
from ..vocab import MatrixUse, matrix_use
from .base import Problem, check, define, fail, matrix, result_is
from .coopmat import conversion_problem, describe_mismatch


class ReduceMode(enum.Flag):
    """Which elements a reduction combines (SPIR-V's Cooperative Matrix Reduce mask)."""

    Row = 1
    Column = 2
    Quad2x2 = 4  # "2x2": each aligned 2x2 neighbourhood

    def __str__(self) -> str:
        return "|".join(m.name or "" for m in ReduceMode if m in self)  # single-bit members all have names


NV2 = Availability((1, 6), "SPV_NV_cooperative_matrix2")  # what each op needs of the target (needed_by: its name)
VALID_MODES = (ReduceMode.Row, ReduceMode.Column, ReduceMode.Row | ReduceMode.Column, ReduceMode.Quad2x2)


# -- the rules ---------------------------------------------------------------------------------------
def accumulator_problem(t: T.CoopMatType, what: str) -> Problem | None:
    """``what`` takes an accumulator (with a use known at compile time)."""
    if t.use != MatrixUse.Acc:
        known = matrix_use(t.use)
        use = known.described if known is not None else \
            str(int(t.use)) if isinstance(t.use, int) else f"the specialization-constant {t.use}"
        return Problem("shape", f"{what}: it takes an accumulator matrix (Acc[...]), but {t} has use {use}")
    return None


def is_half(small: T.Dim, big: T.Dim) -> bool:
    """Whether ``small`` is exactly half of ``big`` (symbolically for specialization constants)."""
    if isinstance(small, int) and isinstance(big, int):
        return 2 * small == big
    return small == T.symbolic("div", (big, 2)) or big == T.symbolic("mul", (small, 2))


def _half_text(t: T.CoopMatType) -> str:
    def half(d: T.Dim) -> T.Dim:
        return d // 2 if isinstance(d, int) else T.symbolic("div", (d, 2))
    return str(T.CoopMatType(t.elem, t.scope, half(t.rows), half(t.cols), MatrixUse.Acc))


def reduce_problem(t: T.CoopMatType, into: object, mode: ReduceMode) -> Problem | None:
    """``m.reduce(mode, ..., into=into)`` of a matrix of type ``t``: a floating-point accumulator reduced into
    an accumulator type of the same component type and scope, whose shape the mode allows."""
    if mode not in VALID_MODES:
        return Problem("argument", f"the reduce mode must be Row, Column, Row|Column or 2x2, got {mode}")
    p = accumulator_problem(t, "m.reduce")
    if p is not None:
        return p
    if not t.elem.is_float:
        return Problem("type", f"m.reduce needs a floating-point matrix (as GLSL_NV_cooperative_matrix2 requires), "
                               f"got {t}")
    if not isinstance(into, T.CoopMatType):
        return Problem("type", f"into= must be an accumulator matrix type such as Acc[{t.elem}, {t.rows}, "
                               f"{t.cols}], got {into!r}")
    p = accumulator_problem(into, "into= of m.reduce")
    if p is not None:
        return p
    if into.elem != t.elem:
        return Problem("shape", f"m.reduce keeps the component type: into= {into} must hold {t.elem} like {t}")
    if into.scope != t.scope:
        return Problem("shape", f"m.reduce keeps the scope: into= {into} must have the scope of {t}")
    if mode == ReduceMode.Quad2x2:
        for d, name in ((t.rows, "rows"), (t.cols, "columns")):   # (first: no into= fits an odd dimension)
            v = T.given_value(d)
            if v is not None and v % 2:
                return Problem("shape", f"m.reduce(cd.Reduce2x2) halves both dimensions, so they must be even: "
                                        f"{t} has {name} {T.dim_shown(d)}")
        if not (is_half(into.rows, t.rows) and is_half(into.cols, t.cols)):
            return Problem("shape", f"m.reduce(cd.Reduce2x2) halves both dimensions: {t} reduces into "
                                    f"{_half_text(t)}, not {into}")
    elif mode == ReduceMode.Row and into.rows != t.rows:
        return Problem("shape", f"m.reduce(cd.Row) keeps the rows: the result needs {t.rows} rows like {t}, but "
                                f"into= {into} has {into.rows}")
    elif mode == ReduceMode.Column and into.cols != t.cols:
        return Problem("shape", f"m.reduce(cd.Column) keeps the columns: the result needs {t.cols} columns like "
                                f"{t}, but into= {into} has {into.cols}")
    return None


def transpose_result(t: T.CoopMatType) -> T.CoopMatType:
    """The type of the transpose of accumulator ``t``: the B matrix with rows and columns swapped."""
    return T.CoopMatType(t.elem, t.scope, t.cols, t.rows, MatrixUse.B)


def transpose_problem(t: T.CoopMatType, into: object) -> Problem | None:
    """``m.transpose(into=into)`` of a matrix of type ``t`` (``into`` None: the result type unspelled)."""
    p = accumulator_problem(t, "m.transpose")
    if p is not None:
        return p
    result = transpose_result(t)
    if into is None or into == result:
        return None
    if not isinstance(into, T.CoopMatType):
        return Problem("type", f"into= must be the matrix type {result}, got {into!r}")
    if into.use != MatrixUse.B:
        problem = "the result is a B matrix (MatB[...])"
    elif into.elem != t.elem:
        problem = f"the component type stays {t.elem} (GLSL requires it); convert before or after transposing"
    elif into.scope != t.scope:
        problem = "the scope stays the same"
    else:
        problem = f"rows and columns swap: {t.rows} x {t.cols} becomes {t.cols} x {t.rows}"
    return Problem("shape", f"m.transpose of {t} gives {result}, not {into}: {problem}")


def per_element_extra_problem(t: T.CoopMatType, i: int, extra: T.Type) -> Problem | None:
    """Extra operand ``i`` of ``m.map`` (of a matrix of type ``t``): a matrix of ``t`` itself, or a scalar or
    vector."""
    if isinstance(extra, T.CoopMatType):
        if extra != t:
            return Problem("type", f"extra matrix operand {i} of map must have the matrix's type {t}: "
                                   f"{describe_mismatch(t, extra)}")
        return None
    if not isinstance(extra, (T.ScalarType, T.VectorType)):
        return Problem("type", f"extra operand {i} of map must be a runtime scalar, vector or matrix of type {t}, "
                               f"got a runtime {extra} (bind buffers and compile-time values with "
                               f"cd.partial(fn, name=...))")
    return None


def convert_use_problem(src: T.CoopMatType, dst: T.Type) -> Problem | None:
    """An accumulator becoming an A or B matrix of its shape and scope (the component type may change)."""
    if not isinstance(dst, T.CoopMatType):
        return Problem("type", f"a use change makes a cooperative matrix, not {dst}")
    p = conversion_problem(src, dst)
    if p is None and dst.use == src.use:
        return Problem("shape", f"{src} -> {dst} changes no use (a conversion of the components alone is a convert)")
    return p


# -- the ops -----------------------------------------------------------------------------------------
def _function(op: Op, index: int) -> T.FunctionType:
    v = op.operands[index]
    if not isinstance(v, FuncRef):
        fail(op, f"operand {index} must name a function, got {v!r}")
    return v.type


def _reduce(op: Op) -> None:
    m = matrix(op, 0)
    if not isinstance(op.type, T.CoopMatType):
        fail(op, f"result must be a cooperative matrix, got {op.type}")
    check(op, reduce_problem(m, op.type, op.attrs["mode"]))
    f = _function(op, 1)
    if f != T.FunctionType(m.elem, (m.elem, m.elem)):
        fail(op, f"combine function must be fn({m.elem}, {m.elem}) -> {m.elem}, got {f}")


def _per_element(op: Op) -> None:
    m = matrix(op, 0)
    result_is(op, m)
    f = _function(op, 1)
    extras = [v.type for v in op.operands[2:]]
    for i, t in enumerate(extras, 1):
        check(op, per_element_extra_problem(m, i, t))
    want = [m.elem if t == m else t for t in extras]
    if f.ret != m.elem or len(f.params) != 3 + len(extras) or f.params[2] != m.elem or list(f.params[3:]) != want:
        fail(op, f"function {f} does not fit {m} with extra operands {', '.join(map(str, extras)) or 'none'}")
    if any(not (isinstance(p, T.ScalarType) and p.is_int and p.width == 32) for p in f.params[:2]):
        fail(op, f"row and column parameters must be 32-bit integers, got {f}")


def _convert_use(op: Op) -> None:
    check(op, convert_use_problem(matrix(op, 0), op.type))


def _transpose(op: Op) -> None:
    m = matrix(op, 0)
    check(op, transpose_problem(m, op.type))


define("coop_reduce", 2, attrs={"mode": (ReduceMode, True)}, verify=_reduce, tangled="matrix",
       availability=NV2.needed_by("m.reduce"),
       doc="(matrix, combine function): combine the elements of each row, column, both or 2x2 block; "
           "the result (any accumulator shape the mode allows) holds the combined value everywhere")
define("coop_per_element", (2, None), verify=_per_element, pure=False, tangled="matrix",
       availability=NV2.needed_by("m.map"),
       doc="(matrix, function, *extras): function(row, col, element, *extra elements) for every element; "
           "not pure: the function may store to memory")
define("coop_convert_use", 1, verify=_convert_use, tangled="matrix",
       availability=NV2.needed_by(lambda target, operands: f"converting {operands[0].type} to {target}"),
       doc="accumulator -> A or B matrix of the same shape, converting the component type if it differs")
define("coop_transpose", 1, verify=_transpose, tangled="matrix", availability=NV2.needed_by("m.transpose"),
       doc="accumulator M x N -> B matrix N x M (the same component type)")
