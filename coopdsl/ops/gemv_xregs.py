"""Decoding products with x held in registers: ``y = x W^T`` for q4_0 / q8_0 / q4_K weights and 1 to 8 rows of ``x``.

The kernels of :mod:`coopdsl.ops.gemv` walk K along a few rows of W (2 to 8), so every group of rows reads all of
``x`` again: at eight rows of x rounded to 8 bits that is about 44 MB a row of x through L1 for 33 MB of q4_0
weights (``benchmarks/notes/gemv-bound-h200-2026-11-28.md``).  Here the loops are the other way round: a lane
takes 32 values of K and keeps them, for every row of x, in registers (x rounded to 8 bits by
:func:`coopdsl.ops.gemv_q8.quantize_kernel`: eight words of levels, the scale and the scaled sum), then walks down
``rows`` rows of W: a q4_0 / q8_0 block read as the 32-bit words that hold it, as the way "prew" does, or an
quarter of a q4_K block (its 16-byte head and 32 bytes of levels: the 32 values of each of two sub-blocks, against
two of x's blocks).  A subgroup's 32 lanes take consecutive pieces, so that each load instruction reads one
contiguous span of a row.

A row of W gives each lane ``nx`` partial sums; ``batch`` rows (:func:`batch`) at a time, the subgroup adds its
lanes' ``batch * nx`` sums up with a reduce-scatter of shuffles (each exchange halves the values a lane holds, so
that ``v`` values cost ``v - 1`` shuffles, not ``5 v``), leaving lane ``i`` with the sum of value ``i``.  The
``split`` subgroups of a workgroup take consecutive slices of 32 pieces of K (then the next ``32 * split``), and
add their sums through shared memory at the end (:func:`fit_split` gives a workgroup no more subgroups than K has
slices of 32 pieces).  A workgroup owns ``rows`` rows of W; dispatch :func:`grid`.
x's bytes are read once a workgroup (a row of x, rounded: 21.5 KB at K = 14336), against once every two rows of W
in :mod:`coopdsl.ops.gemv`'s default.  K must be a multiple of 64 (two q4_0 / q8_0 blocks are 9 or 17 aligned
words), of 256 for q4_K.  Measured on an H200 (``gemv.XREGS``), 2-10% faster than the plain kernels from a few
rows of x on, not more: its ``x`` traffic is not what bounds them
(``benchmarks/notes/gemv-tables-and-changes-2026-11-27-29.md``, "x held in registers"; what does:
``benchmarks/notes/gemv-issue-h200-2026-11-29.md``); for q4_0 also at one and two rows, with the subgroups balanced
to K (12.5 -> 11.8-12.1 us at 4096 x 14336).  q4_K's lane took an eighth of a block until 2026-11-29 (its head's
scales decoded for every 32 values, 84 instructions a lane for them against q4_0's 60); a quarter was 10-25% faster
at every row count (``gemv.XREGS``).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import f32, i32, u32, vec4

from .gemv_q8 import MAGIC, MAGIC_BITS, PAIR_WORDS, XQ_VECS, block_words
from .ggml_formats import scale_min_q4_K

FORMATS = ("q4_0", "q8_0", "q4_K")
MAX_ROWS_X = 8          # rows of x a launch takes: 10 registers a row of x a lane (levels, scale, scaled sum; q4_K 20)
UNIT = {"q4_0": 32, "q8_0": 32, "q4_K": 64}   # values of K a lane takes at a time (a piece)
LAYOUTS = ((4, 4), (4, 8), (8, 2), (8, 4), (8, 8), (16, 4), (16, 8))   # (rows of W a workgroup, subgroups a workgroup)


def _pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def batch(fmt: str, nx: int, rows: int) -> int:
    """Rows of W a subgroup reduces at once: as many as keep ``batch * nx`` sums within one a lane after the
    reduce-scatter (32 at most) and the rows' words within about 40 registers, and divide ``rows``."""
    most = min(32 // _pow2(nx), 8 if fmt == "q4_0" else 4, rows)   # (words a row: q4_0 5, q8_0 9, q4_K 12)
    b = 1
    while b * 2 <= most and rows % (b * 2) == 0:
        b *= 2
    return b


def takes(fmt: str, nx: int, k: int) -> bool:
    """Whether these kernels take the problem: q4_0, q8_0 or q4_K, 1 to :data:`MAX_ROWS_X` rows of x, K a multiple
    of 64 (q4_K: of its block, 256)."""
    return fmt in FORMATS and 1 <= nx <= MAX_ROWS_X and k % (256 if fmt == "q4_K" else 64) == 0


def fit_split(fmt: str, k: int, split: int) -> int:
    """``split`` subgroups a workgroup, but no more than K's slices of 32 pieces (:data:`UNIT`) keep busy: at K = 4096
    q4_K's 64 pieces keep two subgroups busy, and four took 14.6-15.0 us at one row of 14336 x 4096 weights against
    two's 12.6 (H200; ``benchmarks/results/gemv-xregs-q4k-quarter-h200-2026-11-29.md``)."""
    return max(1, min(split, -(-(k // UNIT[fmt]) // 32)))


def balanced_split(fmt: str, k: int, split: int) -> int:
    """The subgroups a workgroup, from :func:`fit_split`'s count ``s`` to ``2 s - 1``, that leave the fewest lanes
    idle on the last of its passes over K (a pass: 32 lanes a subgroup, each one piece of :data:`UNIT` values of K;
    the smallest count of those that tie): at K = 14336 (448 pieces of q4_0) 4 subgroups make 3.5 passes and 7
    make 2, at K = 4096 4 make one."""
    units = k // UNIT[fmt]
    split = fit_split(fmt, k, split)
    return min(range(split, 2 * split), key=lambda s: (-(-units // (32 * s)) * s, s))


def grid(m: int, rows: int) -> tuple[int, int, int]:
    """Workgroups of a launch for M rows of W, ``rows`` a workgroup."""
    return (-(-m // rows), 1, 1)


@cache
def kernel(fmt: str, nx: int, rows: int, split: int, unroll: int | None = None, bt: int | None = None) -> cd.Kernel:
    """The product for weights in ``fmt`` and ``nx`` rows of x rounded to 8 bits by
    :func:`coopdsl.ops.gemv_q8.quantize_kernel` (``ivec4``s); a workgroup of ``split`` subgroups owns ``rows``
    rows of W.  q4_0 and q8_0 are read as 32-bit words (launch with W viewed as uint32), a lane a block; q4_K as
    ``uvec4``, a lane an eighth of a block (its head and 16 bytes of levels: 16 values of each of two sub-blocks,
    as :func:`coopdsl.ops.gemv.kernel`'s "pre" way reads them).  Arguments ``(w, xq, y, M=, K=)``; ``y`` is nx x
    M f32; K (a push constant) must be as :func:`takes` says, which the kernel cannot check.  ``unroll``: an
    unroll hint for the loop over K's slices (none by default); ``bt``: rows of W a reduction (default
    :func:`batch`; at most 32 sums a lane, dividing ``rows``)."""
    if fmt not in FORMATS:
        raise ValueError(f"gemv: x held in registers serves {', '.join(FORMATS)} weights, not {fmt}")
    if not 1 <= nx <= MAX_ROWS_X:
        raise ValueError(f"gemv: {nx} rows of x; x held in registers takes 1 to {MAX_ROWS_X}")
    if not 1 <= split <= 16 or rows not in (4, 8, 16, 32, 64):
        raise ValueError(f"gemv: rows={rows}, split={split}; x held in registers takes rows 4 .. 64 (a power "
                         f"of two) and split 1 .. 16")
    nw = PAIR_WORDS.get(fmt, 0)
    q40, qk = fmt == "q4_0", fmt == "q4_K"
    unit = UNIT[fmt]
    wt = vec4[u32] if qk else u32
    if bt is not None and (bt < 1 or rows % bt or _pow2(nx) * bt > 32):
        raise ValueError(f"gemv: a reduction of {bt} rows of W does not divide rows={rows} or holds more than 32 "
                         f"sums a lane at {nx} rows of x")
    bt = bt or batch(fmt, nx, rows)
    nbatch = rows // bt
    vals_n = bt * nx
    vp = _pow2(vals_n)               # values a batch, padded to a power of two for the reduce-scatter
    steps = vp.bit_length() - 1      # its exchanges
    wg = 32 * split

    @cd.kernel(workgroup_size=(wg, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_xregs(w: cd.Buffer[wt], x: cd.Buffer[vec4[i32]], y: cd.Buffer[f32], M: u32, K: u32):
        lane = cd.subgroup_invocation_id
        sg = cd.subgroup_id
        row0 = cd.workgroup_id.x * rows
        nb = K // unit
        acc = [f32(0.0) for t in cd.static_range(nbatch)]
        for kc in cd.range(sg * 32, nb, 32 * split, unroll=unroll):
            u = kc + lane
            ok = u < nb
            uc = min(u, nb - 1)
            h = uc & 1
            # this lane's block of every row of x: 8 words of levels, the scale d and d * sum (0 past K)
            xs = []
            if qk:
                # a quarter c of q4_K block b: sub-blocks 2c and 2c + 1 (32 values each, the low and the high
                # nibbles of qs bytes 32c .. 32c + 31) against x's blocks 8b + 2c and 8b + 2c + 1
                b = uc >> 2
                c = uc & 3
                for j in cd.static_range(nx):
                    xl0 = (j * (K // 32) + b * 8 + 2 * c) * XQ_VECS
                    xa = x[xl0]
                    xc = x[xl0 + 1]
                    sl = x[xl0 + 2]
                    xe = x[xl0 + XQ_VECS]
                    xf = x[xl0 + XQ_VECS + 1]
                    shx = x[xl0 + XQ_VECS + 2]
                    xs = xs + [[[xa.x, xa.y, xa.z, xa.w, xc.x, xc.y, xc.z, xc.w,
                                 xe.x, xe.y, xe.z, xe.w, xf.x, xf.y, xf.z, xf.w],
                                cd.select(ok, cd.bitcast(sl.x, f32), f32(0.0)),
                                cd.select(ok, cd.bitcast(shx.x, f32), f32(0.0)),
                                cd.select(ok, cd.bitcast(sl.y, f32), f32(0.0)),
                                cd.select(ok, cd.bitcast(shx.y, f32), f32(0.0))]]
            else:
                for j in cd.static_range(nx):
                    xb = (j * nb + uc) * XQ_VECS
                    xa = x[xb]
                    xc = x[xb + 1]
                    sc = x[xb + 2]
                    dx = cd.select(ok, cd.bitcast(sc.x, f32), f32(0.0))
                    sx = cd.select(ok, cd.bitcast(sc.y, f32), f32(0.0))
                    xs = xs + [[[xa.x, xa.y, xa.z, xa.w, xc.x, xc.y, xc.z, xc.w], dx, sx]]
            for bi in cd.static_range(nbatch):
                vals = []
                for r in cd.static_range(bt):
                    row = min(row0 + bi * bt + r, M - 1)     # a row past M reads row M - 1, not stored
                    if qk:
                        base = (row * (K // 256) + b) * 9
                        v = w[base]
                        qa = w[base + 1 + 2 * c]
                        qb = w[base + 2 + 2 * c]
                        s0 = scale_min_q4_K(v, 2 * c)
                        s1 = scale_min_q4_K(v, 2 * c + 1)
                        q = [qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w]
                        ql = [q[i] & 0x0F0F0F0F for i in cd.static_range(8)]
                        qh = [(q[i] >> 4) & 0x0F0F0F0F for i in cd.static_range(8)]
                        for j in cd.static_range(nx):
                            xl = xs[j][0]
                            dl = i32(MAGIC_BITS) + cd.dot4x8(xl[0], ql[0])
                            dh = i32(MAGIC_BITS) + cd.dot4x8(xl[8], qh[0])
                            for i in cd.static_range(1, 8):
                                dl += cd.dot4x8(xl[i], ql[i])
                                dh += cd.dot4x8(xl[8 + i], qh[i])
                            vals = vals + [s0.x * xs[j][1] * (cd.bitcast(dl, f32) - MAGIC) - s0.y * xs[j][3] +
                                           s1.x * xs[j][2] * (cd.bitcast(dh, f32) - MAGIC) - s1.y * xs[j][4]]
                    else:
                        d, qa, qb = block_words(w, row * (nb // 2 * nw) + (uc >> 1) * nw + (nw // 2) * h, h, nw)
                        q = [qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w]
                        if q40:
                            ql = [q[c] & 0x0F0F0F0F for c in cd.static_range(4)]
                            qh = [(q[c] >> 4) & 0x0F0F0F0F for c in cd.static_range(4)]
                        for j in cd.static_range(nx):
                            xl = xs[j][0]
                            # the integer sum from MAGIC_BITS: its bits are the f32 MAGIC + sum
                            if q40:
                                dots = i32(MAGIC_BITS) + cd.dot4x8(xl[0], ql[0]) + cd.dot4x8(xl[4], qh[0])
                                for c in cd.static_range(1, 4):
                                    dots += cd.dot4x8(xl[c], ql[c]) + cd.dot4x8(xl[4 + c], qh[c])
                                vals = vals + [d * (xs[j][1] * (cd.bitcast(dots, f32) - MAGIC) - 8.0 * xs[j][2])]
                            else:
                                dots = i32(MAGIC_BITS) + cd.dot4x8(xl[0], cd.bitcast(q[0], i32))
                                for c in cd.static_range(1, 8):
                                    dots += cd.dot4x8(xl[c], cd.bitcast(q[c], i32))
                                vals = vals + [d * xs[j][1] * (cd.bitcast(dots, f32) - MAGIC)]
                vals = vals + [f32(0.0) for t in cd.static_range(vp - vals_n)]
                # reduce-scatter: each exchange keeps the half of the values the lane's bit names and adds the
                # partner's copy of it, so that lane i ends with value i % vp summed over the vp lanes of its group
                # (the lanes with its lane // vp) ...
                for _st in cd.static_range(steps):
                    half = len(vals) // 2
                    upper = (lane & half) != 0
                    vals = [cd.select(upper, vals[e + half], vals[e]) +
                            cd.subgroup_shuffle_xor(cd.select(upper, vals[e], vals[e + half]), half)
                            for e in cd.static_range(half)]
                total = vals[0]
                for st in cd.static_range(5 - steps):         # ... then over the lanes with the same i % vp
                    total += cd.subgroup_shuffle_xor(total, vp << st)
                acc[bi] += total
        if split == 1:
            for bi in cd.static_range(nbatch):
                if lane < vals_n:
                    out_row = row0 + bi * bt + lane // nx
                    if out_row < M:
                        y[(lane % nx) * M + out_row] = acc[bi]
        else:
            part = cd.shared(f32, split * nbatch * vp)
            if lane < vp:
                for bi in cd.static_range(nbatch):
                    part[(sg * nbatch + bi) * vp + lane] = acc[bi]
            cd.barrier()
            for o in cd.range(cd.local_invocation_index, nbatch * vals_n, wg):   # an output an invocation
                bi = o // vals_n
                i = o % vals_n
                total = part[bi * vp + i]
                for s in cd.static_range(1, split):
                    total += part[(s * nbatch + bi) * vp + i]
                out_row = row0 + bi * bt + i // nx
                if out_row < M:
                    y[(i % nx) * M + out_row] = total

    gemv_xregs.__name__ = gemv_xregs.__qualname__ = f"gemv_xregs_{fmt}_x{nx}_r{rows}_s{split}" + \
        (f"_u{unroll}" if unroll else "") + (f"_b{bt}" if bt != batch(fmt, nx, rows) else "")
    return cast(cd.Kernel, gemv_xregs)
