"""Math functions as GLSL.std.450 extended instructions (the F/S/U form chosen by type)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ir import types as T
from ...ir.core import Op
from ...ir.ops.math import norm_glsl
from .._tables import GLSL_STD_450
from .registry import family, lowering

if TYPE_CHECKING:
    from ..writer import Writer

# fn -> (float, signed int, unsigned int) GLSL.std.450 instruction
GLSL = {
    "exp": ("Exp", None, None), "exp2": ("Exp2", None, None), "log": ("Log", None, None),
    "log2": ("Log2", None, None), "sqrt": ("Sqrt", None, None), "inversesqrt": ("InverseSqrt", None, None),
    "floor": ("Floor", None, None), "ceil": ("Ceil", None, None), "trunc": ("Trunc", None, None),
    "round": ("Round", None, None), "round_even": ("RoundEven", None, None), "fract": ("Fract", None, None),
    "sin": ("Sin", None, None), "cos": ("Cos", None, None), "tan": ("Tan", None, None),
    "asin": ("Asin", None, None), "acos": ("Acos", None, None), "atan": ("Atan", None, None),
    "sinh": ("Sinh", None, None), "cosh": ("Cosh", None, None), "tanh": ("Tanh", None, None),
    "atan2": ("Atan2", None, None), "pow": ("Pow", None, None), "abs": ("FAbs", "SAbs", None),
    "sign": ("FSign", "SSign", None), "min": ("FMin", "SMin", "UMin"), "max": ("FMax", "SMax", "UMax"),
    "clamp": ("FClamp", "SClamp", "UClamp"), "mix": ("FMix", None, None), "step": ("Step", None, None),
    "smoothstep": ("SmoothStep", None, None), "fma": ("Fma", None, None), "length": ("Length", None, None),
    "distance": ("Distance", None, None), "normalize": ("Normalize", None, None), "cross": ("Cross", None, None),
    "find_lsb": (None, "FindILsb", "FindILsb"), "find_msb": (None, "FindSMsb", "FindUMsb"),
}
# bit fn -> (signed, unsigned) core instruction
BITS = {"count": ("OpBitCount", "OpBitCount"), "reverse": ("OpBitReverse", "OpBitReverse"),
        "extract": ("OpBitFieldSExtract", "OpBitFieldUExtract"), "insert": ("OpBitFieldInsert", "OpBitFieldInsert")}


def glsl_instruction(fn: str, t: T.Type) -> str:
    """The GLSL.std.450 instruction name computing ``fn`` on values of type ``t``."""
    name = GLSL[fn][family(t)]
    if name is None:
        raise ValueError(f"{fn} has no GLSL.std.450 form for {t}")
    return name


@lowering("pack_half", "unpack_half", "pack_norm", "unpack_norm")
def _packings(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    fmt = "Half2x16" if op.kind.endswith("half") else norm_glsl(op.attrs["fmt"])
    name = ("Pack" if op.kind.startswith("pack") else "Unpack") + fmt
    w.emit("OpExtInst", ty, rid, w.b.ext_inst_import("GLSL.std.450"), GLSL_STD_450[name][0], *args)


@lowering("bits")
def _bits(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    w.emit(BITS[op.attrs["fn"]][family(op.operands[0].type) - 1], ty, rid, *args)


@lowering("math")
def _math(w: Writer, op: Op, ty: int | None, rid: int | None, args: list[int]) -> None:
    name = glsl_instruction(op.attrs["fn"], op.operands[0].type)
    w.emit("OpExtInst", ty, rid, w.b.ext_inst_import("GLSL.std.450"), GLSL_STD_450[name][0], *args)
