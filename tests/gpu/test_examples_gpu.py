"""Every example on a real GPU with cooperative matrices, against numpy (run with -m gpu)."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.cases import CASES  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case,size", [(c, s) for c, (_, sizes) in CASES.items() for s in sizes])
def test_example_matches_numpy(device, case, size):
    fn, _ = CASES[case]
    r = fn(size, np.random.default_rng(0), device=device)
    assert r.passed, r
