"""coopdsl's fastest GEMM per type pair, as benchmarked: the kernel of ``coopdsl.ops.gemm_tiled`` and the
configurations ``run.py`` lets ``coopdsl.autotune`` choose from for each type pair (``CONFIGS``).

``PAIRS`` names the type pairs the issue's targets are set for; the 8-bit pairs take B K-major (N x K), the
layout their fastest configurations need on NVIDIA (see coopdsl/ops/gemm_tiled.py and docs/benchmarks.md).
"""

import coopdsl as cd
from coopdsl import bf16, f16, f32, i8, i32, u8, u32
from coopdsl.ops.gemm_tiled import SHARED_LIMIT, depth, grid, make, shared_bytes
from coopdsl.ops.gemm_tiled import config as _cfg

__all__ = ["PAIRS", "CONFIGS", "SHARED_LIMIT", "depth", "grid", "make", "shared_bytes", "kernel"]

# name -> (A/B component type, accumulator and D component type, B given K-major)
PAIRS = {"f16-f16": (f16, f16, False), "f16-f32": (f16, f32, False), "bf16-f32": (bf16, f32, False),
         "s8-s32": (i8, i32, True), "u8-u32": (u8, u32, True)}

_F32ACC = (_cfg(128, 128, 32, 64, 64), _cfg(128, 128, 32, 64, 64, group=1), _cfg(128, 128, 32, 64, 64, a_first=0),
           _cfg(256, 128, 32, 64, 64), _cfg(128, 128, 64, 32, 64), _cfg(128, 256, 32, 64, 64),
           _cfg(128, 128, 32, 64, 64, stages=2))
# 16 x 8 accumulator tiles: offered for f16 inputs on NVIDIA (not for bf16 there)
_F16_8 = (_cfg(128, 256, 32, 64, 64, ln=8), _cfg(128, 256, 32, 64, 64, ln=8, a_first=0),
          _cfg(128, 128, 32, 64, 64, ln=8))
_INT8 = (_cfg(128, 128, 128, 64, 32), _cfg(128, 128, 128, 32, 64), _cfg(128, 128, 128, 64, 32, group=1),
         _cfg(128, 256, 64, 64, 64), _cfg(128, 128, 64, 64, 64), _cfg(256, 128, 64, 64, 64))
# the configurations tuning tries, per pair (those that came out on top of benchmarks/best_gemm/sweep.py's
# wider search on the H100, and their neighbours)
CONFIGS = {
    "f16-f16": (_cfg(256, 256, 32, 128, 64), _cfg(256, 256, 32, 128, 64, group=1),
                _cfg(256, 256, 32, 128, 64, a_first=0), _cfg(256, 256, 32, 128, 64, group=1, a_first=0),
                _cfg(256, 256, 32, 64, 128),
                _cfg(128, 256, 32, 64, 64), _cfg(128, 256, 16, 64, 128), _cfg(128, 128, 32, 64, 64),
                _cfg(256, 256, 32, 64, 128, ln=8, a_first=0)),
    "f16-f32": _F32ACC + _F16_8, "bf16-f32": _F32ACC, "s8-s32": _INT8, "u8-u32": _INT8,
}


def kernel(pair: str) -> cd.Kernel:
    """The kernel for one key of :data:`PAIRS`."""
    a_type, c_type, b_kmajor = PAIRS[pair]
    return make(a_type, c_type, b_kmajor)
