"""A conditional change of matrix elements (a ReLU epilogue), written as docs/uniformity.md says: every
element written, the condition inside cd.select (a kernel first written from the docs alone)."""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32


@cd.kernel(workgroup_size=(32, 1, 1))
def relu_gemm(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32], M: u32, N: u32, K: u32):
    row = cd.workgroup_id.y * 16
    col = cd.workgroup_id.x * 16
    acc = Acc[f32, 16, 16].splat(0.0)
    for k in range(0, K, 16):
        acc = cd.muladd(MatA[f16, 16, 16].load(a, row * K + k, stride=K),
                        MatB[f16, 16, 16].load(b, k * N + col, stride=N), acc)
    for i in range(acc.length()):
        acc[i] = cd.select(acc[i] < 0.0, 0.0, acc[i])
    acc.store(c, row * N + col, stride=N)


def test_relu_epilogue_matches_numpy_on_the_interpreter():
    m, n, k = 48, 64, 80
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    relu_gemm.launch((n // 16, m // 16), a, b, c, m, n, k, device="cpu")
    np.testing.assert_array_equal(c, np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0))
    assert "OpSelect %float" in relu_gemm.disassemble()
