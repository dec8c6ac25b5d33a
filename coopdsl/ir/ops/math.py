"""Math functions on scalars and vectors (the GLSL.std.450 set, named by meaning)."""

from __future__ import annotations

from .. import types as T
from ..core import Op
from .base import define, fail, result_is

# name -> number of arguments
FUNCTIONS = {
    "exp": 1, "exp2": 1, "log": 1, "log2": 1, "sqrt": 1, "inversesqrt": 1, "floor": 1, "ceil": 1,
    "trunc": 1, "round": 1, "round_even": 1, "fract": 1, "sin": 1, "cos": 1, "tan": 1, "asin": 1,
    "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "tanh": 1, "atan2": 2, "pow": 2, "abs": 1, "sign": 1,
    "min": 2, "max": 2, "clamp": 3, "mix": 3, "step": 2, "smoothstep": 3, "fma": 3, "length": 1,
    "distance": 2, "normalize": 1, "cross": 2, "find_lsb": 1, "find_msb": 1,
}
# bit functions (SPIR-V core): name -> number of operands
BITS = {"count": 1, "reverse": 1, "extract": 3, "insert": 4}
SCALAR_RESULT = ("length", "distance")


def _math(op: Op) -> None:
    fn = op.attrs["fn"]
    if FUNCTIONS.get(fn) != len(op.operands):
        fail(op, f"{fn} takes {FUNCTIONS.get(fn)} operands, has {len(op.operands)}")
    t = op.operands[0].type
    if not isinstance(t, (T.ScalarType, T.VectorType)) or any(v.type != t for v in op.operands):
        fail(op, f"{fn} takes scalars or vectors of one type, got {', '.join(str(v.type) for v in op.operands)}")
    result_is(op, T.elem_of(t) if fn in SCALAR_RESULT else t)


define("math", (1, 3), attrs={"fn": (str, True)}, verify=_math,
       doc="the math function ``fn`` (exp, min, clamp, ...) applied component-wise")


def _bits(op: Op) -> None:
    fn = op.attrs["fn"]
    if BITS.get(fn) != len(op.operands):
        fail(op, f"bit {fn} takes {BITS.get(fn)} operands, has {len(op.operands)}")
    t = op.operands[0].type
    e = T.elem_of(t)
    if not isinstance(t, (T.ScalarType, T.VectorType)) or not isinstance(e, T.ScalarType) or not e.is_int \
            or e.width != 32:
        fail(op, f"bit {fn} takes 32-bit integer scalars or vectors, got {t}")
    values = 2 if fn == "insert" else 1           # (base, insert) share the type; offset and count are scalars
    if any(v.type != t for v in op.operands[1:values]):
        fail(op, f"bit {fn}: base and insert differ: {op.operands[0].type} and {op.operands[1].type}")
    for v in op.operands[values:]:
        if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
            fail(op, f"bit {fn}: offset and count must be integer scalars, got {v.type}")
    result_is(op, t)


def _pack_half(op: Op) -> None:
    if op.operands[0].type != T.VectorType(T.f32, 2):
        fail(op, f"packs a vec2[f32], got {op.operands[0].type}")
    result_is(op, T.u32)


def _unpack_half(op: Op) -> None:
    if op.operands[0].type != T.u32:
        fail(op, f"unpacks a u32, got {op.operands[0].type}")
    result_is(op, T.VectorType(T.f32, 2))


# normalized packings (GLSL.std.450 Pack/Unpack{Unorm,Snorm}{4x8,2x16}): name -> (components, bits, signed)
NORM_FORMATS = {"unorm4x8": (4, 8, False), "snorm4x8": (4, 8, True), "unorm2x16": (2, 16, False),
                "snorm2x16": (2, 16, True)}


def norm_top(fmt: str) -> int:
    """The integer 1.0 packs to in ``fmt``: 255, 127, 65535 or 32767."""
    _, bits, signed = NORM_FORMATS[fmt]
    return (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1


def norm_glsl(fmt: str) -> str:
    """``fmt``'s part of the GLSL.std.450 names: "unorm4x8" -> "Unorm4x8" (PackUnorm4x8, UnpackUnorm4x8)."""
    return fmt[0].upper() + fmt[1:]


def _norm_format(op: Op) -> int:
    fmt = op.attrs["fmt"]
    if fmt not in NORM_FORMATS:
        fail(op, f"unknown normalized packing {fmt!r}")
    return NORM_FORMATS[fmt][0]


def _pack_norm(op: Op) -> None:
    n = _norm_format(op)
    if op.operands[0].type != T.VectorType(T.f32, n):
        fail(op, f"{op.attrs['fmt']} packs a vec{n}[f32], got {op.operands[0].type}")
    result_is(op, T.u32)


def _unpack_norm(op: Op) -> None:
    n = _norm_format(op)
    if op.operands[0].type != T.u32:
        fail(op, f"{op.attrs['fmt']} unpacks a u32, got {op.operands[0].type}")
    result_is(op, T.VectorType(T.f32, n))


define("pack_norm", 1, attrs={"fmt": (str, True)}, verify=_pack_norm,
       doc="the components clamped to [0, 1] (unorm) or [-1, 1] (snorm), scaled to ``fmt``'s integers, rounded and "
           "packed in a u32, the first in the low bits")
define("unpack_norm", 1, attrs={"fmt": (str, True)}, verify=_unpack_norm,
       doc="the integers of a u32 in ``fmt`` (the low bits first) as normalized f32 components")
define("pack_half", 1, verify=_pack_half, doc="two f32 rounded to f16, packed in a u32 (the first in the low bits)")
define("unpack_half", 1, verify=_unpack_half, doc="the two f16 of a u32 (the low bits first) as a vec2[f32]")
define("bits", (1, 4), attrs={"fn": (str, True)}, verify=_bits,
       doc="the bit function ``fn`` (count, reverse, extract, insert: OpBitCount, OpBitReverse, "
           "OpBitFieldS/UExtract, OpBitFieldInsert) component-wise")
