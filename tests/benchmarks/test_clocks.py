"""benchmarks/_clocks.py: the clock-up runs a second of copies before a process trusts its timings, then stops
as soon as a copy is as fast as the fastest it has seen (a fake GPU whose copies speed up after some work)."""

import sys
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import _clocks as C  # noqa: E402


class _Fake:
    """Copies that take ``slow`` ms until ``ramp`` ms of work have run, then ``fast`` (an idle GPU's clocks)."""

    def __init__(self, slow=0.09, fast=0.05, ramp=470.0):
        self.slow, self.fast, self.ramp, self.done, self.calls = slow, fast, ramp, 0.0, 0

    def bench(self, grid, src, dst, n, device=None, warmup=0, repeat=1):
        self.calls += 1
        times = []
        for _ in range(repeat):
            t = self.slow if self.done < self.ramp else self.fast
            self.done += t
            times.append(t)
        return types.SimpleNamespace(times_ms=times, median_ms=float(np.median(times)))


def test_the_first_call_waits_out_the_ramp_then_later_calls_stop_at_the_fastest(monkeypatch):
    fake = _Fake()
    monkeypatch.setattr(C, "copy16", fake)
    monkeypatch.setattr(C, "_STATE", {})
    dev = object()
    import coopdsl.runtime as rt

    monkeypatch.setattr(rt, "array", lambda a, device=None: a)
    first = C.clocks_up(dev)
    assert first == fake.fast and fake.done >= C.FIRST_MS   # not fooled by the steady slow copies before 0.47 s
    # idle again: the clocks fell; the next call runs until a copy is as fast as the fastest seen, no longer
    fake.done, before = 0.0, fake.calls
    assert C.clocks_up(dev) == fake.fast and fake.done < C.FIRST_MS
    spent = fake.done
    assert fake.ramp <= spent < fake.ramp + 20                # (about one submission of 10 ms past the ramp)
    assert fake.calls > before
    # clocks already up: one submission
    before = fake.calls
    assert C.clocks_up(dev) == fake.fast and fake.calls == before + 1
