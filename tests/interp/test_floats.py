"""Float formats: rounding to f16/bf16/fp8 (nearest, ties to even) and their bit encodings."""

import numpy as np
import pytest

from coopdsl.interp.floats import FORMATS, constant_float, from_bits, round_float, round_to_format, to_bits
from coopdsl.ir import types as T
from coopdsl.spirv.fp8 import fp8_bits, fp8_value


def _samples(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))
    return np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 65520.0]])


def test_generic_rounding_agrees_with_numpys_half():
    x = _samples()
    ours = round_to_format(x, FORMATS["f16"])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(ours, x.astype(np.float16).astype(np.float64))


def test_bf16_rounds_to_nearest_even():
    x = _samples(seed=1).astype(np.float32)
    got = to_bits(round_float(x, T.bf16), T.bf16)
    u = x.view(np.uint32).astype(np.uint64)
    ref = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    finite = np.isfinite(x)
    np.testing.assert_array_equal(got[finite], ref[finite])
    assert np.isnan(from_bits(got[np.isnan(x)], T.bf16)).all()


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_fp8_codes_round_trip(name):
    t = T.SCALARS[name]
    codes = np.arange(256, dtype=np.uint8)
    values = from_bits(codes, t)
    ok = ~np.isnan(values)
    np.testing.assert_array_equal(to_bits(values[ok], t), codes[ok])
    ref = np.array([fp8_value(t.encoding, int(c)) for c in codes])
    np.testing.assert_array_equal(values[ok], ref[ok])


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_fp8_rounding_matches_the_compilers_encoder_in_range(name):
    t = T.SCALARS[name]
    fmt = FORMATS[name]
    rng = np.random.default_rng(2)
    x = rng.uniform(-fmt.max_finite, fmt.max_finite, 3000) * np.exp2(rng.integers(-12, 1, 3000))
    ours = to_bits(round_float(x, t), t)
    ref = np.array([fp8_bits(t.encoding, float(v)) for v in x], np.uint8)
    np.testing.assert_array_equal(ours, ref)


def test_out_of_range_conversions_and_constants():
    big = np.array([1e6, -1e6])
    assert np.isnan(round_float(big, T.e4m3)).all()            # E4M3 has no infinity
    assert (round_float(big, T.e5m2) == [np.inf, -np.inf]).all()
    assert round_float(np.array([3.5e38]), T.bf16)[0] == np.inf
    assert constant_float(1.0625, T.e4m3) == 1.0 and constant_float(1.1875, T.e4m3) == 1.25  # ties to even
    assert FORMATS["e4m3"].max_finite == 448.0 and FORMATS["e5m2"].max_finite == 57344.0
