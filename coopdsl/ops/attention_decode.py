"""Flash-decoding for ``ops.attention``: few query rows against a long KV cache, bandwidth-bound.

When the query rows that share one K/V head, ``R = (Hq / Hkv) * Sq``, are few (decoding one to a few
tokens, :data:`MAX_ROWS` at most), attention is a read of K and V and little arithmetic per byte, so
this module's kernels are built around reading K/V once, coalesced, with many loads in flight.
No cooperative matrices: f32 math with subgroup operations, like :mod:`coopdsl.ops.gemv`.

:func:`kernel` runs one workgroup of four subgroups per (K/V head, chunk of keys): the keys a head's
rows can see are cut into chunks (:func:`default_chunks`: for this kernel about two workgroups per shader core in
all, so that every workgroup is resident from the start; a multiple of :data:`STEP` keys each), and
the subgroups of a workgroup take turns over its chunk, 32 keys a step. In a step:

- loads: each lane issues its loads of the step's K and V rows together (``loads=1``; 16 + 16 loads
  of 16 bytes a lane at D = 128), so that one memory latency covers the step;
- scores: a group of 4 lanes (:func:`default_split`) takes 4 keys, each lane a quarter of D of all four
  K rows (8 f16 values a load) dotted with that quarter of the query rows, which the workgroup keeps in
  shared memory (pre-scaled f32; a quarter's 16-byte words in their own banks), so one read of Q serves
  four keys; two exchanges between the 4 lanes add the quarters up and leave lane = key; then soft-cap,
  the additive mask, causal and window per (row, key);
- an online softmax per row: the subgroup's max of the step's scores (one subgroup reduction a row
  and step), the running max ``m``, each lane's share of the running sum ``l``, and the output
  accumulators rescaled by ``exp(m_old - m)``;
- P V, lane = a slice of D: ``D / 8`` lanes cover one V row (one 16-byte piece each), so a load
  instruction reads ``32 // (D / 8)`` whole rows; each key's probability comes from the lane that
  scored it (``subgroup_shuffle``); each lane accumulates its 8 columns of its output rows.

More than 8 rows are split into row groups (:func:`row_groups`): each group's subgroups take its rows
over all keys of the chunk, the groups reading the same K/V rows at about the same time (one read
from memory, the others from the caches). After its chunk the workgroup combines its subgroups
through shared memory and writes the chunk's unnormalised output ``O`` (f32, R x D), its row maxima
``M`` and sums ``L`` to scratch buffers (with one chunk, the normalised output itself). The last
workgroup of a K/V head to finish (a counter per head, an atomic add after a device-scope release)
then combines the head's chunks,

    O = sum_c exp(M_c - M) O_c / sum_c exp(M_c - M) L_c        (M the largest M_c)

and writes the output (f32 or f16; a row that saw no key, ``L = 0``, gives 0). Attention sinks (``plan(sinks=)``)
are one more chunk of each K/V head, with M the row's sink, L 1 and O 0, which :func:`sinks_kernel` writes and the
combine takes in like any other. :func:`combine_kernel`
does the same as a second launch (``fused=False``): measured on an H100 the fused combine saved 1.7
of 39 us at 16384 keys (the second launch costs more than the last workgroup's extra work), but where the
last workgroup has more than one ``vec4`` of the output per invocation to combine the second launch is faster
(:func:`default_fused` picks).

Rows are the R query rows of one K/V head: row ``r`` is query head ``kvh * G + r // Sq``, query
``r % Sq`` (G = Hq / Hkv), which is also its place in Q and in the output, so Q and O rows of a K/V
head are contiguous. ``causal``, ``window`` and the mask follow :func:`coopdsl.ops.attention`; the
visible keys of a head start at the first row's window (earlier keys are not read at all).

Measured (``benchmarks/attention_bench.py``, H100 SXM, resident f16 K/V, f32 output; K/V bytes read per
second as a fraction of a copy kernel's read + write bandwidth over as many bytes; before the score split of
:func:`default_split`, which on an H200 took one token at D = 128 from 31 to 27 us at 16384 keys and from 161
to 135 us at 131072): 32 query heads on 8
K/V heads, one token, D = 128: 34 us at 16384 keys (0.72; ggml's kernel with split_k 52 us, 0.47) and
199 us at 131072 (0.99; 285 us, 0.69); 32 heads without grouping, 16384 keys: 103 us (ggml's 152 us);
D = 64: 0.70, D = 256: 0.65; 2 query rows of 4 heads a K/V head (8 rows) at 65536 keys 0.79 (ggml 0.17);
16 rows (4 tokens) 97 us at 16384 keys and 611 us at 131072 (ggml's 172 and 1263 us). Its f32 arithmetic
grows with the rows: from 5 rows (D up to 128) :mod:`coopdsl.ops.attention_decode_mma`'s kernel, on
cooperative matrices, runs by default instead (:func:`default_how`; :func:`plan`'s ``how``), into the same
scratch layout, combined by :func:`combine_kernel`: 6 rows at 32768 keys 61 us (this kernel 73), 8 rows 106 us,
16 rows 41 and 201 us; with its chunks halved (about one workgroup per SM), 57, 103, 36 and 197 us.
"""


from functools import cache
from typing import Any, cast, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import f16, f32, i32, u16, u32, vec2, vec4

from . import attention_decode_mma as mma
from . import attention_nv2 as nv2
from . import device_caps as caps
from .attention_mask import mask_f16
from .bf16_bits import bf16_value

WG = 128            # four subgroups of 32
SUBGROUPS = WG // 32
STEP = WG           # keys a workgroup reads per step (32 a subgroup); chunks are multiples of it
MAX_ROWS = 16       # the most query rows per K/V head (G * Sq) the decode kernel takes
NEG = -1.0e30       # the running max's start (finite: exp(NEG - m) is 0 for any score m)
NEG_INF = float("-inf")
# chunks: about CHUNK_WGS_PER_CORE workgroups per shader core in all (all resident from the start), but
# no chunk shorter than MIN_CHUNK_KEYS keys (each subgroup then has a few steps to amortise its start and end)
CHUNK_WGS_PER_CORE = 2
MIN_CHUNK_KEYS = 256
MASK_KINDS = {None: None, "f16": f16, "f32": f32}


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def halves(w, HIGH, BF16=False):
    """Four of the 8 f16 values of a ``uvec4`` as f32: elements 0, 2, 4, 6 (the low halves of the words)
    or, with ``HIGH``, 1, 3, 5, 7; with ``BF16`` the 8 values are bf16 (widened exactly: a bf16 is the top
    half of an f32)."""
    if BF16:
        if HIGH:
            return vec4[f32](cd.bitcast(w.x & 0xFFFF0000, f32), cd.bitcast(w.y & 0xFFFF0000, f32),
                             cd.bitcast(w.z & 0xFFFF0000, f32), cd.bitcast(w.w & 0xFFFF0000, f32))
        return vec4[f32](cd.bitcast(w.x << 16, f32), cd.bitcast(w.y << 16, f32), cd.bitcast(w.z << 16, f32),
                         cd.bitcast(w.w << 16, f32))
    h0 = cd.bitcast(w.x, vec2[f16])
    h1 = cd.bitcast(w.y, vec2[f16])
    h2 = cd.bitcast(w.z, vec2[f16])
    h3 = cd.bitcast(w.w, vec2[f16])
    if HIGH:
        return vec4[f32](f32(h0.y), f32(h1.y), f32(h2.y), f32(h3.y))
    return vec4[f32](f32(h0.x), f32(h1.x), f32(h2.x), f32(h3.x))


def lanes_per_row(d: int) -> tuple[int, int]:
    """(lanes reading one V row, V rows one load instruction of a subgroup reads) for head size ``d``."""
    lpr = d // 8
    return lpr, 32 // lpr


def row_groups(d: int, rows: int, most: int | None = None) -> tuple[int, int]:
    """(row groups, rows a subgroup takes): the subgroups of a workgroup split the ``rows`` query rows into 1, 2
    or 4 groups (each group's subgroups share the keys of a step, so K/V are read from memory once, the other
    groups hitting the caches) so that a subgroup holds at most ``most`` rows and ``8 * d`` output values
    (registers). By default ``most`` is 8 for one group and 6 for more: on an H100 at D = 128, 8 rows in one
    group beat 2 groups of 4 (136 against 150 us, 65536 keys), 12 rows ran fastest as 2 groups of 6 (68 against
    81 us as 4 groups of 3) and 16 rows as 4 groups of 4 (97 against 125 us as 2 groups of 8, which spill)."""
    for groups in (1, 2, 4):
        per = -(-rows // groups)
        limit = most if most is not None else 8 if groups == 1 else 6
        if per <= limit and per * d <= 1024:
            return groups, per
    raise ValueError(f"attention_decode: {rows} rows of head size {d} do not fit the decode kernel")


def default_loads(d: int, rows_per_subgroup: int) -> int:
    """The ``loads`` mode of :func:`kernel` by default: 2 (pipelining across steps) to head size 64, else 1 (a
    step's V rows loaded with its K rows). Measured on an H100 (32 query heads on 8 K/V heads, D = 128, 16384 and
    131072 keys; D = 64 and 256; 1, 2 and 4 query rows): 1 was the fastest or within 3% of it; 2 needs more
    registers and was up to 10% slower at D = 128, 0 up to 8% slower. On an H200 (one token of 32 query heads
    on 8, ``benchmarks/decode_fixed.py``), 2 was 6-11% faster at D = 64 (32768 keys 31.4 -> 30.3 us, 131072 keys
    96.8 -> 90.4), 3-5% slower at D = 128 and 2.4 times slower at D = 256 (246 registers a lane with 1)."""
    return 2 if d <= 64 else 1


def default_split(d: int) -> int:
    """The lanes sharing a key's dot products with Q in :func:`kernel` by default: 4 where they divide the
    ``d / 8`` pieces of a row, else 2, else 1. Each reads its slice of Q from shared memory once for 4 keys,
    and two exchanges between the lanes add the slices up. H200, one token of 32 query heads on 8 K/V heads,
    ``benchmarks/decode_fixed.py``: reading Q from shared memory a key at a time (split 1) bounded the kernel,
    161 us at 131072 keys at D 128 where it took 141 with those reads taken out; in one call split 4 against 1
    took 27.3 against 31.1 us at 16384 keys, 43.0 against 50.4 at 32768 and 140 against 161-206 at 131072 (D 64:
    16.2 against 18.4 us, 81.3 against 90.0; D 256 on 16/4 heads: 34.6 against 35.1, 165.6 against 175.2)."""
    dp = d // 8
    return 4 if dp % 4 == 0 else 2 if dp % 2 == 0 else 1


def default_fused(d: int, rows: int) -> bool:
    """Whether :func:`plan` combines a head's chunks in the kernel's last workgroup of the head by default
    (``fused``) rather than in :func:`combine_kernel`'s launch: where each of the workgroup's 128 invocations
    then combines one ``vec4`` of the head's output (``rows * d`` at most 512). Measured on an H200
    (``benchmarks/decode_fixed.py``, one token, 16384 and 32768 keys): fused was 1.6-3.4 us faster at 4 rows of
    D 128 and 2 of D 256 (512 values), unfused 1.3-10 us faster at 8 and 16 rows of D 128 and 4 of D 256 (one
    workgroup combining 1024 or more values, chunk after chunk, takes longer than the second launch)."""
    return rows * d <= 4 * WG


def kernel(d: int, rows: int, q_f16: bool = False, out_f16: bool = False, mask: str | None = None,
           causal: bool = False, window: bool = False, softcap: bool = False, fused: bool = True,
           loads: int | None = None, most_rows: int | None = None, split: int | None = None,
           k_bf16: bool = False, v_bf16: bool = False, q_bf16: bool = False) -> cd.Kernel:
    """The decode kernel for head size ``d`` (a multiple of 8 up to 256) and ``rows`` query rows per K/V
    head (1 .. :data:`MAX_ROWS`), Q f32 (or f16), the output f32 (or f16), an additive mask of ``mask``
    ("f16", "f32" or None) values; ``causal``, ``window`` and ``softcap`` compile those in (their values
    are push constants). ``fused``: the last workgroup of a K/V head to finish combines the head's chunks
    (a counter per head in ``cnt``), so no :func:`combine_kernel` runs. ``loads``: when a subgroup loads a
    step's K and V rows: 0 each where it is used (K for the scores, V for P V), 1 V together with K at the
    start of the step, 2 (software pipelining) the next step's K after the scores and its V after P V, so
    that they are in flight during the arithmetic, 3 the next step's K and V together after P V (as 1, but
    the first step's rows are loaded before Q is in shared memory, as with 2) (default :func:`default_loads`:
    more loads in flight need more registers). ``most_rows``: the most query rows one subgroup takes
    (:func:`row_groups`).
    ``split``: the lanes that share one key's dot products with Q (each a ``1 / split`` slice of D, for
    ``split`` keys; default :func:`default_split`), so that a slice of Q read from shared memory serves
    ``split`` keys. ``k_bf16`` / ``v_bf16`` / ``q_bf16``: K / V / Q hold bf16 values, read as they are (exactly,
    as f32; a bf16 Q wins over ``q_f16``).

    Grid ``(chunks, Hkv, 1)``. Bindings: q (Hq Sq D values), k and v (``uvec4``: 8 f16 or bf16 values each), the
    mask, ``part`` (``vec4`` f32: per (K/V head, chunk) R x D/4 values, each row's pieces of 8 columns as
    the even columns then the odd ones), ``ml`` (f32: per (K/V head, chunk, row) M then L), ``cnt`` (u32 per
    K/V head, zero between launches), ``o`` (the output). With ``direct`` (one chunk) the workgroup writes
    the output itself."""
    return _kernel(d, rows, bool(q_f16), bool(out_f16), mask, bool(causal), bool(window), bool(softcap), bool(fused),
                   loads, most_rows, split, bool(k_bf16), bool(v_bf16), bool(q_bf16))


@cache
def _kernel(d: int, rows: int, q_f16: bool, out_f16: bool, mask: str | None, causal: bool, window: bool,
            softcap: bool, fused: bool, loads: int | None, most_rows: int | None, split: int | None, k_bf16: bool,
            v_bf16: bool, q_bf16: bool) -> cd.Kernel:
    """:func:`kernel` for its arguments as given in full (one kernel object however they were passed)."""
    if d % 8 or not 8 <= d <= 256:
        raise ValueError(f"attention_decode: head size {d}; a multiple of 8 up to 256")
    if not 1 <= rows <= MAX_ROWS:
        raise ValueError(f"attention_decode: {rows} query rows per K/V head; the decode kernel takes 1 to {MAX_ROWS}")
    if mask not in MASK_KINDS:
        raise ValueError(f"attention_decode: mask kind {mask!r}; one of None, 'f16', 'f32'")
    R = rows
    RG, RS = row_groups(d, rows, most_rows)  # row groups; rows a subgroup
    NS = SUBGROUPS // RG             # subgroups of a row group (they split the keys of a step)
    DP = d // 8                      # 16-byte pieces of a K/V row
    DQ = d // 4                      # vec4 of a row of Q or O
    LPR, KPI = lanes_per_row(d)
    NI = -(-32 // KPI)               # P V iterations of a step
    QLOAD = -(-(R * DQ) // WG)       # prologue iterations (Q into shared memory)
    OUTS = -(-(R * DP) // WG)        # epilogue iterations (one (row, piece) an invocation)
    NCS = max(1, WG // (R * DQ))     # fused combine: sets of chunks (invocations per output vec4)
    CPT = -(-(R * DQ) // WG)         # ... output vec4 an invocation
    U1, U2 = max(4, 32 // CPT), max(2, 16 // CPT)  # ... chunks it reads at once (maxima, then O and L)
    QB = bool(q_bf16)
    q_t = u16 if QB else f16 if q_f16 else f32
    out_t = f16 if out_f16 else f32
    has_mask = mask is not None
    MASK16 = mask == "f16"                      # (a compile-time bool: kernels compare no strings)
    m_t = MASK_KINDS[mask] if has_mask else f16
    CAUSAL, WINDOW, SOFTCAP, FUSED = bool(causal), bool(window), bool(softcap), bool(fused)
    KB, VB = bool(k_bf16), bool(v_bf16)
    LOADS = default_loads(d, RS) if loads is None else loads
    if LOADS not in (0, 1, 2, 3):
        raise ValueError(f"attention_decode: loads={loads!r}; 0, 1, 2 or 3")
    SLOTS = NS > 1 and NS * R * DQ * 16 <= 16384   # the epilogue: a shared slot per subgroup (else one, in turn)
    SPL = default_split(d) if split is None else split   # lanes (and keys) of a score group
    if SPL not in (1, 2, 4) or DP % SPL:
        raise ValueError(f"attention_decode: split={split!r}; 1, 2 or 4 dividing the {DP} 16-byte pieces of a row")
    PQ = DP // SPL                   # pieces of a K row a lane scores
    QV = DQ // SPL                   # vec4 of a row of Q a lane reads (its slice)
    QQ = QV + (SPL > 1)              # ... and a slice's stride in shared memory (padded: the slices' 16-byte
    QROW = SPL * QQ                  # ... words in different banks); a row's

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def attention_decode(q: cd.Buffer[q_t], k: cd.Buffer[vec4[u32]], v: cd.Buffer[vec4[u32]], m: cd.Buffer[m_t],
                         part: cd.Buffer[vec4[f32]], ml: cd.Buffer[f32], cnt: cd.Buffer[u32], o: cd.Buffer[out_t],
                         Skv: u32, Sq: u32, lo: u32, chunk: u32, chunks: u32, scale: f32, cap: f32, off: i32,
                         window: u32, mask_stride: u32, direct: u32):
        t = cd.local_invocation_index
        sg = cd.subgroup_id
        lane = cd.subgroup_invocation_id
        c = cd.workgroup_id.x
        kvh = cd.workgroup_id.y
        group = R // Sq                         # query heads per K/V head (G = R / Sq)
        c0 = lo + c * chunk
        c1 = min(c0 + chunk, Skv)
        kvbase = kvh * Skv                      # the head's first K/V row
        row0 = kvh * R                          # the head's first row of Q and O (query head * Sq + query)
        rg = sg // NS                           # this subgroup's row group
        kx = sg % NS                            # ... and its place among the group's subgroups

        # Q, scaled, into shared memory: row r's piece p (8 columns) as vec4 2p (even columns) and 2p + 1 (odd)
        qs = cd.shared(vec4[f32], R * QROW)
        for it in cd.static_range(QLOAD):
            e = t + it * WG
            if e < R * DQ:
                r = e // DQ
                w = e % DQ
                qb = (row0 + r) * d + (w // 2) * 8 + (w % 2)
                at = e
                if SPL > 1:
                    at = r * QROW + (w // QV) * QQ + w % QV
                if QB:
                    qs[at] = vec4[f32](bf16_value(q[qb]), bf16_value(q[qb + 2]), bf16_value(q[qb + 4]),
                                       bf16_value(q[qb + 6])) * scale
                else:
                    qs[at] = vec4[f32](f32(q[qb]), f32(q[qb + 2]), f32(q[qb + 4]), f32(q[qb + 6])) * scale
        # this subgroup's rows (a row past R repeats row R - 1 and is not stored): Q's place, the last key the row
        # sees (causal), its first (window), where its mask row starts
        qrow = []
        last = []
        first = []
        mrow = []
        for i in cd.static_range(RS):
            r = min(rg * RS + i, R - 1)
            qi = r % Sq
            qrow = qrow + [r * QROW]
            last = last + [i32(qi) + off]
            first = first + [i32(qi) + off - i32(window) + 1]
            mrow = mrow + [(kvh * group + r // Sq) * mask_stride + qi * Skv]

        mx = [f32(NEG) for i in cd.static_range(RS)]        # running max (uniform in the subgroup)
        ls = [f32(0.0) for i in cd.static_range(RS)]        # this lane's share of the running sum
        oe = [vec4[f32](0.0) for i in cd.static_range(RS)]  # this lane's 8 columns: even, odd
        oo = [vec4[f32](0.0) for i in cd.static_range(RS)]
        kg = lane // LPR                                     # P V: the key this lane reads of each KPI
        piece = lane % LPR                                   # ... and its piece of the V row
        pv_lane = lane < KPI * LPR
        last_key = c1 - 1                                    # (rows past the chunk read its last row instead)
        # scores: lane g0 + h of a group of SPL scores slice h of D (PQ pieces) of the group's SPL keys
        h = 0
        g0 = lane
        if SPL > 1:
            h = lane % SPL
            g0 = lane - h
        qh = [qrow[i] + h * QQ for i in cd.static_range(RS)]
        first_base = c0 + kx * 32
        kn = []
        vn = []
        if LOADS >= 2:                                       # the first step's rows, in flight over the barrier
            kn = [k[(kvbase + min(first_base + g0 + e // PQ, last_key)) * DP + h * PQ + e % PQ]
                  for e in cd.static_range(DP)]
            vn = [v[(kvbase + min(first_base + min(it * KPI + kg, 31), last_key)) * DP + piece]
                  for it in cd.static_range(NI)]
        cd.barrier()                                         # (Q in shared memory)
        for base in range(first_base, c1, NS * 32):
            nxt = base + NS * 32
            kws = kn
            vws = vn
            if LOADS == 0:
                kws = [k[(kvbase + min(base + g0 + e // PQ, last_key)) * DP + h * PQ + e % PQ]
                       for e in cd.static_range(DP)]
            if LOADS == 1:
                kws = [k[(kvbase + min(base + g0 + e // PQ, last_key)) * DP + h * PQ + e % PQ]
                       for e in cd.static_range(DP)]
                vws = [v[(kvbase + min(base + min(it * KPI + kg, 31), last_key)) * DP + piece]
                       for it in cd.static_range(NI)]
            # scores: lane = key
            j = base + lane
            jr = min(j, last_key)
            s = [f32(0.0) for e in cd.static_range(SPL * RS)]   # (key kk, row i) at kk * RS + i
            for p in cd.static_range(PQ):
                ke = [halves(kws[kk * PQ + p], False, KB) for kk in cd.static_range(SPL)]
                ko = [halves(kws[kk * PQ + p], True, KB) for kk in cd.static_range(SPL)]
                for i in cd.static_range(RS):
                    qe = qs[qh[i] + 2 * p]
                    qo = qs[qh[i] + 2 * p + 1]
                    for kk in cd.static_range(SPL):
                        s[kk * RS + i] += cd.dot(qe, ke[kk]) + cd.dot(qo, ko[kk])
            # ... added over the group's lanes, lane g0 + h keeping key g0 + h (= lane): halving the keys
            # held at each exchange (SPL - 1 shuffles a row)
            for i in cd.static_range(RS):
                cur = [s[kk * RS + i] for kk in cd.static_range(SPL)]
                for bit in cd.static_range(SPL // 2, 0, -1):     # (SPL 4: 2 then 1; SPL 2: 1)
                    upper = (h & bit) != 0
                    half = len(cur) // 2
                    cur = [cd.select(upper, cur[e + half], cur[e]) +
                           cd.subgroup_shuffle_xor(cd.select(upper, cur[e], cur[e + half]), bit)
                           for e in cd.static_range(half)]
                s[i] = cur[0]
            if LOADS == 2:                                   # the next step's K, in flight from here
                kn = [k[(kvbase + min(nxt + g0 + e // PQ, last_key)) * DP + h * PQ + e % PQ]
                      for e in cd.static_range(DP)]
            pr = []
            for i in cd.static_range(RS):
                x = s[i]
                if SOFTCAP:
                    x = cap * cd.tanh(x)
                if has_mask:
                    x += f32(m[mrow[i] + jr]) if MASK16 else f32(mask_f16(m[mrow[i] + jr]))
                hidden = j >= c1
                if CAUSAL:
                    hidden = hidden or i32(j) > last[i]
                if WINDOW:
                    hidden = hidden or i32(j) < first[i]
                x = cd.select(hidden, f32(NEG_INF), x)
                # online softmax
                mn = max(mx[i], cd.subgroup_max(x))
                alpha = cd.exp(mx[i] - mn)
                px = cd.exp(x - mn)
                ls[i] = ls[i] * alpha + px
                oe[i] = oe[i] * alpha
                oo[i] = oo[i] * alpha
                mx[i] = mn
                pr = pr + [px]
            # P V: lane = a piece of a V row
            for it in cd.static_range(NI):
                key = it * KPI + kg
                src = min(key, 31)
                ok = pv_lane and key < 32
                if LOADS == 0:
                    vw = v[(kvbase + min(base + src, last_key)) * DP + piece]
                else:
                    vw = vws[it]
                ve = halves(vw, False, VB)
                vo = halves(vw, True, VB)
                for i in cd.static_range(RS):
                    w = cd.select(ok, cd.subgroup_shuffle(pr[i], src), f32(0.0))
                    oe[i] += w * ve
                    oo[i] += w * vo
            if LOADS == 2:                                   # the next step's V
                vn = [v[(kvbase + min(nxt + min(it * KPI + kg, 31), last_key)) * DP + piece]
                      for it in cd.static_range(NI)]
            if LOADS == 3:                                   # the next step's K and V, as 1 does at a step's start
                kn = [k[(kvbase + min(nxt + g0 + e // PQ, last_key)) * DP + h * PQ + e % PQ]
                      for e in cd.static_range(DP)]
                vn = [v[(kvbase + min(nxt + min(it * KPI + kg, 31), last_key)) * DP + piece]
                      for it in cd.static_range(NI)]

        # the subgroup's totals: l over the lanes, O over the lanes reading the same piece
        for i in cd.static_range(RS):
            ls[i] = cd.subgroup_add(ls[i])
            te = oe[i]
            to = oo[i]
            for g in cd.static_range(1, KPI):
                te += cd.subgroup_shuffle(oe[i], min(piece + g * LPR, 31))
                to += cd.subgroup_shuffle(oo[i], min(piece + g * LPR, 31))
            oe[i] = te
            oo[i] = to
        # the workgroup's: each row group's subgroups rescaled to their largest max, then added in shared memory
        sm = cd.shared(f32, SUBGROUPS * RS)
        sl = cd.shared(f32, SUBGROUPS * RS)
        if not SLOTS:
            so = cd.shared(vec4[f32], R * DQ)
        if lane == 0:
            for i in cd.static_range(RS):
                sm[sg * RS + i] = mx[i]
                sl[sg * RS + i] = ls[i]
        cd.barrier()
        fac = []
        for i in cd.static_range(RS):
            mm = sm[rg * NS * RS + i]
            for k2 in cd.static_range(1, NS):
                mm = max(mm, sm[(rg * NS + k2) * RS + i])
            fac = fac + [cd.exp(mx[i] - mm)]
        if SLOTS:                                            # each subgroup its slot, added up below
            sos = cd.shared(vec4[f32], NS * R * DQ)
            if lane < LPR:
                for i in cd.static_range(RS):
                    r = rg * RS + i
                    if r < R:
                        at = (kx * R + r) * DQ + 2 * piece
                        sos[at] = oe[i] * fac[i]
                        sos[at + 1] = oo[i] * fac[i]
            cd.barrier()
        else:                                                # one slot, the subgroups in turn
            for phase in cd.static_range(NS):
                if kx == phase and lane < LPR:
                    for i in cd.static_range(RS):
                        r = rg * RS + i
                        if r < R:
                            at = r * DQ + 2 * piece
                            if phase == 0:
                                so[at] = oe[i] * fac[i]
                                so[at + 1] = oo[i] * fac[i]
                            else:
                                so[at] = so[at] + oe[i] * fac[i]
                                so[at + 1] = so[at + 1] + oo[i] * fac[i]
                cd.barrier()
        # out (or the chunk's part): one invocation per (row, piece)
        for it in cd.static_range(OUTS):
            e = t + it * WG
            if e < R * DP:
                r = e // DP
                p = e % DP
                if SLOTS:
                    ve = sos[r * DQ + 2 * p]
                    vo = sos[r * DQ + 2 * p + 1]
                    for k2 in cd.static_range(1, NS):
                        ve += sos[(k2 * R + r) * DQ + 2 * p]
                        vo += sos[(k2 * R + r) * DQ + 2 * p + 1]
                else:
                    ve = so[r * DQ + 2 * p]
                    vo = so[r * DQ + 2 * p + 1]
                sb = (r // RS) * NS * RS + r % RS
                mm = sm[sb]
                for k2 in cd.static_range(1, NS):
                    mm = max(mm, sm[sb + k2 * RS])
                ll = f32(0.0)
                for k2 in cd.static_range(NS):
                    ll += cd.exp(sm[sb + k2 * RS] - mm) * sl[sb + k2 * RS]
                if direct != 0:
                    inv = 0.0
                    if ll != 0.0:               # a row that sees no key gives 0
                        inv = 1.0 / ll
                    ob = (row0 + r) * d + p * 8
                    o[ob] = out_t(ve.x * inv)
                    o[ob + 1] = out_t(vo.x * inv)
                    o[ob + 2] = out_t(ve.y * inv)
                    o[ob + 3] = out_t(vo.y * inv)
                    o[ob + 4] = out_t(ve.z * inv)
                    o[ob + 5] = out_t(vo.z * inv)
                    o[ob + 6] = out_t(ve.w * inv)
                    o[ob + 7] = out_t(vo.w * inv)
                else:
                    pb = ((kvh * chunks + c) * R + r) * DQ + 2 * p
                    part[pb] = ve
                    part[pb + 1] = vo
                    if p == 0:
                        mb = ((kvh * chunks + c) * R + r) * 2
                        ml[mb] = mm
                        ml[mb + 1] = ll

        if FUSED and direct == 0:
            # the last workgroup of this K/V head to get here combines its chunks
            flag = cd.shared(u32, 1)
            cd.control_barrier(cd.Workgroup, cd.Device, ("AcquireRelease", "UniformMemory", "WorkgroupMemory",
                                                          "MakeAvailable", "MakeVisible"))
            if t == 0:
                flag[0] = cd.atomic_add(cnt, kvh, 1)
            cd.control_barrier(cd.Workgroup, cd.Device, ("AcquireRelease", "UniformMemory", "WorkgroupMemory",
                                                          "MakeAvailable", "MakeVisible"))
            if cd.assume_uniform(flag[0] == chunks - 1):
                cs = t // (R * DQ)
                acc = []
                lsum = []
                for it in cd.static_range(CPT):
                    e = t % (R * DQ) + it * WG
                    ec = min(e, R * DQ - 1)
                    r = ec // DQ
                    mlb = (kvh * chunks * R + r) * 2        # (chunk 0, row r); a chunk is 2 R further
                    mm = f32(NEG)
                    for cb in range(0, chunks, U1):
                        for u in cd.static_range(U1):
                            mm = max(mm, ml[mlb + min(cb + u, chunks - 1) * 2 * R])
                    a = vec4[f32](0.0)
                    ll = f32(0.0)
                    if cs < NCS:
                        for cb in range(cs, chunks, U2 * NCS):
                            for u in cd.static_range(U2):
                                cc = cb + u * NCS
                                ccl = min(cc, chunks - 1)
                                w = cd.select(cc < chunks, cd.exp(ml[mlb + ccl * 2 * R] - mm), f32(0.0))
                                ll += w * ml[mlb + ccl * 2 * R + 1]
                                a += w * part[(kvh * chunks + ccl) * R * DQ + ec]
                    acc = acc + [a]
                    lsum = lsum + [ll]
                if NCS > 1:
                    sa = cd.shared(vec4[f32], WG)
                    sls = cd.shared(f32, WG)
                    sa[t] = acc[0]
                    sls[t] = lsum[0]
                    cd.barrier()
                    if cs == 0:
                        a = acc[0]
                        ll = lsum[0]
                        for s2 in cd.static_range(1, NCS):
                            a += sa[s2 * R * DQ + t]
                            ll += sls[s2 * R * DQ + t]
                        acc = [a]
                        lsum = [ll]
                for it in cd.static_range(CPT):
                    e = t % (R * DQ) + it * WG
                    if cs == 0 and e < R * DQ:
                        inv = 0.0
                        if lsum[it] != 0.0:     # a row that saw no key gives 0
                            inv = 1.0 / lsum[it]
                        a = acc[it] * inv
                        wq = e % DQ
                        ob = (row0 + e // DQ) * d + (wq // 2) * 8 + (wq % 2)
                        o[ob] = out_t(a.x)
                        o[ob + 2] = out_t(a.y)
                        o[ob + 4] = out_t(a.z)
                        o[ob + 6] = out_t(a.w)
                if t == 0:
                    cnt[kvh] = 0                # ready for the next launch

    kv = "_qbf16" * QB + "_kbf16" * KB + "_vbf16" * VB
    attention_decode.__name__ = attention_decode.__qualname__ = f"attention_decode_d{d}_r{R}{kv}"
    return cast(cd.Kernel, attention_decode)


@cache
def combine_kernel(d: int, rows: int, out_f16: bool = False) -> cd.Kernel:
    """Combines the chunks of :func:`kernel` (``direct == 0``) into the output, f32 (or f16).

    Grid ``(Hkv * rows, 1, 1)``: one workgroup per output row (``kvh * rows + r``, which is also the
    row's place in O). Its invocations take the ``d / 4`` vec4 of the row times ``128 // (d / 4)``
    interleaved sets of chunks; shared memory adds the sets up."""
    DQ = d // 4
    NCL = WG // DQ                   # sets of chunks
    out_t = f16 if out_f16 else f32
    R = rows

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def attention_decode_combine(part: cd.Buffer[vec4[f32]], ml: cd.Buffer[f32], o: cd.Buffer[out_t], chunks: u32):
        t = cd.local_invocation_index
        sg = cd.subgroup_id
        row = cd.workgroup_id.x          # kvh * R + r
        kvh = row // R
        r = row % R
        first = kvh * chunks * R + r     # (kvh, chunk 0, r); chunk c is R entries further
        # the largest M
        mm = f32(NEG)
        for cc in range(t, chunks, WG):
            mm = max(mm, ml[(first + cc * R) * 2])
        red = cd.shared(f32, SUBGROUPS)
        mm = cd.subgroup_max(mm)
        if cd.subgroup_elect():
            red[sg] = mm
        cd.barrier()
        mm = max(max(red[0], red[1]), max(red[2], red[3]))
        # each set: its chunks' O and L rescaled to the largest M
        e = t % DQ
        cl = t // DQ
        acc = vec4[f32](0.0)
        ll = f32(0.0)
        if cl < NCL:
            for cc in cd.range(cl, chunks, NCL, unroll=4):
                at = first + cc * R
                w = cd.exp(ml[at * 2] - mm)
                ll += w * ml[at * 2 + 1]
                acc += w * part[at * DQ + e]
        so = cd.shared(vec4[f32], WG)
        sl = cd.shared(f32, NCL)
        so[t] = acc
        if e == 0 and cl < NCL:
            sl[cl] = ll
        cd.barrier()
        if t < DQ:
            total = so[t]
            lt = sl[0]
            for s2 in cd.static_range(1, NCL):
                total += so[s2 * DQ + t]
                lt += sl[s2]
            inv = 0.0
            if lt != 0.0:                    # a row that saw no key gives 0
                inv = 1.0 / lt
            total = total * inv
            odd = t % 2
            ob = row * d + (t // 2) * 8 + odd
            o[ob] = out_t(total.x)
            o[ob + 2] = out_t(total.y)
            o[ob + 4] = out_t(total.z)
            o[ob + 6] = out_t(total.w)

    attention_decode_combine.__name__ = attention_decode_combine.__qualname__ = f"attention_decode_combine_d{d}"
    return cast(cd.Kernel, attention_decode_combine)


FLT_MAX = 3.4028234663852886e38


@cache
def sinks_kernel(d: int) -> cd.Kernel:
    """Writes each row's attention sink as one more chunk, the last of its K/V head's ``chunks``: M the sink (+inf
    taken as the largest f32, so that the row gives 0 as its limit does), L 1, O 0. :func:`combine_kernel` then
    gives ``sum_c e^(M_c - M) O_c / (sum_c e^(M_c - M) L_c + e^(sink - M))``, the softmax with the sink.

    Grid ``(ceil(Hkv * rows * d / 4 / 128), 1, 1)``: an invocation per ``vec4`` of a row's O. Bindings: s (a sink a
    query head; row ``kvh * rows + r`` is query head ``(kvh * rows + r) // Sq``), ``part`` and ``ml`` (the chunks'
    O, M and L, as :func:`kernel` lays them out)."""
    DQ = d // 4

    @cd.kernel(workgroup_size=(WG, 1, 1))
    @no_type_check
    def attention_decode_sinks(s: cd.Buffer[f32], part: cd.Buffer[vec4[f32]], ml: cd.Buffer[f32], rows: u32, sq: u32,
                               chunks: u32, n: u32):
        e = cd.global_invocation_id.x
        if e < n * DQ:
            w = e % DQ
            row = e // DQ                       # kvh * rows + r
            at = (row // rows * chunks + chunks - 1) * rows + row % rows
            part[at * DQ + w] = vec4[f32](0.0)
            if w == 0:
                sink = s[row // sq]
                if sink > FLT_MAX:
                    sink = f32(FLT_MAX)
                ml[at * 2] = sink
                ml[at * 2 + 1] = 1.0

    attention_decode_sinks.__name__ = attention_decode_sinks.__qualname__ = f"attention_decode_sinks_d{d}"
    return cast(cd.Kernel, attention_decode_sinks)


# --- the host side -------------------------------------------------------------------------------


def rows_per_head(dims: tuple[int, int, int, int, int]) -> int:
    """The query rows one K/V head serves, ``(Hq / Hkv) * Sq``, for ``dims`` = (Hq, Sq, D, Hkv, Skv)."""
    hq, sq, _, hkv, _ = dims
    return hq // hkv * sq


# past MAX_ROWS rows a K/V head the cooperative-matrix kernel runs by default while its passes over the keys (one
# per K/V head and 16-row tile) are at most this many times the prefill kernel's (one per query head and 64 of its
# rows).  H200, `benchmarks/attention_bench.py --decode-impls nv2,decode --shapes 32,33,34,35,36,37`
# (benchmarks/results/attention-decode-many-rows-h200-2026-11-29.md), us of the two kernels, decode against ggml's:
# 71 heads on 1, one token, 16384 keys (5 passes against 71): 22 against 213; 5 tokens of 128 heads on 8 (40 against
# 128): 105 against 641; 24 tokens of 32 heads on 8, 32768 keys (48 against 32): 210 against 348; 64 tokens of
# 32 heads on 32 (128 against 32): 490 against 225; 128 tokens (256 against 64): 960 against 408
PASSES_OVER_PREFILL = 2


def matrices_beat_prefill(dims: tuple[int, int, int, int, int]) -> bool:
    """Whether, past :data:`MAX_ROWS` query rows per K/V head, ``ops.attention`` prefers the cooperative-matrix
    decode kernel to the prefill kernels for ``dims`` = (Hq, Sq, D, Hkv, Skv): its passes over the keys, Hkv x
    ceil(rows / 16), at most :data:`PASSES_OVER_PREFILL` times the prefill kernel's, Hq x ceil(Sq / 64). Grouped
    heads with few new tokens (speculative decoding) take it; a chunk of a long prompt without grouping does not."""
    hq, sq, _, hkv, _ = dims
    return hkv * -(-rows_per_head(dims) // 16) <= PASSES_OVER_PREFILL * hq * -(-sq // 64)


def takes(dims: tuple[int, int, int, int, int], dev: Any = "cpu") -> bool:
    """Whether ``ops.attention`` runs this module's kernel for ``dims`` = (Hq, Sq, D, Hkv, Skv) on ``dev``
    by default: at most :data:`MAX_ROWS` query rows per K/V head (decoding; to
    :data:`coopdsl.ops.attention_decode_mma.MAX_ROWS` with D up to its ``MAX_D`` where the device offers its
    cooperative matrices and, where the prefill kernel would be ggml's (the interpreter, VK_NV_cooperative_matrix2),
    :func:`matrices_beat_prefill`), on the interpreter or on a device that runs subgroups of 32."""
    rows = rows_per_head(dims)
    if rows < 1 or not hows(dims, dev):
        return False
    # (the rule weighs against ggml's prefill kernel: where the prefill kernel would be the simple KHR one, the
    # decode kernel keeps every row it takes)
    if rows > MAX_ROWS and not matrices_beat_prefill(dims) and (isinstance(dev, str) or caps.has_nv2(dev)):
        return False
    if isinstance(dev, str):
        return True
    lo_size, hi_size = caps.subgroup_sizes(dev)
    return lo_size <= 32 <= hi_size


def visible_keys(sq: int, skv: int, window: int) -> int:
    """The first key any query row sees (the first row's window start; 0 without a window). With
    ``causal`` the last row sees the last key, so the visible keys of a head run to Skv."""
    return max(0, skv - sq - window + 1) if window else 0


HOWS = ("lanes", "mma")
KNOBS = ("split", "loads", "fused")   # what a decode kernel name may add for :func:`kernel` ("lanes:split2")


def variant(how: str) -> tuple[str, dict[str, int]]:
    """A decode kernel's name as :func:`plan` and a tuned call take it: "lanes" or "mma", or "lanes" with one of
    :func:`kernel`'s :data:`KNOBS` set, ``"lanes:split2"``, ``"lanes:loads2"``, ``"lanes:fused0"`` (the chunks
    combined by :func:`combine_kernel`'s launch) or ``"lanes:fused1"``; returns (the kernel, {knob: value})."""
    base, colon, knob = str(how).partition(":")
    if base not in HOWS:
        raise ValueError(f"attention_decode: how={how!r}; one of {HOWS}, or 'lanes:<knob><value>'")
    if not colon:
        return base, {}
    if base != "lanes":
        raise ValueError(f"attention_decode: how={how!r}; only 'lanes' takes a knob, as 'lanes:split2'")
    name = knob.rstrip("0123456789")
    if name not in KNOBS or name == knob:
        raise ValueError(f"attention_decode: how={how!r}; the knob is one of "
                         f"{', '.join(k + '<n>' for k in KNOBS)}, as 'lanes:split2'")
    value = int(knob[len(name):])
    if name == "fused" and value not in (0, 1):
        raise ValueError(f"attention_decode: how={how!r}; fused is 0 (a second launch combines the chunks) or 1")
    return base, {name: value}


def variants(dims: tuple[int, int, int, int, int]) -> list[str]:
    """The settings of :func:`kernel`'s knobs a tuned call times for ``dims`` = (Hq, Sq, D, Hkv, Skv) besides the
    defaults, one knob at a time (:func:`variant`'s names): each other ``split`` of 1, 2 and 4 that divides the
    ``D / 8`` pieces of a row, the other ``loads`` of 1, 2 and 3, and the other way of combining the chunks."""
    d, rows = dims[2], rows_per_head(dims)
    if rows > MAX_ROWS:   # (the cooperative-matrix kernel alone: it has no knobs)
        return []
    found = [f"lanes:split{s}" for s in (1, 2, 4) if s != default_split(d) and (d // 8) % s == 0]
    found += [f"lanes:loads{n}" for n in (1, 2, 3) if n != default_loads(d, row_groups(d, rows)[1])]
    return found + [f"lanes:fused{int(not default_fused(d, rows))}"]


def default_how(dims: tuple[int, int, int, int, int], dev: Any = "cpu") -> str:
    """Which decode kernel runs for ``dims`` = (Hq, Sq, D, Hkv, Skv) on ``dev`` by default: "mma"
    (:mod:`coopdsl.ops.attention_decode_mma`, cooperative matrices) from :data:`~coopdsl.ops.attention_decode_mma.
    MIN_ROWS` query rows per K/V head where the device offers its matrices, else "lanes" (:func:`kernel`)."""
    return "mma" if rows_per_head(dims) >= mma.MIN_ROWS and "mma" in hows(dims, dev) else "lanes"


def hows(dims: tuple[int, int, int, int, int], dev: Any = "cpu") -> list[str]:
    """The decode kernels (of :data:`HOWS`) that compute ``dims`` = (Hq, Sq, D, Hkv, Skv) on ``dev``: "lanes"
    to :data:`MAX_ROWS` query rows per K/V head, "mma" where :func:`coopdsl.ops.attention_decode_mma.takes` the
    head size and rows and the device offers its matrices (what a tuned call times)."""
    hq, sq, d, hkv, skv = dims
    rows = rows_per_head(dims)
    return (["lanes"] if rows <= MAX_ROWS else []) + (["mma"] if mma.takes(d, rows) and mma.device_takes(dev) else [])


def default_chunks(hkv: int, keys: int, cores: int = caps.DEFAULT_CORES, how: str = "lanes") -> int:
    """The chunks each K/V head's ``keys`` visible keys are cut into for the decode kernel ``how`` (their
    workgroups are four subgroups): about :data:`CHUNK_WGS_PER_CORE` workgroups per shader core in all for
    :func:`kernel` ("lanes"), :data:`coopdsl.ops.attention_decode_mma.CHUNK_WGS_PER_CORE` for the
    cooperative-matrix kernel ("mma"), but none shorter than :data:`MIN_CHUNK_KEYS` keys."""
    per_core = mma.CHUNK_WGS_PER_CORE if how == "mma" else CHUNK_WGS_PER_CORE
    per_head = max(1, round(per_core * cores / max(hkv, 1)))
    return max(1, min(per_head, -(-keys // MIN_CHUNK_KEYS)))


def chunking(keys: int, chunks: int, step: int = STEP) -> tuple[int, int]:
    """(keys a chunk, chunks) for ``keys`` visible keys asked to be cut into ``chunks``: the chunk length is
    rounded up to a multiple of ``step`` (the kernel's keys a step), so there may be fewer chunks than asked."""
    size = -(-max(keys, 1) // max(chunks, 1))
    size = -(-size // step) * step
    return size, -(-max(keys, 1) // size)


_counters: dict[Any, Any] = {}   # device -> its zeroed u32 counters (one per K/V head) of the fused combine


def counters(n: int, dev: Any) -> Any:
    """At least ``n`` u32 zeros on ``dev`` for the fused combine's counters (kept per device: each launch leaves
    them zero again; numpy on the interpreter)."""
    if isinstance(dev, str):
        return np.zeros(max(n, 1), np.uint32)
    c = _counters.get(dev)
    if c is None or c.size < n or c.device is not dev or c.freed:
        from ..runtime import zeros

        c = _counters[dev] = zeros((max(n, 64),), np.uint32, device=dev)
    return c


Launch = tuple[cd.Kernel, tuple[int, int, int], tuple[Any, ...], dict[str, Any]]


def plan(q: Any, k: Any, v: Any, dims: tuple[int, int, int, int, int], *, causal: bool, mask: Any, window: int,
         scale: float, softcap: float, out_dtype: Any, out: Any, dev: Any, chunks: int | None = None,
         fused: bool | None = None, loads: int | None = None, most_rows: int | None = None,
         how: str | None = None, split: int | None = None, sinks: Any = None) -> list[Launch]:
    """The launches (``(kernel, grid, args, kwargs)``, in order) that compute attention for checked arguments (as
    :func:`coopdsl.ops.attention_nv2.run` takes them) into ``out``, reading Q, K and V as they are (bf16 ones
    too). ``how``: "lanes" (:func:`kernel`) or "mma"
    (:mod:`coopdsl.ops.attention_decode_mma`, then :func:`combine_kernel`), or "lanes" with a knob (:func:`variant`:
    ``"lanes:split2"``; an explicit ``split``, ``loads`` or ``fused`` wins); default :func:`default_how`.
    ``chunks``: the chunks per K/V head (default :func:`default_chunks`); ``fused=False`` combines them with
    :func:`combine_kernel` instead of in the last workgroup of each head (default :func:`default_fused`); ``loads``,
    ``most_rows``, ``split``: see :func:`kernel` (these four how="lanes" only). ``sinks``: None, or Hq f32 values
    (numpy, or resident on ``dev``), an attention sink a query head: :func:`sinks_kernel` writes them as one more
    chunk of each K/V head, and :func:`combine_kernel` (always launched then) takes them in."""
    hq, sq, d, hkv, skv = dims
    rows = rows_per_head(dims)
    if how is None:
        how = default_how(dims, dev)
    how, knobs = variant(how)
    split = knobs.get("split", split) if split is None else split
    loads = knobs.get("loads", loads) if loads is None else loads
    fused = bool(knobs["fused"]) if fused is None and "fused" in knobs else fused
    if how == "mma" and not mma.takes(d, rows):
        raise ValueError(f"attention_decode: the cooperative-matrix decode kernel takes D a multiple of 16 up to "
                         f"{mma.MAX_D} and at most {mma.MAX_ROWS} rows per K/V head; got D {d}, {rows} rows")
    ldev = nv2.launch_device(dev)
    # Q as it is (f16, f32 or bf16); bf16 K/V read as they are (the f32 kernel widens them, the
    # cooperative-matrix one rounds them to f16), f32 ones converted to f16
    qk = nv2.kind_of(q)
    qd = nv2.upload(np.ascontiguousarray(q), dev) if isinstance(q, np.ndarray) else q
    q_bf16 = qk == "bf16"
    k_bf16, v_bf16 = (nv2.kind_of(x) == "bf16" for x in (k, v))
    kh = kv_words(k, dev) if k_bf16 else nv2.as_kind(k, "f16", hkv * skv * d, dev, "k")
    vh = kv_words(v, dev) if v_bf16 else nv2.as_kind(v, "f16", hkv * skv * d, dev, "v")
    mkind, md, mstride = None, None, 0
    if mask is not None:
        heads = hq if len(mask.shape) == 3 and mask.shape[0] != 1 else 1
        mstride = sq * skv if heads > 1 else 0
        if isinstance(mask, np.ndarray):
            md = nv2.upload(np.ascontiguousarray(mask, np.float32), dev)
        else:
            md = mask
        mkind = "f16" if np.dtype(md.dtype) == np.float16 else "f32"
    lo = visible_keys(sq, skv, window)
    if chunks is None:
        chunks = default_chunks(hkv, skv - lo, caps.shader_cores(dev), how)
    size, n = chunking(skv - lo, int(chunks), mma.STEP if how == "mma" else STEP)
    laid = n + (sinks is not None)      # the chunks of the scratch layout: a sink is one more, written apart
    f16_out = np.dtype(out_dtype) == np.float16
    hides_future = bool(causal) and sq > 1            # (one query row: causal hides nothing)
    hides_past = bool(window) and skv - window > 0     # (the last row's first key; earlier rows start before it)
    out_flat = nv2.view(out, out.dtype)
    unused = nv2.scratch("unused", 4, np.uint32, dev)   # (bound where nothing is read: ggml's path shares it)
    if laid > 1 or how == "mma":
        part = nv2.scratch("decode_o", hkv * laid * rows * d, np.float32, dev).arr
        ml = nv2.scratch("decode_ml", hkv * laid * rows * 2, np.float32, dev).arr
    else:                                               # one chunk: the workgroup writes the output itself
        part = ml = unused.as_(np.float32)
    if softcap:
        scale = float(np.float32(scale) / np.float32(softcap))
    q_view = nv2.view(qd, {"f16": np.float16, "f32": np.float32, "bf16": np.uint16}[qk])
    k4, v4, part4 = nv2.view(kh, np.uint32), nv2.view(vh, np.uint32), part
    if isinstance(k4, np.ndarray):   # (numpy: uvec4 buffers take (n, 4) arrays)
        k4, v4, part4 = k4.reshape(-1, 4), v4.reshape(-1, 4), part.reshape(-1, 4)
    if md is not None:
        m_view = nv2.view(md, md.dtype)
    else:
        m_view = q_view if qk == "f16" else unused.as_(np.float16)
    kw = {"device": ldev}
    sink_launch: list[Launch] = []
    if sinks is not None:
        sd = nv2.view(nv2.as_kind(sinks, "f32", hq, dev), np.float32)
        sink_launch = [(sinks_kernel(d), (-(-(hkv * rows * d // 4) // WG), 1, 1),
                        (sd, part4, ml, rows, sq, laid, hkv * rows), kw)]
        fused = False                   # (the sink chunk is written by another launch)
    combine = [(combine_kernel(d, rows, f16_out), (hkv * rows, 1, 1), (part4, ml, out_flat, laid), kw)]
    if how == "mma":
        tiles = -(-rows // 16)   # (a chunk's row tiles are neighbours in the grid: they read its K/V together)
        return [(mma.kernel(d, qk == "f16", mkind, hides_future, hides_past, bool(softcap), k_bf16, v_bf16, q_bf16),
                 (tiles * n, hkv, 1),
                 (q_view, k4, v4, m_view, part4, ml, skv, sq, rows, lo, size, laid, float(scale), float(softcap),
                  skv - sq, int(window), mstride), kw)] + sink_launch + combine
    if fused is None:
        fused = default_fused(d, rows)
    main = kernel(d, rows, qk == "f16", f16_out, mkind, hides_future, hides_past, bool(softcap), fused, loads,
                  most_rows, split, k_bf16, v_bf16, q_bf16)
    cnt = counters(hkv, dev) if fused and n > 1 else unused.arr
    launches: list[Launch] = [
        (main, (n, hkv, 1), (q_view, k4, v4, m_view, part4, ml, cnt, out_flat, skv, sq, lo, size, laid,
                             float(scale), float(softcap), skv - sq, int(window), mstride, int(laid == 1)), kw)]
    if laid > 1 and not fused:
        launches += sink_launch + combine
    return launches


def kv_words(x: Any, dev: Any) -> Any:
    """bf16 K or V (uint16 bit patterns) as the kernel reads them: numpy uploaded as it is, resident as it is."""
    return nv2.upload(np.ascontiguousarray(x), dev) if isinstance(x, np.ndarray) else x


def run(q: Any, k: Any, v: Any, dims: tuple[int, int, int, int, int], *, causal: bool, mask: Any, window: int,
        scale: float, softcap: float, out_dtype: Any, out: Any, dev: Any, chunks: int | None = None,
        fused: bool | None = None, loads: int | None = None, most_rows: int | None = None,
        how: str | None = None, split: int | None = None, sinks: Any = None) -> Any:
    """Attention by the decode kernels for checked arguments (as :func:`plan` takes them); returns ``out``."""
    for kern, grid, args, kwargs in plan(q, k, v, dims, causal=causal, mask=mask, window=window, scale=scale,
                                         softcap=softcap, out_dtype=out_dtype, out=out, dev=dev, chunks=chunks,
                                         fused=fused, loads=loads, most_rows=most_rows, how=how, split=split,
                                         sinks=sinks):
        nv2.go(kern, grid, *args, **kwargs)
    return out
