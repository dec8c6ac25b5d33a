"""4-bit weight dequantization matmul (llama.cpp q4_0) with SPV_QCOM_cooperative_matrix_conversion.

y = W x^T where W (M x K) is stored as q4_0 blocks and x (N x K) holds f32 activations; y is M x N f32.
The fourth workload of the VK_QCOM_cooperative_matrix_conversion proposal.

q4_0 stores 32 consecutive weights of a row as one 18-byte block: an f16 scale d and 16 bytes of 4-bit
codes q (weight j is (q_j - 8) * d; byte b holds code b in its low nibble and code b + 16 in its high one).
The kernel reads the blocks as u16 words (9 per block, llama.cpp's ``packed16`` view).

Each workgroup is one subgroup of 32 invocations computing a 32 x 32 tile of y, walking K 16 at a time.
Invocation i owns weight row i of the tile: every 32 steps of K it dequantizes one whole block into an
f16[32] array (registers), and ``cd.sub_array(block, step % 32, 16)`` (OpExtractSubArrayQCOM, a runtime
start) picks the 16 weights of the current step, which become its row of A
(``MatA[f16, 32, 16].from_rows``).  It also owns column i of B: 16 activations of output column i,
converted to f16 (``MatB[f16, 16, 32].from_cols``).  The accumulator is f32.

M and N multiples of 32, K a multiple of 32; 32-wide subgroups.  Dispatch (N / 32, M / 32, 1).
``python examples/qcom_dequant_q4.py`` runs it on the CPU interpreter against numpy.
"""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i32, u16, u32

TILE_M, TILE_N, TILE_K = 32, 32, 16  # an f16 row of A / column of B is 16 elements (256 bits)
QK = 32                              # weights per q4_0 block
BLOCK_WORDS = 9                      # u16 words per block: the f16 scale and 16 bytes of codes


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)  # rows of the matrices are the 32 invocations
def matmul_q4_0(qa: cd.Buffer[u16], x: cd.Buffer[f32], y: cd.Buffer[f32],
                N: cd.Spec[u32] = 64, K: cd.Spec[u32] = 64):
    lane = cd.subgroup_invocation_id
    m0 = cd.workgroup_id.y * TILE_M
    n0 = cd.workgroup_id.x * TILE_N
    row_blocks = (m0 + lane) * (K // QK) * BLOCK_WORDS   # first word of this invocation's weight row
    acc = Acc[f32, TILE_M, TILE_N].splat(0.0)
    block = cd.array(f16, QK)
    for step in range(0, K, TILE_K):
        if step % QK == 0:                                 # a new block: dequantize all 32 weights
            base = row_blocks + step // QK * BLOCK_WORDS
            d = f32(cd.bitcast(qa[base], f16))
            for i in cd.static_range(4):
                codes = u32(qa[base + 1 + 2 * i]) | (u32(qa[base + 2 + 2 * i]) << 16)
                for b in cd.static_range(4):
                    block[4 * i + b] = f16(f32(i32((codes >> (8 * b)) & 0xF) - 8) * d)
                    block[4 * i + b + 16] = f16(f32(i32((codes >> (8 * b + 4)) & 0xF) - 8) * d)
        ta = MatA[f16, TILE_M, TILE_K].from_rows(cd.sub_array(block, step % QK, TILE_K))
        col = cd.array(f16, TILE_K)                        # 16 activations of output column n0 + lane
        for k in cd.static_range(TILE_K):
            col[k] = f16(x[(n0 + lane) * K + step + k])
        tb = MatB[f16, TILE_K, TILE_N].from_cols(col)
        acc = cd.muladd(ta, tb, acc)
    acc.store(y, m0 * N + n0, stride=N)


def quantize_q4_0(w: np.ndarray) -> np.ndarray:
    """llama.cpp's q4_0 encoding of an M x K matrix: M * K / 32 blocks of 9 u16 words (flattened)."""
    m, k = w.shape
    blocks = w.reshape(m * k // QK, QK).astype(np.float32)
    amax_idx = np.abs(blocks).argmax(axis=1)
    vmax = blocks[np.arange(len(blocks)), amax_idx]
    d = (vmax / -8.0).astype(np.float16)
    inv = np.where(d != 0, 1.0 / d.astype(np.float32), 0.0)
    q = np.clip(np.trunc(blocks * inv[:, None] + 8.5), 0, 15).astype(np.uint8)
    packed = q[:, :16] | (q[:, 16:] << 4)                   # byte b: code b low, code b + 16 high
    words = np.empty((len(blocks), BLOCK_WORDS), np.uint16)
    words[:, 0] = d.view(np.uint16)
    words[:, 1:] = packed.view(np.uint16)
    return words.reshape(-1)


def dequantize_q4_0(words: np.ndarray, m: int, k: int) -> np.ndarray:
    """The f16 weights a q4_0 matrix stands for (M x K), computed as the kernel does."""
    blocks = words.reshape(-1, BLOCK_WORDS)
    d = blocks[:, 0].view(np.float16).astype(np.float32)
    codes = blocks[:, 1:].copy().view(np.uint8)
    q = np.concatenate([codes & 0xF, codes >> 4], axis=1).astype(np.float32) - 8.0
    return (q * d[:, None]).astype(np.float16).reshape(m, k)


def reference(words: np.ndarray, x: np.ndarray, m: int, k: int) -> np.ndarray:
    """numpy: dequantized weights times f16-rounded activations, accumulated in float64."""
    w = dequantize_q4_0(words, m, k).astype(np.float64)
    return w @ x.astype(np.float16).astype(np.float64).T


def run(size=(64, 64, 64), rng=None, device="cpu"):
    """(M, N, K): y = W x^T for random W (quantized to q4_0) and x; (y, numpy reference)."""
    m, n, k = size
    rng = rng or np.random.default_rng(0)
    words = quantize_q4_0(rng.uniform(-1, 1, (m, k)).astype(np.float32))
    x = rng.uniform(-1, 1, (n, k)).astype(np.float32)
    y = np.zeros((m, n), np.float32)
    matmul_q4_0.launch((n // TILE_N, m // TILE_M, 1), words, x, y, N=n, K=k, device=device)
    return y, reference(words, x, m, k)


if __name__ == "__main__":
    out, ref = run()
    print(f"max |y - numpy| = {np.abs(out - ref).max():.2e}")
