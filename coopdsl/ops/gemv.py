"""Bandwidth-bound matrix-vector products for decoding: ``y = x W^T`` for 1 to 16 rows of ``x``.

``W`` is M x K weights (f16, bf16 bit patterns, or ggml's q4_0 / q8_0 / q4_K blocks of
:mod:`coopdsl.ops.quant`), ``x`` is NX x K f32 or f16 activations (NX, 1 to 16, a compile-time
parameter), ``y`` is NX x M f32.  Reading W once is the whole cost, so the kernels are built
around that read: a group of subgroups owns a few rows of W (:func:`choice`), its lanes walk along
the rows together, lane ``i`` reading the ``i``-th *unit* of a row (so that each load instruction of
a subgroup reads one contiguous span), every lane keeps ``NX`` partial sums per row in registers,
and subgroup sums (then, when several subgroups split K, a sum through shared memory) end each
output.  No cooperative matrices: at one to sixteen columns a MulAdd would mostly multiply zeros.
The units (:data:`UNITS`; the block layouts are in ``docs/ops.md``, "Quantized weights"):

* f16 / bf16: 8 values (one ``uvec4``; K a multiple of 8);
* q4_0 (18-byte blocks) and q8_0 (34-byte blocks), read as 16-bit words (the blocks are only 2-byte
  aligned): a quarter of a block (4 or 8 bytes of levels) and its scale; or, with K a multiple of 64
  (two blocks are 9 or 17 aligned 32-bit words) and x rounded to 8 bits first, a whole block read as
  32-bit words (the way "prew" of :func:`choice` and :func:`kernel`);
* q4_K (144-byte blocks, read as 9 ``uvec4``): an eighth of a block (16 bytes of levels: 16 elements
  of each of two sub-blocks) and the block's head.

x is read as given, or rounded to 8 bits a value for integer dot products, inside the product's kernel or
per block of 32 by :func:`quantize_kernel` first (:func:`choice`).  Dispatch :func:`grid` workgroups
(:func:`gemv` does it).  The kernels themselves are built in :mod:`coopdsl.ops.gemv_kernels`.  From a few rows
of x on (q4_0: from one), :mod:`coopdsl.ops.gemv_xregs`'s products (x held in registers, :data:`XREGS`) and
:mod:`coopdsl.ops.gemv_mma`'s on cooperative matrices (:data:`MMA`) may be faster; small products of one row
(:data:`SMALL_INLINE`) round x inside the product, one launch.
"""

from typing import Any

import numpy as np

import coopdsl as cd

from .. import autotune
from . import gemv_kernels as GK
from . import gemv_mma as GM
from . import gemv_xregs as GX
from . import hot, op_tune
from .gemv_kernels import FORMATS as FORMATS  # (re-exported: names callers read from this module)
from .gemv_kernels import INLINE_FORMATS as INLINE_FORMATS
from .gemv_kernels import MAX_ROWS_X as MAX_ROWS_X
from .gemv_kernels import Q8_FORMATS as Q8_FORMATS
from .gemv_kernels import WG as WG
from .gemv_kernels import WORDS_FORMATS
from .gemv_q8 import Q8_WORDS
from .gemv_q8 import grid as q8_grid
from .gemv_q8 import quantize_kernel as quantize_kernel
from .operands import check_device, check_out, choice_name, count, flag, flag_or_none, matrices, new_out, operand

Way = tuple[str, int, int]   # (how x is read, rows of W a group of subgroups owns, subgroups a group: they split K)

# what one GEMV launch does by default, by weight format and rows of x (:func:`bucket`: 1, 2 or 3, 4, 5 to 16; 2 to
# 4 were one bucket until the f16 change below).  How x
# is read: "f32" as given (f32 or f16), "pre" rounded to 8 bits by :func:`quantize_kernel` first, "prew" the same
# with whole blocks read as 32-bit words (K a multiple of 64, else "pre" or "inline"), "inline" rounded to 8 bits
# by the product's own kernel (:func:`kernel`'s ``how``).  The fastest of every way
# and layout of :func:`candidates`, each timed as 200 calls back to back in one command buffer on an H100
# (``benchmarks/ops_llm.py --tune``, 4096 x 14336 weights; one row: ``benchmarks/results/ops_llm-h100-2026-11-27-d
# .md``; 2, 4 and 8 rows: ``ops_llm-mma-h100-2026-11-27.md`` and this session's notes; q4_0: ``ops_llm-q4w-h100-
# 2026-11-27.md``, where "prew" took one row in 14.3 us against 16.7 for the fastest other way, and four rows in
# 21.0 us with no other way among the six fastest; q8_0: ``ops_llm-q8w-h100-2026-11-27.md``, one row 28.7 against
# 30.3 (x as given: 30.8), eight 41.8 against 49.9; q4_K, x rounded per block first: ``ops_llm-q4k-h100-2026-11-
# 27.md``, one row 15.0 against 17.0, four 26.3 against more than 32.9), where two row counts of a bucket
# disagree the layout with the smaller sum; ``gemv(..., tune=True)`` times them on any device.  After x's blocks
# became three 16-byte loads and the sums f32 without a conversion (``ops_llm-xq12-tune*-h100-2026-11-27.md``):
# q4_0 from 2 rows ("prew", 2, 2) (2 and 4 rows 14.8 and 19.3 us against 17.1 and 20.4; 8 and 16 rows 28.7 and
# 45.8 against 29.1 and 46.6), q8_0 at 2-4 rows ("prew", 4, 2) (31.8 + 33.0 us against 31.3 + 36.1).
# At the shapes of larger models (H200, 2026-11-29; ``benchmarks/gemv_ways.py --formats f16,bf16 --rows 2,3,4``,
# ``benchmarks/results/gemv-f16-shapes-h200-2026-11-29.md``, us a call) the "f32" kernel's 8 rows of W over 4
# subgroups took up to 1.4x the time of others at 2 and 3 rows (x's f32 rows are re-read by every group), so f16 and
# bf16 at 2 and 3 rows moved to 4 rows of W over 4 subgroups (f16 from 3 rows runs "mma", :data:`MMA`, where it can),
# and 4 rows became a bucket of its own, keeping 8 x 4: 4 x 4 took 1.3-1.4x its time there.  (8, 4) against (4, 4),
# f16, 2 rows: 4096 x 14336 35.3 and 31.7, 8192 x 28672 109.6 and 112.6, 3584 x 18944 43.2 and 37.1, 28672 x 8192
# 118.3 and 111.3; 3 rows (no "mma"): 45.0 and 43.7, 169.0 and 142.3, 55.8 and 38.9, 125.2 and 123.3; bf16 2 rows
# 35.5 and 31.9, 109.5 and 112.9; 3 rows 44.9 and 43.8, 169.2 and 141.6; 4 rows 37.6 and 55.2, 134.7 and 181.7.
CHOICE: dict[tuple[str, int], Way] = {
    ("f16", 1): ("f32", 2, 4), ("f16", 2): ("f32", 4, 4), ("f16", 4): ("f32", 8, 4), ("f16", 5): ("f32", 2, 2),
    ("bf16", 1): ("f32", 2, 4), ("bf16", 2): ("f32", 4, 4), ("bf16", 4): ("f32", 8, 4), ("bf16", 5): ("f32", 2, 2),
    ("q4_0", 1): ("prew", 4, 4), ("q4_0", 2): ("prew", 2, 2), ("q4_0", 4): ("prew", 2, 2), ("q4_0", 5): ("prew", 2, 2),
    ("q8_0", 1): ("prew", 2, 4), ("q8_0", 2): ("prew", 4, 2), ("q8_0", 4): ("prew", 4, 2), ("q8_0", 5): ("prew", 4, 2),
    ("q4_K", 1): ("pre", 4, 4), ("q4_K", 2): ("pre", 4, 2), ("q4_K", 4): ("pre", 4, 2), ("q4_K", 5): ("pre", 8, 2),
}
# the fastest of the other kind where the caller asks for it (``q8=False`` where CHOICE rounds x to 8 bits,
# ``q8=True`` where it does not), from the same sweeps
OTHER: dict[tuple[str, int], Way] = {
    ("q4_0", 1): ("f32", 2, 2), ("q4_0", 2): ("f32", 4, 2), ("q4_0", 4): ("f32", 4, 2), ("q4_0", 5): ("f32", 8, 2),
    ("q8_0", 1): ("f32", 2, 4), ("q8_0", 2): ("f32", 8, 4), ("q8_0", 4): ("f32", 8, 4), ("q8_0", 5): ("f32", 4, 2),
    ("q4_K", 1): ("f32", 4, 2), ("q4_K", 2): ("f32", 4, 2), ("q4_K", 4): ("f32", 4, 2), ("q4_K", 5): ("f32", 4, 2),
}


def bucket(nx: int) -> int:
    """The key of :data:`CHOICE` for ``nx`` rows of x: 1, 2 (2 or 3 rows), 4 or 5 (5 to 16); another ``nx`` is a
    ValueError."""
    nx = count("gemv.bucket", "rows of x", nx, 1, MAX_ROWS_X)
    return nx if nx in (1, 4) else 2 if nx <= 3 else 5


# from how many rows of x the default is the cooperative-matrix product of :mod:`coopdsl.ops.gemv_mma` ("mma": x
# rounded to f16, W's tiles of 16 rows), with how many steps a subgroup loads at once and how many subgroups a
# workgroup, by weight format; its way is ("mma", depth, split).  Timed on an H100 at 4, 8 and 16 rows of x
# (``benchmarks/ops_llm.py --tune --rows 4,8,16``, 4096 x 14336 weights; ``benchmarks/results/
# ops_llm-mma-h100-2026-11-27.md``): f16 is faster at 8 rows (70 against 79 us) and slower at 4; q4_K, since x
# is rounded per block first ("pre"), only at 16 (51.4 against more than 68; at 8 rows 43.0 against 38.4,
# ``ops_llm-q4k-h100-2026-11-27.md``); the first row count here is the midpoint of the counts timed on either
# side.  q4_0 and
# q8_0 have none: their blocks read as words ("prew") were faster up to 16 rows (q4_0 56.1 against 60.6 us,
# ``ops_llm-q4w-h100-2026-11-27-c.md``; q8_0 65.5 against 85.9, ``ops_llm-q8w-h100-2026-11-27.md``);
# ``tune=True`` still times "mma" for them.  Depth and split: the fastest at 8 and 16 rows once the x tiles load
# with W's (``ops_llm-mma-xearly-h100-2026-11-27.md``: f16 59.6 and 64.4 us, q4_K 39.4 and 47.7), and still after
# each round's loads were issued before the previous round's work (``ops_llm-mma-pipe-h100-2026-11-27.md``: f16
# 49.2 and 55.0 us, 0.84 and 0.75 of the copy kernel; q4_K 37.9, level with x rounded to 8 bits, and 46.5).
# f16 then moved to 5 rows: at the larger products of unseen models its "f32" kernel's 5 rows took 1.6-1.9x the
# time of "mma" (H200, ``benchmarks/ops_llm.py --formats f16 --rows 4,5,8 --tune``, 28672 x 8192: 211.9 against
# 131.8 us, 8192 x 28672: 238.6 against 122.5; at 4 rows "mma" came level, 123.0 against 126.6 and 132.8 against
# 127.7; ``benchmarks/results/gemv-f16-rows5-h200-2026-11-29.md``).
# Then 3 and 4 rows (H200, 2026-11-29, ``benchmarks/gemv_ways.py --formats f16 --rows 2,3,4``,
# ``benchmarks/results/gemv-f16-shapes-h200-2026-11-29.md``, us a call, "mma" 4 x 4 against the default before,
# "f32" 8 x 4): 3 rows 37.9 against 45.0 at 4096 x 14336, 123.7 against 169.0 at 8192 x 28672, 45.3 against 55.8 at
# 3584 x 18944 (where "f32" 4 x 4 took 38.9), 130.8 against 125.2 at 28672 x 8192; 4 rows 38.1 against 38.1, 124.1
# against 134.4, 45.3 against 45.3, 130.7 against 136.8.
# bf16 weights take f16's (each rounded to f16 as it is staged): at 5 to 16 rows the plain kernel took 2.1-4.3x
# torch's time (H200, 5120 x 27648, benchmarks/ops_unseen_third.py); with it, 5 rows at 27648 x 5120 124.3 -> 88.0 us,
# 16 rows 344.5 -> 122.3; 3 rows 76.2 -> 87.5 there, 43.4 -> 39.4 at 4096 x 14336, as for f16
# (benchmarks/results/gemv-bf16-mma-h200-2026-11-29.md).
MMA: dict[str, tuple[int, int, int]] = {"f16": (3, 4, 4), "bf16": (3, 4, 4), "q4_K": (12, 2, 4)}
# from how many rows of x (to gemv_xregs.MAX_ROWS_X) the default is :mod:`coopdsl.ops.gemv_xregs`'s product (x rounded
# to 8 bits first and held in registers while a workgroup walks its rows of W; K a multiple of 64, of 256 for q4_K),
# with its (rows of W a workgroup, subgroups a workgroup); its way is ("xregs", rows, split). Timed on an H200, 4096 x
# 14336 weights: against every other way and layout (``benchmarks/ops_llm.py --tune``;
# ``benchmarks/results/ops_llm-xregs-tune*-h200-2026-11-28.md``), q4_0 level at 2 rows (14.1 against 14.2 us), faster
# at 4 (16.6-16.8 against 18.3-18.7) and 8 (24.6-26.6 against 27.2-27.7); q8_0 slower at 2 rows, level at 4, faster at
# 8 (32.3-32.5 against 35.9 and more). Then as the default against the release before, 400 calls back to back, two
# runs each (``ops_llm-xregs-{base,new}*-h200-2026-11-28.md``): q4_0 4 rows 18.7-18.9 -> 17.4-17.9 us, 6 rows
# 22.1-22.6 -> 21.7 (and once 30.3; timed launch by launch 24.1-24.2 -> 22.8-23.1), 8 rows 26.9-27.8 -> 25.0-25.2;
# q8_0 6 rows 28.4-28.7 -> 30.4-30.5 (slower: it starts at 7), 8 rows 35.3-35.5 -> 32.4. q4_K, a lane an eighth of a
# block (``ops_llm-xregs-q4k-tune-h200-2026-11-28.md``): 4 rows of W a workgroup of 4 subgroups slower at 4 rows of x
# (22.7 against 21.0 us), faster than the previous default at 6 (27.3 against more than 28.8; but in that call "pre"
# with 4 rows over 2 subgroups took 26.7 and 8 rows of W a workgroup 26.6) and at 8 (33.8 against 35.5), where 8 rows
# of W a workgroup of 4 was not among the six fastest (more than 39 us): 4 rows is the layout that was fast at both.
#
# q8_0 then moved to this product from 2 rows, its subgroups a workgroup balanced to K up to 6 rows
# (:data:`XREGS_BALANCED`, :func:`coopdsl.ops.gemv_xregs.balanced_split`). Timed on an H200 in one process a shape
# (``benchmarks/gemv_xregs_sweep.py``, ``benchmarks/results/gemv-xregs-split-h200-2026-11-28.md``): at 4096 x 14336
# (448 units of K: 4 subgroups make 3.5 passes, 7 make 2) 8 rows of W over 7 subgroups took 22.7, 23.3 and 23.4 us at
# 2, 3 and 4 rows of x against "prew"'s 23.9, 25.4 and 28.0 (over 4 subgroups 25.8, 28.4-28.9, 28.5), 4 rows of W
# over 7 subgroups 28.8 and 29.4 at 5 and 6 rows against 30.8 and 31.0, and 4 rows over 4 subgroups 31.9 at 8 rows
# against 32.4 (8 rows of W) and 35.1 (7 subgroups); at 14336 x 4096 (one pass of 4 subgroups) 8 rows of W over 4
# subgroups 23.0 at 4 rows against "prew"'s 29.6 (over 7: 28.7), 4 over 4 30.6 at 8 rows against 31.6. q4_0 gained
# nothing certain from balancing at 3 and 4 rows (15.3 against 15.9, 17.2 against 16.7).
#
# q4_0 then moved to this product from one row, balanced to K up to 2 rows.  Timed on an H200, two runs in one call
# (``benchmarks/gemv_xregs_sweep.py``, ``benchmarks/results/gemv-xregs-one-row-h200-2026-11-29.md``): at 4096 x
# 14336, 8 rows of W over 7 subgroups took 12.1 and 12.1 us at one row against "prew" over 2 x 2's 12.7 and 12.5,
# 13.6-14.5 at 2 rows against 14.4; at 14336 x 4096, 8 over 4 took 12.1-12.6 at one row against 13.1, 13.3-14.0 at
# 2 against 16.0.  A launch's warps in all mattered more than the split: 16 rows of W over 7 subgroups (half the
# warps) took 13.8-18.3 at one row, over 14 subgroups 11.8-12.4.  q8_0 at one row gained 0-3% and keeps "prew".
# Against the default before ("prew", 4 x 4 at one row), 400 calls back to back at 4096 x 14336, two runs each in
# one call: one row 12.5, 12.5 -> 11.8, 12.1 us, two rows 14.6, 14.6 -> 14.0, 14.0
# (``ops_llm-q4one-stream-{base,new}{1,2}-4096x14336-h200-2026-11-29.md``; more shapes in docs/benchmarks.md).
#
# q4_K then moved to this product from one row, once a lane took a quarter of a block (two sub-blocks' 64 values, the
# head's scales decoded once for them) instead of an eighth.  Timed on an H200, in two calls of
# ``benchmarks/gemv_xregs_sweep.py`` (``benchmarks/results/gemv-xregs-q4k-quarter-h200-2026-11-29.md``), us a call at
# 4096 x 14336 against the default before ("pre" 4 x 4 to 4 rows, "xregs" 4 x 4 with an eighth a lane from 5): one row
# 8 rows of W over 7 subgroups (4 balanced to K) 12.3-12.8 against 14.7, two rows 8 over 4 13.4-13.6 against 16.5-16.6
# (over 7: 14.6-14.9), four rows 18.4 against 23.3-23.6, and 16 over 4 from 5 rows: 22.8, 22.4-22.8 and 29.9 at 5, 6
# and 8 rows against 24.3, 27.2 and 33.7; at 14336 x 4096 (64 pieces of K: two subgroups, :func:`GX.fit_split`) one row
# 12.6 against 15.0, two 14.8 against 18.0; at 4096 x 4096 two and four rows level with the eighth a lane (8.8-8.9 and
# 10.4-10.5 us).  Against the release before (21ce93a), 400 calls back to back, two runs each in one call
# (``ops_llm-q4k-quarter-{base,new}*-h200-2026-11-29.md``): 4096 x 14336 at 1, 2, 4 and 8 rows 15.0-15.3 -> 12.3,
# 16.7-16.8 -> 13.9-15.0, 22.2-22.5 -> 18.8 and 33.3-33.5 -> 29.4-29.9 us; 14336 x 4096 15.1 -> 12.2 and 17.6 -> 14.9.
# A format's entries: (rows of x from which the entry applies, rows of W a workgroup, subgroups a workgroup).
#
# q4_K from 5 rows then moved from 16 rows of W over 4 subgroups to 8 over 2.  16 x 4 had been the fastest at 4096 x
# 14336 and 4096 x 8192, and where K = 2048 or 4096 leaves it fewer busy subgroups (fitted to 1 or 2) it had already
# taken 8 rows of W: 4096 x K weights, us at 5, 6 and 8 rows of x (``benchmarks/gemv_xregs_sweep.py --formats q4_K
# --rows 5,6,8 --layouts 16x1,16x2,16x4,8x1,8x2,8x4 --unrolls 0``,
# ``benchmarks/results/gemv-xregs-q4k-smallk-h200-2026-11-29.md``): K = 4096 16 x 2 13.8, 13.5, 16.1 against 8 x 2
# 11.1, 11.0, 12.7; K = 2048 16 x 1 13.2, 19.4, 15.3 against 8 x 1 9.8, 9.9, 11.3; K = 8192 16 x 4 15.1, 14.0, 17.9
# against 8 x 4's 15.5, 15.7, 19.0.  At the shapes of larger models 16 x 4 fell behind (H200,
# ``benchmarks/gemv_xregs_sweep.py --formats q4_K --rows 5,6,8 --layouts 16x4,8x4,16x2,8x2,4x4 --unrolls 0``,
# ``benchmarks/results/gemv-xregs-q4k-shapes-h200-2026-11-29.md``), 8 x 2 against 16 x 4: 8192 x 28672 88.6, 74.8,
# 105.3 against 100.3, 78.2, 120.2; 3584 x 18944 28.6, 30.2, 37.5 against 31.4, 32.9, 47.3; 28672 x 8192 72.0, 73.0,
# 105.2 against 73.9, 67.8, 109.4; and 4096 x 14336 (the quarter block's sweep) 23.8, 25.3, 31.3 against 22.8, 22.8,
# 29.9: 6% less in all, at most 11% more at one shape where 16 x 4 took up to 26% more at another.
XREGS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "q4_0": ((1, 8, 4),), "q8_0": ((2, 8, 4), (5, 4, 4)), "q4_K": ((1, 8, 4), (5, 8, 2))}
XREGS_BALANCED: dict[str, int] = {"q4_0": 2, "q8_0": 6, "q4_K": 1}   # up to how many rows of x the subgroups are
# balanced to K; past those rows they are only fitted to K (:func:`coopdsl.ops.gemv_xregs.fit_split`)
# Small products at one row of x are bound by their launches, not their bytes: with M and K at most SMALL_INLINE's,
# the default rounds x to 8 bits inside the product ("inline", one launch) with 2 rows of W a group for M up to 2048,
# else 4, over 4 subgroups.  Timed on an H200, every candidate in one process each (``benchmarks/ops_llm.py --tune``,
# ``benchmarks/results/ops_llm-small-tune-{1024x4096,4096x4096}-h200-2026-11-29.md``, 200 calls back to back): at
# 1024 x 4096 "inline" 2 x 4 took 4.6, 4.9 and 4.8 us for q4_0, q8_0 and q4_K where the default before was not among
# the six fastest (5.6, 6.1 and 5.3 us or more); at 4096 x 4096 "inline" 4 x 4 took 7.0, 8.0 and 7.6 against 7.6
# (q4_0's default kernel), 8.6 and 8.4 or more.  At two rows 4096 x 4096 kept its default (q4_0 "xregs" 8.1 us, the
# fastest); larger products keep theirs ("xregs" or "prew" from 4096 x 14336 on, ``gemv.XREGS``).  Against the
# default before, 400 calls back to back, two runs each in one call: 1024 x 4096 6.9-7.3 -> 4.6-4.9 us, 4096 x 4096
# 7.9-9.6 -> 7.0-7.8 (``ops_llm-small-{base,new}{1,2}-{1024x4096,4096x4096}-h200-2026-11-29.md``).
SMALL_INLINE = (4096, 4096)   # (M, K) at most, one row of x


def xregs_layout(fmt: str, nx: int, k: int) -> tuple[int, int] | None:
    """(rows of W a workgroup, subgroups a workgroup) of :data:`XREGS`'s entry for ``nx`` rows of x in ``fmt`` and
    K = ``k``, with the subgroups balanced to K (:func:`coopdsl.ops.gemv_xregs.balanced_split`) up to
    :data:`XREGS_BALANCED`'s rows, past them no more than K keeps busy (:func:`coopdsl.ops.gemv_xregs.fit_split`);
    None where no entry applies (f16 and bf16 weights, fewer rows than the first entry's, more than
    :data:`coopdsl.ops.gemv_xregs.MAX_ROWS_X`).  An unknown format, rows outside 1 .. 16 or K below 1 is a
    ValueError."""
    choice_name("gemv.xregs_layout", "weight format", fmt, FORMATS)
    count("gemv.xregs_layout", "rows of x", nx, 1, MAX_ROWS_X)
    count("gemv.xregs_layout", "k", k, 1)
    if nx > GX.MAX_ROWS_X:
        return None
    entries = [e for e in XREGS.get(fmt, ()) if e[0] <= nx]
    if not entries:
        return None
    _, rows, split = entries[-1]
    if nx <= XREGS_BALANCED.get(fmt, 0):
        return rows, GX.balanced_split(fmt, k, split)
    return rows, GX.fit_split(fmt, k, split)


def choice(fmt: str, nx: int, q8: bool | None = None, m: int | None = None, k: int | None = None,
           dev: Any = None) -> Way:
    """(how x is read, rows of W a group owns, subgroups a group) for weights in ``fmt`` and ``nx`` rows of x:
    :data:`CHOICE`'s, or with ``q8`` (True: x rounded to 8 bits; False: x as given) the other way's of
    :data:`OTHER` where the default is not of that kind.  Given the weights' M and K (and the GPU ``dev``, None
    for the interpreter), the default (``q8`` None) is ``("mma", depth, split)`` from :data:`MMA`'s rows of x on,
    where :mod:`coopdsl.ops.gemv_mma` takes the problem and the device has its matrices, and (``q8`` not False)
    ``("xregs", rows, split)`` from :data:`XREGS`'s rows of x on (:func:`xregs_layout`), where
    :mod:`coopdsl.ops.gemv_xregs` takes it; but one row of x with M and K within :data:`SMALL_INLINE` (q4_0, q8_0,
    q4_K) is ``("inline", 2, 4)`` (M up to 2048) or ``("inline", 4, 4)``, one launch.  An unknown ``fmt``, ``nx``
    outside 1 .. 16, or ``m`` / ``k`` below 1 is a ValueError (a ``fmt`` that is not a string a TypeError)."""
    choice_name("gemv.choice", "weight format", fmt, FORMATS)
    count("gemv.choice", "rows of x", nx, 1, MAX_ROWS_X)
    for name, v in (("m", m), ("k", k)):
        if v is not None:
            count("gemv.choice", name, v, 1)
    if q8 is None and m is not None and k is not None and fmt in MMA and nx >= MMA[fmt][0] and \
            GM.takes(fmt, m, k) and GM.device_takes(dev, GM.cols(nx)):
        return ("mma", MMA[fmt][1], MMA[fmt][2])
    if q8 is not False and nx == 1 and m is not None and k is not None and fmt in INLINE_FORMATS and \
            m <= SMALL_INLINE[0] and k <= SMALL_INLINE[1]:
        return ("inline", 2 if m <= 2048 else 4, 4)
    layout = xregs_layout(fmt, nx, k) if q8 is not False and k is not None and GX.takes(fmt, nx, k) else None
    if layout is not None:
        return ("xregs", *layout)
    way = CHOICE[fmt, bucket(nx)]
    if way[0] == "prew" and (k is None or k % 64):   # whole blocks as words: K a multiple of 64; else 16-bit reads
        way = ("pre" if fmt in Q8_FORMATS else "inline", way[1], way[2])
    if q8 is None or (way[0] != "f32") == q8:
        return way
    if (fmt, bucket(nx)) not in OTHER:
        raise ValueError(f"gemv: 8-bit activations serve {', '.join(sorted({f for f, _ in OTHER}))} weights, "
                         f"not {fmt}")
    return OTHER[fmt, bucket(nx)]


def grid(m: int, fmt: str, nx: int, rows: int | None = None, split: int | None = None,
         q8: bool = False) -> tuple[int, int, int]:
    """The workgroups a launch for M rows of W takes (``rows``/``split`` default to :func:`choice`'s for ``q8``)."""
    _, dr, ds = choice(fmt, nx, q8)
    rows, split = rows or dr, split or ds
    return (-(-m // (rows * (WG // 32) // split)), 1, 1)


PRE_WAYS = ("pre", "prew", "xregs")   # the ways whose x is rounded to 8 bits by quantize_kernel first


def kernel(fmt: str, nx: int, x_f16: bool = False, rows: int | None = None, split: int | None = None,
           how: str = "f32", unroll: int | None = None) -> cd.Kernel:
    """The GEMV kernel for weights in ``fmt``, ``nx`` rows of x (1 .. 16) and the way ``how`` of
    :data:`~coopdsl.ops.gemv_kernels.WAYS` (:func:`choice` names one): "f32" reads x as given, f32 (or f16 with
    ``x_f16``); built by :func:`coopdsl.ops.gemv_kernels.build` once the layout is known.

    A group of ``split`` subgroups (default :func:`choice`'s) owns ``rows`` rows of W; its lanes walk
    along the rows together, lane ``i`` reading unit ``i`` of each (:data:`~coopdsl.ops.gemv_kernels.UNITS`: 16
    bytes of f16, a quarter of a q4_0/q8_0 block, an eighth of a q4_K block), so that one load instruction of a
    subgroup reads a contiguous span.  Each step a lane decodes its unit of every row into registers
    once, then reads its piece of each row of x once for all of them; the step loop carries an unroll
    hint so that the loads of consecutive steps can be in flight together.  Subgroup sums, then (with
    ``split`` > 1) a sum over the group through shared memory, end each output.

    "inline" (q4_0, q8_0, q4_K): x is rounded to 8 bits here, each lane its own unit's values with one scale
    (``max |x| / 127``) for the unit's 8 values (q4_0, q8_0) or for each 16 (q4_K), and each unit of a row is
    integer dot products of four 8-bit lanes (``cd.dot4x8``); q4_K's ``-m x`` terms use x unrounded.

    "pre" (q4_0, q4_K): x comes quantized to 8 bits by :func:`quantize_kernel`
    (:data:`~coopdsl.ops.gemv_q8.Q8_WORDS` i32 words a block of 32: four lanes a word, then the f32 bits of the
    scale ``d`` and of ``d * sum``), and a unit is two (q4_0) or eight (q4_K) integer dot products of four 8-bit
    lanes (``cd.dot4x8``), as ggml's ``mul_mat_vecq`` does.

    "prew" (q4_0, q8_0; x from :func:`quantize_kernel` as for "pre"; launch with K a multiple of 64 and W viewed
    as 32-bit words): a unit is a whole block, read as the five (q4_0) or nine (q8_0) 32-bit words that
    hold it (two blocks are 9 or 17 words, 4-byte aligned), and eight integer dot products; for q4_0 five loads a
    block of a row instead of twelve 16-bit ones."""
    GK.check(fmt, nx, how)
    _, dr, ds = choice(fmt, nx, how != "f32")
    return GK.build(fmt, nx, x_f16, rows or dr, split or ds, how, unroll)


_BLOCKS = {"f16": (1, 2), "bf16": (1, 2), "q4_0": (32, 18), "q8_0": (32, 34), "q4_K": (256, 144)}
_WORDS: dict[str, np.dtype] = {"f16": np.dtype(np.uint32), "bf16": np.dtype(np.uint32), "q4_K": np.dtype(np.uint32),
          "q4_0": np.dtype(np.uint16), "q8_0": np.dtype(np.uint16)}
_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)


def block_shape(fmt: str) -> tuple[int, int]:
    """(elements, bytes) of one block of ``fmt`` (one 16-bit value for f16/bf16)."""
    return _BLOCKS[fmt]


def word_view(w: Any, fmt: str) -> Any:
    """Weights as the words the kernel of ``fmt`` reads them in (``uvec4`` of f16/bf16 pairs or of q4_K blocks,
    16-bit words of the 2-byte aligned q4_0/q8_0 blocks): a view, no copy, of a numpy array
    or a resident ``runtime.Array``."""
    word = _WORDS[fmt]
    if isinstance(w, np.ndarray):
        v = np.ascontiguousarray(w).view(word).reshape(-1)
        return v.reshape(-1, 4) if word.itemsize == 4 else v
    return w if w.dtype == word else w.view(word)


_LAUNCHES: dict[tuple[str, int, bool, int, Way], tuple[cd.Kernel, tuple[int, int, int]]] = {}  # (kernel, grid)
_SCRATCH: dict[tuple[int, int | tuple[int, ...], str], Any] = {}   # (id(device), values or shape, dtype) -> an array


def gemv(w: Any, x: Any, fmt: str, *, out: Any = None, device: Any = None, q8: bool | None = None,
         tune: bool = False) -> Any:
    """``y = x W^T`` (float32, ``x.shape[0]`` x M) for 1 to 16 rows of float32 or float16 ``x`` (N x K).

    ``w`` is M x K float16 (``fmt="f16"``), uint16 bf16 bit patterns (``"bf16"``), or the
    uint8 blocks of :func:`coopdsl.ops.quant.quantize`; K must be a multiple of 8 (f16/bf16)
    or of the block size.  ``w``, ``x`` and ``out`` may be numpy or resident arrays
    (``coopdsl.runtime``); ``device`` as ``Kernel.launch``.

    ``q8``: whether x is rounded to 8 bits a value and multiplied with integer dot products (``cd.dot4x8``),
    as ggml's ``mul_mat_vecq`` does on NVIDIA.  None (default): :func:`choice`'s way for the format, the rows
    of x and M and K: x as given for f16 and bf16 to 2 rows, 8 bits for q4_0, q8_0 and q4_K, rounded by a
    first kernel (:func:`quantize_kernel`, one scale per block of 32 values, ggml's q8_1) or, for one row of a
    small product (:data:`SMALL_INLINE`), inside the product's kernel (one scale per 8 values, 16 for q4_K).  The
    rounding adds an error of about 5e-3 of the largest output, at most about 1e-3 of ``|x| @ |W|.T`` output
    by output (normalized squared error 3e-5 to 4e-5; ggml's tests allow 5e-4; docs/ops.md, "Linear
    layers").  From :data:`MMA`'s rows of x on (W of 16 rows or
    more, K a multiple of 64, a device with 16 x 8 x 16 f16 cooperative matrices), the default is
    :mod:`coopdsl.ops.gemv_mma`'s product on cooperative matrices instead, x (and bf16 weights) rounded to f16
    (about 2e-4 relative).
    ``q8=False`` keeps x as it is (exact up to
    f32 sums); ``q8=True`` on f16/bf16 weights is an error.

    ``tune=True`` (GPU): the first call of a problem (format, rows of x, x's type, ``q8``, M, K) times
    :data:`CHOICE`'s way and layout and the others of :func:`candidates` on the device, each as
    :data:`STREAM_CALLS` calls back to back in one command buffer (:func:`stream_ms`), and keeps the fastest
    in the autotune cache (``docs/autotune.md``); later calls, with or without ``tune``, use the stored
    choice.  On the interpreter nothing is timed or read."""
    launches, y = plan(w, x, fmt, out=out, device=device, q8=q8, tune=tune)
    hot.run(launches, "gemv")
    return y


WEIGHT_DTYPES: dict[str, np.dtype] = {"f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
                                      **{f: np.dtype(np.uint8) for f, (qk, _) in _BLOCKS.items() if qk > 1}}


def check_weight_type(op: str, w: Any, fmt: str) -> None:
    """A ValueError (naming ``op``) unless ``w``'s dtype is the one weights in ``fmt`` come as
    (:data:`WEIGHT_DTYPES`: float16, uint16 bf16 bit patterns, uint8 blocks): the bytes of one format read as
    another would give wrong numbers, not an error."""
    if np.dtype(w.dtype) != WEIGHT_DTYPES[fmt]:
        raise ValueError(f"{op}: {fmt} weights are {WEIGHT_DTYPES[fmt]} arrays, got {np.dtype(w.dtype)}")


def check_weights(op: str, w: Any, fmt: str, k: int, multiple: int) -> None:
    """A ValueError (naming ``op``) unless x's K is a multiple of ``multiple`` (the block, or what a kernel reads at
    once) and ``w`` holds rows of K values in ``fmt``: the one check of a weight row's bytes, for :func:`plan` and
    ``ops.linear``'s prefill products."""
    qk, nbytes = _BLOCKS[fmt]
    if k % multiple:
        unit = f"blocks of {qk} values" if qk > 1 else f"read {multiple} at a time" if multiple > 1 else "values"
        raise ValueError(f"{op}: x's K = {k} is not a multiple of {multiple} ({fmt} weights: {unit})")
    row_bytes = k // qk * nbytes
    have = int(w.shape[1]) * np.dtype(w.dtype).itemsize
    if have != row_bytes and qk == 1:      # (f16 / bf16: one value an element, so say it in values)
        raise ValueError(f"{op}: w {np.dtype(w.dtype)} {tuple(w.shape)} has K = {int(w.shape[1])} {fmt} values a row, "
                         f"but x has K = {k}")
    if have != row_bytes:
        raise ValueError(f"{op}: w {np.dtype(w.dtype)} {tuple(w.shape)} has {have} bytes a row, but a row of K = {k} "
                         f"{fmt} values (x's K) has {row_bytes}")


def plan(w: Any, x: Any, fmt: str, *, out: Any = None, device: Any = None, q8: bool | None = None,
         tune: bool = False, op: str = "gemv") -> tuple[list[hot.Launch], Any]:
    """The launches :func:`gemv` makes (checked, in order) and the array they write ``y`` into; ``op`` names
    the caller in error messages."""
    w, x = operand(op, "w", w), operand(op, "x", x)
    out = operand(op, "out", out, optional=True)
    q8, tune = flag_or_none(op, "q8", q8), flag(op, "tune", tune)
    check_device(op, device, (w, x, out))
    choice_name(op, "weight format", fmt, FORMATS)
    check_weight_type(op, w, fmt)
    matrices(op, x, w)
    qk, _ = _BLOCKS[fmt]
    n, k = x.shape
    m = w.shape[0]
    if not 1 <= n <= MAX_ROWS_X:
        raise ValueError(f"{op}: x has {n} rows; the decode kernels take 1 to {MAX_ROWS_X} (ops.linear takes more)")
    check_weights(op, w, fmt, k, max(qk, 8))
    if k == 0 or m == 0:
        raise ValueError(f"{op}: x {tuple(x.shape)} and w {tuple(w.shape)} leave nothing to multiply (K or M is 0); "
                         f"ops.linear returns the empty or zero result for them")
    if out is not None:
        check_out(op, out, (n, m), np.float32)
    w = word_view(w, fmt)
    x_f16 = x.dtype == _F16
    if not x_f16 and x.dtype != _F32:
        raise ValueError(f"{op}: x must be float32 or float16, got {x.dtype}")
    y = new_out((n, m), np.float32, x) if out is None else out
    if isinstance(x, np.ndarray):
        x = np.ascontiguousarray(x).reshape(-1, 4)
    dev = gpu_of(device, (w, x, y))
    way = choice(fmt, n, q8, m, k, dev)
    if dev is not None:
        prob = f"fmt={fmt},nx={n},x={'f16' if x_f16 else 'f32'},q8={q8},m={m},k={k}"
        stored, picked = _TUNED.lookup(prob, dev)
        if tune and not stored:
            wr, xr, yr = resident((w, x, y), dev)
            clock_up = [CLOCK_UP_FIRST_MS]   # the first candidate (the default) after the host's work: a second

            def time_call(c: tuple[Any, ...] | None) -> float:
                c = (str(c[0]), int(c[1]), int(c[2])) if c else way
                ms = stream_ms(_launches(wr, xr, yr, fmt, n, m, k, x_f16, c, device), dev, clock_up_ms=clock_up[0])
                clock_up[0] = CLOCK_UP_MS
                return ms

            cands = candidates(fmt, n, q8, m, k, dev)
            for c in (way, *cands):   # every kernel compiled first: no compile between timings lets the clocks fall
                for kern, *_ in _launches(wr, xr, yr, fmt, n, m, k, x_f16, c, device):
                    try:
                        kern.compile()
                    except Exception:  # noqa: BLE001 - such a candidate fails again when timed, and is skipped
                        pass
            picked = _TUNED.tune(prob, dev, time_call, cands)
        if picked:
            way = (str(picked[0]), int(picked[1]), int(picked[2]))
    return _launches(w, x, y, fmt, n, m, k, x_f16, way, device), y


_TUNED = op_tune.Choices("ops.gemv", field="way")
LAYOUTS = ((2, 2), (4, 4), (2, 4), (4, 2), (1, 4), (8, 2), (8, 4))   # what gemv(..., tune=True) times


def candidates(fmt: str, nx: int, q8: bool | None = None, m: int | None = None, k: int | None = None,
               dev: Any = None) -> list[tuple[str, int, int]]:
    """What ``gemv(..., tune=True)`` times besides :func:`choice`'s: each way x may be read in (as given unless
    ``q8`` is True; 8 bits by each kernel that takes it unless ``q8`` is False) with each of :data:`LAYOUTS`, and
    (``q8`` None, 2 rows of x or more, M and K that :mod:`coopdsl.ops.gemv_mma` takes) its products on
    cooperative matrices with each of its ``DEPTHS`` and ``SPLITS``, and (``q8`` not False, K given,
    :func:`coopdsl.ops.gemv_xregs.takes`) ``("xregs", rows, split)`` for each of its ``LAYOUTS``, and each of those
    with its subgroups balanced to K (:func:`coopdsl.ops.gemv_xregs.balanced_split`) where that differs."""
    ways: list[str] = [] if q8 is False else [w for w in ("pre", "prew", "inline") if (w == "pre" and fmt in Q8_FORMATS)
                          or (w == "prew" and fmt in WORDS_FORMATS and k is not None and k % 64 == 0)
                          or (w == "inline" and fmt in INLINE_FORMATS)]
    if q8 is not True:
        ways = ["f32", *ways]
    found = [(how, rows, split) for how in ways for rows, split in LAYOUTS]
    if q8 is None and nx >= 2 and m is not None and k is not None and GM.takes(fmt, m, k) and \
            GM.device_takes(dev, GM.cols(nx)):
        found += [("mma", depth, split) for depth in GM.DEPTHS for split in GM.SPLITS]
    if q8 is not False and k is not None and GX.takes(fmt, nx, k):
        found += [("xregs", rows, split) for rows, split in GX.LAYOUTS]
        balanced = (("xregs", rows, GX.balanced_split(fmt, k, split)) for rows, split in GX.LAYOUTS)
        found += [w for w in dict.fromkeys(balanced) if w not in found]
    return found


STREAM_CALLS = 200   # calls a tuning candidate is timed over, back to back in one command buffer
CLOCK_UP_FIRST_MS, CLOCK_UP_MS = autotune.CLOCK_UP_MS, 50.0   # untimed work before the first candidate, each other


def resident(arrays: tuple[Any, ...], dev: Any) -> tuple[Any, ...]:
    """The arrays on ``dev``: numpy ones copied there (for timing, so that no upload is timed)."""
    from .. import runtime

    return tuple(runtime.array(a, device=dev) if isinstance(a, np.ndarray) else a for a in arrays)


def stream_ms(launches: list[hot.Launch], dev: Any, calls: int = STREAM_CALLS,
               clock_up_ms: float = CLOCK_UP_MS) -> float:
    """GPU time a call (ms) of ``launches`` on resident arrays run ``calls`` times back to back in one command
    buffer, as a decoding loop runs them (a first kernel and the product, with the barrier between, counted
    as they run, not each timed alone): the wall time of the submission and its wait, over ``calls``.
    ``clock_up_ms`` of untimed work on the product first bring the clocks up (``autotune.BenchTimer.start``;
    an idle H100 needs about half a second)."""
    import time

    from .. import runtime

    kern, grd, args, kw = launches[-1]
    autotune.bench_timer(warmup=0, repeat=1, clock_up_ms=clock_up_ms).start(
        kern, grd, args, {key: v for key, v in kw.items() if key != "device"}, dev)
    with runtime.batch(dev, flush_every=None) as b:
        hot.run(launches)
        b.submit()
        for _ in range(calls):
            hot.run(launches)
        t = time.perf_counter()
        b.submit()
        return (time.perf_counter() - t) / calls * 1e3


def gpu_of(device: Any, arrays: tuple[Any, ...]) -> Any:
    """The GPU a launch with ``device`` and ``arrays`` runs on, or None on the interpreter."""
    if device is None or isinstance(device, str):
        from ..interp import wants_cpu

        if wants_cpu(device):
            return None
        if device is None:
            for a in arrays:
                if not isinstance(a, np.ndarray):
                    return a.device
            from .. import runtime

            return runtime.default_device()
    return device


def _launches(w: Any, x: Any, y: Any, fmt: str, n: int, m: int, k: int, x_f16: bool, way: tuple[str, int, int],
              device: Any) -> list[hot.Launch]:
    """The launches of one way and layout: the 8-bit rounding of x first for the ways of :data:`PRE_WAYS`, then the
    product."""
    how, rows, split = way
    if how == "mma":
        return _mma_launches(w, x, y, fmt, n, m, k, x_f16, rows, split, device)
    pre = how in PRE_WAYS
    launch = _LAUNCHES.get((fmt, n, x_f16, m, way))
    if launch is None:
        launch = _LAUNCHES[fmt, n, x_f16, m, way] = (
            (GX.kernel(fmt, n, rows, split), GX.grid(m, rows)) if how == "xregs" else
            (kernel(fmt, n, x_f16 and not pre, rows, split, how), grid(m, fmt, n, rows, split)))
    launches: list[hot.Launch] = []
    if how in ("prew", "xregs"):   # the blocks as 32-bit words (q4_0 / q8_0: rows of 36- or 68-byte pairs of blocks;
        # q4_K's uvec4 kernels take the same words)
        w = w.view(np.uint32)
    if pre:
        blocks = n * k // 32
        xq = scratch(x, blocks * Q8_WORDS, np.int32)
        launches.append((quantize_kernel(x_f16), q8_grid(blocks), (x, xq, blocks),
                         {"device": device}))
        x = xq.reshape(-1, 4) if isinstance(xq, np.ndarray) else xq   # the products read ivec4s
    launches.append((launch[0], launch[1], (w, x, y), {"M": m, "K": k, "device": device}))
    return launches


def scratch(x: Any, n: int | tuple[int, ...], dtype: Any) -> Any:
    """A work array of ``n`` values (or of shape ``n``) of ``dtype`` beside x: numpy for numpy x, else one
    resident array kept per device, shape and type (calls in one batch run in order, so that they may share
    it)."""
    if isinstance(x, np.ndarray):
        return np.empty(n, dtype)
    key = (id(x.device), n, np.dtype(dtype).str)
    s = _SCRATCH.get(key)
    if s is None or s.freed or s.device is not x.device:  # (an id a dead device had)
        from .. import runtime

        s = _SCRATCH[key] = runtime.empty(n, dtype, device=x.device)
    return s


def _mma_launches(w: Any, x: Any, y: Any, fmt: str, n: int, m: int, k: int, x_f16: bool, depth: int, split: int,
                  device: Any) -> list[hot.Launch]:
    """x to f16 rows padded with zeros (:func:`coopdsl.ops.gemv_mma.x_kernel`), then the product on cooperative
    matrices."""
    np_ = GM.cols(n)
    xh = scratch(x, np_ * k, np.float16)
    if isinstance(xh, np.ndarray):
        xh = xh.reshape(-1, 4)
    vecs = np_ * k // 4
    if fmt in ("q4_0", "q8_0"):       # the blocks as 32-bit words (rows of 36 or 68 bytes a pair of blocks)
        w = w.view(np.uint32)
    return [(GM.x_kernel(x_f16), (-(-vecs // 128), 1, 1), (x, xh), {"N": n, "NP": np_, "K4": k // 4, "device": device}),
            (GM.kernel(fmt, np_, split, depth), GM.grid(m), (w, xh, y), {"M": m, "K": k, "N": n, "device": device})]
