"""Arithmetic, comparison, logic, conversion and composite ops."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ...ir import types as T
from ...ir.core import Op
from ...ir.vocab import ScalarKind
from ..grammar import opcode
from .registry import family, lowering

if TYPE_CHECKING:
    from ..module import ModuleBuilder
    from ..writer import Writer

# (float, signed int, unsigned int) opcode per IR op
ARITH = {
    "add": ("OpFAdd", "OpIAdd", "OpIAdd"), "sub": ("OpFSub", "OpISub", "OpISub"),
    "mul": ("OpFMul", "OpIMul", "OpIMul"), "div": ("OpFDiv", "OpSDiv", "OpUDiv"),
    "rem": ("OpFRem", "OpSRem", "OpUMod"), "neg": ("OpFNegate", "OpSNegate", "OpSNegate"),
    "lt": ("OpFOrdLessThan", "OpSLessThan", "OpULessThan"),
    "le": ("OpFOrdLessThanEqual", "OpSLessThanEqual", "OpULessThanEqual"),
    "gt": ("OpFOrdGreaterThan", "OpSGreaterThan", "OpUGreaterThan"),
    "ge": ("OpFOrdGreaterThanEqual", "OpSGreaterThanEqual", "OpUGreaterThanEqual"),
    "eq": ("OpFOrdEqual", "OpIEqual", "OpIEqual"), "ne": ("OpFUnordNotEqual", "OpINotEqual", "OpINotEqual"),
    "and": (None, "OpBitwiseAnd", "OpBitwiseAnd"), "or": (None, "OpBitwiseOr", "OpBitwiseOr"),
    "xor": (None, "OpBitwiseXor", "OpBitwiseXor"), "not": (None, "OpNot", "OpNot"),
    "shl": (None, "OpShiftLeftLogical", "OpShiftLeftLogical"),
    "shr": (None, "OpShiftRightArithmetic", "OpShiftRightLogical"),
}
BOOL_OPS = {"eq": "OpLogicalEqual", "ne": "OpLogicalNotEqual", "not": "OpLogicalNot",
            "land": "OpLogicalAnd", "lor": "OpLogicalOr"}
SIMPLE = {
    "select": "OpSelect", "mat_times_scalar": "OpMatrixTimesScalar", "bitcast": "OpBitcast",
    "construct": "OpCompositeConstruct", "splat": "OpCompositeConstruct",
    "extract_dyn": "OpVectorExtractDynamic", "insert_dyn": "OpVectorInsertDynamic",
    "dot": "OpDot", "fmod": "OpFMod", "isnan": "OpIsNan", "isinf": "OpIsInf", "any": "OpAny", "all": "OpAll",
}


def arith_opcode(kind: str, operand: T.Type) -> str:
    """The instruction computing IR op ``kind`` on values of type ``operand`` (also for OpSpecConstantOp)."""
    if kind in BOOL_OPS and T.elem_of(operand) == T.boolean:
        return BOOL_OPS[kind]
    if kind == "select":
        return "OpSelect"
    name = ARITH[kind][family(operand)]
    if name is None:
        raise ValueError(f"{kind} on {operand}")
    return name


def convert_steps(src: T.Type, dst: T.Type) -> list[tuple[str, T.Type]]:
    """The conversion instruction(s) from ``src`` to ``dst`` (one or two steps)."""
    s, d = T.scalar_of(src), T.scalar_of(dst)
    if s.is_float and d.is_float:
        return [("OpFConvert", dst)]
    if s.is_float:
        return [("OpConvertFToS" if d.signed else "OpConvertFToU", dst)]
    if d.is_float:
        return [("OpConvertSToF" if s.signed else "OpConvertUToF", dst)]
    if s.width == d.width:
        return [("OpBitcast", dst)]
    if s.signed:
        return [("OpSConvert", dst)]
    # OpUConvert's result must be unsigned (SPIR-V 3.42.11); reinterpret afterwards.
    mid = T.with_elem(dst, T.ScalarType(ScalarKind.INT, d.width, False))
    return [("OpUConvert", mid)] + ([("OpBitcast", dst)] if d.signed else [])


_SIGNED_REM = "signed rem"  # (not an opcode: the sequence _signed_rem() writes)


@lowering(*dict.fromkeys([*ARITH, *BOOL_OPS]))
def _arith(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    t = op.operands[0].type
    key = (op.kind, id(t))  # (the writer's memo lives no longer than the module's types)
    name = w.memo.get(key)
    if name is None:
        signed_rem = op.kind == "rem" and T.elem_of(t) != T.boolean and family(t) == 1
        name = w.memo[key] = _SIGNED_REM if signed_rem else arith_opcode(op.kind, t)
    if name is _SIGNED_REM:
        assert ty is not None and rid is not None  # (rem has a result)
        _signed_rem(w, t, ty, rid, *args)
        return
    w.emit(name, ty, rid, *args)


def _signed_rem(w: Writer, t: T.Type, ty: int, rid: int, x: int, y: int) -> None:
    """``x % y`` on signed integers, truncating (the sign of x), for any signs.

    The Vulkan environment leaves OpSRem and OpSMod undefined when an operand is negative (NVIDIA's
    driver returns x itself for a negative y), so the remainder is taken of the magnitudes with
    OpUMod and given x's sign, as MLIR's SPIR-V lowering does.
    """
    b = w.b
    e = T.elem_of(t)
    assert isinstance(e, T.ScalarType)
    ut = T.with_elem(t, T.ScalarType(ScalarKind.INT, e.width, False))
    bt = T.with_elem(t, T.boolean)
    uty, bty, zero = b.type_id(ut), b.type_id(bt), b.const_id(t, 0)

    def magnitude(v: int) -> tuple[int, int]:
        neg, minus, mag, umag = b.new_id(), b.new_id(), b.new_id(), b.new_id()
        w.emit("OpSLessThan", bty, neg, v, zero)
        w.emit("OpSNegate", ty, minus, v)
        w.emit("OpSelect", ty, mag, neg, minus, v)
        w.emit("OpBitcast", uty, umag, mag)  # |INT_MIN| is 2**(width-1) read unsigned
        return neg, umag

    x_neg, ux = magnitude(x)
    _, uy = magnitude(y)
    um, m, minus_m = b.new_id(), b.new_id(), b.new_id()
    w.emit("OpUMod", uty, um, ux, uy)
    w.emit("OpBitcast", ty, m, um)
    w.emit("OpSNegate", ty, minus_m, m)
    w.emit("OpSelect", ty, rid, x_neg, minus_m, m)


def spec_divide(b: ModuleBuilder, memo: dict[Any, Any], kind: str, t: T.Type, ty: int, rid: int, x: int, y: int,
                divisor: int | None = None) -> None:
    """Integer ``x // y`` or ``x % y`` (``kind`` "div" or "rem") of specialization constants, as OpSpecConstantOps
    in the module's globals, defined for every value as the interpreter computes them: truncating, the
    remainder with the dividend's sign, a zero divisor giving 0 and ``INT_MIN // -1`` INT_MIN (``% -1``: 0).

    A driver folds these when it makes the pipeline, and lavapipe's folding traps on OpSDiv of INT_MIN by -1
    and on a zero divisor (SIGFPE: the process dies).  The Vulkan environment also leaves OpSRem/OpSMod
    undefined for negative operands, and OpSpecConstantOp has no OpBitcast for the magnitudes' OpUMod of
    :func:`_signed_rem`: so the divisor is made 1 where it is 0 or -1, the quotient of -1 is the negation
    (wrapping), the signed remainder is ``x - y * q``, and a zero divisor selects 0.  ``divisor``: y's value
    where it is a constant; one that is neither 0 nor -1 needs no guard (``K // 2`` stays one OpUDiv).  ``memo``
    (the writer's) keeps one of each guard for the module."""
    e = T.elem_of(t)
    assert isinstance(e, T.ScalarType) and not e.is_float

    def spec(name: str, rty: int, *args: int, out: int | None = None) -> int:
        if out is None:   # (a guard: the same one for every division by this divisor)
            key = ("spec_divide", name, rty, args)
            known = memo.get(key)
            if known is not None:
                return cast(int, known)
            out = memo[key] = b.new_id()
        b.emit("global", "OpSpecConstantOp", rty, out, opcode(name), *args)
        return out

    if divisor is not None and divisor not in (0, -1):
        if not e.signed:
            spec("OpUDiv" if kind == "div" else "OpUMod", ty, x, y, out=rid)
        elif kind == "div":
            spec("OpSDiv", ty, x, y, out=rid)
        else:   # (OpSRem of a negative x is undefined)
            spec("OpISub", ty, x, spec("OpIMul", ty, y, spec("OpSDiv", ty, x, y)), out=rid)
        return
    bty = b.type_id(T.boolean)
    one, zero = b.const_id(t, 1), b.const_id(t, 0)

    by_zero = spec("OpIEqual", bty, y, zero)
    bad = by_zero
    if e.signed:
        by_minus_one = spec("OpIEqual", bty, y, b.const_id(t, -1))
        bad = spec("OpLogicalOr", bty, by_zero, by_minus_one)
    safe = spec("OpSelect", ty, bad, one, y)
    if e.signed:
        q = spec("OpSelect", ty, by_minus_one, spec("OpSNegate", ty, x), spec("OpSDiv", ty, x, safe))
        value = q if kind == "div" else spec("OpISub", ty, x, spec("OpIMul", ty, y, q))
    else:
        value = spec("OpUDiv" if kind == "div" else "OpUMod", ty, x, safe)
    b.emit("global", "OpSpecConstantOp", ty, rid, opcode("OpSelect"), by_zero, zero, value)


@lowering(*SIMPLE)
def _simple(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit(SIMPLE[op.kind], ty, rid, *args)


def emit_steps(w: Writer, steps: list[tuple[str, T.Type]], value: int, rid: int) -> None:
    """Emit conversion ``steps`` from the id ``value``; the last one defines ``rid``."""
    for i, (name, t) in enumerate(steps):
        out = rid if i == len(steps) - 1 else w.b.new_id()
        w.emit(name, w.b.type_id(t), out, value)
        value = out


@lowering("convert")
def _convert(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    assert rid is not None  # (a conversion has a result)
    emit_steps(w, convert_steps(op.operands[0].type, op.type), args[0], rid)


@lowering("extract")
def _extract(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCompositeExtract", ty, rid, args[0], op.attrs["index"])


@lowering("insert")
def _insert(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpCompositeInsert", ty, rid, args[0], args[1], op.attrs["index"])


@lowering("shuffle")
def _shuffle(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit("OpVectorShuffle", ty, rid, args[0], args[1], *op.attrs["components"])
