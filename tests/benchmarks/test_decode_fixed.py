"""benchmarks/decode_fixed.py: its read-only yardsticks read the bytes they are given (a piece holding the magic
value reaches the sink only through the invocation that loads it), and its line fit recovers a line."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import decode_fixed as F  # noqa: E402

MAGIC = (0x9E3779B9, 0x7F4A7C15, 1234, 0)


@pytest.mark.parametrize("head, chunk, piece", [(1, 0, 5), (1, 2, 150), (1, 1, 0)])
def test_read_chunks_reads_its_chunk_of_each_head(head, chunk, piece):
    # 2 heads of 1000 pieces, chunks of 400 (the last one short): the magic piece sits in (head, chunk)
    per_head, size = 1000, 400
    k = np.zeros((2 * per_head, 4), np.uint32)
    v = np.zeros_like(k)
    k[head * per_head + chunk * size + piece] = MAGIC
    sink = np.zeros(4, np.uint32)
    F.read_chunks.launch((3, 2, 1), k, v, sink, per_head, size, device="cpu")
    assert sink[0] == 1234
    sink[:] = 0
    F.read_chunks.launch((3, head, 1), k, v, sink, per_head, size, device="cpu")    # (the heads before it only)
    assert sink[0] == 0


def test_read16_reads_every_piece():
    n = 3000
    k, v = np.zeros((n, 4), np.uint32), np.zeros((n, 4), np.uint32)
    v[n - 1] = MAGIC
    sink = np.zeros(4, np.uint32)
    F.read16.launch(F.copy_grid(n), k, v, sink, n, device="cpu")
    assert sink[0] == 1234


def test_fit_recovers_a_line():
    icpt, slope = F.fit([1e6, 2e6, 4e6], [0.011 + x / 3.5e12 * 1e3 for x in (1e6, 2e6, 4e6)])
    assert icpt == pytest.approx(0.011) and 1e-6 / slope == pytest.approx(3500, rel=1e-9)
