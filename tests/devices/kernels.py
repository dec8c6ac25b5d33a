"""Kernels the device tests check against profiles; the '# L:' comments mark lines tests look up."""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i8, i32, u8, u32, vec4


@cd.kernel(workgroup_size=(32, 1, 1))
def f32_16x16x8(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    ta = MatA[f32, 16, 8].load(a, 0, stride=8)  # L:f32-a
    tb = MatB[f32, 8, 16].load(a, 0, stride=16)  # L:f32-b
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))  # L:f32-muladd
    acc.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def f16_32x32x16(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 32, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 32].load(a, 0, stride=32)
    acc = cd.muladd(ta, tb, Acc[f32, 32, 32].splat(0.0))  # L:big-muladd
    acc.store(c, 0, stride=32)


@cd.kernel(workgroup_size=("WG", 1, 1))
def workgroup_64x64x16(a: cd.Buffer[f16], c: cd.Buffer[f32], WG: cd.Spec[u32] = 128):
    ta = MatA[f16, 64, 16, cd.Workgroup].load(a, 0, stride=16)  # L:wg-a
    tb = MatB[f16, 16, 64, cd.Workgroup].load(a, 0, stride=64)
    acc = cd.muladd(ta, tb, Acc[f32, 64, 64, cd.Workgroup].splat(0.0))  # L:wg-muladd
    acc.store(c, 0, stride=64)


@cd.kernel(workgroup_size=(32, 1, 1))
def odd_matrix(a: cd.Buffer[f16]):
    t = MatA[f16, 8, 16].load(a, 0, stride=16)  # L:odd-a
    t.store(a, 256, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def int8_saturating(a: cd.Buffer[i8], c: cd.Buffer[i32]):
    ta = MatA[i8, 16, 32].load(a, 0, stride=32)
    tb = MatB[i8, 32, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0), saturate=True)  # L:sat-muladd
    acc.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def u8_as_signed(a: cd.Buffer[u8], c: cd.Buffer[i32]):
    ta = MatA[u8, 16, 32].load(a, 0, stride=32)
    tb = MatB[u8, 32, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0), signed=("a", "c", "result"))  # L:mixed-muladd
    acc.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_tiles(a: cd.Buffer[f16], c: cd.Buffer[f32], TM: cd.Spec[u32] = 16, TK: cd.Spec[u32] = 16):
    TN = TM * 2
    ta = MatA[f16, TM, TK].load(a, 0, stride=TK)  # L:spec-a
    tb = MatB[f16, TK, TN].load(a, 0, stride=TN)
    acc = cd.muladd(ta, tb, Acc[f32, TM, TN].splat(0.0))  # L:spec-muladd
    acc.store(c, 0, stride=TN)


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_scope(a: cd.Buffer[f16], c: cd.Buffer[f32], S: cd.Spec[u32] = 3):
    ta = MatA[f16, 16, 16, S].load(a, 0, stride=16)  # L:scope-a
    tb = MatB[f16, 16, 16, S].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16, S].splat(0.0))
    acc.store(c, 0, stride=16)


# Kernels for the profiles read from Mesa's sources (tests/devices/test_mesa_profiles.py): a workgroup of 64
# is a whole number of subgroups on RADV (64) and on ANV (32).
@cd.kernel(workgroup_size=(64, 1, 1))
def f16_16x16x16(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)  # L:f16-16-a
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))  # L:f16-16-muladd
    acc.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(64, 1, 1))
def f16_8x8x16(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 8, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 8].load(a, 0, stride=8)
    acc = cd.muladd(ta, tb, Acc[f32, 8, 8].splat(0.0))  # L:f16-8-muladd
    acc.store(c, 0, stride=8)


@cd.kernel(workgroup_size=(64, 1, 1))
def f32_16x16x8_wg64(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    ta = MatA[f32, 16, 8].load(a, 0, stride=8)
    tb = MatB[f32, 8, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))  # L:f32-64-muladd
    acc.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(64, 1, 1))
def int8_16x16x16(a: cd.Buffer[i8], c: cd.Buffer[i32]):
    ta = MatA[i8, 16, 16].load(a, 0, stride=16)
    tb = MatB[i8, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0), saturate=True)  # L:int8-16-muladd
    acc.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(64, 1, 1))
def mixed_int8_16x16x16(a: cd.Buffer[u8], c: cd.Buffer[i32]):
    ta = MatA[u8, 16, 16].load(a, 0, stride=16)
    tb = MatB[u8, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0), signed=("a", "c", "result"))
    acc.store(c, 0, stride=16)


# Shared arrays against maxComputeSharedMemorySize (49152 bytes on the H100; tests/devices/test_shared_memory.py):
# 2 x 32 KiB of f32 is over it, 2 x 20 KiB under it; the third is 4 KiB and 16 x N bytes, over it from N = 2817.
def _two_shared(n: int) -> cd.Kernel:
    """Two shared arrays of ``n`` f32 each, used, and a third of 8192 that is never used (so not in the module)."""

    @cd.kernel(workgroup_size=(64, 1, 1))
    def shared_pair(x: cd.Buffer[f32]):
        a = cd.shared(f32, n)  # L:shared-pair
        b = cd.shared(f32, n)
        unused = cd.shared(f32, 8192)  # noqa: F841
        i = cd.local_invocation_index
        a[i] = x[i]
        b[i] = x[i + 64]
        cd.barrier()
        x[i] = a[(i + 1) % 64] + b[(i + 1) % 64]

    shared_pair.__name__ = shared_pair.__qualname__ = f"shared_2x{n * 4 // 1024}k"
    return shared_pair


shared_2x32k = _two_shared(8192)
shared_2x20k = _two_shared(5120)


@cd.kernel(workgroup_size=(64, 1, 1))
def shared_by_spec(x: cd.Buffer[f32], N: cd.Spec[u32] = 256):
    t = cd.shared(u32, 1024)
    s = cd.shared(vec4[f32], N)  # L:shared-spec
    i = cd.local_invocation_index
    t[i] = i
    s[i] = vec4[f32](x[i], 0.0, 0.0, 0.0)
    cd.barrier()
    x[i] = s[t[(i + 1) % 64]].x


def line(marker: str) -> int:
    """The line of this file that ends with ``# L:<marker>``."""
    from pathlib import Path

    hits = [i + 1 for i, t in enumerate(Path(__file__).read_text().splitlines()) if t.endswith(f"# L:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]
