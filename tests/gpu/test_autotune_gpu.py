"""coopdsl.autotune on the GPU: gemm_shared's tile configurations timed on the device (run with -m gpu)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.cases import load_example  # noqa: E402

pytestmark = pytest.mark.gpu

CONFIGS = [dict(TILE_M=128, TILE_N=128, TILE_K=32, SG_M=64, SG_N=64, WG=128),
           dict(TILE_M=64, TILE_N=64, TILE_K=32, SG_M=32, SG_N=32, WG=128),
           dict(TILE_M=128, TILE_N=256, TILE_K=32, SG_M=64, SG_N=64, WG=256)]


def test_gemm_tiles_are_tuned_cached_and_correct(tmp_path):
    from coopdsl.autotune import Autotuner, Config, autotune

    M = N = K = 2048
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernel = load_example("gemm_shared.py")["gemm_shared"]
    configs = [Config(**c) for c in CONFIGS]
    tuned = autotune(configs, key=["M", "N", "K"], cache=tmp_path / "at.json", warmup=3, repeat=10)(kernel)
    grid = lambda p: (p["N"] // p["TILE_N"], p["M"] // p["TILE_M"])  # noqa: E731
    tuned.launch(grid, a, b, c, 1.0, 0.0, M=M, N=N, K=K)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert np.abs(c - ref).max() <= 1.5e-3 * np.sqrt(K)
    timings = tuned.last_timings
    print({cfg: f"{2 * M * N * K / (t * 1e-3) / 1e12:.1f} TFLOP/s" for cfg, t in timings.items()})
    assert all(isinstance(t, float) for t in timings.values())
    (entry,) = json.loads((tmp_path / "at.json").read_text())["entries"].values()
    assert entry["ms"] == min(timings.values())
    again = Autotuner(kernel, configs, ["M", "N", "K"], cache=tmp_path / "at.json")
    assert repr(again.best_config(grid, a, b, c, 1.0, 0.0, M=M, N=N, K=K)) == entry["config"]
    assert again.last_timings == {}
