"""Subgroup-scope GEMM whose tile shape and workgroup size come from the device: C = A x B.

Like gemm_khr.py (A M x K f16 row-major, B K x N f16 row-major, C M x N
f32), but the cooperative-matrix tile TM x TN x TK and the workgroup size WG
are specialization constants that the host sets from the device it targets:
``tile_spec(device)`` picks the largest f16 x f16 -> f32 shape the device
lists (``cd.devices.best_shape``) and one subgroup per workgroup.  One SPIR-V
module serves every device; the check against the device runs with the
chosen values, at compile time (``compile(spec=..., device=...)``) or at
launch.  M, N, K are multiples of TM, TN, TK; dispatch (N / TN, M / TM, 1).

    import coopdsl as cd
    from examples.gemm_portable import gemm, tile_spec
    spec = tile_spec("nvidia-h100")                 # or runtime.default_device()
    gemm.compile(spec=spec, device="nvidia-h100")   # checked against the H100 profile
    gemm.launch((N // spec["TN"], M // spec["TM"]), a, b, c, M=M, N=N, K=K, **spec)
"""

from typing import Any

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, f16, f32, u32


@cd.kernel(workgroup_size=("WG", 1, 1))
def gemm(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32],
         M: cd.Spec[u32] = 64, N: cd.Spec[u32] = 64, K: cd.Spec[u32] = 64,
         TM: cd.Spec[u32] = 16, TN: cd.Spec[u32] = 16, TK: cd.Spec[u32] = 16, WG: cd.Spec[u32] = 32):
    row = cd.workgroup_id.y * TM
    col = cd.workgroup_id.x * TN
    acc = Acc[f32, TM, TN].splat(0.0)
    for k in range(0, K, TK):
        ta = MatA[f16, TM, TK].load(a, row * K + k, stride=K, layout=RowMajor)
        tb = MatB[f16, TK, TN].load(b, k * N + col, stride=N, layout=RowMajor)
        acc = cd.muladd(ta, tb, acc)
    acc.store(c, row * N + col, stride=N, layout=RowMajor)


def tile_spec(device: Any) -> dict[str, int]:
    """Specialization values TM, TN, TK, WG for ``device`` (anything ``cd.devices.load_profile`` takes)."""
    TM, TN, TK = cd.devices.best_shape(device, a=f16, c=f32)
    return {"TM": TM, "TN": TN, "TK": TK, "WG": cd.devices.load_profile(device).subgroup_size}
