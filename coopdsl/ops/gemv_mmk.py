"""Decoding products on cooperative matrices with K split over workgroups: ``y = x W^T`` for 2 to 16 rows of ``x``.

:mod:`coopdsl.ops.gemv_mma` gives a workgroup 16 rows of W and all of K, so each workgroup reads all of ``x``
(rounded to f16 by a first launch) from L2 again: at 8 rows of x and 4096 x 14336 weights that is 58 MB of x for
33 MB of q4_0 weights.  Here a workgroup owns ``tiles`` x 16 rows of W (a subgroup each) and a chunk of ``kc``
values of K (workgroup y), and first copies its chunk of every row of ``x`` (f32 or f16, as given) into shared
memory as f16, in the order the products' B matrices load; its subgroups then walk the chunk with the steps of
:mod:`coopdsl.ops.gemv_mma` (64 values of K: W's words loaded a round of ``depth`` steps ahead, decoded to f16 into
a subgroup's tile, ``16 x NP x 16`` multiply-adds against x's tiles in shared memory).  Each workgroup writes its
partial sums (``part``, chunk-major: ``part[c * N * M + n * M + m]``), and
:func:`coopdsl.ops.ggml_mul_mm.reduce_kernel` adds the chunks (with one chunk the product writes ``y`` itself).
x's bytes read from L2 a call are ``ceil(M / (16 tiles)) * K * NP * 2``, a quarter of gemv_mma's at four tiles,
and no launch rounds x first.  W must have at least 16 rows and K be a multiple of 64 (q4_K: 256).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, u32, vec2, vec4

from .gemv_mma import ROW, STEP, TILE, block_q4_0, block_q4_K, block_q8_0

FORMATS = ("f16", "q4_0", "q8_0", "q4_K")
DEPTHS = (1, 2, 4)
TILES = (1, 2, 4)                  # subgroups (16-row tiles of W) a workgroup
SHARED_BYTES = 48 * 1024           # Vulkan's guaranteed maximum is 16 KB; NVIDIA and AMD give 48 KB or more
X_BYTES = 24 * 1024                # the x chunk's share of it


def cols(nx: int) -> int:
    """Rows of x a launch computes: 8 (for 2 .. 8) or 16 (9 .. 16)."""
    return 8 if nx <= 8 else 16


def takes(fmt: str, m: int, k: int) -> bool:
    """Whether these kernels take M x K weights in ``fmt``: 16 rows or more, K a multiple of 64 (q4_K: 256)."""
    return fmt in FORMATS and m >= TILE and k % (256 if fmt == "q4_K" else STEP) == 0


def chunk(fmt: str, np_: int, k: int, x_bytes: int = X_BYTES) -> int:
    """Values of K a workgroup takes: a multiple of 64 (q4_K: 256) whose rows of x fit ``x_bytes`` as f16, the
    chunks of K as even as that allows."""
    unit = 256 if fmt == "q4_K" else STEP
    most = max(unit, x_bytes // (2 * np_) // unit * unit)
    parts = -(-k // most)
    return -(-k // parts // unit) * unit


def grid(m: int, k: int, tiles: int, kc: int) -> tuple[int, int, int]:
    """Workgroups of a launch: row groups of ``16 tiles`` rows of W by chunks of ``kc`` values of K."""
    return (-(-m // (TILE * tiles)), -(-k // kc), 1)


@cd.func
@no_type_check
def put16(tile, i, v):
    """Store the uvec4 ``v`` (8 f16) at uvec4 index ``i`` of a vec4[f16] ``tile``."""
    tile[2 * i] = cd.bitcast(vec2[u32](v.x, v.y), vec4[f16])
    tile[2 * i + 1] = cd.bitcast(vec2[u32](v.z, v.w), vec4[f16])


@cd.func
@no_type_check
def put32(tile, i, v):
    """Store the uvec4 ``v`` at index ``i`` of a vec4[u32] ``tile``."""
    tile[i] = v


@cache
def kernel(fmt: str, np_: int, tiles: int, kc: int, depth: int = 2, x_f16: bool = False) -> cd.Kernel:
    """The product kernel for weights in ``fmt``, ``np_`` (8 or 16) columns of its B matrices (rows of x, the rest
    zeros), ``tiles`` subgroups a workgroup, ``kc`` values of K a workgroup (a multiple of 64; q4_K 256),
    ``depth`` steps a round of W's loads, x f32 (or f16 with ``x_f16``); launch :func:`grid` with ``M``, ``K``
    and ``N`` (the rows of x, at most ``np_``)."""
    if fmt not in FORMATS:
        raise ValueError(f"gemv_mmk: weights in {fmt!r}; these kernels take {', '.join(FORMATS)}")
    unit = 256 if fmt == "q4_K" else STEP
    if np_ not in (8, 16) or tiles not in TILES or depth not in DEPTHS or kc < unit or kc % unit:
        raise ValueError(f"gemv_mmk: np_={np_}, tiles={tiles}, depth={depth}, kc={kc}; np_ 8 or 16, tiles one of "
                         f"{TILES}, depth one of {DEPTHS}, kc a positive multiple of {unit}")
    wt = u32 if fmt in ("q4_0", "q8_0") else vec4[u32]
    xt = vec4[f16] if x_f16 else vec4[f32]
    f16w, q40, q80 = fmt == "f16", fmt == "q4_0", fmt == "q8_0"
    nw = 9 if q40 else 17
    WG = 32 * tiles
    XV = kc * np_ // 4                       # vec4s of the x chunk
    XI = -(-XV // WG)                        # of them an invocation copies
    PROBE = __import__('os').environ.get('COOPDSL_PROBE', '')
    XIP = 0 if PROBE == 'nox' else XI
    LOOP = PROBE != 'noloop'
    COAL = 'coal' in PROBE
    FT = 'ftile' in PROBE
    NOMMA = 'nomma' in PROBE
    FS = 2 if FT else 1
    put = put16 if FT else put32
    NODEC = 'nodec' in PROBE
    XB = min(8, XI)                          # a batch of them

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_mmk(w: cd.Buffer[wt], x: cd.Buffer[xt], part: cd.Buffer[f32], M: u32, K: u32, N: u32):
        lane = cd.subgroup_invocation_id
        sub = cd.subgroup_id
        t = cd.local_invocation_index
        row0 = (cd.workgroup_id.x * tiles + sub) * TILE
        r0 = min(row0, M - TILE)                 # the tile's first row: all 16 inside W (M >= 16)
        k0 = cd.workgroup_id.y * kc
        steps = (min(K, k0 + kc) - k0) // STEP
        g0 = k0 // STEP                          # the chunk's first step of the row
        xs = cd.shared(vec4[f16], XV)
        tile = cd.shared(vec4[f16] if FT else vec4[u32], tiles * 2 * TILE * ROW * (2 if FT else 1))
        pt = cd.shared(f32, tiles * TILE * np_)
        r = lane >> 1
        h = lane & 1
        row = r0 + r
        # the first round's loads of W, in flight while x is copied
        raw = []
        for u in cd.static_range(depth):
            s = g0 + min(u, steps - 1)
            if f16w:
                raw = raw + [[w[(r0 + (32 * i + lane) // 8) * (K // 8) + s * 8 + lane % 8] for i in cd.static_range(4)]]
            elif q40 or q80:
                wb = (row * (K // 64) + s) * nw + (nw // 2) * h
                raw = raw + [[w[wb + j] for j in cd.static_range(nw // 2 + 1)]]
            else:
                wb = (row * (K // 256) + s // 4) * 9
                raw = raw + [[w[wb], w[wb + 1 + 2 * (s % 4) + h]]]
        # x's chunk as f16: for each 16 values of K a 16 x np_ tile column by column (row n of x: 16 values)
        for i0 in cd.range(0, XIP, XB):           # XB loads in flight, then their stores
            xv = []
            for i in cd.static_range(XB):
                v = min(t + (i0 + i) * WG, XV - 1)
                n = v % (4 * np_) // 4
                kk = k0 + v // (4 * np_) * 16 + v % 4 * 4
                xv = xv + [cd.select(n < N and kk < K,
                                     vec4[f16](x[min(n, N - 1) * (K // 4) + min(kk, K - 4) // 4]),
                                     vec4[f16](f16(0.0)))]
            for i in cd.static_range(XB):
                if t + (i0 + i) * WG < XV:
                    xs[t + (i0 + i) * WG] = xv[i]
        cd.barrier()
        acc = Acc[f32, TILE, np_].splat(0.0)
        for s0 in cd.range(depth, steps + depth if LOOP else depth, depth):
            ready = raw
            if s0 < steps:
                raw = []
                for u in cd.static_range(depth):
                    s = g0 + min(s0 + u, steps - 1)
                    if f16w:
                        raw = raw + [[w[(r0 + (32 * i + lane) // 8) * (K // 8) + s * 8 + lane % 8]
                                      for i in cd.static_range(4)]]
                    elif COAL:
                        wb = (r0 * (K // 64) + s * 16) * nw
                        raw = raw + [[w[wb + 32 * j + lane] for j in cd.static_range(nw // 2 + 1)]]
                    elif q40 or q80:
                        wb = (row * (K // 64) + s) * nw + (nw // 2) * h
                        raw = raw + [[w[wb + j] for j in cd.static_range(nw // 2 + 1)]]
                    else:
                        wb = (row * (K // 256) + s // 4) * 9
                        raw = raw + [[w[wb], w[wb + 1 + 2 * (s % 4) + h]]]
            for u in cd.static_range(depth):
                s = s0 - depth + u               # the chunk's step
                if s < steps:
                    cur = (2 * sub + (s & 1)) * TILE * ROW
                    at = cur + r * ROW
                    tw = ready[u]
                    if f16w:
                        for i in cd.static_range(4):
                            e = 32 * i + lane
                            put(tile, cur + e // 8 * ROW + e % 8, tw[i])
                    elif NODEC:
                        put(tile, at + 4 * h, vec4[u32](tw[0], tw[1], tw[2], tw[3]))
                        put(tile, at + 4 * h + 1, vec4[u32](tw[1], tw[2], tw[3], tw[4]))
                        put(tile, at + 4 * h + 2, vec4[u32](tw[2], tw[3], tw[4], tw[0]))
                        put(tile, at + 4 * h + 3, vec4[u32](tw[3], tw[4], tw[0], tw[1]))
                    elif q40:
                        o = block_q4_0(tw[0], tw[1], tw[2], tw[3], tw[4], h)
                        for i in cd.static_range(4):
                            put(tile, at + 4 * h + i, o[i])
                    elif q80:
                        o = block_q8_0(tw[0], tw[1], tw[2], tw[3], tw[4], tw[5], tw[6], tw[7], tw[8], h)
                        for i in cd.static_range(4):
                            put(tile, at + 4 * h + i, o[i])
                    else:
                        o = block_q4_K(tw[0], tw[1], (g0 + s) % 4)
                        for i in cd.static_range(4):
                            put(tile, at + 4 * (i // 2) + 2 * h + i % 2, o[i])
                    cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
                    for i in cd.static_range(0 if NOMMA else 4):
                        a = MatA[f16, 16, 16].load(tile, (cur + 2 * i) * FS, stride=ROW * FS)
                        b = MatB[f16, 16, np_].load(xs, (s * 4 + i) * 4 * np_, stride=4, layout=ColumnMajor)
                        acc = cd.muladd(a, b, acc)
        acc.store(pt, sub * TILE * np_, stride=np_)
        cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
        base = cd.workgroup_id.y * N * M
        for e in cd.range(lane, TILE * np_, 32):
            out = r0 + e // np_
            if e % np_ < N and out >= row0:      # the rows of the tile another subgroup does not write
                part[base + (e % np_) * M + out] = pt[sub * TILE * np_ + e]

    gemv_mmk.__name__ = gemv_mmk.__qualname__ = (f"gemv_mmk_{fmt}_x{np_}_t{tiles}_k{kc}_d{depth}"
                                                 + ("_xf16" if x_f16 else ""))
    return cast(cd.Kernel, gemv_mmk)
