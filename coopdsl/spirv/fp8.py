"""FP8 (E4M3 / E5M2, SPV_EXT_float8) encode/decode, round to nearest even: the encoder of
:mod:`coopdsl._numbers`, which the runtime's specialization data use too (one owner), by encoding."""

from __future__ import annotations

from .._numbers import FP8_FORMATS, fp8_bits, fp8_value

__all__ = ["FP8_FORMATS", "fp8_bits", "fp8_value"]
