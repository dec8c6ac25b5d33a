"""Implicit-im2col convolution on an NHWC tensor with SPV_QCOM_cooperative_matrix_conversion.

y[oh, ow, f] = sum over (fh, fw, c) of x[STRIDE*oh + DILATION*(fh - FH//2), STRIDE*ow + DILATION*(fw - FW//2), c]
* w[f, fh, fw, c], with zeros outside the input (the VK_QCOM_cooperative_matrix_conversion proposal's first
workload).  x is H x W x C (NHWC, one image), w is F x FH x FW x C (OHWI: each filter's taps contiguous,
channels fastest), y is OH x OW x F; all f32.

The GEMM view: M = output pixels, N = output channels, K = (fh, fw, c).  Each workgroup is one subgroup of
32 invocations computing 32 output pixels x 32 output channels.  Invocation i owns output pixel i of the
tile and builds *its row of A* directly from the input tensor, 8 channels (256 bits of f32) at a time, with
zeros where the filter tap falls outside the image: ``MatA[f32, 32, 8].from_rows(row)``
(OpCompositeConstructCoopMatQCOM).  No im2col matrix is materialised and nothing is staged through shared
memory.  B (8 channels x 32 filters) is an ordinary column-major cooperative-matrix load from w.

Requirements: C a multiple of 8, F a multiple of 32, OH * OW a multiple of 32; 32-wide subgroups (rows of A
are subgroup invocations).  Dispatch (F / 32, OH * OW / 32, 1).  ``python examples/qcom_conv_im2col.py`` runs
it on the CPU interpreter against numpy.
"""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f32, i32, u32

TILE_M, TILE_N, TILE_K = 32, 32, 8  # an f32 row of A is 8 elements (256 bits)


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)  # rows of the matrices are the 32 invocations
def conv2d_nhwc(x: cd.Buffer[f32], w: cd.Buffer[f32], y: cd.Buffer[f32],
                H: cd.Spec[u32] = 16, W: cd.Spec[u32] = 16, C: cd.Spec[u32] = 16, F: cd.Spec[u32] = 32,
                FH: cd.Spec[u32] = 3, FW: cd.Spec[u32] = 3, STRIDE: cd.Spec[u32] = 1, DILATION: cd.Spec[u32] = 1,
                OW: cd.Spec[u32] = 16):
    m0 = cd.workgroup_id.y * TILE_M               # first output pixel of the tile
    n0 = cd.workgroup_id.x * TILE_N               # first output channel of the tile
    pixel = m0 + cd.subgroup_invocation_id        # this invocation's output pixel: its row of A
    out_row = i32(pixel // OW)
    out_col = i32(pixel % OW)
    acc = Acc[f32, TILE_M, TILE_N].splat(0.0)
    for step in range(0, C, TILE_K):
        for fh in range(FH):
            for fw in range(FW):
                # B: channels step..step+7 of tap (fh, fw) of filters n0..n0+31 (column n = one filter)
                tb = MatB[f32, TILE_K, TILE_N].load(w, (n0 * FH * FW + fh * FW + fw) * C + step,
                                                    stride=FH * FW * C, layout=ColumnMajor)
                in_row = i32(STRIDE) * out_row + i32(DILATION) * (i32(fh) - i32(FH // 2))
                in_col = i32(STRIDE) * out_col + i32(DILATION) * (i32(fw) - i32(FW // 2))
                row = cd.array(f32, TILE_K)       # zeros: the border
                if in_row >= 0 and in_row < i32(H) and in_col >= 0 and in_col < i32(W):
                    base = (u32(in_row) * W + u32(in_col)) * C + step
                    for i in cd.static_range(TILE_K):
                        row[i] = x[base + i]
                ta = MatA[f32, TILE_M, TILE_K].from_rows(row)
                acc = cd.muladd(ta, tb, acc)
    acc.store(y, m0 * F + n0, stride=F)


def reference(x: np.ndarray, w: np.ndarray, stride: int, dilation: int, oh: int, ow: int) -> np.ndarray:
    """numpy: the same convolution (OH x OW x F), zero outside the input."""
    h, wd, c = x.shape
    f, fh, fw, _ = w.shape
    y = np.zeros((oh, ow, f), np.float64)
    for r in range(fh):
        for s in range(fw):
            rows = stride * np.arange(oh) + dilation * (r - fh // 2)
            cols = stride * np.arange(ow) + dilation * (s - fw // 2)
            ok = ((rows >= 0) & (rows < h))[:, None] & ((cols >= 0) & (cols < wd))[None, :]
            patch = x[np.clip(rows, 0, h - 1)][:, np.clip(cols, 0, wd - 1)] * ok[:, :, None]
            y += patch.astype(np.float64) @ w[:, r, s, :].astype(np.float64).T
    return y


def run(size=(16, 16, 16, 32), stride=1, dilation=1, filt=3, rng=None, device="cpu"):
    """Convolve a random H x W x C image with F random filt x filt filters; (y, numpy reference)."""
    h, wd, c, f = size
    oh, ow = (h + stride - 1) // stride, (wd + stride - 1) // stride
    rng = rng or np.random.default_rng(0)
    x = rng.uniform(-1, 1, (h, wd, c)).astype(np.float32)
    w = rng.uniform(-1, 1, (f, filt, filt, c)).astype(np.float32)
    y = np.zeros((oh, ow, f), np.float32)
    conv2d_nhwc.launch((f // TILE_N, oh * ow // TILE_M, 1), x, w, y, H=h, W=wd, C=c, F=f, FH=filt, FW=filt,
                       STRIDE=stride, DILATION=dilation, OW=ow, device=device)
    return y, reference(x, w, stride, dilation, oh, ow)


if __name__ == "__main__":
    out, ref = run()
    print(f"max |y - numpy| = {np.abs(out - ref).max():.2e}")
