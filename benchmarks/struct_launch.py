"""Host time of recording a launch with ggml's flash-attention interface into a batch.

    python3 benchmarks/struct_launch.py [--launches 400] [--repeats 5]

The kernel here has the interface of ``coopdsl.ops.ggml_flash_attn.flash_attn_cm2`` (seven buffers, the
32-member ``FaPush`` struct push constant given as a dict, 16 specialization constants as keywords, as
``ops.attention`` launches it) and a trivial body, so that any Vulkan device runs it (lavapipe included). It
prints the host microseconds a launch spends inside ``with runtime.batch(dev):`` before the block ends (median
over ``--repeats`` blocks of ``--launches`` launches): with the very same arguments each time (as a loop
repeating one call does), and alternating between two sets of arrays (another binding every launch).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import coopdsl as cd  # noqa: E402
from benchmarks._gpu import require_vulkan  # noqa: E402
from coopdsl import f32, runtime, u8, u32  # noqa: E402
from coopdsl.ops import attention_nv2 as nv2  # noqa: E402
from coopdsl.ops.ggml_flash_attn import FaPush  # noqa: E402


@cd.kernel(workgroup_size=("WorkGroupSize", 1, 1), entry_point="main")
def fa_interface(q: cd.Buffer[u8], k: cd.Buffer[u8], v: cd.Buffer[u8], m: cd.Buffer[u8],
                 s: cd.Buffer[f32], o: cd.Buffer[f32], mo: cd.Buffer[u32], p: FaPush,
                 WorkGroupSize: cd.Spec[u32, 0] = 128, Br: cd.Spec[u32, 1] = 1, Bc: cd.Spec[u32, 2] = 32,
                 HSK: cd.Spec[u32, 3] = 32, HSV: cd.Spec[u32, 4] = 32, Clamp: cd.Spec[u32, 5] = 0,
                 D_split: cd.Spec[u32, 6] = 16, row_split: cd.Spec[u32, 7] = 1,
                 SubGroupSize: cd.Spec[u32, 8] = 32, SHMEM_STAGING: cd.Spec[u32, 9] = 0,
                 Flags: cd.Spec[u32, 10] = 0, LIMIT_OCCUPANCY_SHMEM: cd.Spec[u32, 11] = 0,
                 FaTypeK: cd.Spec[u32, 12] = 0, FaTypeV: cd.Spec[u32, 13] = 0,
                 FaBlockBytesK: cd.Spec[u32, 14] = 2, FaBlockBytesV: cd.Spec[u32, 15] = 2):
    if cd.global_invocation_id.x == 0:
        o[0] = f32(p.N + Br + Bc + HSK + HSV + Clamp + Flags) + p.scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    dev = require_vulkan("struct_launch.py")
    # what ops.attention launches for 32 heads x 4096 x 4096, D 128 (ggml's push constants and spec constants)
    disp = nv2.dispatch((128, 4096, 1, 32), (128, 4096, 1, 32), None, 128 ** -0.5, 0.0, True, 132, None, True)

    def arrays() -> list[runtime.Array]:
        return ([runtime.zeros((1024,), np.uint8, device=dev) for _ in range(4)]
                + [runtime.zeros((256,), np.float32, device=dev) for _ in range(2)]
                + [runtime.zeros((256,), np.uint32, device=dev)])
    sets = [arrays(), arrays()]
    print(f"{dev.info.name}: host us a launch recorded into a batch, median of {args.repeats} x {args.launches}")
    cases = (("the same arguments", lambda i: sets[0]), ("two sets of arrays in turn", lambda i: sets[i % 2]))
    for label, pick in cases:
        times = []
        for _ in range(args.repeats + 1):
            with runtime.batch(dev):
                t0 = time.perf_counter_ns()
                for i in range(args.launches):
                    fa_interface.launch((1,), *pick(i), disp.push, device=dev, **disp.spec)
                times.append((time.perf_counter_ns() - t0) / args.launches / 1e3)
        print(f"- {label}: {statistics.median(times[1:]):.1f} us")


if __name__ == "__main__":
    main()
