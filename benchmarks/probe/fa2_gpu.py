import sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from coopdsl import runtime
from benchmarks._clocks import clocks_up
from benchmarks.attention_bench import coopdsl_time, torch_time
import fa2

dev = runtime.default_device()
print(dev.name if hasattr(dev, "name") else dev)
rng = np.random.default_rng(0)
SHAPES = [(32, 4096, 128, False), (32, 4096, 128, True), (32, 4096, 64, False), (32, 4096, 64, True),
          (16, 8192, 128, False), (16, 8192, 128, True)]
VARIANTS = [(64, 4), (32, 4), (64, 2), (32, 8), (64, 8), (16, 4)]
for h, s, d, causal in SHAPES:
    qn = rng.standard_normal((h, s, d)).astype(np.float16)
    kn = rng.standard_normal((h, s, d)).astype(np.float16)
    vn = rng.standard_normal((h, s, d)).astype(np.float16)
    q, k, v = (runtime.array(x, device=dev) for x in (qn, kn, vn))
    out = runtime.zeros((h, s, d), np.float32, device=dev)
    fl = 4.0 * h * s * s * d / (2 if causal else 1)
    row = f"| {h}x{s} D{d} {'causal' if causal else ''} |"
    base, parts, _ = coopdsl_time(dev, q, k, v, out, causal, "f32", 20, 200.0)
    row += f" ops {base*1e3:.0f} us ({fl/base/1e9:.0f}) |"
    want = fa2.reference(qn[:1], kn[:1], vn[:1], causal)
    for bc, subs in VARIANTS:
        try:
            kern = fa2.kernel(d, bc, subs, causal)
            grid = (s // (16 * subs), h, 1)
            args = (q, k, v, out, s, 1, float(d ** -0.5 * fa2.LOG2E))
            kern.launch(grid, *args, device=dev)
            got = out.numpy()[:1].astype(np.float64)
            err = float(np.abs(got - want).max() / np.abs(want).max())
            if (bc, subs) == (64, 4) and not causal:
                st = kern.statistics(device=dev)
                print("stats", d, st[0]["statistics"] if st else None, flush=True)
            clocks_up(dev)
            r = kern.bench(grid, *args, device=dev, warmup=20, repeat=20)
            ms = r.median_ms
            row += f" bc{bc} s{subs}: {ms*1e3:.0f} us ({fl/ms/1e9:.0f}) err {err:.1e} |"
        except Exception as e:  # noqa
            row += f" bc{bc} s{subs}: {type(e).__name__}: {str(e)[:80]} |"
    t, note = torch_time(qn, kn, vn, causal, 20, 1000.0)
    row += f" torch {t*1e3:.0f} us ({fl/t/1e9:.0f}) |" if t else f" torch {note} |"
    print(row, flush=True)
    for x in (q, k, v, out):
        x.free()
