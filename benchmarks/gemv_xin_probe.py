"""Probe: gemv_xregs with x rounded inside the product (kernel(..., xin=)) against the default, on the GPU (H200
results: benchmarks/results/gemv-xregs-inline-h200-2026-11-29.md)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np

from benchmarks._clocks import clocks_up
from benchmarks.ops_llm import weights
from coopdsl import runtime
from coopdsl.ops import gemv as G
from coopdsl.ops import gemv_xregs as GX

dev = runtime.default_device()
rng = np.random.default_rng(0)
print(dev.info.name)
for (m, k) in ((4096, 14336), (14336, 4096)):
    for fmt in ("q4_0", "q8_0", "q4_K"):
        w, _ = weights(fmt, m, k, rng)
        wr = runtime.array(G.word_view(w, fmt), device=dev)
        for n in (1, 2):
            x = (rng.standard_normal((n, k)) * 0.5).astype(np.float32)
            xr = runtime.array(x.reshape(-1, 4), device=dev)
            xh = runtime.array(x.astype(np.float16).reshape(-1, 4), device=dev)
            y = runtime.zeros((n, m), np.float32, device=dev)
            way = G.choice(fmt, n, None, m, k, dev)
            base = G._launches(wr, xr, y, fmt, n, m, k, False, way, dev)
            rows, split = G.xregs_layout(fmt, n, k)
            cands = [("default " + str(way), base)]
            for r in sorted({rows, 16}):
                for xin, xa in (("f32", xr), ("f16", xh)):
                    kern = GX.kernel(fmt, n, r, split, xin=xin)
                    cands.append((f"xin {xin} {r}x{split}", [(kern, GX.grid(m, r), (wr.view(np.uint32), xa, y), {"M": m, "K": k, "device": dev})]))
            for _, l in cands:
                for kern, *_ in l:
                    kern.compile()
            ref = None
            for name, l in cands:
                clocks_up(dev)
                ms = G.stream_ms(l, dev)
                out = y.numpy().copy()
                if ref is None:
                    ref = out
                err = np.abs(out - ref).max() / np.abs(ref).max()
                print(f"{fmt} {m}x{k} rows {n}: {name}: {ms*1e3:.1f} us  (rel diff {err:.1e})", flush=True)
