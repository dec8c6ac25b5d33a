"""What ``ops.attention(..., tune=True)`` picks for decoding shapes on this GPU: each decode kernel ("lanes", f32
lane = key; "mma", cooperative matrices) with the default chunk count and its multiples, in a fresh autotune cache.

    python3 benchmarks/attention_decode_tune.py [--dry-run]

Prints, per shape (Hq/Hkv heads, Sq query rows, Skv keys, D; causal), the rows a K/V head serves, the kernel the
untuned call runs, the choice (chunks per K/V head, kernel; ``[]``: the default) and the four fastest candidates
(GPU timestamps of every kernel a call launches, ms). ``--dry-run`` lists the shapes and the decode kernels that
take each (as the interpreter sees them) without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["COOPDSL_AUTOTUNE_CACHE"] = str(Path(tempfile.mkdtemp()) / "autotune.json")

from benchmarks._gpu import require_gpu  # noqa: E402
from coopdsl import ops, runtime  # noqa: E402
from coopdsl.ops import attention_decode as AD  # noqa: E402
from coopdsl.ops import attention_tune as AT  # noqa: E402
from coopdsl.ops import op_tune  # noqa: E402

# (Hq, Hkv, Sq, Skv, D): 4, 5, 6, 8 and 16 rows a K/V head at D 128, 4 at D 64
SHAPES = [(32, 8, 1, 16384, 128), (40, 8, 1, 32768, 128), (16, 8, 3, 32768, 128), (24, 8, 2, 32768, 128),
          (32, 8, 2, 65536, 128), (32, 8, 4, 16384, 128), (32, 8, 1, 32768, 64)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="list the shapes and their decode kernels, time nothing")
    if ap.parse_args().dry_run:
        for hq, hkv, sq, skv, d in SHAPES:
            dims = (hq, sq, d, hkv, skv)
            print(f"Hq/Hkv {hq}/{hkv} Sq {sq} Skv {skv} D {d}: {AD.rows_per_head(dims)} rows a K/V head, kernels "
                  f"{', '.join(AD.hows(dims))}, default {AD.default_how(dims)}")
        return
    dev = require_gpu("attention_decode_tune.py")
    rng = np.random.default_rng(0)
    print(f"{dev.info.name}: ops.attention(..., causal=True, tune=True) on resident f16 arrays\n")
    print("| Hq/Hkv | Sq | Skv | D | rows a K/V head | default kernel | picked (chunks, kernel) | fastest four, ms |")
    print("|---|---|---|---|---|---|---|---|")
    for hq, hkv, sq, skv, d in SHAPES:
        q = runtime.array(rng.standard_normal((hq, sq, d)).astype(np.float16), device=dev)
        k = runtime.array(rng.standard_normal((hkv, skv, d)).astype(np.float16), device=dev)
        v = runtime.array(rng.standard_normal((hkv, skv, d)).astype(np.float16), device=dev)
        ops.attention(q, k, v, causal=True, tune=True)
        entries = json.loads(Path(os.environ["COOPDSL_AUTOTUNE_CACHE"]).read_text())["entries"]
        dims = (hq, sq, d, hkv, skv)
        prob = AT.problem(dims, causal=True, window=0, masked=False, acc="f32", f16_out=False)
        e = next(v for k_, v in entries.items() if k_.startswith(f"{AT.DECODE_PREFIX}|{prob}|"))
        fastest = ", ".join(f"{name} {ms:.4f}" for name, ms in sorted(e["times_ms"].items(), key=lambda t: t[1])[:4])
        print(f"| {hq}/{hkv} | {sq} | {skv} | {d} | {AD.rows_per_head(dims)} | {AD.default_how(dims, dev)} | "
              f"{e['chunks']} | {fastest} |", flush=True)
        for x in (q, k, v):
            x.free()
    op_tune.reset_all()


if __name__ == "__main__":
    main()
