"""Written from docs/autotune.md and docs/runtime.md only (tests/runtime/test_autotune_docs_only.py runs it): an
autotuned matrix-vector product y = A x, ROWS rows per invocation, tuned over ROWS and the workgroup size, with
a short clock-up before the first config is timed."""
import numpy as np

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.autotune import Config, autotune

CONFIGS = [Config(ROWS=1, WG=64), Config(ROWS=2, WG=128), Config(ROWS=4, WG=32)]


@autotune(configs=CONFIGS, key=["m", "k"], cache=False, clock_up_ms=20.0)
@cd.kernel(workgroup_size=("WG", 1, 1))
def matvec(a: cd.Buffer[f32], x: cd.Buffer[f32], y: cd.Buffer[f32], m: u32, k: u32,
           ROWS: cd.Const[int] = 1, WG: cd.Spec[u32] = 64):
    first = cd.global_invocation_id.x * ROWS
    for r in cd.static_range(ROWS):
        row = first + r
        if row < m:
            acc = f32(0.0)
            for c in range(k):
                acc += a[row * k + c] * x[c]
            y[row] = acc


def run(device):
    m, k = 1000, 37
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    x = rng.standard_normal(k).astype(np.float32)
    y = np.zeros(m, np.float32)
    def grid(p):
        return ((p["m"] + p["WG"] * p["ROWS"] - 1) // (p["WG"] * p["ROWS"]),)
    matvec.launch(grid, a.ravel(), x, y, m, k, device=device)
    np.testing.assert_allclose(y, a @ x, rtol=1e-5, atol=1e-4)
    return matvec.last_timings


