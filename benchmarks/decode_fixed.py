"""Where one-token decoding's time goes at short KV caches: the decode kernel against pure reads of the same
bytes, over a range of cache lengths, with a straight line fitted to each (time = fixed + bytes / rate).

    python3 benchmarks/decode_fixed.py [--lengths 4096,8192,16384,32768,65536,131072] [--heads 32/8] [--d 128]

Each length is one token of ``--heads`` query/K/V heads at head size ``--d`` (f16 Q, K, V resident, f32 output).
Rows, each timed with ``Kernel.bench`` (GPU timestamps around each dispatch, median of ``--repeat`` after
``benchmarks._clocks.clocks_up`` and about 200 ms of the same work):

* ``decode``: ``ops.attention``'s decode kernel as it runs (``attention_decode.plan``, default chunks, the
  last workgroup of a head combining its chunks);
* ``decode unfused``: the same kernel writing every chunk's part, and the separate combine launch (both summed);
* ``decode, loads=2``: the kernel with its first step's K and V loaded before the prologue's barrier and each
  next step's during the arithmetic (``attention_decode.kernel``'s ``loads``);
* ``decode, split N`` (``--splits``): the decode kernel with N lanes sharing a key's dot products with Q
  (``attention_decode.kernel``'s ``split``);
* ``decode, N chunks`` (``--chunks``): the decode kernel with N chunks per K/V head;
* ``decode, G rows`` (``--groups``): the decode kernel for G query heads a K/V head on the same K and V (its
  arithmetic grows with the rows, its reads do not), fused and unfused;
* ``read, decode grid``: a kernel that only reads the same K and V bytes with the decode kernel's grid
  (chunks x K/V heads, 128 invocations each, 16 loads of 16 bytes in flight a lane), XORs them and stores
  nothing (unless the XOR is a magic value): the partition's own cost, with no arithmetic, prologue or combine;
* ``read, wide grid``: the same reads with one 16-byte load an invocation over as many workgroups as it takes
  (as ``copy16`` does), the device's read rate;
* ``copy16``: ``benchmarks/_clocks.copy16`` over as many bytes as K and V hold (read and write), the yardstick of
  ``attention_bench.py``; its "time" column is that of half the bytes (the read + write bytes it moves
  equal K and V's).

The fit uses the lengths from ``--fit-from`` on; "fixed" is its intercept, "GB/s" its slope's rate.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import date
from pathlib import Path
from typing import no_type_check

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import coopdsl as cd  # noqa: E402
from benchmarks._clocks import copy16, copy_grid, warm_median_ms  # noqa: E402
from benchmarks._gpu import require_vulkan  # noqa: E402
from coopdsl import runtime, u32, vec4  # noqa: E402
from coopdsl.ops import attention_decode as AD  # noqa: E402
from coopdsl.ops import device_caps as caps  # noqa: E402

UNROLL = 16   # loads in flight a lane (the decode kernel issues 16 of K and 16 of V at D 128)


@cd.kernel(workgroup_size=(128, 1, 1))
@no_type_check
def read_chunks(k: cd.Buffer[vec4[u32]], v: cd.Buffer[vec4[u32]], sink: cd.Buffer[u32], per_head: u32,
                chunk: u32):
    """Read chunk ``workgroup_id.x`` (``chunk`` 16-byte pieces) of K and V head ``workgroup_id.y`` (``per_head``
    pieces a head): UNROLL loads of each in flight a lane."""
    t = cd.local_invocation_index
    base = cd.workgroup_id.y * per_head + cd.workgroup_id.x * chunk
    end = min(cd.workgroup_id.x * chunk + chunk, per_head) + cd.workgroup_id.y * per_head
    acc = vec4[u32](0)
    for at in range(base + t, end, 128 * UNROLL):
        ks = [k[min(at + 128 * u, end - 1)] for u in cd.static_range(UNROLL)]
        vs = [v[min(at + 128 * u, end - 1)] for u in cd.static_range(UNROLL)]
        for u in cd.static_range(UNROLL):
            acc = acc ^ ks[u] ^ vs[u]
    if acc.x == 0x9E3779B9 and acc.y == 0x7F4A7C15:
        sink[0] = acc.z


@cd.kernel(workgroup_size=(256, 1, 1))
@no_type_check
def read16(k: cd.Buffer[vec4[u32]], v: cd.Buffer[vec4[u32]], sink: cd.Buffer[u32], n: u32):
    """One 16-byte load of K and one of V an invocation (``n`` pieces each)."""
    i = cd.global_invocation_id.x + cd.global_invocation_id.y * 65535 * 256
    if i < n:
        a = k[i] ^ v[i]
        if a.x == 0x9E3779B9 and a.y == 0x7F4A7C15:
            sink[0] = a.z


def bench_ms(dev, launches, repeat: int, warmup_ms: float = 200.0) -> float:
    """Summed median GPU ms of ``launches`` (each ``(kernel, grid, args, kwargs)``) timed one by one."""
    return sum(warm_median_ms(dev, kernel, grid, args, kwargs, repeat, warmup_ms)
               for kernel, grid, args, kwargs in launches)


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through (xs, ys)."""
    slope, icpt = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(icpt), float(slope)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="4096,8192,16384,32768,65536,131072")
    ap.add_argument("--heads", default="32/8")
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--fit-from", type=int, default=8192)
    ap.add_argument("--chunks", default="", help="extra decode rows with these chunks per K/V head, N,...")
    ap.add_argument("--splits", default="", help="extra decode rows with these lanes a key's scores, N,...")
    ap.add_argument("--groups", default="", help="extra decode rows with G query heads a K/V head (same K/V), G,...")
    args = ap.parse_args()
    hq, hkv = (int(x) for x in args.heads.split("/"))
    d = args.d
    lengths = [int(x) for x in args.lengths.split(",")]
    dev = require_vulkan("decode_fixed.py")   # (the kernels need no cooperative matrices)
    rng = np.random.default_rng(0)
    rows: dict[str, list[float]] = {}
    kv_bytes: list[int] = []
    sink = runtime.zeros((4,), np.uint32, device=dev)
    chunk_info = []
    for skv in lengths:
        q = runtime.array(rng.standard_normal((hq, 1, d)).astype(np.float16), device=dev)
        k = runtime.array(rng.standard_normal((hkv, skv, d)).astype(np.float16), device=dev)
        v = runtime.array(rng.standard_normal((hkv, skv, d)).astype(np.float16), device=dev)
        out = runtime.zeros((hq, 1, d), np.float32, device=dev)
        nbytes = 2 * hkv * skv * d * 2
        kv_bytes.append(nbytes)
        dims = (hq, 1, d, hkv, skv)
        common = dict(causal=True, mask=None, window=0, scale=d ** -0.5, softcap=0.0, out_dtype=np.float32,
                      out=out, dev=dev)
        plan = AD.plan(q, k, v, dims, how="lanes", **common)
        unfused = AD.plan(q, k, v, dims, how="lanes", fused=False, **common)
        chunks = plan[0][1][0]
        chunk_info.append(chunks)
        rows.setdefault("decode", []).append(bench_ms(dev, plan, args.repeat))
        rows.setdefault("decode unfused", []).append(bench_ms(dev, unfused, args.repeat))
        loads2 = AD.plan(q, k, v, dims, how="lanes", loads=2, **common)
        rows.setdefault("decode, loads=2", []).append(bench_ms(dev, loads2, args.repeat))
        for sp in [int(x) for x in args.splits.split(",") if x]:
            ps = AD.plan(q, k, v, dims, how="lanes", split=sp, **common)
            rows.setdefault(f"decode, split {sp}", []).append(bench_ms(dev, ps, args.repeat))
        for c in [int(x) for x in args.chunks.split(",") if x]:
            pc = AD.plan(q, k, v, dims, how="lanes", chunks=c, **common)
            rows.setdefault(f"decode, {c} chunks", []).append(bench_ms(dev, pc, args.repeat))
        for g in [int(x) for x in args.groups.split(",") if x]:
            q1 = runtime.array(rng.standard_normal((hkv * g, 1, d)).astype(np.float16), device=dev)
            o1 = runtime.zeros((hkv * g, 1, d), np.float32, device=dev)
            for fused in (True, False):
                p1 = AD.plan(q1, k, v, (hkv * g, 1, d, hkv, skv), how="lanes", fused=fused,
                             **{**common, "out": o1})
                name = f"decode{'' if fused else ' unfused'}, {g} rows ({hkv * g}/{hkv} heads)"
                rows.setdefault(name, []).append(bench_ms(dev, p1, args.repeat))
            q1.free()
            o1.free()
        k4, v4 = k.view(np.uint32), v.view(np.uint32)
        per_head = skv * d // 8
        size, n = AD.chunking(skv, chunks)
        grid = (n, hkv, 1)
        rc = [(read_chunks, grid, (k4, v4, sink, per_head, size * d // 8), {"device": dev})]
        rows.setdefault("read, decode grid", []).append(bench_ms(dev, rc, args.repeat))
        n16 = hkv * per_head
        rw = [(read16, copy_grid(n16), (k4, v4, sink, n16), {"device": dev})]
        rows.setdefault("read, wide grid", []).append(bench_ms(dev, rw, args.repeat))
        half = nbytes // 2 // 16
        src = runtime.zeros((half, 4), np.uint32, device=dev)
        dst = runtime.zeros((half, 4), np.uint32, device=dev)
        cp = [(copy16, copy_grid(half), (src, dst, half), {"device": dev})]
        rows.setdefault("copy16 (half the bytes each way)", []).append(bench_ms(dev, cp, args.repeat))
        for a in (q, k, v, out, src, dst):
            a.free()
    head = " | ".join(f"{s} keys ({c} chunks)" for s, c in zip(lengths, chunk_info))
    lines = [f"`python3 benchmarks/decode_fixed.py {' '.join(sys.argv[1:])}` on {dev.info.name} "
             f"({caps.shader_cores(dev)} SMs), {date.today()} ({platform.node()}); {hq}/{hkv} heads, D {d}, one "
             f"token; us per call (K/V MB: {', '.join(f'{b / 1e6:.0f}' for b in kv_bytes)})", "",
             f"| kernel | {head} | fixed (fit from {args.fit_from}) | GB/s (fit) | of copy16's rate, at "
             f"{lengths[-1]} keys |", "|---|" + "---|" * (len(lengths) + 3)]
    use = [i for i, s in enumerate(lengths) if s >= args.fit_from]
    copy_ms = rows["copy16 (half the bytes each way)"]
    for name, ms in rows.items():
        icpt, slope = fit([kv_bytes[i] for i in use], [ms[i] for i in use])
        ratio = copy_ms[-1] / ms[-1]
        cells = " | ".join(f"{m * 1e3:.1f}" for m in ms)
        lines.append(f"| {name} | {cells} | {icpt * 1e3:.1f} us | {1e-6 / slope:.0f} | {ratio:.2f} |")
    lines.append("")
    for kern in (AD.kernel(d, hq // hkv, q_f16=True), read_chunks):
        try:
            stats = kern.statistics(device=dev)
        except Exception as e:   # (a driver without VK_KHR_pipeline_executable_properties)
            stats = [{"name": f"no statistics: {e}"}]
        for st in stats:
            lines.append(f"- {kern.name}: " + ", ".join(f"{key} {val}" for key, val in st.items()))
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
