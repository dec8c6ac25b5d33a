"""Host cost of an op's replayed call inside a batch, against the Kernel.launches it makes.

    python3 benchmarks/hot_replay.py [--layers 8] [--steps 20] [--repeats 7]

An op called again with the same resident arrays replays its remembered call (``coopdsl.ops.hot.Hot``): inside a
``runtime.batch`` that records its launches again. This times, on any Vulkan device (lavapipe will do: only host
time is measured), a ``Hot`` whose call is two launches of a small kernel on an array and a view of another (as
the ops launch views), over ``--layers`` sets of arrays in turn, against the same two ``Kernel.launch`` calls made
directly: host microseconds a call inside the batch, median over ``--repeats`` batches of ``--steps`` steps. The
issue's target is at most 10 us over the launches.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import coopdsl as cd  # noqa: E402
from benchmarks._gpu import require_vulkan  # noqa: E402
from coopdsl import f32, runtime, u32  # noqa: E402
from coopdsl.ops import hot  # noqa: E402


@cd.kernel(workgroup_size=(64, 1, 1))
def axpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = y[i] + alpha * x[i]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    dev = require_vulkan("hot_replay.py")
    n, L = 256, args.layers
    xs = [runtime.array(np.ones(n, np.float32), device=dev) for _ in range(L)]
    ys = [runtime.zeros(n, np.uint32, device=dev) for _ in range(L)]

    def launches(i: int) -> list[hot.Launch]:
        y = ys[i].view(np.float32)
        return [(axpy, (4,), (xs[i], y, n, 1.0), {}), (axpy, (4,), (xs[i], y), {"n": n, "alpha": 2.0})]

    h = hot.Hot()
    for i in range(L):
        hot.run(launches(i))
        h.remember((xs[i], ys[i]), ("call",), launches(i))

    def replayed() -> None:
        for i in range(L):
            h.replay((xs[i], ys[i]), ("call",))

    def launched() -> None:
        for i in range(L):
            hot.run(launches(i))

    print(f"{dev.info.name}: host us a call inside a batch, {L} sets of arrays in turn, median of {args.repeats} "
          f"batches of {args.steps} steps")
    for label, fn in (("Hot.replay (two launches)", replayed), ("the two Kernel.launch calls", launched)):
        times = []
        for _ in range(args.repeats + 1):
            with runtime.batch(dev):
                t0 = time.perf_counter_ns()
                for _ in range(args.steps):
                    fn()
                times.append((time.perf_counter_ns() - t0) / (args.steps * L) / 1e3)
        print(f"- {label}: {statistics.median(times[1:]):.1f} us")


if __name__ == "__main__":
    main()
