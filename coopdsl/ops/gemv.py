"""Bandwidth-bound matrix-vector products for decoding: ``y = x W^T`` for 1 to 16 rows of ``x``.

``W`` is M x K weights (f16, bf16 bit patterns, or ggml's q4_0 / q8_0 / q4_K blocks of
:mod:`coopdsl.ops.quant`), ``x`` is NX x K f32 or f16 activations (NX, 1 to 16, a compile-time
parameter), ``y`` is NX x M f32.  Reading W once is the whole cost, so the kernels are built
around that read: each subgroup of 32 owns ``ROWS`` rows of W, its lanes walk along a row
together (consecutive lanes read consecutive 16-byte pieces, or consecutive blocks), every
lane keeps ``NX`` partial sums per row in registers, and one subgroup sum per output ends
the row.  No cooperative matrices: at one to sixteen columns a MulAdd would mostly multiply
zeros.  The layouts (``docs/ops.md``, "Quantized weights"):

* f16 / bf16: W row ``r`` is ``K`` 16-bit values; it is read as ``K / 8`` ``uvec4`` (K a
  multiple of 8);
* q4_0 (18-byte blocks) and q8_0 (34-byte blocks) are read as 16-bit words (the blocks are
  only 2-byte aligned): one block per lane and step;
* q4_K (144-byte blocks): one 32-element sub-block per lane and step, scales decoded per lane.

Dispatch ``(ceil(M / (ROWS * WG / 32)), 1, 1)`` workgroups (:func:`gemv` does it).
"""

from functools import cache
from typing import Any, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import f16, f32, u16, u32, vec2, vec4

WG = 128            # four subgroups of 32
ROWS = 2            # rows of W per subgroup
MAX_ROWS_X = 16     # the most rows of x one dispatch takes
FORMATS = ("f16", "bf16", "q4_0", "q8_0", "q4_K")


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def x4(x, i):
    """Four values of x from element ``4 i``, as f32 (x holds f32 or f16 vec4s)."""
    return vec4[f32](x[i])


@cd.func
@no_type_check
def halves(w0, w1, w2, w3, BF16, HIGH):
    """Four of eight 16-bit weights packed two per word: elements 0, 2, 4, 6 (the low halves of the
    words) or, with ``HIGH``, 1, 3, 5, 7, as f32."""
    if BF16:
        if HIGH:
            return vec4[f32](cd.bitcast(w0 & 0xFFFF0000, f32), cd.bitcast(w1 & 0xFFFF0000, f32),
                             cd.bitcast(w2 & 0xFFFF0000, f32), cd.bitcast(w3 & 0xFFFF0000, f32))
        return vec4[f32](cd.bitcast(w0 << 16, f32), cd.bitcast(w1 << 16, f32),
                         cd.bitcast(w2 << 16, f32), cd.bitcast(w3 << 16, f32))
    h0 = cd.bitcast(w0, vec2[f16])
    h1 = cd.bitcast(w1, vec2[f16])
    h2 = cd.bitcast(w2, vec2[f16])
    h3 = cd.bitcast(w3, vec2[f16])
    if HIGH:
        return vec4[f32](f32(h0.y), f32(h1.y), f32(h2.y), f32(h3.y))
    return vec4[f32](f32(h0.x), f32(h1.x), f32(h2.x), f32(h3.x))


@cache
def kernel(fmt: str, nx: int, x_f16: bool = False) -> cd.Kernel:
    """The GEMV kernel for weights in ``fmt`` and ``nx`` rows of x (1 .. 16), x f32 (or f16).

    Each step a lane decodes its piece of ``ROWS`` weight rows into registers once, then reads each
    row of x once for all of them; the step loop carries an unroll hint so that the loads of
    consecutive steps can be in flight together."""
    if fmt not in FORMATS:
        raise ValueError(f"gemv: unknown weight format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if not 1 <= nx <= MAX_ROWS_X:
        raise ValueError(f"gemv: {nx} rows of x; the decode kernels take 1 to {MAX_ROWS_X}")
    bf = fmt == "bf16"
    xt = vec4[f16] if x_f16 else vec4[f32]
    unroll = 4 if nx <= 2 else 2

    if fmt in ("f16", "bf16"):
        @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
        @no_type_check
        def gemv_f16(w: cd.Buffer[vec4[u32]], x: cd.Buffer[xt], y: cd.Buffer[f32], M: u32, K: u32):
            lane = cd.subgroup_invocation_id
            row0 = (cd.workgroup_id.x * (WG // 32) + cd.subgroup_id) * ROWS
            acc = [[f32(0.0) for j in cd.static_range(nx)] for r in cd.static_range(ROWS)]
            kv = K // 8
            for kb in cd.range(lane, kv, 32, unroll=unroll):
                lo = []
                hi = []
                for r in cd.static_range(ROWS):
                    wv = w[min(row0 + r, M - 1) * kv + kb]   # a row past M reads row M - 1 and is not stored
                    lo = lo + [halves(wv.x, wv.y, wv.z, wv.w, bf, False)]
                    hi = hi + [halves(wv.x, wv.y, wv.z, wv.w, bf, True)]
                for j in cd.static_range(nx):
                    xa = x4(x, (j * K + kb * 8) // 4)
                    xb = x4(x, (j * K + kb * 8) // 4 + 1)
                    xe = vec4[f32](xa.x, xa.z, xb.x, xb.z)      # element 2i: the low half of word i
                    xo = vec4[f32](xa.y, xa.w, xb.y, xb.w)
                    for r in cd.static_range(ROWS):
                        acc[r][j] += cd.dot(xe, lo[r]) + cd.dot(xo, hi[r])
            for r in cd.static_range(ROWS):
                for j in cd.static_range(nx):
                    total = cd.subgroup_add(acc[r][j])
                    if lane == 0 and row0 + r < M:
                        y[j * M + row0 + r] = total
        return gemv_f16

    if fmt in ("q4_0", "q8_0"):
        words = 9 if fmt == "q4_0" else 17   # 16-bit words a block

        @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
        @no_type_check
        def gemv_q(w: cd.Buffer[u16], x: cd.Buffer[xt], y: cd.Buffer[f32], M: u32, K: u32):
            lane = cd.subgroup_invocation_id
            row0 = (cd.workgroup_id.x * (WG // 32) + cd.subgroup_id) * ROWS
            acc = [[f32(0.0) for j in cd.static_range(nx)] for r in cd.static_range(ROWS)]
            nb = K // 32
            for b in cd.range(lane, nb, 32, unroll=unroll):
                wr = []    # per row: the block's 32 weights as 8 vec4 (elements 4c .. 4c + 3)
                for r in cd.static_range(ROWS):
                    base = (min(row0 + r, M - 1) * nb + b) * words
                    d = f32(cd.bitcast(w[base], f16))
                    if words == 9:
                        lows = []
                        highs = []
                        for c in cd.static_range(4):
                            q = u32(w[base + 1 + 2 * c]) | (u32(w[base + 2 + 2 * c]) << 16)
                            lows = lows + [(vec4[f32](f32(q & 15), f32((q >> 8) & 15), f32((q >> 16) & 15),
                                                      f32((q >> 24) & 15)) - 8.0) * d]
                            highs = highs + [(vec4[f32](f32((q >> 4) & 15), f32((q >> 12) & 15),
                                                        f32((q >> 20) & 15), f32(q >> 28)) - 8.0) * d]
                        wr = wr + [lows + highs]
                    else:
                        vals = []
                        for c in cd.static_range(8):
                            q = u32(w[base + 1 + 2 * c]) | (u32(w[base + 2 + 2 * c]) << 16)
                            vals = vals + [vec4[f32](f32(cd.bitcast(q << 24, cd.i32) >> 24),
                                                     f32(cd.bitcast(q << 16, cd.i32) >> 24),
                                                     f32(cd.bitcast(q << 8, cd.i32) >> 24),
                                                     f32(cd.bitcast(q, cd.i32) >> 24)) * d]
                        wr = wr + [vals]
                for j in cd.static_range(nx):
                    xo = (j * K + b * 32) // 4
                    for c in cd.static_range(8):
                        xv = x4(x, xo + c)
                        for r in cd.static_range(ROWS):
                            acc[r][j] += cd.dot(wr[r][c], xv)
            for r in cd.static_range(ROWS):
                for j in cd.static_range(nx):
                    total = cd.subgroup_add(acc[r][j])
                    if lane == 0 and row0 + r < M:
                        y[j * M + row0 + r] = total
        return gemv_q

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_q4_K(w: cd.Buffer[u32], x: cd.Buffer[xt], y: cd.Buffer[f32], M: u32, K: u32):
        lane = cd.subgroup_invocation_id
        row0 = (cd.workgroup_id.x * (WG // 32) + cd.subgroup_id) * ROWS
        acc = [[f32(0.0) for j in cd.static_range(nx)] for r in cd.static_range(ROWS)]
        nsub = K // 32
        for t in cd.range(lane, nsub, 32, unroll=unroll):
            b = t >> 3            # block
            sub = t & 7           # sub-block of 32 in it
            shift = (sub & 1) * 4
            dr = []
            mr = []
            qr = []               # per row: the sub-block's 32 levels as 8 vec4
            for r in cd.static_range(ROWS):
                base = (min(row0 + r, M - 1) * (K // 256) + b) * 36   # 144 bytes = 36 words
                dm = cd.bitcast(w[base], vec2[f16])
                s0 = w[base + 1]
                s4 = w[base + 2]
                s8 = w[base + 3]
                sh = 8 * (sub & 3)
                sc_hi = (s8 & 0x0F0F0F0F) | ((s0 & 0xC0C0C0C0) >> 2)
                mb_hi = ((s8 & 0xF0F0F0F0) >> 4) | ((s4 & 0xC0C0C0C0) >> 2)
                sc = ((s0 if sub < 4 else sc_hi) >> sh) & 63
                mn = ((s4 if sub < 4 else mb_hi) >> sh) & 63
                dr = dr + [f32(dm.x) * f32(sc)]
                mr = mr + [f32(dm.y) * f32(mn)]
                q0 = base + 4 + (sub >> 1) * 8   # the 32 bytes of this pair of sub-blocks
                levels = []
                for c in cd.static_range(8):
                    q = w[q0 + c] >> shift
                    levels = levels + [vec4[f32](f32(q & 15), f32((q >> 8) & 15), f32((q >> 16) & 15),
                                                 f32((q >> 24) & 15))]
                qr = qr + [levels]
            for j in cd.static_range(nx):
                xo = (j * K + t * 32) // 4
                xs = f32(0.0)
                s = [f32(0.0) for r in cd.static_range(ROWS)]
                for c in cd.static_range(8):
                    xv = x4(x, xo + c)
                    xs += xv.x + xv.y + xv.z + xv.w
                    for r in cd.static_range(ROWS):
                        s[r] += cd.dot(qr[r][c], xv)
                for r in cd.static_range(ROWS):
                    acc[r][j] += dr[r] * s[r] - mr[r] * xs
        for r in cd.static_range(ROWS):
            for j in cd.static_range(nx):
                total = cd.subgroup_add(acc[r][j])
                if lane == 0 and row0 + r < M:
                    y[j * M + row0 + r] = total
    return gemv_q4_K


def block_shape(fmt: str) -> tuple[int, int]:
    """(elements, bytes) of one block of ``fmt`` (one 16-bit value for f16/bf16)."""
    return {"f16": (1, 2), "bf16": (1, 2), "q4_0": (32, 18), "q8_0": (32, 34), "q4_K": (256, 144)}[fmt]


def word_view(w: Any, fmt: str) -> Any:
    """Weights as the words the kernel of ``fmt`` reads them in (``uvec4`` of f16/bf16 pairs, 32-bit words of
    q4_K blocks, 16-bit words of the 2-byte aligned q4_0/q8_0 blocks): a view, no copy, of a numpy array
    or a resident ``runtime.Array``."""
    word = np.uint32 if fmt in ("f16", "bf16", "q4_K") else np.uint16
    if isinstance(w, np.ndarray):
        v = np.ascontiguousarray(w).view(word).reshape(-1)
        return v.reshape(-1, 4) if fmt in ("f16", "bf16") else v
    return w if np.dtype(w.dtype) == word else w.view(word)


def gemv(w: Any, x: Any, fmt: str, *, out: Any = None, device: Any = None) -> Any:
    """``y = x W^T`` (float32, ``x.shape[0]`` x M) for 1 to 16 rows of float32 or float16 ``x`` (N x K).

    ``w`` is M x K float16 (``fmt="f16"``), uint16 bf16 bit patterns (``"bf16"``), or the
    uint8 blocks of :func:`coopdsl.ops.quant.quantize`; K must be a multiple of 8 (f16/bf16)
    or of the block size.  ``w``, ``x`` and ``out`` may be numpy or resident arrays
    (``coopdsl.runtime``); ``device`` as ``Kernel.launch``."""
    qk, nbytes = block_shape(fmt)
    n, k = x.shape
    m = w.shape[0]
    row_bytes = k * 2 if qk == 1 else k // qk * nbytes
    if k % max(qk, 8) or w.shape[1] * w.dtype.itemsize != row_bytes:
        raise ValueError(f"gemv: weights {w.dtype} {tuple(w.shape)} are not M x {k} {fmt} values "
                         f"({row_bytes} bytes a row; K a multiple of {max(qk, 8)})")
    w = word_view(w, fmt)
    x_f16 = np.dtype(x.dtype) == np.float16
    if not x_f16 and np.dtype(x.dtype) != np.float32:
        raise ValueError(f"gemv: x must be float32 or float16, got {x.dtype}")
    if isinstance(x, np.ndarray):
        x = np.ascontiguousarray(x).reshape(-1, 4)
    y = np.empty((n, m), np.float32) if out is None else out
    kernel(fmt, n, x_f16).launch((-(-m // (ROWS * WG // 32)), 1, 1), w, x, y, M=m, K=k, device=device)
    return y
