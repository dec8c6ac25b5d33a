"""The decoding products with x held in registers (coopdsl/ops/gemv_xregs.py): q4_0 / q8_0 weights against 1 to 8
rows of x rounded to 8 bits per block of 32, on the CPU interpreter against numpy and against gemv's other 8-bit
ways; M not a multiple of a workgroup's rows, K not a multiple of a workgroup's slice of it; the SPIR-V; the
errors; and where ``gemv`` picks them."""

from __future__ import annotations

import numpy as np
import pytest

from coopdsl.ops import gemv as G
from coopdsl.ops import gemv_xregs as GX
from coopdsl.ops import hot
from tests.conftest import compile_checked, weights


def _q8_1(x: np.ndarray) -> np.ndarray:
    """x as quantize_kernel rounds it (per block of 32: d = max |x| / 127, levels round(x / d))."""
    b = x.reshape(x.shape[0], -1, 32).astype(np.float32)
    d = np.abs(b).max(axis=-1, keepdims=True) / np.float32(127.0)
    inv = np.where(d == 0, 0, np.float32(127.0) / np.where(d == 0, 1, d * 127))
    return (np.round(b * inv) * d).reshape(x.shape)


def _run(way, fmt, w, x, m, k):
    n = x.shape[0]
    y = np.full((n, m), np.nan, np.float32)
    hot.run(G._launches(G.word_view(w, fmt), x.reshape(-1, 4), y, fmt, n, m, k, False, way, "cpu"))
    return y


@pytest.mark.parametrize("fmt", ["q4_0", "q8_0"])
@pytest.mark.parametrize(("m", "k", "n", "rows", "split"), [
    (21, 320, 1, 8, 4),      # 10 blocks: most lanes past K
    (37, 2176, 3, 16, 2),    # 68 blocks: the second slice of 64 partly past K
    (70, 192, 5, 64, 1),     # one subgroup a workgroup: no shared-memory sum
    (9, 1088, 8, 4, 8),      # eight subgroups, 34 blocks
    (33, 128, 7, 32, 4),     # rows of x not a power of two: a batch's sums padded to 32
    (4, 64, 2, 4, 2),        # M = one workgroup's rows
])
def test_matches_numpy_on_x_rounded_per_block(fmt, m, k, n, rows, split):
    rng = np.random.default_rng(m * k + n)
    w, wd = weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = _run(("xregs", rows, split), fmt, w, x, m, k)
    ref = _q8_1(x) @ wd.T                          # the same products, on x as it was rounded to 8 bits
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    words = _run(("prew", 2, 2), fmt, w, x, m, k)   # the products of gemv's other kernel on the same x
    assert np.abs(y - words).max() <= 1e-5 * np.abs(ref).max()


@pytest.mark.parametrize(("m", "k", "n", "rows", "split"), [
    (21, 512, 1, 8, 4),      # 8 quarters of blocks: most lanes past K
    (37, 6144, 3, 16, 2),    # 96 quarters: the second slice of 64 half past K
    (33, 2304, 5, 32, 1),    # one subgroup a workgroup: 36 quarters, a second pass of 4
    (9, 256, 8, 4, 8),       # one block: seven subgroups with nothing to read
])
def test_q4_K_matches_numpy_on_x_rounded_per_block(m, k, n, rows, split):
    """q4_K, a lane a quarter of a block (two sub-blocks against two of x's blocks): the products of "pre" (x
    rounded per block of 32 first) up to f32 sums."""
    rng = np.random.default_rng(m * k + n)
    w, wd = weights("q4_K", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = _run(("xregs", rows, split), "q4_K", w, x, m, k)
    ref = _q8_1(x) @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    assert np.abs(y - _run(("pre", 2, 2), "q4_K", w, x, m, k)).max() <= 1e-5 * np.abs(ref).max()


def test_batches_keep_a_lanes_sums_within_32():
    assert [GX.batch("q4_0", n, 32) for n in range(1, 9)] == [8, 8, 8, 8, 4, 4, 4, 4]
    assert [GX.batch("q8_0", n, 32) for n in (1, 4, 8)] == [4, 4, 4]          # nine words a row: 4 rows at most
    assert GX.batch("q4_0", 1, 4) == 4 and GX.batch("q4_0", 8, 64) == 4
    for fmt in GX.FORMATS:
        for n in range(1, GX.MAX_ROWS_X + 1):
            for rows, _ in GX.LAYOUTS:
                b = GX.batch(fmt, n, rows)
                assert rows % b == 0 and b * n <= 32


def test_the_kernel_compiles_to_integer_dot_products_and_a_reduce_scatter():
    # q4_0 at 4 rows of x, 8 rows a batch: 32 sums a lane, 5 exchanges (16 + 8 + 4 + 2 + 1 shuffles) a batch
    text = compile_checked(GX.kernel("q4_0", 4, 8, 4), r"OpSUDot %int", r"OpGroupNonUniformShuffleXor %float",
                           r"OpFunctionCall", r"OpControlBarrier", absent=(r"OpConvertSToF",))
    assert text.count("OpGroupNonUniformShuffleXor") == 31
    compile_checked(GX.kernel("q4_K", 8, 8, 4), r"OpSUDot %int", r"OpLoad %v4uint", absent=(r"OpConvertSToF",))
    text = compile_checked(GX.kernel("q8_0", 1, 16, 1), r"OpSDot %int", absent=(r"OpControlBarrier",))
    # one row of x, 4 rows a batch: 3 exchanges, then 3 more over the lanes holding the same sum; 4 batches
    assert text.count("OpGroupNonUniformShuffleXor") == 4 * (3 + 3)


def test_what_it_does_not_take_is_named():
    with pytest.raises(ValueError, match="x held in registers serves q4_0, q8_0, q4_K weights, not f16"):
        GX.kernel("f16", 1, 8, 4)
    with pytest.raises(ValueError, match="9 rows of x; x held in registers takes 1 to 8"):
        GX.kernel("q4_0", 9, 8, 4)
    with pytest.raises(ValueError, match="rows=12, split=4; x held in registers takes rows 4 .. 64"):
        GX.kernel("q4_0", 2, 12, 4)
    with pytest.raises(ValueError, match="rows=8, split=17"):
        GX.kernel("q4_0", 2, 8, 17)
    assert GX.takes("q4_0", 8, 4096) and not GX.takes("q4_0", 9, 4096) and not GX.takes("q8_0", 2, 4128)
    assert GX.takes("q4_K", 8, 4096) and not GX.takes("q4_K", 2, 4160)        # q4_K: K a multiple of 256


def test_balanced_split_leaves_the_fewest_lanes_idle_on_the_last_pass_over_k():
    assert [GX.balanced_split("q4_0", k, 4) for k in (14336, 4096, 8192, 11008, 5120, 3072)] == [7, 4, 4, 4, 5, 3]
    assert GX.balanced_split("q4_0", 14336, 8) == 14 and GX.balanced_split("q4_0", 64, 2) == 1   # (2 units: 1 busy)
    assert GX.balanced_split("q4_K", 14336, 4) == 7 and GX.balanced_split("q4_K", 4096, 4) == 2  # 224 and 64 pieces
    for fmt in GX.FORMATS:
        for k in range(256, 20000, 256):
            for split in (2, 4, 8):
                s = GX.balanced_split(fmt, k, split)
                fit = GX.fit_split(fmt, k, split)
                units = k // GX.UNIT[fmt]
                assert fit <= s < 2 * fit and fit <= split
                assert -(-units // (32 * s)) * s <= -(-units // (32 * fit)) * fit      # never more lane slots


def test_a_workgroup_gets_no_more_subgroups_than_k_keeps_busy():
    assert GX.fit_split("q4_K", 4096, 4) == 2 and GX.fit_split("q4_K", 14336, 4) == 4   # 64 and 224 pieces of 64
    assert GX.fit_split("q4_0", 4096, 4) == 4 and GX.fit_split("q4_0", 2048, 4) == 2    # 128 and 64 pieces of 32
    assert GX.fit_split("q8_0", 64, 8) == 1
    assert G.choice("q4_K", 2, None, 14336, 4096) == ("xregs", 8, 2)   # past XREGS_BALANCED's rows, still fitted
    assert G.choice("q4_K", 1, None, 14336, 4096) == ("xregs", 8, 2)


def test_q4k_from_five_rows_takes_eight_rows_of_w_over_the_subgroups_k_keeps_busy():
    # q4_K's entry from 5 rows of x is 8 rows of W over 2 subgroups; K = 2048 (32 pieces of 64) keeps one busy
    assert G.XREGS["q4_K"][-1] == (5, 8, 2)
    assert [G.xregs_layout("q4_K", n, 28672) for n in (5, 8)] == [(8, 2), (8, 2)]
    assert G.xregs_layout("q4_K", 6, 2048) == (8, 1) and G.xregs_layout("q4_K", 8, 8192) == (8, 2)
    assert G.choice("q4_K", 8, None, 8192, 28672) == ("xregs", 8, 2)
    assert G.xregs_layout("q4_K", 4, 4096) == (8, 2)      # the entry before it, fitted to K
    assert G.xregs_layout("q4_0", 8, 2048) == (8, 2)


def test_gemv_picks_it_from_its_rows_of_x_and_falls_back_where_it_does_not_apply():
    assert G.choice("q8_0", 4, None, 4096, 14336) == ("xregs", 8, 7)     # 448 units of K: two passes of 7
    assert G.choice("q8_0", 4, None, 14336, 4096) == ("xregs", 8, 4)     # 128: one pass of 4
    assert G.choice("q8_0", 6, None, 4096, 14336) == ("xregs", 4, 7)
    assert G.choice("q8_0", 8, None, 4096, 14336) == ("xregs", 4, 4)     # past XREGS_BALANCED: as the entry says
    assert G.choice("q4_0", 4, None, 4096, 14336) == ("xregs", 8, 4)     # q4_0: not balanced
    assert ("xregs", 8, 7) in G.candidates("q4_0", 4, None, 4096, 14336)  # ... but tune=True times it
    for fmt, entries in G.XREGS.items():
        first = entries[0][0]
        for i, (start, rows, split) in enumerate(entries):
            end = entries[i + 1][0] - 1 if i + 1 < len(entries) else GX.MAX_ROWS_X
            for n in (start, end):
                want = (rows, GX.balanced_split(fmt, 14336, split) if n <= G.XREGS_BALANCED.get(fmt, 0) else split)
                assert G.xregs_layout(fmt, n, 14336) == want
                assert G.choice(fmt, n, None, 4096, 14336) == ("xregs", *want)
                assert G.choice(fmt, n, True, 4096, 14336) == ("xregs", *want)
                assert G.choice(fmt, n, None, 14336, 4096) == ("xregs", rows, GX.fit_split(fmt, 4096, split))
        rows, split = G.xregs_layout(fmt, first, 14336)
        for n in (n for n in (first - 1, GX.MAX_ROWS_X + 1) if n >= 1):   # the plain kernels' way
            assert G.choice(fmt, n, None, 4096, 14336) == G.CHOICE[fmt, G.bucket(n)]
        if fmt != "q4_K":                                  # K not a multiple of 64: not as words either
            assert G.choice(fmt, first, None, 4096, 14336 + 32)[0] == ("pre" if fmt == "q4_0" else "inline")
        assert G.choice(fmt, first, False, 4096, 14336)[0] == "f32"
        assert ("xregs", rows, split) in G.candidates(fmt, first, None, 4096, 14336)
        assert not any(c[0] == "xregs" for c in G.candidates(fmt, first, False, 4096, 14336))


@pytest.mark.parametrize("n", [2, 5])
def test_q8_0_runs_it_with_subgroups_balanced_to_k_and_matches_numpy(n):
    """q8_0 from 2 rows of x, 7 subgroups at K = 7168 (224 units of K: one pass of 7, two of 4), M not a multiple
    of the workgroup's rows."""
    rng = np.random.default_rng(n)
    m, k = 21, 7168
    w, wd = weights("q8_0", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    kern = G.plan(w, x, "q8_0", device="cpu")[0][-1][0]
    assert kern.name == f"gemv_xregs_q8_0_x{n}_r{8 if n < 5 else 4}_s7"
    y = G.gemv(w, x, "q8_0", device="cpu")
    ref = _q8_1(x) @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()


@pytest.mark.parametrize("fmt", sorted(G.XREGS))
def test_gemv_runs_it_by_default_and_matches_numpy(fmt):
    rng = np.random.default_rng(5)
    m, k, n = 45, 768, 7
    w, wd = weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float16)
    name = G.plan(w, x, fmt, device="cpu")[0][-1][0].name
    assert name.startswith("gemv_xregs_")
    if fmt == "q4_K":      # 12 pieces of K: one subgroup, so 8 rows of W a workgroup, not the entry's 16
        assert name == "gemv_xregs_q4_K_x7_r8_s1"
    y = G.gemv(w, x, fmt, device="cpu")
    ref = _q8_1(x.astype(np.float32)) @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()


def test_the_sweeps_knobs_are_checked_and_named():
    """benchmarks/gemv_xregs_sweep.py's unroll hint and rows a reduction: the same sums, another kernel name."""
    rng = np.random.default_rng(9)
    m, k, n = 19, 704, 4
    w, _ = weights("q4_0", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    want = _run(("xregs", 8, 2), "q4_0", w, x, m, k)
    xq = np.empty(n * k // 32 * 12, np.int32)
    from coopdsl.ops import gemv_q8 as Q8

    Q8.quantize_kernel().launch(Q8.grid(n * k // 32), x.reshape(-1, 4), xq, n * k // 32, device="cpu")
    kern = GX.kernel("q4_0", n, 8, 2, unroll=2, bt=2)
    assert kern.name == "gemv_xregs_q4_0_x4_r8_s2_u2_b2"
    compile_checked(kern, r"OpLoopMerge %\w+ %\w+ PartialCount 2")
    y = np.zeros((n, m), np.float32)
    kern.launch(GX.grid(m, 8), G.word_view(w, "q4_0").view(np.uint32), xq.reshape(-1, 4), y, M=m, K=k, device="cpu")
    assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max()
    with pytest.raises(ValueError, match="a reduction of 3 rows of W does not divide rows=8"):
        GX.kernel("q4_0", n, 8, 2, bt=3)
    with pytest.raises(ValueError, match="holds more than 32 sums a lane at 8 rows of x"):
        GX.kernel("q4_0", 8, 8, 2, bt=8)
