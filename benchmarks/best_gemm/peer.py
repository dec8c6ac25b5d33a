"""The peer's best kernel per type pair, and coopdsl's port of it, timed by run.py in the rounds of coopdsl's best.

Issue 16's figures for the peer (vk_cooperative_matrix_perf ``shmem.comp``, e.g. 429 TFLOP/s for f16->f16)
come from its own harness, which fills A and B with values from {-0.5, 0, 0.5, 1} and times one submission
of ten dispatches after fifty warm-up ones.  Those inputs draw less power than uniform random ones, and under
the H100's 700 W limit that alone is worth 6% to the same kernel (docs/benchmarks.md).  So that "ours / peer"
compares kernels, not methods, run.py (``--peer-shaders DIR``) also times:

* ``peer``: the peer's glslang module ``shmem<A>_<C>.spv`` from DIR (the ``shaders`` folder of a checkout of
  jeffbolznv/vk_cooperative_matrix_perf; nothing of it is in this repository), launched through the
  reflection of ``benchmarks/peer_gemm/shmem.py`` (the port keeps its interface exactly) with the
  specialization values its harness gives the peer's best configuration for the pair (:data:`PEER`);
* ``port``: ``benchmarks/peer_gemm/shmem.py`` in the same configuration,

on the same inputs, by the same method.  Both compute D = alpha * A x B + beta * C (here alpha 1, beta 0:
they still read C); TFLOP/s count 2 n^3 for every kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# pair -> (the harness's file-name tokens, the peer's best configuration on its harness at 8192^3 (issue 16
# and docs/benchmarks.md's shmem tables): lM, lN, lK, TILE_M, TILE_N, TILE_K, BColMajor)
PEER = {"f16-f16": (("fp16", "fp16"), (16, 16, 16, 256, 256, 32, False)),
        "f16-f32": (("fp16", "fp32"), (16, 8, 8, 128, 128, 16, False)),
        "bf16-f32": (("bf16", "fp32"), (16, 16, 16, 128, 256, 16, False)),
        "s8-s32": (("s8", "s32"), (16, 16, 32, 128, 256, 64, True)),
        "u8-u32": (("u8", "u32"), (16, 16, 32, 128, 256, 64, True))}
ALPHA, BETA = 1.0, 0.0

Timer = Callable[[dict, int, int, int], list[float]]  # (Params arrays, n, warmup, repeat) -> times in ms


def spec(pair: str, n: int) -> dict:
    """The specialization values vk_cooperative_matrix_perf gives the peer's best configuration at n^3 (its
    specData, with alpha 1 and beta 0)."""
    lm, ln, lk, tm, tn, tk, col = PEER[pair][1]
    return dict(lM=lm, lN=ln, lK=lk, TILE_M=tm, TILE_N=tn, TILE_K=tk, K=n, strideA=n, strideB=n, strideC=n,
                strideD=n, alpha=ALPHA, beta=BETA, BColMajor=col, A_ROW_LEN=tk, A_NUM_ROWS=tm,
                B_ROW_LEN=tk if col else tn, B_NUM_ROWS=tn if col else tk, WG=256, M=n, N=n, SUBGROUP_SIZE=32)


def grid(pair: str, n: int) -> tuple[int, int, int]:
    """The harness's dispatch for an n^3 problem: (N / TILE_N, M / TILE_M, 1)."""
    tm, tn = PEER[pair][1][3:5]
    return (n // tn, n // tm, 1)


def timers(pair: str, shaders: Path, device: Any) -> dict[str, Timer]:
    """{"peer": ..., "port": ...}: each times ``repeat`` dispatches (after ``warmup``) with GPU timestamps."""
    from benchmarks.peer_gemm import shmem
    from coopdsl import runtime

    tokens = PEER[pair][0]
    port = shmem.variant(*shmem.VARIANTS[tokens], shmem.DEFAULT_FORMS)
    path = shaders / f"shmem{'_'.join(tokens)}.spv"
    if not path.is_file():
        raise SystemExit(f"--peer-shaders: no {path.name} in {shaders}")
    peer_binary = path.read_bytes()

    reflection = port.reflect()

    def peer(arrays: dict, n: int, warmup: int, repeat: int) -> list[float]:
        return runtime.bench(peer_binary, reflection, grid(pair, n), {"params": arrays}, spec=spec(pair, n),
                             warmup=warmup, repeat=repeat, device=device).times_ms

    def ours(arrays: dict, n: int, warmup: int, repeat: int) -> list[float]:
        return port.bench(grid(pair, n), arrays, device=device, warmup=warmup, repeat=repeat,
                          **spec(pair, n)).times_ms

    return {"peer": peer, "port": ours}


def arrays(pair: str, a: np.ndarray, b: np.ndarray, device: Any) -> dict:
    """The Params members (device arrays) for A (n x n) and B (n x n, K x N row-major), B transposed where the
    peer's configuration takes it column-major; the output ``outputO`` is zeroed."""
    from coopdsl import runtime

    from .sweep import D_DTYPE

    n = a.shape[0]
    b_mem = np.ascontiguousarray(b.T) if PEER[pair][1][6] else b
    c = np.zeros((n, n), D_DTYPE[pair])
    return {"inputAV4": runtime.array(a.view(np.uint32).reshape(-1, 4), device=device),
            "inputBV4": runtime.array(b_mem.view(np.uint32).reshape(-1, 4), device=device),
            "inputC": runtime.array(c, device=device), "outputO": runtime.array(c, device=device)}
