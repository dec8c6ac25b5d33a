"""What an op call costs the host inside a ``runtime.batch``, against the launches it makes.

    python3 benchmarks/op_batch_cost.py [--calls 200] [--repeats 3] [--out FILE]

Two ops whose calls are two launches each, on resident arrays with a resident ``out=`` (a decoding loop's
calls, replayed from the op's remembered call, ``coopdsl/ops/hot.py``): ``ops.linear`` of one row of x on
18944 x 3584 q4_0 weights (x's rounding, then the product) and ``ops.attention`` of one token of 28 query heads
on 4 K/V heads of 5000 keys, D 128 (the split kernel, then the combine). For each, inside a batch of
``--calls`` calls: the op itself; ``hot.run`` of the very launches it makes (``Kernel.launch`` of each, in
turn); and each launch alone, repeated.  "record": host microseconds a call before the batch ends; "end": the
batch's submission and wait, a call.  Then the median of ``--calls`` waited calls of the op.  The issue's
target is an op call at most 10 us over the launches it makes.  Needs a GPU that runs the ops' kernels.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._clocks import clocks_up  # noqa: E402
from benchmarks._gpu import require_gpu  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import hot  # noqa: E402

LINEAR = sys.modules["coopdsl.ops.linear"]              # (the modules: ops.linear is the function)
ATTENTION = sys.modules["coopdsl.ops.flash_attention"]


def batch_us(dev: object, fn, calls: int) -> tuple[float, float]:
    """(host us a call recording ``calls`` calls of ``fn`` into one batch, us a call of the batch's end)."""
    b = runtime.batch(dev)
    b.__enter__()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    b.__exit__(None, None, None)
    return (t1 - t0) / calls * 1e6, (time.perf_counter() - t1) / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    dev = require_gpu("op_batch_cost.py")
    rng = np.random.default_rng(0)
    m, k = 18944, 3584
    w = ops.quantize(rng.standard_normal((256, k)).astype(np.float32), "q4_0")
    w = runtime.array(np.tile(w, (m // 256 + 1, 1))[:m], device=dev)
    x = runtime.array(rng.standard_normal((1, k)).astype(np.float32), device=dev)
    y = runtime.zeros((1, m), np.float32, device=dev)
    q = runtime.array(rng.standard_normal((28, 1, 128)).astype(np.float16), device=dev)
    kv = [runtime.array(rng.standard_normal((4, 5000, 128)).astype(np.float16), device=dev) for _ in range(2)]
    o = runtime.zeros((28, 1, 128), np.float32, device=dev)
    cases = [("ops.linear, q4_0, 1 x 3584 @ 18944 x 3584", LINEAR, lambda: ops.linear(x, w, "q4_0", out=y)),
             ("ops.attention, 1 token, 28/4 heads, 5000 keys, D 128", ATTENTION,
              lambda: ops.attention(q, kv[0], kv[1], out=o))]
    lines = [f"`python3 benchmarks/op_batch_cost.py {' '.join(sys.argv[1:])}` on {dev.info.name}, {date.today()}; "
             f"host us a call, {args.calls} calls a batch, {args.repeats} batches", "",
             "| op | what is recorded | record, us a call | end, us a call |", "|---|---|---|---|"]
    clocks_up(dev)
    for name, module, fn in cases:
        for _ in range(20):
            fn()
        launches = module._HOT.launches
        variants = [("the op", fn), ("hot.run of its launches", lambda launches=launches: hot.run(launches))]
        variants += [(f"launch {i + 1} alone ({kern.name})",
                      lambda kern=kern, g=g, a=a, kw=kw: kern.launch(g, *a, **kw))
                     for i, (kern, g, a, kw) in enumerate(launches)]
        for what, vf in variants:
            r = [batch_us(dev, vf, args.calls) for _ in range(args.repeats)]
            lines.append(f"| {name} | {what} | {', '.join(f'{a:.1f}' for a, _ in r)} | "
                         f"{', '.join(f'{e:.1f}' for _, e in r)} |")
            print(lines[-1], flush=True)
        ts = []
        for _ in range(args.calls):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        lines.append(f"| {name} | waited calls (median) | {np.median(ts) * 1e6:.1f} | |")
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
