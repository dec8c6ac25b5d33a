"""Where the wall time of a waited call goes: the Vulkan round trip, a launch's host work, and an op's planning.

    python3 benchmarks/call_latency.py [--calls 300] [--profile] [--out FILE]

Parts, each the median microseconds per call over ``--calls`` calls after 50 untimed ones:

- the round trip of an empty command buffer (begin, end, ``vkQueueSubmit`` with the fence, wait), with the
  fence polled (``Device.spin_ns``) and with a blocking ``vkWaitForFences``;
- the same with one barrier and one dispatch of a 64-invocation kernel recorded;
- ``Kernel.launch`` of that kernel on resident arrays (immediate: record, submit, wait);
- torch where present: one tiny kernel plus ``torch.cuda.synchronize()`` (the CUDA round trip), and the
  decoding attention, 1 x 4096 x 4096 product and prefill attention below, each plus a synchronize;
- ops calls a decoding loop makes (one token of attention, a 1 x 4096 x 4096 f16 product, q4_0 GEMV, and q4_0
  GEMV over 8 layers' weights in turn, as a model's layers call it) and a prefill attention, on resident
  arrays, with ``out=`` and without it (a new output every call), each waited for;
  ``--profile`` prints cProfile's top functions for the calls without ``out``.
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import io
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import coopdsl as cd  # noqa: E402
from benchmarks._gpu import require_vulkan  # noqa: E402
from coopdsl import f32, ops, runtime, u32  # noqa: E402
from coopdsl.runtime.batch import BEGIN_INFO  # noqa: E402


@cd.kernel(workgroup_size=(64, 1, 1))
def bump(y: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = y[i] + 1.0


def per_call(fn: Callable[[], object], calls: int, warm: int = 50) -> float:
    """Median microseconds of ``fn`` over ``calls`` calls, after ``warm`` untimed ones."""
    for _ in range(warm):
        fn()
    times = []
    for _ in range(calls):
        t = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t)
    return statistics.median(times) / 1e3


def round_trips(dev, calls: int) -> list[tuple[str, float]]:
    v = dev.vk
    y = runtime.zeros(64, np.float32, device=dev)
    bump.launch((1,), y, 64)
    out = []

    def empty() -> None:
        cb = dev.acquire_command_buffer()
        v.call("vkBeginCommandBuffer", cb, ctypes.byref(BEGIN_INFO))
        v.call("vkEndCommandBuffer", cb)
        dev.submit_and_wait(cb)
        dev.release_command_buffer(cb)

    def submit_only() -> None:
        cb = dev.acquire_command_buffer()
        v.call("vkBeginCommandBuffer", cb, ctypes.byref(BEGIN_INFO))
        v.call("vkEndCommandBuffer", cb)
        dev._submit_cbs[0] = cb
        v.call("vkResetFences", dev.handle, 1, dev._fence_ref)
        t = time.perf_counter_ns()
        v.call("vkQueueSubmit", dev.queue, 1, dev._submit_ref, dev.fence)
        submit_ns.append(time.perf_counter_ns() - t)
        v.call("vkWaitForFences", dev.handle, 1, dev._fence_ref, 1, 10 ** 10)
        dev.release_command_buffer(cb)

    spin = dev.spin_ns
    out.append(("empty command buffer, fence polled", per_call(empty, calls)))
    dev.spin_ns = 0
    out.append(("empty command buffer, blocking wait", per_call(empty, calls)))
    dev.spin_ns = spin
    submit_ns: list[int] = []
    per_call(submit_only, calls)
    out.append(("  of which vkQueueSubmit alone", statistics.median(submit_ns) / 1e3))
    out.append(("Kernel.launch (1 workgroup, resident array), fence polled", per_call(lambda: bump.launch((1,), y, 64),
                                                                                     calls)))
    dev.spin_ns = 0
    out.append(("Kernel.launch, blocking wait", per_call(lambda: bump.launch((1,), y, 64), calls)))
    dev.spin_ns = spin
    with runtime.batch(dev) as b:
        out.append(("Kernel.launch recorded in a batch (host)", per_call(lambda: bump.launch((1,), y, 64), calls)))
        b.submit()
    return out


def torch_calls(calls: int) -> list[tuple[str, float]]:
    """torch's waited calls on the GPU: the round trip, and the ops of :func:`op_calls` (each + synchronize)."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    x = torch.zeros(64, device="cuda")
    g = torch.Generator(device="cuda").manual_seed(1)

    def res(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16, generator=g)

    q1, k, v = res(1, 32, 1, 128), res(1, 8, 4096, 128), res(1, 8, 4096, 128)
    xm, w = res(1, 4096), res(4096, 4096)
    qp, kp, vp = res(1, 32, 1024, 128), res(1, 8, 1024, 128), res(1, 8, 1024, 128)

    def waited(fn):
        def one() -> None:
            fn()
            torch.cuda.synchronize()
        return per_call(one, calls)
    return [("torch: x.add_(1) + synchronize", waited(lambda: x.add_(1.0))),
            ("torch: SDPA decode (1 token, 32/8 heads, 4096 keys, D128)",
             waited(lambda: F.scaled_dot_product_attention(q1, k, v, enable_gqa=True))),
            ("torch: matmul 1x4096x4096 f16", waited(lambda: torch.matmul(xm, w.T))),
            ("torch: SDPA prefill 32/8x1024 D128 causal",
             waited(lambda: F.scaled_dot_product_attention(qp, kp, vp, is_causal=True, enable_gqa=True)))]


def op_calls(dev, calls: int, profile: bool) -> list[tuple[str, float]]:
    rng = np.random.default_rng(1)

    def res(shape, dtype=np.float16):
        return runtime.array(rng.standard_normal(shape).astype(dtype), device=dev)

    q1, k, v = res((32, 1, 128)), res((8, 4096, 128)), res((8, 4096, 128))
    o1 = runtime.zeros((32, 1, 128), np.float32, device=dev)
    x, w = res((1, 4096)), res((4096, 4096))
    y = runtime.zeros((1, 4096), np.float32, device=dev)
    wq = ops.quantize(rng.standard_normal((4096, 4096)).astype(np.float32), "q4_0")
    wq = runtime.array(wq, device=dev) if isinstance(wq, np.ndarray) else wq
    xf = res((1, 4096), np.float32)
    yq = runtime.zeros((1, 4096), np.float32, device=dev)
    qp, kp, vp = res((32, 1024, 128)), res((8, 1024, 128)), res((8, 1024, 128))
    op16 = runtime.zeros((32, 1024, 128), np.float16, device=dev)
    # a loop over 8 layers, each its own q4_0 weights and output, one x: a call a layer, each waited for
    lw = [runtime.array(ops.quantize(rng.standard_normal((4096, 4096)).astype(np.float32), "q4_0"), device=dev)
          for _ in range(8)]
    ly = [runtime.zeros((1, 4096), np.float32, device=dev) for _ in range(8)]
    layer = [0]

    def next_layer() -> object:
        i = layer[0] = (layer[0] + 1) % 8
        return ops.linear(xf, lw[i], "q4_0", out=ly[i])

    cases: list[tuple[str, Callable[[], object]]] = [
        ("linear q4_0 1 row, a loop over 8 layers' weights, out=", next_layer),
        ("attention decode, out=", lambda: ops.attention(q1, k, v, causal=True, out=o1)),
        ("attention decode, new out", lambda: ops.attention(q1, k, v, causal=True)),
        ("matmul 1x4096x4096 f16, out=", lambda: ops.matmul(x, w, transpose_b=True, out=y)),
        ("matmul 1x4096x4096 f16, new out", lambda: ops.matmul(x, w, transpose_b=True)),
        ("linear q4_0 1 row, out=", lambda: ops.linear(xf, wq, "q4_0", out=yq)),
        ("linear q4_0 1 row, new out", lambda: ops.linear(xf, wq, "q4_0")),
        ("attention prefill 32/8x1024 D128 causal f16 out, out=",
         lambda: ops.attention(qp, kp, vp, causal=True, out_dtype=np.float16, out=op16)),
        ("attention prefill 32/8x1024 D128 causal f16 out, new out",
         lambda: ops.attention(qp, kp, vp, causal=True, out_dtype=np.float16)),
    ]
    captured = [0]
    try:
        from coopdsl.runtime import graph
    except ImportError:   # (a tree from before kept command buffers, for an A/B run)
        graph = None
    if graph is not None:
        real_capture = graph.capture

        def counting(*a, **kw):
            captured[0] += 1
            return real_capture(*a, **kw)
        graph.capture = counting
    out = []
    for name, fn in cases:
        made = captured[0]
        try:
            us = per_call(fn, calls)
        except Exception as e:  # noqa: BLE001  (a probe: report and go on)
            out.append((f"{name}: {type(e).__name__}: {e}", float("nan")))
            continue
        out.append((f"{name} ({captured[0] - made} command buffers recorded to keep)", us))
        if profile and "new out" in name:
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(100):
                fn()
            pr.disable()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(40)
            print(f"--- profile of 100 calls: {name}\n{s.getvalue()}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    require_vulkan("call_latency.py")
    dev = runtime.default_device()
    print(f"device: {dev!r}")
    rows = round_trips(dev, args.calls) + torch_calls(args.calls) + op_calls(dev, args.calls, args.profile)
    print("| part | us per call (median) |\n|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.1f} |")


if __name__ == "__main__":
    main()
