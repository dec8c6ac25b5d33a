"""Bringing an idle GPU's clocks up before a timing, shared by the benchmarks (``ops_llm.py``, ``linear_prefill.py``).

An idle H100 drops its SM clock from 1980 MHz to about 350 within two seconds, and a timing taken before sustained
work brings it back can be 2-4x slow (``benchmarks/clock_ramp.py``; benchmarks/notes/llm-ops-and-ggml-h100-2026-11-27
.md, "Clocks").  Host work between timings (quantizing weights in numpy, compiling) is such an idle spell.
:func:`clocks_up` runs a copy kernel on resident arrays until its time per dispatch has come down to the fastest
this process has seen, so that what is timed next runs at full clocks.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import coopdsl as cd
from coopdsl import u32, vec4


@cd.kernel(workgroup_size=(256, 1, 1))
def copy16(src: cd.Buffer[vec4[u32]], dst: cd.Buffer[vec4[u32]], n: u32):
    """dst = src, 16 bytes an invocation: the bandwidth yardstick."""
    i = cd.global_invocation_id.x + cd.global_invocation_id.y * 65535 * 256
    if i < n:
        dst[i] = src[i]


def copy_grid(n16: int) -> tuple[int, int, int]:
    """The workgroups :data:`copy16` takes for ``n16`` 16-byte elements."""
    return (min(-(-n16 // 256), 65535), -(-n16 // (256 * 65535)), 1)


_STATE: dict[int, Any] = {}   # per device: (src, dst, n16, fastest copy seen in ms)


FIRST_MS = 1000.0   # work before the first call of a process trusts its copies: the H100 needs about 500 ms


def clocks_up(dev: Any, tol: float = 0.03, limit_s: float = 3.0) -> float:
    """Run 64 MB copies on resident arrays, about 10 ms of work a submission, until a submission's median copy is
    within ``tol`` of the fastest median this process has seen (or ``limit_s`` has passed); returns that median
    in ms.  The first call of a process has no fastest yet: it runs :data:`FIRST_MS` of work first (at idle
    clocks the copies are slow but steady for about half a second, then fall to their full-clock time at
    once, so steadiness alone proves nothing) and then until two successive submissions agree within ``tol``."""
    st = _STATE.get(id(dev))
    if st is None:
        from coopdsl import runtime

        n16 = (64 << 20) // 16
        st = [runtime.array(np.zeros((n16, 4), np.uint32), device=dev),
              runtime.array(np.zeros((n16, 4), np.uint32), device=dev), n16, float("inf")]
        _STATE[id(dev)] = st
    src, dst, n16, best = st
    grid = copy_grid(n16)
    min_ms = FIRST_MS if best == float("inf") else 0.0
    t0, done, prev = time.perf_counter(), 0.0, float("inf")
    per = 40
    while True:
        times = copy16.bench(grid, src, dst, n16, device=dev, warmup=0, repeat=per).times_ms
        med = float(np.median(times))
        done += sum(times)
        per = max(10, min(400, int(10.0 / med)))
        settled = med <= best * (1 + tol) if best < float("inf") else abs(med - prev) <= tol * prev
        best, prev = min(best, med), med
        st[3] = best
        if (done >= min_ms and settled) or time.perf_counter() - t0 > limit_s:
            return med


def warm_median_ms(dev: Any, kernel: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any], repeat: int,
                   warmup_ms: float = 200.0) -> float:
    """The median GPU ms of ``kernel`` (``Kernel.bench``, ``repeat`` timed dispatches) after :func:`clocks_up` and
    about ``warmup_ms`` of untimed dispatches of it (3 to 5000, by a first probe of two): how the attention
    benchmarks time each launch."""
    clocks_up(dev)
    probe = kernel.bench(grid, *args, warmup=1, repeat=2, **kwargs)
    warm = min(5000, max(3, int(warmup_ms / max(probe.median_ms, 1e-3))))
    return float(kernel.bench(grid, *args, warmup=warm, repeat=repeat, **kwargs).median_ms)
