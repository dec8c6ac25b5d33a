"""What an additive attention mask's value means, for every attention kernel of :func:`coopdsl.ops.attention`.

ggml's flash-attention kernels read the mask as f16, so a mask value is what it becomes in f16: below -65504
(``-1e9``, ``np.finfo(np.float32).min``) it is -inf and hides the key, above 65504 it is 65504, anything else is
rounded to f16.  The decode kernels, which may read an f32 mask as it is, apply the same rule, so that a row
whose keys are all hidden by ``-1e9`` gives 0 on every path (and not the mean of V).
"""

from typing import no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import f16, f32, u32

NEG_INF = float("-inf")
F16_MAX = 65504.0


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def f16_rounded(x):
    """``x`` (f32, at most 65504 in size) rounded to the nearest f16 value (ties to even), as an f32 computed
    from its bits: a driver may fold ``f32(f16(x))`` back to ``x`` where the f16 is never stored (Mesa's
    lavapipe does; the H200's driver gave an ALiBi mask's decoding the unrounded values), never this."""
    bits = cd.bitcast(x, u32)
    mag = bits & 0x7FFFFFFF
    if mag >= 0x38800000:   # f16's normal range (2^-14 and up): 10 of the 23 fraction bits, ties to even
        mag = (mag + 0xFFF + ((mag >> 13) & 1)) & 0xFFFFE000
        return cd.bitcast((bits & 0x80000000) | mag, f32)
    return cd.round_even(x * 16777216.0) * (1.0 / 16777216.0)   # f16's subnormals: multiples of 2^-24


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def mask_f16(x):
    """The f16 value the f32 mask value ``x`` stands for: -inf below -65504, 65504 above 65504, else ``x``
    rounded to f16 (by :func:`f16_rounded`, so that the value stays rounded where the caller widens it back
    to f32 at once)."""
    if x < -F16_MAX:
        return f16(NEG_INF)
    return f16(f16_rounded(min(x, F16_MAX)))


def mask_values(mask: np.ndarray) -> np.ndarray:
    """:func:`mask_f16`'s rule on the host: the float64 values a mask of any float type stands for."""
    m = np.asarray(mask, np.float64)
    rounded = np.clip(m, -F16_MAX, F16_MAX).astype(np.float16).astype(np.float64)
    return np.where(m < -F16_MAX, NEG_INF, rounded)
