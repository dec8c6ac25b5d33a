"""How long the driver takes to create a pipeline from each coopdsl module (first launch minus a repeat).

    python3 benchmarks/ggml/compile_time.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks._gpu import require_gpu  # noqa: E402
from coopdsl.ops import gemv as G  # noqa: E402
from coopdsl.ops import ggml_mul_mm as MM  # noqa: E402
from coopdsl.ops.quant import quantize  # noqa: E402


def first_and_again(fn) -> tuple[float, float]:
    t0 = time.perf_counter()
    fn()
    t1 = time.perf_counter()
    fn()
    return t1 - t0, time.perf_counter() - t1


def main() -> None:
    dev = require_gpu("compile_time.py")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 512)).astype(np.float16)
    w16 = rng.standard_normal((128, 512)).astype(np.float16)
    wq = quantize(rng.standard_normal((128, 512)).astype(np.float32), "q4_0")
    first, again = first_and_again(lambda: G.gemv(w16, x[:1].astype(np.float32), "f16", device=dev))
    print(f"gemv f16: first {first:.2f} s, again {again * 1e3:.1f} ms", flush=True)
    exts = dev.info.extensions if hasattr(dev.info, "extensions") else []
    print("decode vector extension:", [e for e in exts if "decode" in e.lower()], flush=True)
    wk = quantize(rng.standard_normal((128, 512)).astype(np.float32), "q4_K")
    for fmt, w in (("f16", w16), ("q4_0", wq), ("q4_K", wk)):
        for paths in ("all",):
            k = MM.kernel(fmt, False, paths)
            for tile in ("m",):
                spec = MM.TILES["float" if fmt == "f16" else "quant"][tile]

                def run(k=k, spec=spec, w=w):
                    d = np.zeros((64, 128), np.float32)
                    k.launch((1, 1, 1), w, x, d, M=128, N=64, K=512, stride_a=512, stride_b=512, stride_d=128,
                             batch_stride_a=0, batch_stride_b=0, batch_stride_d=0, base_work_group_z=0,
                             num_batches=1, k_split=512, ne02=1, ne12=1, broadcast2=1, broadcast3=1, padded_N=64,
                             BLOCK_SIZE=spec[0], BM=spec[1], BN=spec[2], BK=spec[3], SMALL=spec[4], ALIGNED=1,
                             device=dev)
                first, again = first_and_again(run)
                print(f"mul_mm {fmt} paths={paths} tile={tile}: first {first:.2f} s, again {again * 1e3:.1f} ms",
                      flush=True)


if __name__ == "__main__":
    main()
