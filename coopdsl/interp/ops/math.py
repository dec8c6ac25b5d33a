"""GLSL.std.450 math functions, component-wise on scalars and vectors.

Float functions are evaluated in float32 (float64 for f64) and rounded to
the argument type.  ``round`` rounds halves away from zero (GLSL leaves the
direction to the implementation); ``round_even`` to even.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.core import Op
from ..floats import round_float
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine


def _smoothstep(e0: Any, e1: Any, x: Any) -> Any:
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _normalize(x: Any) -> Any:
    return x / np.sqrt((x * x).sum(axis=-1, keepdims=True))


FLOAT: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "inversesqrt": lambda x: 1.0 / np.sqrt(x), "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": lambda x: np.trunc(x + np.copysign(0.5, x)), "round_even": np.rint,
    "fract": lambda x: x - np.floor(x), "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "atan2": np.arctan2, "pow": np.power, "abs": np.abs, "sign": np.sign, "min": np.minimum, "max": np.maximum,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), "mix": lambda x, y, a: x * (1.0 - a) + y * a,
    "step": lambda edge, x: np.where(x < edge, 0.0, 1.0), "smoothstep": _smoothstep,
    "fma": lambda a, b, c: np.asarray(a, np.float64) * b + c,  # rounded once, to the argument type
    "length": lambda x: np.sqrt((x * x).sum(axis=-1)),
    "distance": lambda a, b: np.sqrt(((a - b) ** 2).sum(axis=-1)), "normalize": _normalize,
    "cross": lambda a, b: np.cross(a, b),
}

INTEGER: dict[str, Callable[..., Any]] = {
    "abs": np.abs, "sign": np.sign, "min": np.minimum, "max": np.maximum,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
}


@semantics("math")
def _math(m: Machine, op: Op, args: list[Any]) -> Any:
    fn = op.attrs["fn"]
    e = T.scalar_of(op.operands[0].type)
    if e.is_int:
        return INTEGER[fn](*args)
    wide: type[np.floating[Any]] = np.float64 if e.width == 64 else np.float32
    if fn == "round_even" and e.width == 16:
        wide = np.float16  # exact: rint of an f16 is an f16
    out = FLOAT[fn](*(np.asarray(a, wide) for a in args))
    return round_float(out, e)
