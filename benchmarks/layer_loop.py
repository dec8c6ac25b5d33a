"""Host time of op calls recorded into one batch, looping over a model's layers, each with its own arrays.

    python3 benchmarks/layer_loop.py [--layers 8] [--tokens 20] [--repeats 7]

A decoding step calls the same ops on every layer, each layer with its own weights, KV cache and outputs, all
inside one ``runtime.batch``. Per call this prints the host microseconds spent inside the batch before it ends
(the GPU runs the batch afterwards; median over ``--repeats`` batches of ``--tokens`` steps of ``--layers``
layers), for: a q4_0 ``ops.linear`` row (4096 x 4096 weights), a decoding ``ops.attention`` (one token, 32/8
heads, 4096 keys, D 128), and the same attention with 1024 query rows (prefill, causal, f16 out). Each call
replays its op's remembered call (``coopdsl/ops/hot.py``), whose launches are recorded again from their own
bindings (``Kernel.launch``'s memo of recent launches) or, when a launch is not remembered, bound anew.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._gpu import require_gpu  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402


def per_call(dev, calls, layers: int, tokens: int, repeats: int) -> float:
    """Median host us a call of ``calls`` (one function per layer) recorded into a batch."""
    for _ in range(2):
        with runtime.batch(dev):
            for call in calls:
                call()
    times = []
    for _ in range(repeats):
        with runtime.batch(dev):
            t0 = time.perf_counter_ns()
            for _ in range(tokens):
                for call in calls:
                    call()
            times.append((time.perf_counter_ns() - t0) / (tokens * layers) / 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    dev = require_gpu("layer_loop.py")
    rng = np.random.default_rng(0)
    L = args.layers

    def arr(x):
        return runtime.array(x, device=dev)

    w = [arr(ops.quantize(rng.standard_normal((4096, 4096)).astype(np.float32), "q4_0")) for _ in range(L)]
    x = [arr(rng.standard_normal((1, 4096)).astype(np.float32)) for _ in range(L)]
    y = [runtime.zeros((1, 4096), np.float32, device=dev) for _ in range(L)]
    linear = [lambda i=i: ops.linear(x[i], w[i], "q4_0", out=y[i]) for i in range(L)]

    def attn_inputs(hq, hkv, sq, skv, d):
        return ([arr(rng.standard_normal((hq, sq, d)).astype(np.float16)) for _ in range(L)],
                [arr(rng.standard_normal((hkv, skv, d)).astype(np.float16)) for _ in range(L)],
                [arr(rng.standard_normal((hkv, skv, d)).astype(np.float16)) for _ in range(L)])

    q, k, v = attn_inputs(32, 8, 1, 4096, 128)
    o = [runtime.zeros((32, 1, 128), np.float32, device=dev) for _ in range(L)]
    decode = [lambda i=i: ops.attention(q[i], k[i], v[i], causal=True, out=o[i]) for i in range(L)]
    pq, pk, pv = attn_inputs(32, 8, 1024, 1024, 128)
    po = [runtime.zeros((32, 1024, 128), np.float16, device=dev) for _ in range(L)]
    prefill = [lambda i=i: ops.attention(pq[i], pk[i], pv[i], causal=True, out=po[i], out_dtype=np.float16)
               for i in range(L)]
    print(f"{dev.info.name}: host us a call recorded into one batch, {L} layers' own arrays in turn, "
          f"median of {args.repeats} batches of {args.tokens} steps")
    for label, calls in (("q4_0 linear, 1 x 4096 x 4096", linear),
                         ("attention, one token, 32/8 heads, 4096 keys, D 128", decode),
                         ("attention, 1024 rows, causal, f16 out", prefill)):
        print(f"- {label}: {per_call(dev, calls, L, args.tokens, args.repeats):.1f} us")


if __name__ == "__main__":
    main()
