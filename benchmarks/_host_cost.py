"""Host cost of calls on resident arrays, shared by the benchmarks that compare an op with the launches it makes
(``ops_llm.py``'s last line, ``attention_bench.py --host-cost``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def host_costs(fns: dict[str, Callable[[], object]], dev, n: int = 200,
               rounds: int = 5) -> tuple[dict[str, float], dict[str, float]]:
    """(us a call, each waited for; us of host time a call recorded inside a batch) for each of ``fns``: 50 untimed
    calls each first, then the median of ``rounds`` interleaved rounds of ``n`` calls."""
    from coopdsl import runtime

    def per_call(fn: Callable[[], object]) -> float:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t) / n * 1e6

    def in_batch(fn: Callable[[], object]) -> float:
        with runtime.batch(dev):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            return (time.perf_counter() - t) / n * 1e6

    for fn in fns.values():
        for _ in range(50):
            fn()
    waited: dict[str, list[float]] = {name: [] for name in fns}
    batched: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            waited[name].append(per_call(fn))
            batched[name].append(in_batch(fn))
    return ({name: float(np.median(v)) for name, v in waited.items()},
            {name: float(np.median(v)) for name, v in batched.items()})
