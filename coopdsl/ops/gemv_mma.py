"""Decoding products on cooperative matrices: ``y = x W^T`` for 2 to 16 rows of ``x``, reading W once.

At one row of x a product is all loads and the plain kernels of :mod:`coopdsl.ops.gemv` read W at the copy
kernel's pace; at eight rows they spend as many instructions on x and the arithmetic as on W.  Here a
subgroup's multiply-adds are cooperative matrices of 16 rows of W by 16 values of K against the rows of x
(``16 x 8 x 16``, or ``16 x 16 x 16`` past eight rows), and the instructions left a weight are the load and,
for ggml's blocks, the decoding:

* f16 weights: a step's 16 rows of 128 bytes are copied, 16 bytes a lane, into a 16 x 64 tile in shared
  memory the subgroup's matrices load; bf16 weights likewise, each value rounded to f16 on the way
  (:func:`coopdsl.ops.bf16_bits.bf16_as_f16`: the same value where it is an f16 normal number, rounded to
  f16's subnormals below 6.1e-5, inf past 65504);
* q4_0, q8_0, q4_K: each lane decodes 32 values of its row (a q4_0 or q8_0 block, half of two q4_K
  sub-blocks) to f16, two a 32-bit operation (the level in the low bits of ``1024.0``'s f16 pattern, then
  ``(v - 1024 - offset) * d`` on the pair), into such a tile.

A subgroup takes its steps in rounds of ``depth``, software-pipelined: it issues the loads of a round (W's
words and x's tiles) and then decodes and multiplies the round before, so that no step waits for memory after
its subgroup barrier. Measured on an H100 (4096 x 14336 weights, ``gemv(..., tune=True)``): loading x's tiles
with W's rather than after the barrier took 8 rows of f16 from 69.5 to 61.4 us (depth 2, split 4;
``benchmarks/results/ops_llm-mma-xearly-h100-2026-11-27.md``, where a row ``mmaxx<depth>x<split>`` is that order
and ``mmax<depth>x<split>`` the one before), and issuing a round's loads before the previous round's work took
the defaults of 8 and 16 rows of f16 from 59.6 and 64.4 to 49.2 and 55.0 us (0.84 and 0.75 of the copy kernel),
16 rows of q4_K from 47.7 to 46.5 (``ops_llm-mma-pipe-h100-2026-11-27.md``).

x is first rounded to f16 into rows padded with zeros to 8 or 16 (:func:`x_kernel`, one launch) so that its
16 x 8 tiles load as they lie; the error is f16's (a relative 2^-11 a value, of the order of 1e-3 relative
to the result, as torch's f16 matmul; x given as f16 loses nothing).  A workgroup owns 16 rows of W, its
``split`` subgroups take every ``split``-th step of 64 values of K and add their 16 x 8 sums through shared
memory.  W must have at least 16 rows and K be a multiple of 64 (:func:`takes`).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, u32, vec2, vec4

from . import device_caps as caps
from .bf16_bits import bf16_as_f16
from .ggml_formats import scale_min_q4_K

TILE = 16           # rows of W a workgroup owns
STEP = 64           # values of K a subgroup takes a step
FORMATS = ("f16", "bf16", "q4_0", "q8_0", "q4_K")
DEPTHS = (1, 2, 4)  # steps a subgroup loads W for at once
SPLITS = (2, 4, 8)     # (two 2.3 KB tiles a subgroup: 8 take 36 KB of shared memory)
ROW = 9             # uvec4 a row of a tile: 64 f16 and 16 bytes of padding, so that the eight rows a matrix
                    # load reads at once, and the eight lanes a 16-byte store writes at once, meet no bank twice


def cols(nx: int) -> int:
    """Rows of x a launch computes: 8 (for 2 .. 8) or 16 (9 .. 16); the rest of x's copy is zeros."""
    return 8 if nx <= 8 else 16


def takes(fmt: str, m: int, k: int) -> bool:
    """Whether these kernels take M x K weights in ``fmt``: 16 rows or more, K a multiple of 64."""
    return fmt in FORMATS and m >= TILE and k % STEP == 0


def device_takes(dev: object, np_: int) -> bool:
    """Whether ``dev`` (a runtime Device, or None for the interpreter) offers the subgroup-scope f16 -> f32
    cooperative matrices of ``16 x np_ x 16`` these kernels multiply with."""
    return caps.offers_coopmat(dev, 16, np_, 16)


def grid(m: int) -> tuple[int, int, int]:
    """Workgroups of a launch for M rows of W."""
    return (-(-m // TILE), 1, 1)


@cache
def x_kernel(x_f16: bool = False) -> cd.Kernel:
    """x (N x K, f32 or f16, as vec4s) to f16 in the order the products' B matrices load (``xh``): for each 16
    values of K, the 16 x NP tile column by column (row n of x, then n + 1, 16 values each), rows N .. NP - 1
    zeros, so that a matrix load reads one contiguous span.  One invocation a vec4 of ``xh``; launch
    ``(ceil(NP K / 4 / 128), 1, 1)``."""
    xt = vec4[f16] if x_f16 else vec4[f32]

    @cd.kernel(workgroup_size=(128, 1, 1), subgroup_size=32)
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def gemv_mma_x(x: cd.Buffer[xt], xh: cd.Buffer[vec4[f16]], N: u32, NP: u32, K4: u32):
        t = cd.global_invocation_id.x
        if t < NP * K4:
            chunk = t // (4 * NP)          # which 16 values of K
            n = t % (4 * NP) // 4          # which row of x
            v = vec4[f16](f16(0.0))
            if n < N:
                v = vec4[f16](x[n * K4 + chunk * 4 + t % 4])
            xh[t] = v

    gemv_mma_x.__name__ = gemv_mma_x.__qualname__ = "gemv_mma_x" + ("_f16" if x_f16 else "")
    return cast(cd.Kernel, gemv_mma_x)


@cd.func
@no_type_check
def level_pair(q, bias, d):
    """Two f16 weights ``(n - bias) * d`` from the 8-bit levels ``n`` (below 256) in bits 0-7 and 8-15 of
    ``q``, packed in a u32: each level in the low bits of 1024.0's f16 pattern, then one subtraction (exact)
    and one multiplication on the pair."""
    v = cd.bitcast((q & 0xFF) | ((q & 0xFF00) << 8) | 0x64006400, vec2[f16])
    return cd.bitcast((v - vec2[f16](bias)) * d, u32)


@cd.func
@no_type_check
def level_pair_min(q, d, mn):
    """Two f16 weights ``n * d - mn`` (q4_K) from the levels in bits 0-7 and 8-15 of ``q``, packed in a u32."""
    v = cd.bitcast((q & 0xFF) | ((q & 0xFF00) << 8) | 0x64006400, vec2[f16])
    return cd.bitcast(cd.fma(v - vec2[f16](f16(1024.0)), vec2[f16](d), vec2[f16](-mn)), u32)





@cd.func
@no_type_check
def block_q4_0(t0, t1, t2, t3, t4, h):
    """Block ``2 s + h`` of a row's pair of q4_0 blocks (words ``4 h .. 4 h + 4`` of the pair's nine: its scale in
    the low (h = 0) or high half of ``t0``, its levels from the next 16 bits (h = 0) or ``t1``) as 32 f16
    weights, four ``uvec4`` of elements ``8 i .. 8 i + 7``: levels 0 .. 15 in the low nibbles of qs bytes 0 ..
    15, 16 .. 31 in the high ones."""
    d = cd.bitcast(t0 >> (16 * h), vec2[f16]).x
    q0 = t1 if h == 1 else (t0 >> 16) | (t1 << 16)
    q1 = t2 if h == 1 else (t1 >> 16) | (t2 << 16)
    q2 = t3 if h == 1 else (t2 >> 16) | (t3 << 16)
    q3 = t4 if h == 1 else (t3 >> 16) | (t4 << 16)
    out = []
    for i in cd.static_range(4):          # elements 8 i .. 8 i + 7
        qa = ((q0 if i % 2 == 0 else q2) >> (4 * (i // 2))) & 0x0F0F0F0F
        qb = ((q1 if i % 2 == 0 else q3) >> (4 * (i // 2))) & 0x0F0F0F0F
        out = out + [vec4[u32](level_pair(qa, f16(1032.0), d), level_pair(qa >> 16, f16(1032.0), d),
                               level_pair(qb, f16(1032.0), d), level_pair(qb >> 16, f16(1032.0), d))]
    return out[0], out[1], out[2], out[3]


@cd.func
@no_type_check
def block_q8_0(t0, t1, t2, t3, t4, t5, t6, t7, t8, h):
    """Block ``2 s + h`` of a row's pair of q8_0 blocks (words ``8 h .. 8 h + 8`` of the pair's 17, laid out as
    :func:`block_q4_0`'s) as 32 f16 weights, four ``uvec4``: 32 signed levels, word ``i`` elements ``4 i ..``."""
    d = cd.bitcast(t0 >> (16 * h), vec2[f16]).x
    t = [t0, t1, t2, t3, t4, t5, t6, t7, t8]
    q = [t[j + 1] if h == 1 else (t[j] >> 16) | (t[j + 1] << 16) for j in cd.static_range(8)]
    out = []
    for i in cd.static_range(4):
        qa = q[2 * i] ^ 0x80808080        # + 128: 0 .. 255
        qb = q[2 * i + 1] ^ 0x80808080
        out = out + [vec4[u32](level_pair(qa, f16(1152.0), d), level_pair(qa >> 16, f16(1152.0), d),
                               level_pair(qb, f16(1152.0), d), level_pair(qb >> 16, f16(1152.0), d))]
    return out[0], out[1], out[2], out[3]


@cd.func
@no_type_check
def block_q4_K(v, qv, c):
    """Elements ``16 h .. 16 h + 15`` of sub-blocks ``2 c`` and ``2 c + 1`` of a q4_K block (``v`` its head,
    ``qv`` the 16 bytes of qs ``32 c + 16 h ..``: the low nibbles sub-block ``2 c``, the high ones ``2 c + 1``) as
    f16 weights ``n d - m``, four ``uvec4``: sub-block ``2 c`` elements ``16 h .. + 7``, ``16 h + 8 ..``, then
    sub-block ``2 c + 1``'s."""
    out = []
    for half in cd.static_range(2):       # sub-block 2c + half: nibbles at bit 4 half
        sm = scale_min_q4_K(v, 2 * c + half)
        dd = f16(sm.x)
        mn = f16(sm.y)
        for i in cd.static_range(2):      # qs words 2 i, 2 i + 1
            qa = (qv[2 * i] >> (4 * half)) & 0x0F0F0F0F
            qb = (qv[2 * i + 1] >> (4 * half)) & 0x0F0F0F0F
            out = out + [vec4[u32](level_pair_min(qa, dd, mn), level_pair_min(qa >> 16, dd, mn),
                                   level_pair_min(qb, dd, mn), level_pair_min(qb >> 16, dd, mn))]
    return out[0], out[1], out[2], out[3]


@cache
def kernel(fmt: str, np_: int, split: int, depth: int = 2) -> cd.Kernel:
    """The product kernel for weights in ``fmt``, ``np_`` (8 or 16) rows of x's f16 copy, ``split`` subgroups
    a workgroup, each loading W and x for ``depth`` of its steps at once (1, 2 or 4: the loads of the later steps
    are in flight while the first is decoded and multiplied); launch :func:`grid` workgroups with ``M``, ``K`` and
    ``N`` (the rows of x, at most ``np_``)."""
    if fmt not in FORMATS:
        raise ValueError(f"gemv_mma: weights in {fmt!r}; these kernels take {', '.join(FORMATS)}")
    if np_ not in (8, 16) or split not in SPLITS or depth not in DEPTHS:
        raise ValueError(f"gemv_mma: np_={np_}, split={split}, depth={depth}; np_ 8 or 16, split one of {SPLITS}, "
                         f"depth one of {DEPTHS}")
    wt = u32 if fmt in ("q4_0", "q8_0") else vec4[u32]
    f16w, q40, q80 = fmt in ("f16", "bf16"), fmt == "q4_0", fmt == "q8_0"
    BF = fmt == "bf16"
    nw = 9 if q40 else 17               # 32-bit words of two q4_0 / q8_0 blocks
    WG = 32 * split

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_mma(w: cd.Buffer[wt], xh: cd.Buffer[vec4[f16]], y: cd.Buffer[f32], M: u32, K: u32, N: u32):
        lane = cd.subgroup_invocation_id
        sub = cd.subgroup_id
        row0 = cd.workgroup_id.x * TILE
        r0 = min(row0, M - TILE)                 # the tile's first row: all 16 inside W (M >= 16)
        tile = cd.shared(vec4[u32], split * 2 * TILE * ROW)  # a subgroup's two 16 x 64 f16 tiles
        part = cd.shared(f32, split * TILE * np_)
        acc = Acc[f32, TILE, np_].splat(0.0)
        r = lane >> 1                            # the row of the tile this lane decodes (q4_0, q8_0, q4_K), and
        h = lane & 1                             # which half of it
        row = r0 + r
        steps = K // STEP
        RS = split * depth                       # steps between two rounds of a subgroup
        # a software pipeline: the iteration at s0 issues the loads of round s0 (W's words, x's tiles; a step past
        # the last reads the last again), then decodes and multiplies round s0 - RS, whose loads the iteration
        # before issued, so that each round's loads are in flight during the previous round's work
        if q40 or q80:
            raw = [[u32(0) for j in cd.static_range(nw // 2 + 1)] for u in cd.static_range(depth)]
        else:
            raw = [[vec4[u32](0) for j in cd.static_range(4 if f16w else 2)] for u in cd.static_range(depth)]
        xs = [[MatB[f16, 16, np_].splat(0.0) for i in cd.static_range(4)] for u in cd.static_range(depth)]
        for s0 in cd.range(sub, steps + RS, RS):
            ready = raw
            xready = xs
            if s0 < steps:
                raw = []
                for u in cd.static_range(depth):
                    s = min(s0 + u * split, steps - 1)
                    if f16w:
                        # 16 rows of 128 bytes: four rows a load instruction, 16 bytes a lane
                        raw = raw + [[w[(r0 + (32 * i + lane) // 8) * (K // 8) + s * 8 + lane % 8]
                                      for i in cd.static_range(4)]]
                    elif q40 or q80:
                        # blocks 2 s and 2 s + 1 of the row (36 or 68 bytes: 9 or 17 32-bit words, 4-byte aligned
                        # as K is a multiple of 64): the words that hold block 2 s + h
                        wb = (row * (K // 64) + s) * nw + (nw // 2) * h
                        raw = raw + [[w[wb + j] for j in cd.static_range(nw // 2 + 1)]]
                    else:
                        # q4_K block s // 4: its head, and the 16 bytes of qs this lane decodes
                        wb = (row * (K // 256) + s // 4) * 9
                        raw = raw + [[w[wb], w[wb + 1 + 2 * (s % 4) + h]]]
                xs = [[MatB[f16, 16, np_].load(xh, (min(s0 + u * split, steps - 1) * 4 + i) * 4 * np_, stride=4,
                                                layout=ColumnMajor)
                       for i in cd.static_range(4)] for u in cd.static_range(depth)]
            if s0 >= sub + RS:
                for u in cd.static_range(depth):
                    s = s0 - RS + u * split
                    if s < steps:
                        cur = (2 * sub + ((s // split) & 1)) * TILE * ROW   # this step's tile (the other: the last's)
                        at = cur + r * ROW
                        t = ready[u]
                        if f16w:
                            for i in cd.static_range(4):
                                e = 32 * i + lane
                                if BF:
                                    tile[cur + e // 8 * ROW + e % 8] = bf16_as_f16(t[i])
                                else:
                                    tile[cur + e // 8 * ROW + e % 8] = t[i]
                        elif q40:
                            o = block_q4_0(t[0], t[1], t[2], t[3], t[4], h)
                            for i in cd.static_range(4):
                                tile[at + 4 * h + i] = o[i]
                        elif q80:
                            o = block_q8_0(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], h)
                            for i in cd.static_range(4):
                                tile[at + 4 * h + i] = o[i]
                        else:
                            # q4_K: sub-blocks 2c, 2c + 1 of block s // 4 (c = s % 4) are the low and high nibbles of
                            # qs bytes 32 c .. 32 c + 31; this lane's 16 (h) hold elements 16 h .. 16 h + 15 of both
                            o = block_q4_K(t[0], t[1], s % 4)
                            for i in cd.static_range(4):
                                tile[at + 4 * (i // 2) + 2 * h + i % 2] = o[i]
                        cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
                        for i in cd.static_range(4):
                            a = MatA[f16, 16, 16].load(tile, cur + 2 * i, stride=ROW)
                            acc = cd.muladd(a, xready[u][i], acc)
        acc.store(part, sub * TILE * np_, stride=np_)
        cd.barrier()
        for t in cd.range(cd.local_invocation_index, TILE * np_, WG):
            total = part[t]
            for u in cd.static_range(1, split):
                total += part[u * TILE * np_ + t]
            out = r0 + t // np_
            if t % np_ < N and out >= row0:       # the rows of the tile another workgroup does not write
                y[(t % np_) * M + out] = total

    gemv_mma.__name__ = gemv_mma.__qualname__ = f"gemv_mma_{fmt}_x{np_}_s{split}_d{depth}"
    return cast(cd.Kernel, gemv_mma)
