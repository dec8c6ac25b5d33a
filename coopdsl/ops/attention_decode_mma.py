"""Flash-decoding on cooperative matrices, for 5 to 128 query rows per K/V head.

:mod:`coopdsl.ops.attention_decode`'s kernel scores one key a lane in f32 against every query row, so its
arithmetic grows with the rows a K/V head serves (``R = (Hq / Hkv) * Sq``): at 16 rows (four tokens of four
grouped heads) it reads K/V at a quarter of the copy kernel's rate. Here the two products of a step are
``16 x 16 x 16`` cooperative matrices (f16 inputs, f32 sums) whatever R is, and a lane's scalar work is the
online softmax of 8 scores:

- a workgroup (four subgroups) takes one chunk of one K/V head's keys and 16 of its R rows (grid
  ``(T * chunks, Hkv, 1)``, the ``T = ceil(R / 16)`` row tiles of a chunk next to each other, so that they run
  together and read the chunk's K and V from L2 after the first), 64 keys a step; the tile's rows of Q (scaled,
  as f16; rows past R zeros) stay in registers as ``D / 16`` A matrices;
- the step's 64 K and V rows are copied into shared memory by all 128 invocations, 16 bytes a load (rows past
  the chunk repeat its last row), and the next step's loads are issued before this step's arithmetic, so they
  are in flight while it runs;
- subgroup ``g`` takes keys ``16 g .. 16 g + 15`` of the step: S = Q K^T (K^T: column-major B matrices of the
  shared rows); S goes through shared memory to the lanes, lane ``2 r + h`` taking row r's keys
  ``8 h .. 8 h + 7`` (soft-cap, mask, causal, window, the running max over the pair of lanes,
  ``P = exp(S - m)`` as f16, the running sum); O (16 x D, ``D / 16`` f32 accumulators) is rescaled by
  ``exp(m_old - m)`` a row only in the steps where a row's maximum grew (an accumulator of the factors times
  each O matrix); then O += P V;
- after the chunk the four subgroups' O, M and L are combined through shared memory.

The chunk's unnormalised O, its row maxima M and sums L go to the scratch buffers in the layout of
:func:`coopdsl.ops.attention_decode.kernel` (``direct == 0``), and
:func:`coopdsl.ops.attention_decode.combine_kernel` combines the chunks. Q is rounded to f16 after scaling
(as ggml's flash-attention kernels do): the scores carry f16's relative error of about 5e-4. bf16 K/V are read as
they are and rounded to f16 as a step's rows go to shared memory (``k_bf16`` / ``v_bf16``). Head sizes up to
128 (at 256 the staged rows and the output accumulators do not fit the registers and 48 KiB of shared memory).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, i32, u16, u32, vec4

from . import device_caps as caps
from .attention_mask import mask_f16
from .bf16_bits import bf16_as_f16, bf16_value

WG = 128            # four subgroups of 32
SUBGROUPS = WG // 32
STEP = 16 * SUBGROUPS   # keys a step (and the multiple chunks are of)
MIN_ROWS = 5        # the fewest query rows per K/V head this kernel runs for by default (H100, 8 K/V heads, D 128,
                    # benchmarks/attention_bench.py --decode-hows lanes,mma: 8 rows at 65536 keys 106 us against 137
                    # with attention_decode.kernel, 6 rows at 32768 keys 61 against 73, 4 rows at 16384 keys 37
                    # against 34 (D 64: 41 against 35); 5, between them, was not timed alone)
MAX_ROWS = 128      # the most query rows per K/V head: eight row tiles (Llama-3.1-405B's 16 query heads a K/V
                    # head, 8 tokens; Falcon-7B's 71 query heads on one K/V head, one token)
MAX_D = 128
NEG = -1.0e30       # the running max's start (finite: exp(NEG - m) is 0 for any score m)
NEG_INF = float("-inf")
MASK_KINDS = {None: None, "f16": f16, "f32": f32}
# how many chunks a head's keys are cut into (coopdsl.ops.attention_decode.default_chunks): about one workgroup
# per shader core, half as many as for its kernel.  H100, 8 K/V heads, D 128, one process
# (benchmarks/results/attention-decode-chunks16-h100-2026-11-27.md; kernel + combine): 16 rows at 16384 keys 36 us
# against 41 with 33 chunks, at 131072 keys 197 against 200; 8 rows at 65536 keys 103 against 105; 12 rows at
# 32768 keys 58 against 62; 6 rows 57 against 60 (attention-decode-chunks-h100-2026-11-27.md: 16 rows at 16384
# keys, 8 to 128 chunks: 44, 36, 44, 45, 47, 51, 58 us for 8, 16, 24, 48, 64, 96, 128)
CHUNK_WGS_PER_CORE = 1


def takes(d: int, rows: int) -> bool:
    """Whether :func:`kernel` computes head size ``d`` for ``rows`` query rows per K/V head: D a multiple of 16
    up to :data:`MAX_D`, 1 to :data:`MAX_ROWS` rows."""
    return d % 16 == 0 and 16 <= d <= MAX_D and 1 <= rows <= MAX_ROWS


def device_takes(dev: object) -> bool:
    """Whether ``dev`` (a runtime Device, or a str for the interpreter) offers subgroup-scope
    ``16 x 16 x 16`` f16 -> f32 cooperative matrices."""
    return caps.offers_coopmat(dev, 16, 16, 16)


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def row_piece(kvbase, first, last, e, DV):
    """Where uvec4 ``e`` of a step's K/V rows (``DV`` a row, the step's rows from key ``first``) lies in K or V:
    rows past ``last`` (the chunk's last key) repeat it."""
    return (kvbase + min(first + e // DV, last)) * DV + e % DV


def kernel(d: int, q_f16: bool = False, mask: str | None = None, causal: bool = False, window: bool = False,
           softcap: bool = False, k_bf16: bool = False, v_bf16: bool = False, q_bf16: bool = False) -> cd.Kernel:
    """The kernel for head size ``d`` (a multiple of 16 up to :data:`MAX_D`), Q f32 (or f16), an additive mask
    of ``mask`` values ("f16", "f32" or None); ``causal``, ``window`` and ``softcap`` compile those in (their
    values are push constants, as in :func:`coopdsl.ops.attention_decode.kernel`). ``k_bf16`` / ``v_bf16``: K / V
    hold bf16 values, rounded to f16 as a step's rows are staged in shared memory (what a conversion pass over
    the cache would give, without that pass); ``q_bf16``: Q holds bf16 values (bit patterns, ``u16``), widened
    exactly (it wins over ``q_f16``).

    Grid ``(ceil(R / 16) * chunks, Hkv, 1)``. Bindings: q (Hq Sq D values), k and v (``uvec4``: 8 f16 values
    each, or bf16), the mask, ``part`` and ``ml`` (the chunks' O, M and L). Push constants: Skv, Sq, R (query rows
    per K/V head, at most :data:`MAX_ROWS`), lo (the first visible key), chunk (keys a chunk, a multiple of
    :data:`STEP`), chunks, scale, cap (soft-cap), off (Skv - Sq), window, mask_stride (mask values between query
    heads, 0 for one mask)."""
    return _kernel(d, bool(q_f16), mask, bool(causal), bool(window), bool(softcap), bool(k_bf16), bool(v_bf16),
                   bool(q_bf16))


@cache
def _kernel(d: int, q_f16: bool, mask: str | None, causal: bool, window: bool, softcap: bool, k_bf16: bool,
            v_bf16: bool, q_bf16: bool) -> cd.Kernel:
    """:func:`kernel` for its arguments as given in full (one kernel object however they were passed)."""
    if d % 16 or not 16 <= d <= MAX_D:
        raise ValueError(f"attention_decode_mma: head size {d}; a multiple of 16 up to {MAX_D}")
    if mask not in MASK_KINDS:
        raise ValueError(f"attention_decode_mma: mask kind {mask!r}; one of None, 'f16', 'f32'")
    ND = d // 16                     # 16-wide slices of D
    DV = d // 8                      # uvec4 a K/V row
    DQ = d // 4                      # vec4 a row of O
    RS = DV + 1                      # uvec4 a row of the shared K/V tiles (16 bytes of padding: no bank conflicts)
    LOADS = STEP * DV // WG          # uvec4 of K (and of V) an invocation copies a step
    SLOT = 16 * DQ                   # uvec4 of one subgroup's 16 x D f32 output
    QB = bool(q_bf16)
    q_t = u16 if QB else f16 if q_f16 else f32
    has_mask = mask is not None
    MASK16 = mask == "f16"                      # (a compile-time bool: kernels compare no strings)
    m_t = MASK_KINDS[mask] if has_mask else f16
    CAUSAL, WINDOW, SOFTCAP = bool(causal), bool(window), bool(softcap)
    KB, VB = bool(k_bf16), bool(v_bf16)
    SYNC = ("AcquireRelease", "WorkgroupMemory")

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def attention_decode_mma(q: cd.Buffer[q_t], k: cd.Buffer[vec4[u32]], v: cd.Buffer[vec4[u32]],
                             m: cd.Buffer[m_t], part: cd.Buffer[vec4[f32]], ml: cd.Buffer[f32], Skv: u32, Sq: u32,
                             R: u32, lo: u32, chunk: u32, chunks: u32, scale: f32, cap: f32, off: i32, window: u32,
                             mask_stride: u32):
        t = cd.local_invocation_index
        sg = cd.subgroup_id
        lane = cd.subgroup_invocation_id
        tiles = (R + 15) // 16                   # row tiles of 16
        c = cd.workgroup_id.x // tiles
        rt0 = cd.workgroup_id.x % tiles * 16     # this workgroup's first row of the head's R
        RT = min(R - rt0, 16)                    # ... and its rows
        kvh = cd.workgroup_id.y
        group = R // Sq                          # query heads per K/V head
        c0 = lo + c * chunk
        c1 = min(c0 + chunk, Skv)
        kvbase = kvh * Skv                       # the head's first K/V row
        row0 = kvh * R + rt0                     # the tile's first row of Q and O
        sk = cd.shared(vec4[u32], STEP * RS)     # the step's K rows (and, at the end, two subgroups' outputs)
        sv = cd.shared(vec4[u32], STEP * RS)     # ... its V rows (... the other two's)
        sq = cd.shared(f16, 16 * d)              # Q scaled, as f16, 16 x D (rows R .. 15 zeros)
        ss = cd.shared(f32, SUBGROUPS * 256)     # a subgroup's scores of a step, then its rows' rescaling factors
        sp = cd.shared(f16, SUBGROUPS * 256)     # ... its probabilities
        sm = cd.shared(f32, SUBGROUPS * 16)      # the subgroups' row maxima and sums at the end
        sl = cd.shared(f32, SUBGROUPS * 16)

        # the first step's rows in flight while Q is staged
        src = [row_piece(kvbase, c0, c1 - 1, t + it * WG, DV) for it in cd.static_range(LOADS)]
        kr = [k[src[it]] for it in cd.static_range(LOADS)]
        vr = [v[src[it]] for it in cd.static_range(LOADS)]
        for e in cd.range(t, 16 * d, WG):
            val = f16(0.0)
            if e < RT * d:
                if QB:
                    val = f16(bf16_value(q[row0 * d + e]) * scale)
                else:
                    val = f16(f32(q[row0 * d + e]) * scale)
            sq[e] = val
        cd.barrier()
        qa = [MatA[f16, 16, 16].load(sq, 16 * i, stride=d) for i in cd.static_range(ND)]

        r = lane >> 1                            # the row whose softmax this lane shares
        h = lane & 1                             # ... and which 8 keys of its subgroup's 16 it takes
        rq = min(rt0 + r, R - 1)                 # the row in the head's R
        qi = rq % Sq
        last = i32(qi) + off                     # the last key the row sees (causal)
        first = last - i32(window) + 1           # ... its first (window)
        mrow = (kvh * group + rq // Sq) * mask_stride + qi * Skv
        live = r < RT
        mx = f32(NEG)                            # the row's running max (the same in both lanes)
        ls = f32(0.0)                            # this lane's share of its running sum
        o = [Acc[f32, 16, 16].splat(0.0) for i in cd.static_range(ND)]
        mine = sg * 256                          # this subgroup's scores / probabilities
        rows = sg * 16 * RS                      # ... and its 16 K/V rows in the tiles
        for base in range(c0, c1, STEP):
            for it in cd.static_range(LOADS):
                e = t + it * WG
                at = e // DV * RS + e % DV
                if KB:
                    sk[at] = bf16_as_f16(kr[it])
                else:
                    sk[at] = kr[it]
                if VB:
                    sv[at] = bf16_as_f16(vr[it])
                else:
                    sv[at] = vr[it]
            cd.barrier()
            nxt = base + STEP
            if nxt < c1:                         # the next step's rows, in flight from here
                src = [row_piece(kvbase, nxt, c1 - 1, t + it * WG, DV) for it in cd.static_range(LOADS)]
                kr = [k[src[it]] for it in cd.static_range(LOADS)]
                vr = [v[src[it]] for it in cd.static_range(LOADS)]
            s = Acc[f32, 16, 16].splat(0.0)
            for i in cd.static_range(ND):
                s = cd.muladd(qa[i], MatB[f16, 16, 16].load(sk, rows + 2 * i, stride=RS, layout=ColumnMajor), s)
            s.store(ss, mine, stride=16)
            cd.control_barrier(cd.Subgroup, cd.Subgroup, SYNC)
            xs = []
            mloc = f32(NEG_INF)
            for i in cd.static_range(8):
                col = 8 * h + i
                j = base + sg * 16 + col
                x = ss[mine + r * 16 + col]
                if SOFTCAP:
                    x = cap * cd.tanh(x)
                if has_mask:
                    x += f32(m[mrow + min(j, Skv - 1)]) if MASK16 else \
                        f32(mask_f16(m[mrow + min(j, Skv - 1)]))
                hidden = j >= c1 or not live
                if CAUSAL:
                    hidden = hidden or i32(j) > last
                if WINDOW:
                    hidden = hidden or i32(j) < first
                x = cd.select(hidden, f32(NEG_INF), x)
                xs = xs + [x]
                mloc = max(mloc, x)
            mloc = max(mloc, cd.subgroup_shuffle_xor(mloc, 1))
            mn = max(mx, mloc)
            alpha = cd.exp(mx - mn)
            psum = f32(0.0)
            for i in cd.static_range(8):
                p = cd.exp(xs[i] - mn)
                psum += p
                sp[mine + r * 16 + 8 * h + i] = f16(p)
            ls = ls * alpha + psum
            mx = mn
            grew = cd.subgroup_any(alpha != 1.0)
            if grew:                             # (every lane has read its scores: the factors take their place)
                cd.control_barrier(cd.Subgroup, cd.Subgroup, SYNC)
                for i in cd.static_range(8):
                    ss[mine + r * 16 + 8 * h + i] = alpha
            cd.control_barrier(cd.Subgroup, cd.Subgroup, SYNC)
            if grew:
                fac = Acc[f32, 16, 16].load(ss, mine, stride=16)
                o = [o[i] * fac for i in cd.static_range(ND)]
            pa = MatA[f16, 16, 16].load(sp, mine, stride=16)
            o = [cd.muladd(pa, MatB[f16, 16, 16].load(sv, rows + 2 * i, stride=RS), o[i])
                 for i in cd.static_range(ND)]
            cd.barrier()                         # (every subgroup is done with the tiles)

        # the workgroup's O, M, L: each subgroup's O rescaled to the rows' largest max, the four added up
        ls = ls + cd.subgroup_shuffle_xor(ls, 1)
        if h == 0:
            sm[sg * 16 + r] = mx
            sl[sg * 16 + r] = ls
        cd.barrier()
        mm = sm[r]
        for g in cd.static_range(1, SUBGROUPS):
            mm = max(mm, sm[g * 16 + r])
        for i in cd.static_range(8):
            ss[mine + r * 16 + 8 * h + i] = cd.exp(mx - mm)
        cd.control_barrier(cd.Subgroup, cd.Subgroup, SYNC)
        fac = Acc[f32, 16, 16].load(ss, mine, stride=16)
        for i in cd.static_range(ND):
            if sg < 2:
                (o[i] * fac).store(sk, sg * SLOT + 4 * i, stride=DQ)
            else:
                (o[i] * fac).store(sv, (sg - 2) * SLOT + 4 * i, stride=DQ)
        cd.barrier()
        pbase = (kvh * chunks + c) * R + rt0
        for e in cd.range(t, RT * DQ, WG):
            w = e % DQ
            at = e // DQ * DQ + w // 2 * 2      # the row's uvec4 of columns 8 p .. 8 p + 3, then 8 p + 4 ..
            total = vec4[f32](0.0)
            for g in cd.static_range(SUBGROUPS):
                lo4 = cd.bitcast(sk[g * SLOT + at] if g < 2 else sv[(g - 2) * SLOT + at], vec4[f32])
                hi4 = cd.bitcast(sk[g * SLOT + at + 1] if g < 2 else sv[(g - 2) * SLOT + at + 1], vec4[f32])
                if w % 2 == 0:
                    total += vec4[f32](lo4.x, lo4.z, hi4.x, hi4.z)
                else:
                    total += vec4[f32](lo4.y, lo4.w, hi4.y, hi4.w)
            part[pbase * DQ + e] = total
        if t < RT:
            mt = sm[t]
            for g in cd.static_range(1, SUBGROUPS):
                mt = max(mt, sm[g * 16 + t])
            lt = f32(0.0)
            for g in cd.static_range(SUBGROUPS):
                lt += cd.exp(sm[g * 16 + t] - mt) * sl[g * 16 + t]
            ml[(pbase + t) * 2] = mt
            ml[(pbase + t) * 2 + 1] = lt

    kv = "_qbf16" * QB + "_kbf16" * KB + "_vbf16" * VB
    attention_decode_mma.__name__ = attention_decode_mma.__qualname__ = f"attention_decode_mma_d{d}{kv}"
    return cast(cd.Kernel, attention_decode_mma)
