"""The wall time of a large prefill ``ops.attention`` call against its GPU time and torch's, in one process.

    python3 benchmarks/prefill_wall.py [--heads 32] [--tokens 4096] [--d 128] [--calls 20] [--out FILE]

On resident f16 Q/K/V (non-causal and causal, f16 output into ``out``), the median microseconds per call of:

- the GPU time of the call's launches (``Kernel.bench`` of each, after the clocks are up);
- a call waited for (``ops.attention(..., out=out)``; from the second call on, a replay of kept command buffers);
- a call inside ``runtime.batch`` of ``--calls`` calls (the wall time of the whole batch over the calls), and of
  that the host time to record the calls (the ``with`` body) and the submission with its wait (its exit);
- ``Kernel.launch`` of the same launches with the same arguments, waited for (no op around it);
- torch SDPA on the same values: CUDA events around one call, and a call plus ``torch.cuda.synchronize()``;

and the largest error of head 0's output against float64 numpy, relative to its largest value.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from benchmarks.attention_bench import torch_time  # noqa: E402
from benchmarks.call_latency import per_call  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import attention_nv2 as nv2  # noqa: E402
from coopdsl.ops import flash_attention  # noqa: E402


def torch_us(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, calls: int) -> tuple[float, float] | None:
    """(CUDA-event us of one SDPA call, wall us of a call + synchronize), or None without torch on CUDA."""
    ms, _ = torch_time(q, k, v, causal, calls, 1000.0)
    if ms is None:
        return None
    import torch
    import torch.nn.functional as F

    qt, kt, vt = (torch.from_numpy(x).to("cuda")[None] for x in (q, k, v))

    def waited() -> None:
        F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
        torch.cuda.synchronize()
    return ms * 1e3, per_call(waited, calls, warm=3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--spin-us", type=float, default=None,
                    help="Device.spin_ns for the run, in us (how long a wait polls the fence before it blocks)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dev = require_gpu("prefill_wall.py")
    if args.spin_us is not None:
        dev.spin_ns = int(args.spin_us * 1000)
    h, s, d, n = args.heads, args.tokens, args.d, args.calls
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((h, s, d)).astype(np.float16) for _ in range(3))
    dq, dk, dv = (runtime.array(x, device=dev) for x in (q, k, v))
    out = runtime.zeros((h, s, d), np.float16, device=dev)
    lines = [f"`python3 benchmarks/prefill_wall.py {' '.join(sys.argv[1:])}` on {dev.info.name}: {h} heads, "
             f"{s} x {s}, D {d}, f16 in and out, resident; a wait polls the fence for {dev.spin_ns / 1e3:.0f} us "
             f"before it blocks; median us per call", "",
             "| case | GPU (kernels) | waited call | batch, a call | of it: recording | of it: submit + wait "
             "| Kernel.launch waited | torch (events) | torch waited | rel. err (head 0) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for causal in (False, True):
        def call(causal: bool = causal) -> object:
            return ops.attention(dq, dk, dv, causal=causal, out=out, out_dtype=np.float16)

        call()
        with nv2.recording() as launches:
            call()
        clocks_up(dev)
        gpu = sum(kern.bench(grid, *a, warmup=5, repeat=n, **kw).median_ms for kern, grid, a, kw in launches) * 1e3
        clocks_up(dev)
        waited = per_call(call, n, warm=3)

        def launches_waited() -> None:
            for kern, grid, a, kw in launches:
                kern.launch(grid, *a, **kw)
        clocks_up(dev)
        launched = per_call(launches_waited, n, warm=3)
        records, totals = [], []
        clocks_up(dev)
        for _ in range(5):
            t0 = time.perf_counter_ns()
            with runtime.batch(dev):
                for _ in range(n):
                    call()
                t1 = time.perf_counter_ns()
            t2 = time.perf_counter_ns()
            records.append((t1 - t0) / n / 1e3)
            totals.append((t2 - t0) / n / 1e3)
        batch, record = statistics.median(totals[1:]), statistics.median(records[1:])
        want = flash_attention.reference(q[:1], k[:1], v[:1], causal)   # the result checked on head 0
        err = float(np.abs(out.numpy()[:1].astype(np.float64) - want).max() / np.abs(want).max())
        t = torch_us(q, k, v, causal, n)
        tt = ("", "") if t is None else (f"{t[0]:.0f}", f"{t[1]:.0f}")
        lines.append(f"| {'causal' if causal else 'non-causal'} | {gpu:.0f} | {waited:.0f} | {batch:.0f} | "
                     f"{record:.0f} | {batch - record:.0f} | {launched:.0f} | {tt[0]} | {tt[1]} | {err:.1e} |")
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
