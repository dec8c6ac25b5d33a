"""Whether a Python number fits an IR scalar type: the one place that decides.

Every path that turns a Python value into a typed constant (kernel literals,
splats, specialization-constant defaults and overrides, ``--spec``/``--const``
on the command line) asks :func:`fit`; none wraps or rounds a value silently
into a type it does not fit.
"""

from __future__ import annotations

import math

from . import types as T

# largest finite value and the rounding threshold above it (max + half an ulp), per float format
_FLOAT_LIMITS = {
    (16, None): (65504.0, 65520.0),
    (32, None): (3.4028234663852886e38, 3.4028235677973366e38),
    (64, None): (1.7976931348623157e308, math.inf),
    (16, "BFloat16KHR"): (3.3895313892515355e38, 3.39617752923046e38),
    (8, "Float8E4M3EXT"): (448.0, 464.0),
    (8, "Float8E5M2EXT"): (57344.0, 61440.0),
}


class LiteralError(ValueError):
    """A Python value that does not fit the type it is given to (the message says why)."""


def int_range(t: T.ScalarType) -> tuple[int, int]:
    """The smallest and largest value of integer type ``t``."""
    if t.signed:
        return -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    return 0, (1 << t.width) - 1


def fit(value: object, t: T.ScalarType) -> bool | int | float:
    """``value`` as a constant of scalar type ``t``; :class:`LiteralError` when it does not fit.

    bools fit only ``bool``; ints fit integer types within their range and
    float types; floats fit float types whose finite range holds them after
    rounding (infinities and NaN are kept as they are), never integer types.
    """
    if isinstance(value, bool):
        if t.kind != "bool":
            raise LiteralError(f"cannot use {value!r} as {t}")
        return value
    if not isinstance(value, (int, float)):
        raise LiteralError(f"{value!r} is not a number")
    if t.kind == "bool":
        raise LiteralError(f"cannot use the number {value!r} as a bool")
    if t.kind == "int":
        if isinstance(value, float):
            raise LiteralError(f"cannot use the float literal {value!r} as {t}; convert explicitly")
        lo, hi = int_range(t)
        if not lo <= value <= hi:
            raise LiteralError(f"the literal {value} does not fit in {t} ({lo}..{hi})")
        return int(value)
    try:
        f = float(value)
    except OverflowError:
        raise LiteralError(f"the literal {value} does not fit in {t}") from None
    largest, limit = _FLOAT_LIMITS[(t.width, t.encoding)]
    if math.isinf(f) and t.encoding == "Float8E4M3EXT":
        raise LiteralError(f"{t} has no infinity (largest finite value {largest:g})")
    if math.isfinite(f) and abs(f) >= limit:
        raise LiteralError(f"the literal {value!r} does not fit in {t} (largest finite value {largest:g})")
    return f
