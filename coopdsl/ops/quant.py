"""ggml's block quantization formats q4_0, q8_0 and q4_K in numpy, byte for byte.

:func:`quantize` packs float weights the way ggml's reference quantizers do
(``quantize_row_q4_0_ref``, ``quantize_row_q8_0_ref`` and
``quantize_row_q4_K_ref`` in ``ggml/src/ggml-quants.c``) and :func:`dequantize`
unpacks them as ``dequantize_row_*`` does.  Use the first to make quantized
weights for a quantized matmul, the second as the reference a kernel's results
are compared against.  The arithmetic is ggml's, in float32 where ggml uses
``float``, sums accumulated in ggml's order and ggml's rounding helpers
mirrored exactly (``nearest_int``'s float trick, ``roundf``, the ``(int8_t)``
truncation, ``GGML_FP32_TO_FP16``), so for finite inputs the bytes equal those
of ggml's C code compiled without floating-point contraction (no fused
multiply-add: ``-ffp-contract=off``, or a target without FMA, which is GCC's
default on x86-64).  A float64 input is first rounded to float32, as a caller
of ggml's ``const float *`` API would.

A quantized matrix is a uint8 array of shape ``(rows, K // BLOCK[fmt] *
BLOCK_BYTES[fmt])``: each row its blocks in order, each block the bytes of the
C struct (``ggml-common.h``, no padding).  Every ``f16`` below is an IEEE half
stored little-endian, rounded to nearest even from float32.

q4_0: 32 elements in 18 bytes (``block_q4_0``)
    bytes 0-1
        ``d``, f16.
    bytes 2-17
        ``qs[16]``: byte ``2 + j`` holds element ``j`` in its low nibble and
        element ``j + 16`` in its high nibble.
    Element value: ``(q - 8) * d``.  ggml takes ``d = max / -8`` where ``max``
    is the element of largest magnitude (the first one if several tie), and
    ``q = min(15, (int8)(x / d + 8.5))`` (truncation, not rounding).

q8_0: 32 elements in 34 bytes (``block_q8_0``)
    bytes 0-1
        ``d``, f16.
    bytes 2-33
        ``qs[32]``: element ``j`` as an int8.
    Element value: ``q * d``, with ``d = amax / 127`` and ``q =
    roundf(x / d)`` (halves away from zero).

q4_K: 256 elements in 144 bytes (``block_q4_K``), eight sub-blocks of 32
    bytes 0-1
        ``d``, f16: the scale of the sub-block scales.
    bytes 2-3
        ``dmin``, f16: the scale of the sub-block mins.
    bytes 4-15
        ``scales[12]``: a 6-bit scale ``sc`` and a 6-bit min ``m`` for each
        sub-block ``i`` (ggml's ``get_scale_min_k4``).  For ``i < 4``: ``sc =
        scales[i] & 63`` and ``m = scales[i + 4] & 63``.  For ``i >= 4``: ``sc
        = (scales[i + 4] & 15) | (scales[i - 4] >> 6) << 4`` and ``m =
        (scales[i + 4] >> 4) | (scales[i] >> 6) << 4``: the low four bits in
        the nibbles of bytes 8-11, the top two bits in the top two bits of
        bytes 0-7.
    bytes 16-143
        ``qs[128]``: four chunks of 32 bytes, one per 64 elements.  Byte ``l``
        of chunk ``j`` holds element ``l`` of sub-block ``2j`` in its low
        nibble and element ``l`` of sub-block ``2j + 1`` in its high nibble.
    Element value of sub-block ``i``: ``(d * sc) * q - dmin * m``.  ggml picks
    each sub-block's scale and min with ``make_qkx2_quants`` (a weighted
    least-squares search over 21 candidate scales), quantizes them to 6 bits
    against the largest of each, then re-quantizes the elements with the
    rounded scales.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from .operands import choice_name, is_bfloat16, numbers_array

__all__ = ["BLOCK", "BLOCK_BYTES", "FORMATS", "quantize", "dequantize"]

BLOCK: dict[str, int] = {"q4_0": 32, "q8_0": 32, "q4_K": 256}
"""Elements per block of each format."""

BLOCK_BYTES: dict[str, int] = {"q4_0": 18, "q8_0": 34, "q4_K": 144}
"""Bytes per block of each format."""

FORMATS: tuple[str, ...] = tuple(BLOCK)

_F32 = np.float32
_U32 = np.uint32


# -- ggml's scalar helpers, elementwise -------------------------------------------------------------
def f32_to_f16_bits(x: np.ndarray) -> np.ndarray:
    """``GGML_FP32_TO_FP16`` elementwise: float32 values as IEEE half bit patterns (uint16).

    ggml's branch-free conversion (from the FP16 library): round to nearest
    even, subnormal halves where due, infinity past 65504, NaN as ``0x7E00``
    with the input's sign.
    """
    f = np.ascontiguousarray(x, _F32)
    with np.errstate(over="ignore"):
        base = (np.abs(f) * _F32(2.0**112)) * _F32(2.0**-110)
    w = f.view(_U32)
    shl1_w = w + w
    sign = w & _U32(0x80000000)
    bias = np.maximum(shl1_w & _U32(0xFF000000), _U32(0x71000000))
    base = ((bias >> _U32(1)) + _U32(0x07800000)).view(_F32) + base
    bits = base.view(_U32)
    nonsign = ((bits >> _U32(13)) & _U32(0x7C00)) + (bits & _U32(0x0FFF))
    out = (sign >> _U32(16)) | np.where(shl1_w > _U32(0xFF000000), _U32(0x7E00), nonsign)
    return cast(np.ndarray, out.astype(np.uint16))


def f16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """``GGML_FP16_TO_FP32`` elementwise: IEEE half bit patterns (uint16) as float32 (exact)."""
    return np.ascontiguousarray(bits, np.uint16).view(np.float16).astype(_F32)


def nearest_int(x: np.ndarray) -> np.ndarray:
    """ggml's ``nearest_int`` elementwise (int32): add 1.5 * 2^23 in float32 and read the low mantissa bits.

    Round half to even for ``|x| <= 4194303``; other inputs give the same
    (meaningless) integers as the C code.
    """
    val = np.asarray(x, _F32) + _F32(12582912.0)
    return cast(np.ndarray, (val.view(np.int32) & np.int32(0x007FFFFF)) - np.int32(0x00400000))


def _to_int8(x: np.ndarray) -> np.ndarray:
    """C's float to ``int8_t`` conversion as x86-64 GCC compiles it: truncate to int32, keep the low byte."""
    with np.errstate(invalid="ignore"):
        return cast(np.ndarray, np.trunc(x).astype(np.int32).astype(np.int8))


def _seqsum(a: np.ndarray) -> np.ndarray:
    """Sums over the first axis in float32, accumulated in order as a C ``for`` loop adds.

    numpy's own sum is pairwise and rounds differently; this adds whole rows,
    so each step is one vectorized add across all the columns (the blocks).
    """
    total = a[0].astype(_F32)
    for row in a[1:]:
        total += row
    return cast(np.ndarray, total)


def _reciprocal_or_zero(d: np.ndarray) -> np.ndarray:
    """``d ? 1.0f/d : 0.0f`` elementwise."""
    out = np.zeros_like(d)
    np.divide(_F32(1.0), d, out=out, where=d != 0)
    return out


def _f16_bytes(d: np.ndarray) -> np.ndarray:
    """float32 scales (n,) as their f16 bytes, little-endian: (n, 2) uint8."""
    return f32_to_f16_bits(d).astype("<u2").view(np.uint8).reshape(-1, 2)


def _f16_from_bytes(b: np.ndarray) -> np.ndarray:
    """(n, 2) little-endian f16 bytes as float32 (n,)."""
    return f16_bits_to_f32(np.ascontiguousarray(b).view("<u2").reshape(-1).astype(np.uint16))


# -- q4_0 -------------------------------------------------------------------------------------------
def _quantize_q4_0(x: np.ndarray) -> np.ndarray:
    """(n, 32) float32 blocks -> (n, 18) bytes (``quantize_row_q4_0_ref``)."""
    a = np.abs(x)
    first = np.argmax(a, axis=1)                        # the first element of largest magnitude
    rows = np.arange(len(x))
    vmax = np.where(a[rows, first] > 0, x[rows, first], _F32(0.0))  # ggml's max stays +0.0 for a zero block
    d = vmax / _F32(-8.0)
    inv = _reciprocal_or_zero(d)
    with np.errstate(over="ignore", invalid="ignore"):
        q = _to_int8(x * inv[:, None] + _F32(8.5))
    q = np.minimum(np.int8(15), q).astype(np.uint8)     # MIN(15, (int8_t)...) stored as uint8_t
    qs = q[:, :16] | (q[:, 16:] << np.uint8(4))
    return np.concatenate([_f16_bytes(d), qs], axis=1)


def _dequantize_q4_0(b: np.ndarray) -> np.ndarray:
    """(n, 18) bytes -> (n, 32) float32 (``dequantize_row_q4_0``)."""
    d = _f16_from_bytes(b[:, :2])[:, None]
    qs = b[:, 2:]
    lo = (qs & 0x0F).astype(np.int32) - 8
    hi = (qs >> 4).astype(np.int32) - 8
    return np.concatenate([lo.astype(_F32) * d, hi.astype(_F32) * d], axis=1)


# -- q8_0 -------------------------------------------------------------------------------------------
def _quantize_q8_0(x: np.ndarray) -> np.ndarray:
    """(n, 32) float32 blocks -> (n, 34) bytes (``quantize_row_q8_0_ref``)."""
    amax = np.max(np.abs(x), axis=1)
    d = amax / _F32(127.0)
    inv = _reciprocal_or_zero(d)
    with np.errstate(over="ignore", invalid="ignore"):
        x0 = (x * inv[:, None]).astype(np.float64)       # exact; + 0.5 below is exact in float64
        q = _to_int8(np.copysign(np.floor(np.abs(x0) + 0.5), x0))  # roundf: halves away from zero
    return np.concatenate([_f16_bytes(d), q.view(np.uint8)], axis=1)


def _dequantize_q8_0(b: np.ndarray) -> np.ndarray:
    """(n, 34) bytes -> (n, 32) float32 (``dequantize_row_q8_0``)."""
    d = _f16_from_bytes(b[:, :2])[:, None]
    return cast(np.ndarray, b[:, 2:].view(np.int8).astype(_F32) * d)


# -- q4_K -------------------------------------------------------------------------------------------
def _make_qkx2_quants(x: np.ndarray, weights: np.ndarray, nmax: int, rmin: float, rdelta: float,
                      nstep: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ggml's ``make_qkx2_quants`` (``use_mad=false``) for every column of ``x`` (32, n) at once.

    ``x`` and ``weights`` hold one group of 32 values per column.  Returns
    ``(scale, the_min, L)``: float32 (n,), float32 (n,) and the levels uint8
    (32, n), so that ``x ~ scale * L - the_min``.  The search over ``nstep +
    1`` candidate scales is a loop of that many steps, each vectorized across
    the groups.
    """
    f = _F32
    vmin = x.min(axis=0)
    vmax = x.max(axis=0)
    sum_w = _seqsum(weights)
    sum_x = _seqsum(weights * x)
    vmin = np.where(vmin > 0, f(0.0), vmin)
    flat = vmax == vmin
    nmaxf = f(nmax)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        iscale = nmaxf / (vmax - vmin)
        scale = f(1.0) / iscale
        levels = np.clip(nearest_int(iscale * (x - vmin)), 0, nmax).astype(f)
        diff = scale * levels + vmin - x
        best_error = _seqsum(weights * (diff * diff))
        for step in range(nstep + 1):
            iscale = (f(rmin) + f(rdelta) * f(step) + nmaxf) / (vmax - vmin)
            laux = np.clip(nearest_int(iscale * (x - vmin)), 0, nmax).astype(f)
            wl = weights * laux
            sum_l = _seqsum(wl)
            sum_l2 = _seqsum(wl * laux)
            sum_xl = _seqsum(wl * x)
            det = sum_w * sum_l2 - sum_l * sum_l
            this_scale = (sum_w * sum_xl - sum_x * sum_l) / det
            this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det
            positive = this_min > 0
            this_min = np.where(positive, f(0.0), this_min)
            this_scale = np.where(positive, sum_xl / sum_l2, this_scale)
            diff = this_scale * laux + this_min - x
            cur_error = _seqsum(weights * (diff * diff))
            better = (det > 0) & (cur_error < best_error) & ~flat
            levels = np.where(better, laux, levels)
            best_error = np.where(better, cur_error, best_error)
            scale = np.where(better, this_scale, scale)
            vmin = np.where(better, this_min, vmin)
    levels = np.where(flat, f(0.0), levels)
    scale = np.where(flat, f(0.0), scale)
    return scale, -vmin, levels.astype(np.uint8)


def _scale_min_k4(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ggml's ``get_scale_min_k4`` for all eight sub-blocks: (n, 12) bytes -> sc, m, each (n, 8) uint8."""
    s = scales
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)], axis=1)
    m = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=1)
    return sc, m


_Q4_K_CHUNK = 512   # super-blocks quantized together: the search's arrays (32 x 4096 floats) stay in cache


def _quantize_q4_K(x: np.ndarray) -> np.ndarray:
    """(n, 256) float32 super-blocks -> (n, 144) bytes (``quantize_row_q4_K_ref``), a chunk at a time."""
    if len(x) <= _Q4_K_CHUNK:
        return _quantize_q4_K_chunk(x)
    return np.concatenate([_quantize_q4_K_chunk(x[i:i + _Q4_K_CHUNK]) for i in range(0, len(x), _Q4_K_CHUNK)])


def _quantize_q4_K_chunk(x: np.ndarray) -> np.ndarray:
    """(n, 256) float32 super-blocks -> (n, 144) bytes, all at once."""
    f = _F32
    n = len(x)
    sub = np.ascontiguousarray(x.reshape(n * 8, 32).T)              # (32, sub-blocks): a column each
    sum_x2 = _seqsum(sub * sub)
    av_x = np.sqrt(sum_x2 / f(32.0))
    weights = av_x + np.abs(sub)
    scales, mins, levels = _make_qkx2_quants(sub, weights, 15, -1.0, 0.1, 20)
    scales, mins, levels = scales.reshape(n, 8), mins.reshape(n, 8), levels.T.reshape(n, 8, 32)

    max_scale = np.max(np.where(scales > 0, scales, f(0.0)), axis=1)
    max_min = np.max(np.where(mins > 0, mins, f(0.0)), axis=1)
    inv_scale = np.zeros_like(max_scale)
    np.divide(f(63.0), max_scale, out=inv_scale, where=max_scale > 0)
    inv_min = np.zeros_like(max_min)
    np.divide(f(63.0), max_min, out=inv_min, where=max_min > 0)
    # uint8_t ls = nearest_int(...): the int is cut to its low byte, then MIN(63, ls)
    ls = np.minimum(nearest_int(inv_scale[:, None] * scales) & 0xFF, 63).astype(np.uint8)
    lm = np.minimum(nearest_int(inv_min[:, None] * mins) & 0xFF, 63).astype(np.uint8)
    packed = np.empty((n, 12), np.uint8)
    packed[:, 0:4] = ls[:, :4] | ((ls[:, 4:] >> 4) << 6)
    packed[:, 4:8] = lm[:, :4] | ((lm[:, 4:] >> 4) << 6)
    packed[:, 8:12] = (ls[:, 4:] & 0xF) | ((lm[:, 4:] & 0xF) << 4)
    d = max_scale / f(63.0)
    dmin = max_min / f(63.0)
    d_bytes, dmin_bytes = _f16_bytes(d), _f16_bytes(dmin)

    # the elements again, against the 6-bit scales and mins as a reader will see them
    sc, m = _scale_min_k4(packed)
    sub_d = _f16_from_bytes(d_bytes)[:, None] * sc.astype(f)       # (n, 8)
    sub_dm = _f16_from_bytes(dmin_bytes)[:, None] * m.astype(f)
    requant = sub_d != 0                                            # `if (!d) continue;` keeps make_qkx2's L
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        again = np.clip(nearest_int((x.reshape(n, 8, 32) + sub_dm[:, :, None]) / sub_d[:, :, None]), 0, 15)
    levels = np.where(requant[:, :, None], again.astype(np.uint8), levels)

    pairs = levels.reshape(n, 4, 2, 32)                             # chunk j: sub-blocks 2j and 2j + 1
    qs = (pairs[:, :, 0, :] | (pairs[:, :, 1, :] << np.uint8(4))).reshape(n, 128)
    return np.concatenate([d_bytes, dmin_bytes, packed, qs], axis=1)


def _dequantize_q4_K(b: np.ndarray) -> np.ndarray:
    """(n, 144) bytes -> (n, 256) float32 (``dequantize_row_q4_K``)."""
    n = len(b)
    d = _f16_from_bytes(b[:, 0:2])[:, None]
    dmin = _f16_from_bytes(b[:, 2:4])[:, None]
    sc, m = _scale_min_k4(b[:, 4:16])
    d_sub = (d * sc.astype(_F32))[:, :, None]                       # (n, 8, 1)
    m_sub = (dmin * m.astype(_F32))[:, :, None]
    qs = b[:, 16:].reshape(n, 4, 1, 32)
    q = np.concatenate([qs & 0xF, qs >> 4], axis=2).reshape(n, 8, 32).astype(_F32)
    return cast(np.ndarray, (d_sub * q - m_sub).reshape(n, 256))


_QUANTIZE = {"q4_0": _quantize_q4_0, "q8_0": _quantize_q8_0, "q4_K": _quantize_q4_K}
_DEQUANTIZE = {"q4_0": _dequantize_q4_0, "q8_0": _dequantize_q8_0, "q4_K": _dequantize_q4_K}


# -- public API -------------------------------------------------------------------------------------
def _check_format(fmt: str, who: str) -> int:
    return BLOCK[choice_name(who, "format", fmt, FORMATS)]


def _check_k(k: int, fmt: str, who: str) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"{who}({fmt}): K must be a non-negative int (elements per row), got {k!r}")
    if k % BLOCK[fmt]:
        raise ValueError(f"{who}({fmt}): K = {k} is not a multiple of the block size {BLOCK[fmt]}")


def quantize(w: np.ndarray, fmt: str) -> np.ndarray:
    """Quantize the rows of ``w`` to ggml's ``fmt`` blocks, byte-identical to ggml's reference quantizer.

    Args:
        w: a 2-D float array, rows x K (float16, bfloat16 (ml_dtypes'), float32
            or float64; rounded to float32 first).
        fmt: ``"q4_0"``, ``"q8_0"`` or ``"q4_K"``; K must be a multiple of
            ``BLOCK[fmt]`` (32, 32, 256).

    Returns:
        uint8 array of shape ``(rows, K // BLOCK[fmt] * BLOCK_BYTES[fmt])``:
        each row's blocks one after another, laid out as the module docstring
        describes (a row is what ``quantize_row_<fmt>_ref`` writes for it).

    Raises:
        TypeError: ``fmt`` not a string, ``w`` None or a string.
        ValueError: an unknown format, ``w`` not 2-D or not floating point,
            K not a multiple of the block size, or a value that is NaN or
            infinite (after rounding to float32): ggml's quantizers give its
            whole block a NaN or infinite scale, or zeros, there.
    """
    block = _check_format(fmt, "quantize")
    arr = numbers_array("quantize", "w", w)
    if is_bfloat16(arr):                # (ml_dtypes' bfloat16 weights: their values, exactly, as float32)
        arr = arr.astype(_F32)
    if arr.ndim != 2:
        raise ValueError(f"quantize({fmt}): w must be 2-D (rows x K), got shape {arr.shape}")
    if arr.dtype.kind != "f":
        raise ValueError(f"quantize({fmt}): w must be a float array, got {arr.dtype}")
    rows, k = arr.shape
    _check_k(k, fmt, "quantize")
    with np.errstate(over="ignore"):    # (a float64 past float32's range: refused below, by its value)
        x = np.ascontiguousarray(arr, _F32).reshape(rows * (k // block), block)
    finite = np.isfinite(x)
    if not finite.all():
        at = int(np.argmin(finite.reshape(-1)))
        bad = float(x.reshape(-1)[at])
        raise ValueError(f"quantize({fmt}): w[{at // k}, {at % k}] is {bad} (from {arr[at // k, at % k]!r}); "
                         f"a block's values must be finite (ggml's quantizers give the whole block a NaN or "
                         f"infinite scale, or zeros, there)")
    if x.size == 0:
        return np.zeros((rows, k // block * BLOCK_BYTES[fmt]), np.uint8)
    return _QUANTIZE[fmt](x).reshape(rows, k // block * BLOCK_BYTES[fmt])


def dequantize(q: np.ndarray, fmt: str, k: int) -> np.ndarray:
    """The float32 values of ggml ``fmt`` blocks, as ggml's ``dequantize_row_<fmt>`` computes them.

    Args:
        q: uint8 array of shape ``(rows, k // BLOCK[fmt] * BLOCK_BYTES[fmt])``,
            as :func:`quantize` returns (or a GGUF tensor's rows).
        fmt: ``"q4_0"``, ``"q8_0"`` or ``"q4_K"``.
        k: elements per row, a multiple of ``BLOCK[fmt]``.

    Returns:
        float32 array of shape ``(rows, k)``.

    Raises:
        ValueError: an unknown format, ``k`` not a multiple of the block size,
            or ``q`` not a 2-D uint8 array of that many bytes per row.
    """
    block = _check_format(fmt, "dequantize")
    _check_k(k, fmt, "dequantize")
    arr = numbers_array("dequantize", "q", q)
    if arr.dtype != np.uint8:
        raise ValueError(f"dequantize({fmt}): q must be a uint8 array, got {arr.dtype}")
    nbytes = k // block * BLOCK_BYTES[fmt]
    if arr.ndim != 2 or arr.shape[1] != nbytes:
        raise ValueError(f"dequantize({fmt}): q must have shape (rows, {nbytes}) for K = {k}, got {arr.shape}")
    rows = arr.shape[0]
    b = np.ascontiguousarray(arr).reshape(rows * (k // block), BLOCK_BYTES[fmt])
    if b.size == 0:
        return np.zeros((rows, k), _F32)
    return _DEQUANTIZE[fmt](b).reshape(rows, k)
