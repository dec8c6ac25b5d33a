"""Floating-point formats: rounding to f16/bf16/fp8, and their bit encodings.

Values of every float type are held in numpy arrays: ``float16``, ``float32``
and ``float64`` for the IEEE types, and ``float32`` arrays holding exactly
representable values for bf16 (SPV_KHR_bfloat16) and the fp8 formats
(SPV_EXT_float8, E4M3 and E5M2).  Conversions round to nearest, ties to
even, as the formats define.  Out-of-range values become infinity where the
format has one (f16, bf16, E5M2) and NaN for E4M3, which has none (no
``SaturatedToLargestFloat8NormalConversionEXT`` decoration is ever emitted).
Constants are rounded the same way (the compiler rejects literals beyond a
format's range, see :mod:`coopdsl.ir.literals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import cast

import numpy as np
import numpy.typing as npt

from ..ir import types as T


@dataclass(frozen=True)
class Format:
    """A binary float format: exponent and mantissa bits, bias, infinities."""

    exp_bits: int
    man_bits: int
    bias: int
    has_inf: bool

    @property
    def max_finite(self) -> float:
        """The largest finite value of the format."""
        top = (1 << self.exp_bits) - 1 - (1 if self.has_inf else 0)
        man = (1 << self.man_bits) - 1 - (0 if self.has_inf else 1)  # E4M3: S.1111.111 is NaN
        return (1 + man / (1 << self.man_bits)) * 2.0 ** (top - self.bias)


FORMATS = {
    "f16": Format(5, 10, 15, True),
    "bf16": Format(8, 7, 127, True),
    "e4m3": Format(4, 3, 7, False),
    "e5m2": Format(5, 2, 15, True),
}


def round_to_format(x: np.ndarray, fmt: Format) -> np.ndarray:
    """``x`` (float64) rounded to the nearest value of ``fmt`` (ties to even), as float64.

    Values beyond the largest finite one (after rounding) become infinity, or
    NaN for formats without infinities.
    """
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        _, e = np.frexp(ax)
        exp = np.maximum(e - 1, 1 - fmt.bias)  # exponent of the leading bit, clamped to subnormals
        quantum = np.ldexp(1.0, exp - fmt.man_bits)
        r = np.rint(ax / quantum) * quantum
        over = r > fmt.max_finite
        r = np.where(over, np.inf if fmt.has_inf else np.nan, r)
        r = np.where(np.isnan(ax), np.nan, np.where(np.isinf(ax), np.inf if fmt.has_inf else np.nan, r))
        return cast(np.ndarray, np.copysign(r, x))


def round_float(x: npt.ArrayLike, t: T.ScalarType) -> np.ndarray:
    """``x`` converted to float type ``t`` (round to nearest even), in ``t``'s value dtype."""
    if t.encoding is None:
        return np.asarray(x).astype({16: np.float16, 32: np.float32, 64: np.float64}[t.width])
    return round_to_format(np.asarray(x, np.float64), FORMATS[t.name]).astype(np.float32)


@cache
def _fp8_table(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(value of each of the 256 codes, the non-negative finite values sorted with their codes)."""
    fmt = FORMATS[name]
    codes = np.arange(256)
    exp = (codes >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)
    man = codes & ((1 << fmt.man_bits) - 1)
    with np.errstate(all="ignore"):
        normal = np.ldexp(1.0 + man / (1 << fmt.man_bits), exp - fmt.bias)
        values = np.where(exp == 0, np.ldexp(man.astype(np.float64), 1 - fmt.bias - fmt.man_bits), normal)
    top = exp == (1 << fmt.exp_bits) - 1
    if fmt.has_inf:  # E5M2: IEEE-like
        values = np.where(top, np.where(man == 0, np.inf, np.nan), values)
    else:  # E4M3: only S.1111.111 is NaN
        values = np.where(top & (man == (1 << fmt.man_bits) - 1), np.nan, values)
    values = np.where(codes & 0x80, -values, values)
    finite = np.isfinite(values[:128])
    return values.astype(np.float32), np.stack([values[:128][finite], codes[:128][finite]])


def to_bits(values: np.ndarray, t: T.ScalarType) -> np.ndarray:
    """The bit patterns of bf16/fp8 ``values`` (exactly representable ones): uint16 / uint8."""
    v = np.asarray(values, np.float32)
    if t.name == "bf16":
        return (v.view(np.uint32) >> 16).astype(np.uint16) | np.where(np.isnan(v), 0x40, 0).astype(np.uint16)
    _, table = _fp8_table(t.name)
    a = np.abs(v).astype(np.float64)
    idx = np.clip(np.searchsorted(table[0], a), 0, table.shape[1] - 1)
    code = table[1][idx]
    big, nan = a > table[0][-1], np.isnan(v)
    if t.name == "e4m3":  # no infinities: NaN is S.1111.111
        code = np.where(big | nan, 0x7F, code)
    else:
        code = np.where(nan, 0x7E, np.where(big, 0x7C, code))
    code = code.astype(np.uint8)
    return code | np.where(np.signbit(v), 0x80, 0).astype(np.uint8)


def from_bits(bits: np.ndarray, t: T.ScalarType) -> np.ndarray:
    """bf16/fp8 bit patterns as float32 values."""
    if t.name == "bf16":
        return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)
    values, _ = _fp8_table(t.name)
    return values[np.asarray(bits, np.uint8)]


def constant_float(value: float, t: T.ScalarType) -> np.generic:
    """A float constant of type ``t``, rounded to nearest even like every conversion."""
    return cast(np.generic, round_float(np.float64(value), t)[()])  # [()] of a 0-d array: numpy's stubs say ndarray
