"""coopdsl.ops.quant: ggml's q4_0, q8_0 and q4_K blocks, byte for byte.

Blocks built by hand from the documented layout dequantize to the expected
values and are reproduced by ``quantize``; round trips stay within each
format's error bound; a fixed matrix quantizes to the bytes ggml's C
reference produced (benchmarks/ggml/check_quant_ref.py compares against the C
code itself on random inputs when the ggml sources and gcc are at hand).
"""

import hashlib
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from coopdsl.ops import quant
from coopdsl.ops.quant import BLOCK, BLOCK_BYTES, dequantize, quantize

FORMATS = ["q4_0", "q8_0", "q4_K"]


def f16_bytes(v: float) -> bytes:
    return np.array([v], "<f2").tobytes()


# -- layout -----------------------------------------------------------------------------------------
def test_block_tables():
    assert BLOCK == {"q4_0": 32, "q8_0": 32, "q4_K": 256}
    assert BLOCK_BYTES == {"q4_0": 18, "q8_0": 34, "q4_K": 144}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("rows, blocks", [(1, 1), (3, 2), (5, 4)])
def test_shape_and_rows_are_independent(fmt, rows, blocks):
    k = blocks * BLOCK[fmt]
    w = np.random.default_rng(rows).standard_normal((rows, k)).astype(np.float32)
    q = quantize(w, fmt)
    assert q.dtype == np.uint8 and q.shape == (rows, blocks * BLOCK_BYTES[fmt])
    for r in range(rows):           # a row is its blocks, each quantized alone
        for b in range(blocks):
            one = quantize(w[r:r + 1, b * BLOCK[fmt]:(b + 1) * BLOCK[fmt]], fmt)
            assert np.array_equal(q[r, b * BLOCK_BYTES[fmt]:(b + 1) * BLOCK_BYTES[fmt]], one[0])
    out = dequantize(q, fmt, k)
    assert out.dtype == np.float32 and out.shape == (rows, k)


@pytest.mark.parametrize("fmt", ["q4_0", "q8_0"])
def test_f16_scale_bytes_lead_each_block(fmt):
    # block b's largest magnitude is chosen so that d = 2^-b exactly
    nblocks, peak = 4, {"q4_0": -8.0, "q8_0": 127.0}[fmt]
    w = np.zeros((2, 32 * nblocks), np.float32)
    for b in range(nblocks):
        w[:, 32 * b + 7] = peak * 2.0 ** -b
        w[:, 32 * b + 8] = 0.5 * 2.0 ** -b
    q = quantize(w, fmt)
    for b in range(nblocks):
        off = b * BLOCK_BYTES[fmt]
        assert q[1, off:off + 2].tobytes() == f16_bytes(2.0 ** -b)


def test_q4_K_scale_bytes_are_d_then_dmin():
    rng = np.random.default_rng(4)
    w = rng.uniform(-1, 3, (1, 512)).astype(np.float32)
    q = quantize(w, "q4_K")
    for b in range(2):
        blk = q[0, 144 * b:144 * (b + 1)]
        d, dmin = np.frombuffer(blk[:4].tobytes(), "<f2").astype(np.float32)
        assert d > 0 and dmin > 0
        sc, m = quant._scale_min_k4(blk[None, 4:16])
        x = w[0, 256 * b:256 * (b + 1)].reshape(8, 32)
        # the largest 6-bit scale is 63 (or nearly) and d * 63 about the largest sub-block scale
        assert sc.max() >= 62 and m.max() >= 62
        assert d * 63 == pytest.approx((x.max(1) - np.minimum(x.min(1), 0)).max() / 15, rel=0.2)


# -- hand-built blocks ------------------------------------------------------------------------------
def test_q4_0_hand_built_block():
    d = 0.5
    q = np.array([(j * 5) % 16 for j in range(32)])     # element j's nibble
    q[3] = 0                                            # (0 - 8) * 0.5 = -4: the unique largest magnitude
    block = f16_bytes(d) + bytes(int(q[j]) | int(q[j + 16]) << 4 for j in range(16))
    assert block[:2] == b"\x00\x38"
    expected = ((q - 8) * d).astype(np.float32)
    got = dequantize(np.frombuffer(block, np.uint8)[None], "q4_0", 32)
    assert np.array_equal(got[0], expected)
    assert quantize(expected[None], "q4_0")[0].tobytes() == block


def test_q4_0_takes_the_first_of_equal_magnitudes_and_a_zero_block_gets_minus_zero():
    x = np.zeros((1, 32), np.float32)
    x[0, 1], x[0, 3] = 4.0, -4.0                        # max = +4 (first): d = 4 / -8 = -0.5
    q = quantize(x, "q4_0")[0]
    assert q[:2].tobytes() == f16_bytes(-0.5)
    assert q[2 + 1] & 0xF == 0 and q[2 + 3] & 0xF == 15   # +4 -> q 0; -4 -> x/d + 8.5 = 16.5, clamped to 15
    assert dequantize(q[None], "q4_0", 32)[0, 3] == -3.5
    zero = quantize(np.zeros((1, 32), np.float32), "q4_0")[0]
    assert zero.tobytes() == b"\x00\x80" + bytes([0x88] * 16)   # d = 0 / -8 = -0.0, every q = 8


def test_q8_0_hand_built_block():
    d = 0.25
    q = np.array([((j * 37) % 255) - 127 for j in range(32)], np.int8)
    q[0] = -127                                         # amax / 127 = d exactly
    block = f16_bytes(d) + q.tobytes()
    assert block[:2] == b"\x00\x34"
    expected = (q.astype(np.float32) * d)
    got = dequantize(np.frombuffer(block, np.uint8)[None], "q8_0", 32)
    assert np.array_equal(got[0], expected)
    assert quantize(expected[None], "q8_0")[0].tobytes() == block


def test_q8_0_rounds_halves_away_from_zero():
    x = np.zeros((1, 32), np.float32)
    x[0, :5] = [127.0, 2.5, -2.5, 0.5, -0.5]            # d = 1
    q = quantize(x, "q8_0")[0, 2:].view(np.int8)
    assert list(q[:5]) == [127, 3, -3, 1, -1]


def pack_q4_K(d: float, dmin: float, sc: list[int], m: list[int], q: np.ndarray) -> bytes:
    """A q4_K block from its fields, written from the layout the module docstring describes."""
    scales = [0] * 12
    for i in range(8):
        if i < 4:
            scales[i] |= sc[i]
            scales[i + 4] |= m[i]
        else:
            scales[i + 4] = (sc[i] & 15) | (m[i] & 15) << 4
            scales[i - 4] |= (sc[i] >> 4) << 6
            scales[i] |= (m[i] >> 4) << 6
    qs = [0] * 128
    for j in range(4):                                  # chunk j: sub-blocks 2j (low) and 2j + 1 (high)
        for lane in range(32):
            qs[32 * j + lane] = int(q[2 * j, lane]) | int(q[2 * j + 1, lane]) << 4
    return f16_bytes(d) + f16_bytes(dmin) + bytes(scales) + bytes(qs)


def q4_K_fields():
    sc = [1, 2, 63, 4, 17, 33, 9, 40]                   # 6-bit values past 15: the top bits are used
    m = [0, 5, 10, 63, 20, 31, 47, 1]
    q = np.array([[(5 * i + 3 * lane) % 16 for lane in range(32)] for i in range(8)])
    q[:, 0], q[:, 1] = 0, 15                             # every sub-block spans all 16 levels
    return sc, m, q


def test_q4_K_hand_built_block():
    d, dmin = 2.0 ** -6, 2.0 ** -7
    sc, m, q = q4_K_fields()
    block = pack_q4_K(d, dmin, sc, m, q)
    assert len(block) == 144
    raw = np.frombuffer(block, np.uint8)
    got_sc, got_m = quant._scale_min_k4(raw[None, 4:16])  # ggml's get_scale_min_k4 reads them back
    assert list(got_sc[0]) == sc and list(got_m[0]) == m
    expected = np.array([d * sc[i] * q[i] - dmin * m[i] for i in range(8)], np.float32).reshape(256)
    got = dequantize(raw[None], "q4_K", 256)
    assert np.array_equal(got[0], expected)
    # values exactly on the grid, the largest 6-bit scale and min 63: quantize finds the same fields
    assert quantize(expected[None], "q4_K")[0].tobytes() == block


def test_q4_K_low_nibbles_are_the_first_sub_block_of_each_chunk():
    raw = np.zeros((1, 144), np.uint8)
    raw[0, :2] = np.frombuffer(f16_bytes(1.0), np.uint8)
    raw[0, 4:8] = 1                                     # scales[0:4]: sc = 1 for sub-blocks 0-3
    raw[0, 12:16] = 1                                   # scales[8:12]: sc = 1 (low nibble), m = 0 for 4-7
    raw[0, 16 + 32 * 1 + 5] = 0x3A                      # chunk 1, byte 5: sub-block 2 gets 10, sub-block 3 gets 3
    out = dequantize(raw, "q4_K", 256)[0]
    assert out[64 + 5] == 10 and out[96 + 5] == 3
    assert np.count_nonzero(out) == 2


# -- round trips ------------------------------------------------------------------------------------
def inputs():
    rng = np.random.default_rng(7)
    yield rng.standard_normal((16, 512)).astype(np.float32)
    yield rng.uniform(-3, 1, (16, 512)).astype(np.float32)
    yield (rng.standard_t(3, (16, 512)) * 0.02).astype(np.float32)
    yield rng.uniform(0.5, 2, (4, 512)).astype(np.float64)   # float64 is rounded to float32 first


def test_q8_0_error_is_half_a_step():
    for w in inputs():
        x = w.astype(np.float32)
        q = quantize(w, "q8_0")
        err = np.abs(dequantize(q, "q8_0", x.shape[1]) - x).reshape(-1, 32)
        d32 = np.abs(x).reshape(-1, 32).max(1) / np.float32(127)
        d16 = np.ascontiguousarray(q.reshape(-1, 34)[:, :2]).view("<f2")[:, 0].astype(np.float32)
        # half a step, plus what storing d as f16 moves the largest level
        bound = d32 / 2 + 127 * np.abs(d16 - d32) + 1e-7 * np.abs(x).reshape(-1, 32).max(1)
        assert (err.max(1) <= bound).all()


def test_q4_0_error_is_half_a_step_except_the_clamped_side():
    for w in inputs():
        x = w.astype(np.float32).reshape(-1, 32)
        q = quantize(w, "q4_0")
        err = np.abs(dequantize(q, "q4_0", w.shape[1]).reshape(-1, 32) - x)
        peak = x[np.arange(len(x)), np.abs(x).argmax(1)]
        d32 = np.abs(peak / np.float32(-8))
        d16 = np.abs(np.ascontiguousarray(q.reshape(-1, 18)[:, :2]).view("<f2")[:, 0].astype(np.float32))
        slack = 8 * np.abs(d16 - d32) + 1e-6 * d32
        # x / d + 8.5 truncated: round half up, except that q = 16 is clamped to 15 (a full step off)
        clamped = x / (peak / np.float32(-8))[:, None] + 8.5 >= 16
        assert (err <= np.where(clamped, d32[:, None], d32[:, None] / 2) + slack[:, None]).all()
        assert (err[np.arange(len(x)), np.abs(x).argmax(1)] <= slack).all()   # the peak itself is exact


def test_q4_K_error_is_within_a_sub_block_step_and_a_half():
    for w in inputs():
        x = w.astype(np.float32)
        out = dequantize(quantize(w, "q4_K"), "q4_K", x.shape[1])
        sub, err = x.reshape(-1, 32), np.abs(out - x).reshape(-1, 32)
        span = sub.max(1) - np.minimum(sub.min(1), 0)
        assert (err.max(1) <= 1.5 * span / 15).all()
        assert np.sqrt((err ** 2).mean() / (x ** 2).mean()) < 0.1


@pytest.mark.parametrize("fmt", FORMATS)
def test_zero_rows_round_trip_to_zero(fmt):
    w = np.zeros((2, BLOCK[fmt]), np.float32)
    assert not dequantize(quantize(w, fmt), fmt, BLOCK[fmt]).any()


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_inputs(fmt):
    assert quantize(np.zeros((0, BLOCK[fmt]), np.float32), fmt).shape == (0, BLOCK_BYTES[fmt])
    assert dequantize(np.zeros((3, 0), np.uint8), fmt, 0).shape == (3, 0)


# -- ggml's bytes -----------------------------------------------------------------------------------
# sha256 of ggml's quantize_row_<fmt>_ref output for GOLDEN_INPUT, from ggml d99724f2 built with
# gcc 12 -O2 -ffp-contract=off (benchmarks/ggml/check_quant_ref.py builds the same library)
GGML_SHA256 = {
    "q4_0": "ebe298363528042d085bdd02f5d3a501d5184686f0c7e5add734675fc10d56f1",
    "q8_0": "bd8ba4be7c832acd013308f27a8ac324ae87203cea71bd76d7e96db89440ae13",
    "q4_K": "73f44fde36b2670430a3dccc3bf9b2f073e0f1f970331f3c6d8fa7c21f18b42b",
}


def golden_input() -> np.ndarray:
    """4 x 512 values from integer arithmetic and one division (the same on every platform)."""
    i = np.arange(4 * 512)
    return (((i * 7919) % 1009 - 504) / 61.0 * 2.0 ** ((i // 32) % 5 - 2)).astype(np.float32).reshape(4, 512)


@pytest.mark.parametrize("fmt", FORMATS)
def test_bytes_equal_ggml_reference(fmt):
    assert hashlib.sha256(quantize(golden_input(), fmt).tobytes()).hexdigest() == GGML_SHA256[fmt]


# -- ggml's scalar helpers --------------------------------------------------------------------------
def test_f16_conversion_is_round_to_nearest_even():
    rng = np.random.default_rng(3)
    bits = np.concatenate([rng.integers(0, 2 ** 32, 200000, dtype=np.uint64),
                           np.arange(0x33000000, 0x3A000000, 4093),          # f16 subnormal range
                           np.arange(0x477F0000, 0x47800100, 7)]).astype(np.uint32)  # around 65504 and up
    x = bits.view(np.float32)
    finite = ~np.isnan(x)
    with np.errstate(over="ignore"):
        expected = x[finite].astype(np.float16).view(np.uint16)
    assert np.array_equal(quant.f32_to_f16_bits(x[finite]), expected)
    nan = quant.f32_to_f16_bits(np.array([np.nan, -np.nan], np.float32))
    assert list(nan) == [0x7E00, 0xFE00]
    ties = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, 3 * 2 ** -25], np.float32)
    assert list(quant.f32_to_f16_bits(ties)) == [0x3C00, 0x3C02, 0x0000, 0x0002]


def test_nearest_int_rounds_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 14.49, 14.5, 15.5, -3.7, 4194303.0], np.float32)
    assert list(quant.nearest_int(x)) == [0, 2, 2, 0, -2, 14, 14, 16, -4, 4194303]


# -- errors -----------------------------------------------------------------------------------------
def test_bad_arguments():
    w = np.zeros((2, 64), np.float32)
    with pytest.raises(ValueError, match=r"quantize: unknown format 'q5_0'; expected one of q4_0, q8_0, q4_K"):
        quantize(w, "q5_0")
    with pytest.raises(ValueError, match=r"dequantize: unknown format 'Q4_K'"):
        dequantize(np.zeros((1, 144), np.uint8), "Q4_K", 256)
    with pytest.raises(ValueError, match=r"quantize\(q4_K\): K = 64 is not a multiple of the block size 256"):
        quantize(w, "q4_K")
    with pytest.raises(ValueError, match=r"quantize\(q8_0\): K = 40 is not a multiple of the block size 32"):
        quantize(np.zeros((1, 40)), "q8_0")
    with pytest.raises(ValueError, match=r"quantize\(q4_0\): w must be 2-D \(rows x K\), got shape \(64,\)"):
        quantize(np.zeros(64, np.float32), "q4_0")
    with pytest.raises(ValueError, match=r"quantize\(q4_0\): w must be a float array, got int32"):
        quantize(np.zeros((2, 64), np.int32), "q4_0")
    with pytest.raises(ValueError, match=r"dequantize\(q4_0\): K = 48 is not a multiple of the block size 32"):
        dequantize(np.zeros((1, 18), np.uint8), "q4_0", 48)
    for bad in (64.0, "64", None, -32, True):   # (a float or a string reached Python's own TypeErrors)
        with pytest.raises(ValueError, match=r"dequantize\(q8_0\): K must be a non-negative int \(elements per "
                                             r"row\), got "):
            dequantize(np.zeros((1, 68), np.uint8), "q8_0", bad)
    with pytest.raises(ValueError, match=r"dequantize\(q8_0\): q must be a uint8 array, got int8"):
        dequantize(np.zeros((1, 34), np.int8), "q8_0", 32)
    with pytest.raises(ValueError, match=r"dequantize\(q8_0\): q must have shape \(rows, 68\) for K = 64, "
                                         r"got \(1, 34\)"):
        dequantize(np.zeros((1, 34), np.uint8), "q8_0", 64)


# -- docs/ops.md ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e300])
def test_non_finite_weights_are_refused_where_they_are(fmt, bad):
    """ggml's quantizers give a block holding a NaN a NaN scale (q8_0) or zeros (q4_0): garbage either way, so the
    value is refused, named by row and column (1e300 is infinite once rounded to float32)."""
    w = np.ones((3, 512), np.float64)
    w[2, 300] = bad
    shown = "nan" if np.isnan(bad) else "-inf" if bad < 0 else "inf"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=rf"quantize\({fmt}\): w\[2, 300\] is {shown} .*a block's values must "
                                             "be finite"):
            quantize(w, fmt)


def test_the_quantized_weights_example_of_docs_ops_md_runs():
    page = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "quant.quantize" in b]
    exec(compile(code, "docs/ops.md", "exec"), {})


def test_q4_K_quantizes_in_chunks_without_changing_a_byte(monkeypatch):
    w = np.random.default_rng(11).standard_normal((5, 512)).astype(np.float32)
    whole = quantize(w, "q4_K")
    monkeypatch.setattr(quant, "_Q4_K_CHUNK", 3)    # 10 super-blocks: chunks of 3, 3, 3, 1
    assert np.array_equal(quantize(w, "q4_K"), whole)
