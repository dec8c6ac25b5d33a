"""Language features together: helpers taking and returning matrices, lists of matrices, Const and Push
parameters, Ptr push constants, 64-bit and f16 scalars, bitcasts of vectors, short-circuit conditions,
runtime-lane broadcasts."""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, f64, i64, u32, u64, vec2, vec4


@cd.func
def mma(a, b, acc):
    return cd.muladd(a, b, acc)


@cd.kernel(workgroup_size=(32, 1, 1))
def features(a: cd.Buffer[f16], c: cd.Buffer[f32], w: cd.Buffer[vec4[u32]], o64: cd.Buffer[u64],
             of: cd.Buffer[f64], scale: cd.Push[f32], p: cd.Ptr[f32], T: cd.Const[int] = 2):
    i = cd.local_invocation_index
    acc = [[Acc[f32, 16, 16].splat(0.0) for j in cd.static_range(T)] for r in cd.static_range(T)]
    for kk in cd.range(0, 32, 16, unroll=False):
        ta = [MatA[f16, 16, 16].load(a, kk + r * 16, stride=32) for r in cd.static_range(T)]
        tb = [MatB[f16, 16, 16].load(a, kk + j * 16, stride=32) for j in cd.static_range(T)]
        for r in cd.static_range(T):
            for j in cd.static_range(T):
                acc[r][j] = mma(ta[r], tb[j], acc[r][j])
    for r in cd.static_range(T):
        for j in cd.static_range(T):
            (acc[r][j] * scale).store(c, (r * T + j) * 256, stride=16)
    v = w[i]
    halves = cd.bitcast(v.x, vec2[f16])
    h = halves.x * halves.y + f16(1.5)
    o64[i] = (u64(i) * u64(0x100000001) + u64(v.y)) >> 3
    of[i] = f64(h) / 3.0 + f64(i64(-5) * i64(i))
    if i < 16 and p[i] > 0.5 or i == 31:
        p[i] = -1.0
    if cd.subgroup_broadcast(i, (i + 1) % 32) == 0:
        p[i] = 99.0


def test_language_features_together():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, 32 * 32).astype(np.float16)
    c = np.zeros(4 * 256, np.float32)
    w = rng.integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    w[:, 0] = rng.uniform(-4, 4, 64).astype(np.float16).view(np.uint32)
    o64, of = np.zeros(32, np.uint64), np.zeros(32, np.float64)
    p = np.linspace(0, 1, 32).astype(np.float32)
    features.launch((1,), a, c, w, o64, of, 2.0, p, device="cpu")

    def tile(off):
        return np.stack([a[off + r * 32: off + r * 32 + 16] for r in range(16)]).astype(np.float32)

    for r in range(2):
        for j in range(2):
            ref = 2 * sum(tile(kk + r * 16) @ tile(kk + j * 16) for kk in (0, 16))
            np.testing.assert_allclose(c[(r * 2 + j) * 256:][:256].reshape(16, 16), ref, rtol=1e-5, atol=1e-5)
    halves = w[:, 0].copy().view(np.float16).reshape(32, 2)
    h = halves[:, 0] * halves[:, 1] + np.float16(1.5)
    i = np.arange(32, dtype=np.uint64)
    np.testing.assert_array_equal(o64, (i * np.uint64(0x100000001) + w[:, 1].astype(np.uint64)) >> np.uint64(3))
    np.testing.assert_allclose(of, h.astype(np.float64) / 3 - 5.0 * np.arange(32))
    before = np.linspace(0, 1, 32).astype(np.float32)
    ref = np.where((np.arange(32) < 16) & (before > 0.5) | (np.arange(32) == 31), -1.0, before)
    ref[31] = 99.0  # lane 31 reads lane 0's index
    np.testing.assert_array_equal(p, ref.astype(np.float32))
