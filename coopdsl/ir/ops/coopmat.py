"""Cooperative-matrix ops (SPV_KHR_cooperative_matrix semantics) and the extension's rules.

The rules are pure functions on types and constants, returning ``None`` or a
:class:`~coopdsl.ir.ops.base.Problem` in the words kernels are written in: the
builtins of ``coopdsl.lang.coopmat`` (through ``coopdsl.lang.coopcheck``)
apply them at the user's line, and the verifier applies the same ones to every
op.  spirv-val checks MulAdd shapes only when every dimension is a plain
constant; the SPIR-V spec requires them for specialization constants too, so
these rules compare dimensions *symbolically* (``SymDim`` equality), as
glslang's ``coopMatMulAdd`` checks do since 16.1.0.
"""

from __future__ import annotations

from .. import types as T
from ..attrs import MATRIX_OPERANDS, Layout, MemoryAccess
from ..core import Const, Op, SpecConst, SpecOp
from ..vocab import MatrixUse, StorageClass, matrix_use
from .base import Problem, check, define, fail, integer, matrix, pointer, result_is

# where Vulkan lets a cooperative matrix be loaded from or stored to (VUID-StandaloneSpirv-Pointer-08973:
# StorageBuffer, Workgroup or PhysicalStorageBuffer; spirv-val checks it too): not Function or Private memory
MEMORY_STORAGE = (StorageClass.StorageBuffer, StorageClass.Workgroup, StorageClass.PhysicalStorageBuffer)


def use_name(use: T.Dim) -> str:
    """A use as kernels spell it: "A (MatA)", ..., or "use <spec expression>"."""
    if isinstance(use, int):
        known = matrix_use(use)
        return known.described if known is not None else str(int(use))
    return f"use {use}"


def describe_mismatch(ta: T.Type | None, tb: T.Type | None) -> str:
    """How two matrix types differ (component types, rows, columns, uses, scopes)."""
    if not isinstance(ta, T.CoopMatType) or not isinstance(tb, T.CoopMatType):
        return "one operand is not a cooperative matrix"
    diffs = []
    for field, label in (("elem", "component types"), ("rows", "rows"), ("cols", "columns"),
                         ("use", "uses"), ("scope", "scopes")):
        va, vb = getattr(ta, field), getattr(tb, field)
        if va != vb:
            if field == "use":
                va, vb = use_name(va), use_name(vb)
            diffs.append(f"{label} {va} vs {vb}")
    return f"{ta} and {tb} differ in " + ", ".join(diffs)


# -- OpCooperativeMatrixMulAddKHR ----------------------------------------------------------------
def muladd_problem(a: T.CoopMatType, b: T.CoopMatType, c: T.CoopMatType) -> Problem | None:
    """A x B + C: uses A, B, accumulator (known at compile time); one scope; M, N and K agree
    (symbolically); A and B both float or both integer, with an accumulator of the same kind (IEEE
    floats; integers at least as wide as A and B)."""
    for t, want, pos in ((a, MatrixUse.A, "first"), (b, MatrixUse.B, "second"), (c, MatrixUse.Acc, "third")):
        if not isinstance(t.use, int):
            return Problem("shape", f"the {pos} operand of muladd has a specialization-constant use ({t.use}); "
                                    f"muladd needs matrices whose use is known when the kernel is compiled: "
                                    f"{use_name(want)}")
        if t.use != want:
            return Problem("shape", f"the {pos} operand of muladd must have use {use_name(want)}, but {t} has use "
                                    f"{use_name(t.use)}")
    if not (a.scope == b.scope == c.scope):  # symbolically: a spec-constant scope equals only itself
        return Problem("shape", f"muladd operands have different scopes: {a}, {b}, {c}")
    if a.rows != c.rows:
        return Problem("shape", f"muladd M mismatch: A has {a.rows} rows but C has {c.rows}")
    if b.cols != c.cols:
        return Problem("shape", f"muladd N mismatch: B has {b.cols} columns but C has {c.cols}")
    if a.cols != b.rows:
        return Problem("shape", f"muladd K mismatch: A has {a.cols} columns but B has {b.rows} rows")
    ka, kb, kc = a.elem.kind, b.elem.kind, c.elem.kind
    if ka != kb:
        return Problem("type", f"muladd A and B must both be float or both be integer, got {a.elem} and {b.elem}")
    if ka != kc:
        return Problem("type", f"muladd of {a.elem} x {b.elem} products needs "
                               f"{'a float' if ka.is_float else 'an integer'} accumulator, got {c.elem}")
    if kc.is_float and not c.elem.is_ieee:
        return Problem("type", f"the accumulator component type must be f16, f32 or f64, not {c.elem}")
    if kc.is_int and c.elem.width < max(a.elem.width, b.elem.width):
        return Problem("type", f"an integer accumulator must be at least as wide as A and B, got {c.elem} for "
                               f"{a.elem} x {b.elem}")
    return None


def muladd_signed(a: T.CoopMatType, b: T.CoopMatType, c: T.CoopMatType) -> frozenset[str]:
    """The operands (of MATRIX_OPERANDS) whose components are signed integers: the inferred signedness."""
    return frozenset(name for t, name in ((a, "a"), (b, "b"), (c, "c"), (c, "result"))
                     if t.elem.is_int and t.elem.signed)


def muladd_operands_problem(c: T.CoopMatType, signed: frozenset[str], saturate: bool) -> Problem | None:
    """Signedness operands and SaturatingAccumulation apply to integer matrices only."""
    if signed and not c.elem.is_int:
        return Problem("type", "signedness operands apply to integer matrices only (SPV_KHR_cooperative_matrix)")
    if saturate and not c.elem.is_int:
        return Problem("type", "saturate=True needs an integer accumulator")
    return None


# -- conversions -----------------------------------------------------------------------------------
def conversion_problem(src: T.CoopMatType, dst: T.CoopMatType) -> Problem | None:
    """``dst(src)``: the same rows, columns and scope; the same use, or an accumulator becoming A or B
    (SPV_NV_cooperative_matrix2)."""
    if src.rows != dst.rows or src.cols != dst.cols or src.scope != dst.scope:
        return Problem("shape", f"cannot convert {src} to {dst}: rows, columns and scope must match")
    if src.use != dst.use and not (src.use == MatrixUse.Acc and dst.use in (MatrixUse.A, MatrixUse.B)):
        how = ("to get an accumulator, multiply by an identity matrix with cd.muladd" if dst.use == MatrixUse.Acc
               else "multiply by an identity matrix with cd.muladd into an accumulator, which converts to A or B")
        return Problem("shape", f"cannot convert {src} to {dst}: a conversion keeps the use, or changes it from an "
                                f"accumulator to A or B (SPV_NV_cooperative_matrix2); {use_name(src.use)} matrices "
                                f"cannot become {use_name(dst.use)} ones ({how})")
    return None


# -- loads and stores ------------------------------------------------------------------------------
def memory_problem(elem: T.Type, what: str) -> Problem | None:
    """The elements of the memory a matrix is loaded from or stored to (``what``: "load" or "store")."""
    if isinstance(elem, T.VectorType) and elem.count == 3:
        return Problem("type", f"cannot {what} a cooperative matrix through {elem} elements: their array stride "
                               f"(16 bytes) differs from their size, so offsets and strides could not count "
                               f"elements (use a vec4 or scalar buffer, as GLSL does)")
    if not isinstance(elem, (T.ScalarType, T.VectorType)) or T.scalar_of(elem).is_bool:
        return Problem("type", f"cannot {what} a cooperative matrix through {elem} elements: the memory must hold "
                               f"numeric scalars or vectors (SPV_KHR_cooperative_matrix)")
    return None


def stride_problem(stride: object, is_store: bool) -> Problem | None:
    """A constant stride: at least 0 for a load, at least 1 for a store (runtime strides are not checked).  A
    specialization constant (expression), as a Dim, is checked at the values a compile or launch gives
    (:func:`coopdsl.ir.types.given_value`), and refused where its arithmetic wraps there."""
    need = "greater than 0" if is_store else "0 or more"
    if isinstance(stride, T.SymDim):
        v = T.given_value(stride)
        wrapped = T.wrap_shown(stride) if v is not None else None
        if wrapped is not None:
            return Problem("argument", f"stride must be {need} without wrapping, {wrapped}")
        if v is not None and (v <= 0 if is_store else v < 0):
            return Problem("argument", f"stride must be {need}, got {T.given_shown(stride)} "
                                       f"(SPV_KHR_cooperative_matrix)")
        return None
    if isinstance(stride, int) and not isinstance(stride, bool) and (stride <= 0 if is_store else stride < 0):
        return Problem("argument", f"stride must be {need}, got {stride} (SPV_KHR_cooperative_matrix)")
    return None


def _memory_pointer(op: Op, index: int) -> None:
    p = pointer(op, index)
    if p.storage not in MEMORY_STORAGE:
        fail(op, f"cannot address a matrix in {p.storage} memory")
    check(op, memory_problem(p.pointee, "store" if op.kind == "coop_store" else "load"))


def _stride(op: Op) -> None:
    stride = op.operands[-1]
    integer(op, len(op.operands) - 1)
    if isinstance(stride, Const):
        check(op, stride_problem(stride.value, op.kind == "coop_store"))


def _load(op: Op) -> None:
    _memory_pointer(op, 0)
    _stride(op)
    if not isinstance(op.type, T.CoopMatType):
        fail(op, f"loads a cooperative matrix, result is {op.type}")


def _store(op: Op) -> None:
    _memory_pointer(op, 0)
    matrix(op, 1)
    _stride(op)


def _muladd(op: Op) -> None:
    a, b, c = (matrix(op, i) for i in range(3))
    check(op, muladd_problem(a, b, c))
    result_is(op, c)
    signed = op.attrs["signed"]
    if not isinstance(signed, frozenset) or not signed <= set(MATRIX_OPERANDS):
        fail(op, f"signed must be a frozenset of {MATRIX_OPERANDS}, got {signed!r}")
    check(op, muladd_operands_problem(c, signed, op.attrs["saturate"]))


def _length(op: Op) -> None:  # (the verifier checks that mat_type is a CoopMatType)
    result_is(op, T.u32)


# the layout is a Layout, or a 32-bit integer specialization constant (SPIR-V allows any constant instruction)
_MEMORY = {"layout": ((Layout, SpecConst, SpecOp), True), "memory": (MemoryAccess, False)}
define("coop_load", 2, attrs=_MEMORY, verify=_load, pure=False, tangled="matrix",
       doc="(pointer to the first element, stride): load a cooperative matrix")
define("coop_store", 3, attrs=_MEMORY, verify=_store, pure=False, tangled="matrix", writes=True,
       doc="(pointer to the first element, matrix, stride): store a cooperative matrix")
define("coop_muladd", 3, attrs={"signed": (frozenset, True), "saturate": (bool, True)}, verify=_muladd,
       tangled="matrix",
       doc="A x B + C; ``signed`` names the operands whose integer components are signed")
define("coop_length", 0, attrs={"mat_type": (T.CoopMatType, True)}, verify=_length,
       doc="how many elements of a matrix of ``mat_type`` each invocation holds")
