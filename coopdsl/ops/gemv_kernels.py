"""The plain decoding kernels of :mod:`coopdsl.ops.gemv`: how a weight row is cut into the units lanes read, the
ways x is read, and the kernel each (format, rows of x, way, layout) compiles to (:func:`build`; the op names one
with :func:`coopdsl.ops.gemv.kernel`, which fills in the layout :func:`coopdsl.ops.gemv.choice` picks).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import f16, f32, i32, u16, u32, vec2, vec4

from .gemv_q8 import MAGIC, MAGIC_BITS, PAIR_WORDS, XQ_VECS, block_words
from .ggml_formats import scale_min_q4_K

WG = 128            # four subgroups of 32
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


@cd.func
@no_type_check
def amax8(a, b):
    """The largest magnitude of the eight values of two vec4[f32]."""
    m = max(abs(a), abs(b))
    return max(max(m.x, m.y), max(m.z, m.w))


@cd.func
@no_type_check
def pack8(v, inv):
    """``round(v * inv)`` (four values within +-127) as four signed 8-bit lanes of an i32, lane 0 in the low
    byte: the rounding by the f32 addition of :data:`MAGIC` (to nearest, ties to even), the lanes the low bytes."""
    b = cd.bitcast(v * inv + MAGIC, vec4[u32])
    return cd.bitcast((b.x & 0xFF) | ((b.y & 0xFF) << 8) | ((b.z & 0xFF) << 16) | (b.w << 24), i32)


# how a weight row is cut into the units consecutive lanes read (coalesced: lane i reads unit i): elements a
# unit, units a block
UNITS = {"f16": (8, 1), "bf16": (8, 1), "q4_0": (8, 4), "q8_0": (8, 4), "q4_K": (32, 8)}


WAYS = ("f32", "pre", "prew", "inline")   # how a GEMV kernel reads x (and, for "prew", W): :func:`kernel`'s ``how``


INLINE_FORMATS = ("q4_0", "q8_0", "q4_K")
ONES = 0x01010101        # four 8-bit lanes of 1: dot4x8(q, ONES) sums q's lanes
Q8_FORMATS = ("q4_0", "q4_K")   # weight formats with a kernel for x rounded to 8 bits by quantize_kernel first
WORDS_FORMATS = ("q4_0", "q8_0")   # ... and one reading whole blocks as 32-bit words (:func:`kernel`'s "prew")


def check(fmt: str, nx: int, how: str) -> None:
    """A ValueError unless :func:`build` takes weights in ``fmt``, ``nx`` rows of x and the way ``how``."""

    if fmt not in FORMATS:
        raise ValueError(f"gemv: unknown weight format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if not 1 <= nx <= MAX_ROWS_X:
        raise ValueError(f"gemv: {nx} rows of x; the decode kernels take 1 to {MAX_ROWS_X}")
    if how not in WAYS:
        raise ValueError(f"gemv: unknown way {how!r} of reading x; expected one of {', '.join(WAYS)}")
    if how == "pre" and fmt not in Q8_FORMATS:
        raise ValueError(f"gemv: x rounded to 8 bits by quantize_kernel first serves {', '.join(Q8_FORMATS)} "
                         f"weights, not {fmt}")
    if how == "prew" and fmt not in WORDS_FORMATS:
        raise ValueError(f"gemv: whole blocks read as 32-bit words serve {' and '.join(WORDS_FORMATS)} weights, "
                         f"not {fmt}")
    if how == "inline" and fmt not in INLINE_FORMATS:
        raise ValueError(f"gemv: x rounded to 8 bits in the kernel serves {', '.join(INLINE_FORMATS)} weights, "
                         f"not {fmt}")


@cache
def build(fmt: str, nx: int, x_f16: bool, rows: int, split: int, how: str = "f32",
          unroll: int | None = None) -> cd.Kernel:
    """The kernel of :func:`coopdsl.ops.gemv.kernel` for a layout given in full (``rows`` rows of W a group of
    ``split`` subgroups): what it does is described there."""
    check(fmt, nx, how)
    q8, inline, words = how in ("pre", "prew"), how == "inline", how == "prew"
    if split not in (1, 2, 4) or not 1 <= rows <= 16:
        raise ValueError(f"gemv: rows={rows}, split={split}; rows 1 .. 16, split 1, 2 or 4")
    bf = fmt == "bf16"
    xt = vec4[i32] if q8 else vec4[f16] if x_f16 else vec4[f32]
    unroll = unroll or (4 if nx * rows <= 4 else 2)
    groups = (WG // 32) // split
    per_unit, units_block = (32, 1) if words else UNITS[fmt]
    wt = u32 if words else u16 if fmt in ("q4_0", "q8_0") else vec4[u32]
    halfs = fmt in ("f16", "bf16")
    q40, q80 = fmt == "q4_0", fmt == "q8_0"      # (kernels compare compile-time bools, not strings)
    nw = PAIR_WORDS.get(fmt, 0)

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv(w: cd.Buffer[wt], x: cd.Buffer[xt], y: cd.Buffer[f32], M: u32, K: u32):
        lane = cd.subgroup_invocation_id
        group = cd.subgroup_id // split
        first = lane + 32 * (cd.subgroup_id % split)       # this lane's first unit of a row
        row0 = (cd.workgroup_id.x * groups + group) * rows
        acc = [[f32(0.0) for j in cd.static_range(nx)] for r in cd.static_range(rows)]
        nu = K // per_unit                                  # units a row
        for u in cd.range(first, nu, 32 * split, unroll=unroll):
            b = u // units_block                            # block
            p = u % units_block                             # unit in it
            row = [min(row0 + r, M - 1) for r in cd.static_range(rows)]  # a row past M reads row M - 1, not stored
            if halfs:
                wr = []
                for r in cd.static_range(rows):
                    wv = w[row[r] * nu + u]
                    wr = wr + [[halves(wv.x, wv.y, wv.z, wv.w, bf, False), halves(wv.x, wv.y, wv.z, wv.w, bf, True)]]
                for j in cd.static_range(nx):
                    xa = x4(x, (j * K + u * 8) // 4)
                    xb = x4(x, (j * K + u * 8) // 4 + 1)
                    xe = vec4[f32](xa.x, xa.z, xb.x, xb.z)      # element 2i: the low half of word i
                    xo = vec4[f32](xa.y, xa.w, xb.y, xb.w)
                    for r in cd.static_range(rows):
                        acc[r][j] += cd.dot(xe, wr[r][0]) + cd.dot(xo, wr[r][1])
            elif inline and q40:
                # quarter p of a q4_0 block (elements 4p .. 4p + 3 in the low nibbles of qs bytes 4p .., 16 + 4p ..
                # in the high ones) against x rounded here to 8 bits with one scale for the unit's 8 values:
                # sum (n - 8) d x ~ d dx (sum n q - 8 sum q)
                xw = []
                for j in cd.static_range(nx):
                    xo = (j * K + b * 32) // 4 + p
                    xl = x4(x, xo)
                    xh = x4(x, xo + 4)
                    a = amax8(xl, xh)
                    inv = 127.0 / max(a, 1e-30)
                    ql = pack8(xl, inv)
                    qh = pack8(xh, inv)
                    xw = xw + [[ql, qh, a * (1.0 / 127.0), cd.dot4x8(ql, i32(ONES)) + cd.dot4x8(qh, i32(ONES))]]
                for r in cd.static_range(rows):
                    base = (row[r] * (K // 32) + b) * 9             # 18 bytes = 9 16-bit words
                    d = f32(cd.bitcast(w[base], f16))
                    q = u32(w[base + 1 + 2 * p]) | (u32(w[base + 2 + 2 * p]) << 16)
                    lo = q & 0x0F0F0F0F
                    hi = (q >> 4) & 0x0F0F0F0F
                    for j in cd.static_range(nx):
                        dots = cd.dot4x8(xw[j][0], lo) + cd.dot4x8(xw[j][1], hi) - 8 * xw[j][3]
                        acc[r][j] += d * xw[j][2] * f32(dots)
            elif inline and q80:
                # quarter p of a q8_0 block (elements 8p .. 8p + 7) against x rounded here to 8 bits
                xw = []
                for j in cd.static_range(nx):
                    xo = (j * K + b * 32) // 4 + 2 * p
                    xa = x4(x, xo)
                    xb = x4(x, xo + 1)
                    a = amax8(xa, xb)
                    inv = 127.0 / max(a, 1e-30)
                    xw = xw + [[pack8(xa, inv), pack8(xb, inv), a * (1.0 / 127.0)]]
                for r in cd.static_range(rows):
                    base = (row[r] * (K // 32) + b) * 17            # 34 bytes = 17 16-bit words
                    d = f32(cd.bitcast(w[base], f16))
                    q0 = cd.bitcast(u32(w[base + 1 + 4 * p]) | (u32(w[base + 2 + 4 * p]) << 16), i32)
                    q1 = cd.bitcast(u32(w[base + 3 + 4 * p]) | (u32(w[base + 4 + 4 * p]) << 16), i32)
                    for j in cd.static_range(nx):
                        acc[r][j] += d * xw[j][2] * f32(cd.dot4x8(xw[j][0], q0) + cd.dot4x8(xw[j][1], q1))
            elif words:
                # block u of each row as 32-bit words: blocks 2i and 2i + 1 are words nw i .. nw i + nw - 1 (nw = 9
                # for q4_0, 17 for q8_0); block 2i + h has its scale in the low (h = 0) or high half of word nw i +
                # (nw // 2) h and its levels from the next 16 bits (h = 0) or the next word.  q4_0: level bytes
                # 4c .. 4c + 3 are elements 4c .. (low nibbles) and 16 + 4c .. (high), against x's words c and
                # 4 + c; q8_0: level word c is elements 4c .. 4c + 3, against x's word c
                h = u & 1
                wr = []
                for r in cd.static_range(rows):
                    d, qa, qb = block_words(w, row[r] * (K // 64 * nw) + (u >> 1) * nw + (nw // 2) * h, h, nw)
                    wr = wr + [[d, [qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w]]]
                for j in cd.static_range(nx):
                    xb = (j * (K // 32) + u) * XQ_VECS
                    xa = x[xb]
                    xc = x[xb + 1]
                    xs = [xa.x, xa.y, xa.z, xa.w, xc.x, xc.y, xc.z, xc.w]
                    sc = x[xb + 2]
                    dx = cd.bitcast(sc.x, f32)
                    sx = cd.bitcast(sc.y, f32)
                    for r in cd.static_range(rows):
                        q = wr[r][1]
                        # the integer sum starts at MAGIC_BITS: its bits are then the f32 MAGIC + sum (no
                        # conversion instruction: NVIDIA lists conversions at a quarter of the integer rate)
                        if q40:
                            dots = i32(MAGIC_BITS) + cd.dot4x8(xs[0], q[0] & 0x0F0F0F0F) + \
                                cd.dot4x8(xs[4], (q[0] >> 4) & 0x0F0F0F0F)
                            for c in cd.static_range(1, 4):
                                dots += cd.dot4x8(xs[c], q[c] & 0x0F0F0F0F) + \
                                    cd.dot4x8(xs[4 + c], (q[c] >> 4) & 0x0F0F0F0F)
                            acc[r][j] += wr[r][0] * (dx * (cd.bitcast(dots, f32) - MAGIC) - 8.0 * sx)
                        else:
                            dots = i32(MAGIC_BITS) + cd.dot4x8(xs[0], cd.bitcast(q[0], i32))
                            for c in cd.static_range(1, 8):
                                dots += cd.dot4x8(xs[c], cd.bitcast(q[c], i32))
                            acc[r][j] += wr[r][0] * dx * (cd.bitcast(dots, f32) - MAGIC)
            elif q8 and q40:
                # quarter p of a q4_0 block against 8-bit x: the low nibbles of qs bytes 4p .. 4p + 3 (elements
                # 4p ..) and the high ones (16 + 4p ..) as four 8-bit lanes each, dotted with x's words p and 4 + p;
                # sum (q - 8) d x = d (dx * sum(q x) - 8 dx * sum(x)): a quarter of the second term a lane
                wr = []
                for r in cd.static_range(rows):
                    base = (row[r] * (K // 32) + b) * 9
                    d = f32(cd.bitcast(w[base], f16))
                    q = u32(w[base + 1 + 2 * p]) | (u32(w[base + 2 + 2 * p]) << 16)
                    wr = wr + [[d, q & 0x0F0F0F0F, (q >> 4) & 0x0F0F0F0F]]
                for j in cd.static_range(nx):
                    xb = (j * (K // 32) + b) * XQ_VECS
                    x0 = x[xb][p]
                    x1 = x[xb + 1][p]
                    sc = x[xb + 2]
                    dx = cd.bitcast(sc.x, f32)
                    sx = cd.bitcast(sc.y, f32)
                    for r in cd.static_range(rows):
                        dots = i32(MAGIC_BITS) + cd.dot4x8(x0, wr[r][1]) + cd.dot4x8(x1, wr[r][2])
                        acc[r][j] += wr[r][0] * (dx * (cd.bitcast(dots, f32) - MAGIC) - 2.0 * sx)
            elif q40:
                # quarter p of a block: qs bytes 4p .. 4p + 3 = elements 4p .. 4p + 3 (low nibbles), 16 + 4p .. (high)
                wr = []
                for r in cd.static_range(rows):
                    base = (row[r] * (K // 32) + b) * 9             # 18 bytes = 9 16-bit words
                    d = f32(cd.bitcast(w[base], f16))
                    q = u32(w[base + 1 + 2 * p]) | (u32(w[base + 2 + 2 * p]) << 16)
                    lo = vec4[f32](f32(q & 15), f32((q >> 8) & 15), f32((q >> 16) & 15), f32((q >> 24) & 15))
                    hi = vec4[f32](f32((q >> 4) & 15), f32((q >> 12) & 15), f32((q >> 20) & 15), f32(q >> 28))
                    wr = wr + [[(lo - 8.0) * d, (hi - 8.0) * d]]
                for j in cd.static_range(nx):
                    xo = (j * K + b * 32) // 4 + p
                    xl = x4(x, xo)
                    xh = x4(x, xo + 4)
                    for r in cd.static_range(rows):
                        acc[r][j] += cd.dot(wr[r][0], xl) + cd.dot(wr[r][1], xh)
            elif q80:
                # quarter p of a block: qs bytes 8p .. 8p + 7 = elements 8p .. 8p + 7
                wr = []
                for r in cd.static_range(rows):
                    base = (row[r] * (K // 32) + b) * 17            # 34 bytes = 17 16-bit words
                    d = f32(cd.bitcast(w[base], f16))
                    vals = []
                    for c in cd.static_range(2):
                        q = u32(w[base + 1 + 4 * p + 2 * c]) | (u32(w[base + 2 + 4 * p + 2 * c]) << 16)
                        vals = vals + [vec4[f32](f32(cd.bitcast(q << 24, cd.i32) >> 24),
                                                 f32(cd.bitcast(q << 16, cd.i32) >> 24),
                                                 f32(cd.bitcast(q << 8, cd.i32) >> 24),
                                                 f32(cd.bitcast(q, cd.i32) >> 24)) * d]
                    wr = wr + [vals]
                for j in cd.static_range(nx):
                    xo = (j * K + b * 32) // 4 + 2 * p
                    xa = x4(x, xo)
                    xb = x4(x, xo + 1)
                    for r in cd.static_range(rows):
                        acc[r][j] += cd.dot(wr[r][0], xa) + cd.dot(wr[r][1], xb)
            else:
                # eighth p of a q4_K block (9 uvec4: the head, then 8 of levels): qs bytes 16p .. 16p + 15 hold
                # elements t of sub-block 2c (low nibbles) and of 2c + 1 (high), t = 16 h .. 16 h + 15, p = 2c + h;
                # with ``inline``, against x rounded here to 8 bits, one scale for each 16 values; with ``q8``,
                # against x rounded per block of 32 (a sub-block) by quantize_kernel: words 4h .. 4h + 3 of x's
                # blocks 8b + 2c and 8b + 2c + 1, and half of each block's d * sum (the other lane has the rest)
                c = p >> 1
                xw = []
                if inline:
                    for j in cd.static_range(nx):
                        xo = (j * K + b * 256 + 64 * c + 16 * (p & 1)) // 4
                        xl = [x4(x, xo + i) for i in cd.static_range(4)]
                        xh = [x4(x, xo + 8 + i) for i in cd.static_range(4)]
                        al = max(amax8(xl[0], xl[1]), amax8(xl[2], xl[3]))
                        ah = max(amax8(xh[0], xh[1]), amax8(xh[2], xh[3]))
                        il = 127.0 / max(al, 1e-30)
                        ih = 127.0 / max(ah, 1e-30)
                        pl = [pack8(xl[i], il) for i in cd.static_range(4)]
                        ph = [pack8(xh[i], ih) for i in cd.static_range(4)]
                        # the sums of the rounded values (their levels' sums times the scales), as the
                        # minimum's term needs them: the sub-block's offset m then cancels against d q's on
                        # the same x, as ggml's q8_1 block sums make it (x's own sums left a residual that
                        # grew with the levels' offset)
                        nl = i32(MAGIC_BITS) + cd.dot4x8(pl[0], i32(ONES)) + cd.dot4x8(pl[1], i32(ONES)) + \
                            cd.dot4x8(pl[2], i32(ONES)) + cd.dot4x8(pl[3], i32(ONES))
                        nh = i32(MAGIC_BITS) + cd.dot4x8(ph[0], i32(ONES)) + cd.dot4x8(ph[1], i32(ONES)) + \
                            cd.dot4x8(ph[2], i32(ONES)) + cd.dot4x8(ph[3], i32(ONES))
                        dxl = al * (1.0 / 127.0)
                        dxh = ah * (1.0 / 127.0)
                        xw = xw + [[pl, ph, dxl, dxh, dxl * (cd.bitcast(nl, f32) - MAGIC),
                                    dxh * (cd.bitcast(nh, f32) - MAGIC)]]
                elif q8:
                    for j in cd.static_range(nx):
                        xl0 = (j * (K // 32) + b * 8 + 2 * c) * XQ_VECS
                        xh0 = xl0 + XQ_VECS
                        xl = x[xl0 + (p & 1)]
                        xh = x[xh0 + (p & 1)]
                        sl = x[xl0 + 2]
                        shx = x[xh0 + 2]
                        xw = xw + [[[xl.x, xl.y, xl.z, xl.w], [xh.x, xh.y, xh.z, xh.w],
                                    cd.bitcast(sl.x, f32), cd.bitcast(shx.x, f32),
                                    0.5 * cd.bitcast(sl.y, f32), 0.5 * cd.bitcast(shx.y, f32)]]
                wr = []
                for r in cd.static_range(rows):
                    base = (row[r] * (K // 256) + b) * 9
                    v = w[base]
                    qv = w[base + 1 + p]
                    s0 = scale_min_q4_K(v, 2 * c)
                    s1 = scale_min_q4_K(v, 2 * c + 1)
                    d0 = s0.x
                    d1 = s1.x
                    m0 = s0.y
                    m1 = s1.y
                    if inline or q8:
                        ql = [qv[i] & 0x0F0F0F0F for i in cd.static_range(4)]
                        qh = [(qv[i] >> 4) & 0x0F0F0F0F for i in cd.static_range(4)]
                        for j in cd.static_range(nx):
                            t = xw[j]
                            # sums from MAGIC_BITS, read as f32 MAGIC + sum (no conversion instruction)
                            dl = i32(MAGIC_BITS) + cd.dot4x8(t[0][0], ql[0]) + cd.dot4x8(t[0][1], ql[1]) + \
                                cd.dot4x8(t[0][2], ql[2]) + cd.dot4x8(t[0][3], ql[3])
                            dh = i32(MAGIC_BITS) + cd.dot4x8(t[1][0], qh[0]) + cd.dot4x8(t[1][1], qh[1]) + \
                                cd.dot4x8(t[1][2], qh[2]) + cd.dot4x8(t[1][3], qh[3])
                            acc[r][j] += d0 * t[2] * (cd.bitcast(dl, f32) - MAGIC) - m0 * t[4] + \
                                d1 * t[3] * (cd.bitcast(dh, f32) - MAGIC) - m1 * t[5]
                    else:
                        lo = []
                        hi = []
                        for i in cd.static_range(4):
                            q = qv[i]
                            lo = lo + [vec4[f32](f32(q & 15), f32((q >> 8) & 15), f32((q >> 16) & 15),
                                                 f32((q >> 24) & 15))]
                            hi = hi + [vec4[f32](f32((q >> 4) & 15), f32((q >> 12) & 15), f32((q >> 20) & 15),
                                                 f32(q >> 28))]
                        wr = wr + [[d0, d1, m0, m1, lo, hi]]
                if not (inline or q8):
                    for j in cd.static_range(nx):
                        xo = (j * K + b * 256 + 64 * c + 16 * (p & 1)) // 4
                        xl = [x4(x, xo + i) for i in cd.static_range(4)]
                        xh = [x4(x, xo + 8 + i) for i in cd.static_range(4)]
                        sl = xl[0] + xl[1] + xl[2] + xl[3]
                        sh4 = xh[0] + xh[1] + xh[2] + xh[3]
                        xsl = sl.x + sl.y + sl.z + sl.w
                        xsh = sh4.x + sh4.y + sh4.z + sh4.w
                        for r in cd.static_range(rows):
                            q = wr[r]
                            dl = cd.dot(q[4][0], xl[0]) + cd.dot(q[4][1], xl[1]) + cd.dot(q[4][2], xl[2]) + \
                                cd.dot(q[4][3], xl[3])
                            dh = cd.dot(q[5][0], xh[0]) + cd.dot(q[5][1], xh[1]) + cd.dot(q[5][2], xh[2]) + \
                                cd.dot(q[5][3], xh[3])
                            acc[r][j] += q[0] * dl - q[2] * xsl + q[1] * dh - q[3] * xsh
        if split == 1:
            for r in cd.static_range(rows):
                for j in cd.static_range(nx):
                    total = cd.subgroup_add(acc[r][j])
                    if lane == 0 and row0 + r < M:
                        y[j * M + row0 + r] = total
        else:
            part = cd.shared(f32, (WG // 32) * rows * nx)   # per subgroup: its sums, then the group's
            for r in cd.static_range(rows):
                for j in cd.static_range(nx):
                    total = cd.subgroup_add(acc[r][j])
                    if lane == 0:
                        part[(cd.subgroup_id * rows + r) * nx + j] = total
            cd.barrier()
            for t in cd.range(cd.local_invocation_index, groups * rows * nx, WG):  # an output an invocation
                g = t // (rows * nx)
                rj = t % (rows * nx)
                total = part[g * split * rows * nx + rj]
                for s in cd.static_range(1, split):
                    total += part[(g * split + s) * rows * nx + rj]
                out_row = (cd.workgroup_id.x * groups + g) * rows + rj // nx
                if out_row < M:
                    y[(rj % nx) * M + out_row] = total

    gemv.__name__ = gemv.__qualname__ = f"gemv_{fmt}_x{nx}" + ("_q8w" if words else "_q8" if q8 else "_i8" if inline
                                                              else "") + \
        ("_f16" if x_f16 and not q8 else "")
    return cast(cd.Kernel, gemv)


