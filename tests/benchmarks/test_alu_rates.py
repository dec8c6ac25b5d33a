"""benchmarks/alu_rates.py's kernels: each operation's chains compile, validate and hold the instruction they time,
and run on the interpreter to the values numpy gives for the same chains."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.alu_rates import CHAINS, OPS, WG, chain_kernel
from tests.conftest import compile_checked

TIMED = {"ffma": r"OpExtInst %float %\w+ Fma", "hfma2": r"OpFMul %v2half", "imad": r"OpIMul %uint",
         "sdot": r"OpSDot %int", "sudot": r"OpSUDot %int", "shfl": r"OpGroupNonUniformShuffleXor %uint"}


@pytest.mark.parametrize("op", OPS)
def test_each_kernel_holds_the_instruction_it_times(op):
    compile_checked(chain_kernel(op), TIMED[op])


def test_the_integer_chains_run_as_numpy_computes_them():
    iters, seed = 3, 7
    out = np.zeros(WG, np.uint32)
    chain_kernel("imad").launch((1, 1, 1), out, iters, seed, device="cpu")
    want = np.zeros(WG, np.uint32)
    for c in range(CHAINS):
        v = (np.arange(WG, dtype=np.uint64) + seed + c) & 0xFFFFFFFF
        for _ in range(iters):
            v = (v * 1664525 + 1013904223) & 0xFFFFFFFF
        want ^= v.astype(np.uint32)
    assert np.array_equal(out, want)
    out = np.zeros(WG, np.uint32)
    chain_kernel("sdot").launch((1, 1, 1), out, iters, seed, device="cpu")
    t = np.arange(WG, dtype=np.uint64) + seed
    wi = ((t ^ 0x5A5A5A5A) & 0xFFFFFFFF).astype(np.uint32).view(np.int8).reshape(-1, 4).astype(np.int64)
    want = np.zeros(WG, np.uint32)
    for c in range(CHAINS):
        v = ((t * 2654435761 + c) & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.int64)
        for _ in range(iters):
            lanes = (v & 0xFFFFFFFF).astype(np.uint32).view(np.int8).reshape(-1, 4).astype(np.int64)
            v = ((lanes * wi).sum(axis=1) + v + 2**31) % 2**32 - 2**31
        want ^= (v & 0xFFFFFFFF).astype(np.uint32)
    assert np.array_equal(out, want)
