"""benchmarks/gemv_ways.py: its ways parse as gemv.choice names them, and its weights are the first rows made and
quantized, repeated down to M (what the check against numpy reads), in the format the kernels take."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import gemv_ways as W  # noqa: E402
from coopdsl import ops  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402


def test_a_way_parses_as_gemv_names_it():
    assert W.parse_way("mma:4:4") == ("mma", 4, 4) == G.choice("f16", 3, None, 8192, 28672)
    assert W.parse_way("xregs:8:2") == G.choice("q4_K", 8, None, 8192, 28672)


@pytest.mark.parametrize("fmt", ["f16", "bf16", "q4_0", "q4_K"])
def test_the_weights_repeat_their_first_rows_in_the_kernels_format(fmt):
    m, k = 600, 512
    w, w32 = W.tiled_weights(fmt, m, k, np.random.default_rng(0))
    assert w.shape[0] == m and w.dtype == G.WEIGHT_DTYPES[fmt] and w32.shape == (W.TILE, k)
    assert np.array_equal(w[W.TILE:2 * W.TILE], w[:W.TILE])
    first = w[:W.TILE]
    values = first.astype(np.float32) if fmt == "f16" else ops.from_bf16(first) if fmt == "bf16" else \
        ops.dequantize(first, fmt, k)
    assert np.array_equal(values, w32)
