"""Decoding products on 8-bit cooperative matrices: ``y = x W^T`` for q4_0 / q8_0 weights and 2 to 16 rows of ``x``
rounded to 8 bits per block of 32 (ggml's q8_1, :func:`coopdsl.ops.gemv_q8.quantize_kernel`).

The integer-dot-product kernels (:mod:`coopdsl.ops.gemv_kernels` "prew", :mod:`coopdsl.ops.gemv_xregs`) spend
one ``cd.dot4x8`` on four values of a block for every row of x; at eight rows that arithmetic, not W's bytes,
bounds them (``benchmarks/alu_rates.py``).  Here a block of 32 values is one step of K of an ``i8 x i8 -> i32``
cooperative matrix (``16 x 8 x 32``, ``16 x 16 x 32`` past eight rows of x), and the rows of x cost a lane only
their scales:

* each lane decodes one block of one of a tile's 16 rows of W into 32 signed levels (q4_0 ``q - 8``, three 32-bit
  operations for four values; q8_0 as it lies) in a tile in shared memory;
* x's levels load as the B matrix straight from the rounded blocks (row ``c`` of x is column ``c``, 32 bytes);
* the block's ``16 x NP`` integer sums are converted to f32 and multiplied, element by element, by a matrix of
  ``d_w[row] * d_x[col]`` the lanes wrote beside the tile (KHR matrices give no element coordinates), then added
  to an f32 accumulator.

A subgroup takes steps of 64 values of K (the two blocks of a pair that q4_0 / q8_0 rows hold as 9 or 17 aligned
32-bit words), in rounds of ``depth`` software-pipelined as :mod:`coopdsl.ops.gemv_mma` does: the loads of a round
are issued before the previous round is decoded and multiplied.  A workgroup owns 16 rows of W; its ``split``
subgroups take every ``split``-th step and add their sums through shared memory.  x's copy must hold ``NP``
(:func:`cols`) rows of blocks (the rows past x's are read, and their columns not stored).  W must have at least
16 rows and K be a multiple of 64 (:func:`takes`).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, i8, i32, u32, vec2, vec4

from . import device_caps as caps
from .gemv_q8 import PAIR_WORDS, amax4, q8_scale, round_pack4

TILE = 16            # rows of W a workgroup owns
STEP = 64            # values of K a subgroup takes a step (two blocks)
FORMATS = ("q4_0", "q8_0")
DEPTHS = (1, 2, 4)   # steps a subgroup loads at once
SPLITS = (2, 4, 8)   # subgroups a workgroup
# kernel(..., probe=): timing probes, wrong results (benchmarks/gemv_mma8_sweep.py)
PROBES = ("noscale", "nodecode", "coalesced", "coalesced-noscale")
ROW = 5              # uvec4 a row of a level tile: 64 levels and 16 bytes of padding (the eight rows a matrix load
                     # reads at once meet no bank twice)


def cols(nx: int) -> int:
    """Rows of x a launch computes: 8 (for 1 .. 8) or 16 (9 .. 16)."""
    return 8 if nx <= 8 else 16


def takes(fmt: str, m: int, k: int) -> bool:
    """Whether these kernels take M x K weights in ``fmt``: q4_0 or q8_0, 16 rows or more, K a multiple of 64."""
    return fmt in FORMATS and m >= TILE and k % STEP == 0


def device_takes(dev: object, np_: int) -> bool:
    """Whether ``dev`` (a runtime Device, or None for the interpreter) offers the subgroup-scope ``i8 x i8 -> i32``
    cooperative matrices of ``16 x np_ x 32`` these kernels multiply with."""
    return caps.offers_coopmat(dev, 16, np_, 32, "i8", "i8", "i32")


def grid(m: int) -> tuple[int, int, int]:
    """Workgroups of a launch for M rows of W."""
    return (-(-m // TILE), 1, 1)


def shared_bytes(np_: int, split: int) -> int:
    """Shared memory a workgroup of :func:`kernel` takes: per subgroup two level tiles, four scale tiles and its
    sums."""
    return split * (2 * TILE * ROW * 16 + 4 * TILE * np_ * 4 + TILE * np_ * 4)


def fits(np_: int, split: int, limit: int = 49152) -> bool:
    """Whether :func:`kernel`'s shared memory fits ``limit`` bytes (Vulkan's guaranteed minimum is 16 KB; NVIDIA
    GPUs offer 48 KB): ``split`` 8 does not at 16 rows of x."""
    return shared_bytes(np_, split) <= limit


def x_words(np_: int, k: int) -> int:
    """32-bit words of x's copy for :func:`kernel`: ``np_`` rows of ``k // 32`` blocks, 8 words of levels and a
    scale each."""
    return np_ * k // 32 * 9


def x_grid(np_: int, k: int) -> tuple[int, int, int]:
    """Workgroups of :func:`x_kernel` for ``np_`` rows of ``k`` values."""
    return (-(-np_ * k // 32 * 8 // 128), 1, 1)


@cache
def x_kernel(x_f16: bool = False) -> cd.Kernel:
    """x (N x K, f32 or f16, as vec4s) rounded to 8 bits per block of 32 (``d = max |x| / 127``, ``q = round(x /
    d)``, as :func:`coopdsl.ops.gemv_q8.quantize_kernel`) in the order :func:`kernel` reads it: for each block ``u``
    of K, the ``NP`` rows' 32 levels one after the other (8 words each: the ``32 x NP`` B matrix, column-major,
    one contiguous span), rows ``N .. NP - 1`` zeros; after all ``NB * NP`` blocks' levels, their scales as f32
    bits in the same order.  Eight invocations a block, one vec4 each; launch :func:`x_grid`, with ``N``, ``NP``
    and ``NB = K / 32``."""
    xt = vec4[f16] if x_f16 else vec4[f32]

    @cd.kernel(workgroup_size=(128, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_mma8_x(x: cd.Buffer[xt], xq: cd.Buffer[i32], N: u32, NP: u32, NB: u32):
        t = cd.global_invocation_id.x
        blk = t // 8                        # u * NP + c: row c of x, block u
        k = t % 8
        c = blk % NP
        u = min(blk // NP, NB - 1)
        v = vec4[f32](0.0)
        if c < N:
            v = vec4[f32](x[(c * NB + u) * 8 + k])
        a = amax4(v)
        for s in cd.static_range(3):        # the block's 8 invocations are neighbours in the subgroup
            a = max(a, cd.subgroup_shuffle_xor(a, 1 << s))
        d, inv = q8_scale(a)
        word, _ = round_pack4(v, inv)
        if blk < NB * NP:
            xq[blk * 8 + k] = word
            if k == 0:
                xq[NB * NP * 8 + blk] = cd.bitcast(d, i32)

    gemv_mma8_x.__name__ = gemv_mma8_x.__qualname__ = "gemv_mma8_x" + ("_f16" if x_f16 else "")
    return cast(cd.Kernel, gemv_mma8_x)


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def signed_q4(q):
    """Four q4_0 levels (low nibbles of the bytes of ``q``) as the signed bytes ``q - 8``: ``((q & 0x0F) + 0x78) ^
    0x80`` on each byte (no carry crosses a byte)."""
    return ((q & 0x0F0F0F0F) + 0x78787878) ^ 0x80808080


@cache
def kernel(fmt: str, np_: int, split: int, depth: int = 2, probe: str | None = None) -> cd.Kernel:
    """The product kernel for weights in ``fmt`` (q4_0 or q8_0, viewed as 32-bit words), x's blocks rounded by
    :func:`coopdsl.ops.gemv_q8.quantize_kernel` into ``np_`` (8 or 16) rows (``ivec4``s), ``split`` subgroups a
    workgroup, each loading W and x for ``depth`` of its steps at once (1, 2 or 4); launch :func:`grid` workgroups
    with arguments ``(w, xq, y, M=, K=, N=)``, N the rows of x (at most ``np_``; ``y`` is N x M f32)."""
    if fmt not in FORMATS:
        raise ValueError(f"gemv_mma8: weights in {fmt!r}; these kernels take {', '.join(FORMATS)}")
    if np_ not in (8, 16) or split not in SPLITS or depth not in DEPTHS or not fits(np_, split):
        raise ValueError(f"gemv_mma8: np_={np_}, split={split}, depth={depth}; np_ 8 or 16, split one of {SPLITS} "
                         f"(at most 4 with np_ 16), depth one of {DEPTHS}")
    noscale, nodecode = probe in ("noscale", "coalesced-noscale"), probe == "nodecode"
    coalesced = probe in ("coalesced", "coalesced-noscale")
    q40 = fmt == "q4_0"
    nw = PAIR_WORDS[fmt]                 # 32-bit words of two blocks
    WG = 32 * split
    NV = np_ // 4                        # vec4 a row of a scale tile
    TW = nw // 2 + 1                     # words a lane loads for its block

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def gemv_mma8(w: cd.Buffer[u32], xq: cd.Buffer[vec4[i32]], y: cd.Buffer[f32], M: u32, K: u32, N: u32):
        lane = cd.subgroup_invocation_id
        sub = cd.subgroup_id
        row0 = cd.workgroup_id.x * TILE
        r0 = min(row0, M - TILE)                 # the tile's first row: all 16 inside W (M >= 16)
        tile = cd.shared(vec4[u32], split * 2 * TILE * ROW)      # a subgroup's two 16 x 64 level tiles
        scl = cd.shared(vec4[f32], split * 2 * 2 * TILE * NV)    # ... and for each, two 16 x NP scale tiles
        part = cd.shared(f32, split * TILE * np_)
        acc = Acc[f32, TILE, np_].splat(0.0)
        r = lane >> 1                            # the row of the tile this lane decodes, and which block of the
        h = lane & 1                             # step's two
        row = r0 + r
        nb = K // 32
        sb = nb * np_ * 2                        # the first vec4 of x's scales
        steps = K // STEP
        RS = split * depth                       # steps between two rounds of a subgroup
        # a software pipeline: the iteration at s0 issues the loads of round s0 (W's words, x's scales and tiles; a
        # step past the last reads the last again), then decodes and multiplies round s0 - RS, whose loads the
        # iteration before issued
        raw = [[u32(0) for j in cd.static_range(TW)] for u in cd.static_range(depth)]
        dxs = [[vec4[f32](0.0) for c in cd.static_range(NV)] for u in cd.static_range(depth)]
        xs = [[MatB[i8, 32, np_].splat(0) for i in cd.static_range(2)] for u in cd.static_range(depth)]
        for s0 in cd.range(sub, steps + RS, RS):
            ready = raw
            dready = dxs
            xready = xs
            if s0 < steps:
                raw = []
                dxs = []
                xs = []
                for u in cd.static_range(depth):
                    s = min(s0 + u * split, steps - 1)
                    wb = (row * steps + s) * nw + (nw // 2) * h
                    if coalesced:   # the tile's words as if its 16 rows' pairs lay one after the other
                        wb = (r0 * steps + s * TILE + r) * nw + (nw // 2) * h
                    raw = raw + [[w[wb + j] for j in cd.static_range(TW)]]
                    # x's scales for this lane's block, and x's levels of the step's two blocks (one contiguous
                    # span each: column c is row c of x, 32 bytes)
                    dxs = dxs + [[cd.bitcast(xq[sb + (2 * s + h) * NV + i], vec4[f32]) for i in cd.static_range(NV)]]
                    xs = xs + [[MatB[i8, 32, np_].load(xq, (2 * s + i) * np_ * 2, stride=2, layout=ColumnMajor)
                                for i in cd.static_range(2)]]
            if s0 >= sub + RS:
                for u in cd.static_range(depth):
                    s = s0 - RS + u * split
                    if s < steps:
                        buf = 2 * sub + ((s // split) & 1)      # this step's tiles (the other pair: the last step's)
                        # block 2 s + h: its scale the low (h 0) or high half of the first word, its levels the next
                        # 16 bits on (h 0) or the next word on, as signed bytes (element 4 i in the low byte of word i)
                        t = ready[u]
                        d = f32(cd.bitcast(t[0] >> (16 * h), vec2[f16]).x)
                        q = [cd.select(h == 1, t[j + 1], (t[j] >> 16) | (t[j + 1] << 16))
                             for j in cd.static_range(TW - 1)]
                        if q40 and not nodecode:
                            lo = vec4[u32](signed_q4(q[0]), signed_q4(q[1]), signed_q4(q[2]), signed_q4(q[3]))
                            hi = vec4[u32](signed_q4(q[0] >> 4), signed_q4(q[1] >> 4), signed_q4(q[2] >> 4),
                                           signed_q4(q[3] >> 4))
                        elif q40:
                            lo = vec4[u32](q[0], q[1], q[2], q[3])
                            hi = lo
                        else:
                            lo = vec4[u32](q[0], q[1], q[2], q[3])
                            hi = vec4[u32](q[4], q[5], q[6], q[7])
                        at = buf * TILE * ROW + r * ROW + 2 * h
                        tile[at] = lo
                        tile[at + 1] = hi
                        sat = ((2 * buf + h) * TILE + r) * NV
                        dx = dready[u]
                        if not noscale:
                            for i in cd.static_range(NV):
                                scl[sat + i] = d * dx[i]
                        cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
                        for i in cd.static_range(2):
                            a = MatA[i8, TILE, 32].load(tile, buf * TILE * ROW + 2 * i, stride=ROW)
                            dots = cd.muladd(a, xready[u][i], Acc[i32, TILE, np_].splat(0))
                            if noscale:
                                acc = acc + Acc[f32, TILE, np_](dots)
                            else:
                                sc = Acc[f32, TILE, np_].load(scl, (2 * buf + i) * TILE * NV, stride=NV)
                                acc = acc + Acc[f32, TILE, np_](dots) * sc
        acc.store(part, sub * TILE * np_, stride=np_)
        cd.barrier()
        for t in cd.range(cd.local_invocation_index, TILE * np_, WG):
            total = part[t]
            for v in cd.static_range(1, split):
                total += part[v * TILE * np_ + t]
            out = r0 + t // np_
            if t % np_ < N and out >= row0:       # the rows of the tile another workgroup does not write
                y[(t % np_) * M + out] = total

    gemv_mma8.__name__ = gemv_mma8.__qualname__ = f"gemv_mma8_{fmt}_x{np_}_s{split}_d{depth}"
    return cast(cd.Kernel, gemv_mma8)
