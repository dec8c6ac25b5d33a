"""fp8 constant encoding: nearest code, ties to even, the sign in bit 7, infinities and NaN."""

import math

import pytest

from coopdsl.ir import types as T
from coopdsl.ir.literals import LiteralError, fit
from coopdsl.spirv.fp8 import fp8_bits, fp8_value

E4, E5 = "Float8E4M3EXT", "Float8E5M2EXT"


@pytest.mark.parametrize("enc", [E4, E5])
def test_every_finite_code_round_trips(enc):
    for code in range(256):
        v = fp8_value(enc, code)
        if math.isfinite(v) and code != 0x80:
            assert fp8_bits(enc, v) == code, (enc, hex(code), v)


def test_infinities_and_nan():
    assert fp8_bits(E5, math.inf) == 0x7C and fp8_bits(E5, -math.inf) == 0xFC
    assert fp8_bits(E4, math.inf) == 0x7E and fp8_bits(E4, -math.inf) == 0xFE  # saturates: E4M3 has no infinity
    assert fp8_bits(E4, math.nan) == 0x7F
    assert fp8_bits(E4, -0.0) == 0x80 and fp8_bits(E4, 0.0) == 0x00


def test_rounding_ties_to_even_and_sign():
    assert fp8_value(E4, fp8_bits(E4, -1.5)) == -1.5
    assert fp8_bits(E4, 1.0 + 1 / 16) == fp8_bits(E4, 1.0)  # halfway between 1 and 1.125: even mantissa wins


def test_literals_that_do_not_fit_are_refused():
    with pytest.raises(LiteralError, match="no infinity"):
        fit(math.inf, T.e4m3)
    with pytest.raises(LiteralError, match="does not fit in e4m3"):
        fit(500.0, T.e4m3)
    assert fit(448.0, T.e4m3) == 448.0
    with pytest.raises(LiteralError, match="does not fit in f16"):
        fit(65520.0, T.f16)
    assert fit(65519.0, T.f16) == 65519.0  # rounds to 65504
    with pytest.raises(LiteralError, match="the literal 2e-08 is 0 in f16"):
        fit(2e-8, T.f16)                       # below half of 2**-24: rounds to 0
    assert fit(3e-8, T.f16) == 3e-8            # above it: rounds to 2**-24
    assert fit(0.0, T.f16) == 0.0 and fit(-0.0, T.bf16) == 0.0
    with pytest.raises(LiteralError, match="is 0 in e4m3"):
        fit(2.0 ** -11, T.e4m3)                # E4M3's smallest value is 2**-9
    with pytest.raises(LiteralError, match="is 0 in bf16"):
        fit(1e-41, T.bf16)
    with pytest.raises(LiteralError, match="does not fit in u8"):
        fit(256, T.u8)
    with pytest.raises(LiteralError, match="float literal"):
        fit(1.0, T.i32)
