"""The decode kernels (coopdsl/ops/gemv.py): y = x W^T for 1 to 16 rows of x, W in f16, bf16, q4_0, q8_0
or q4_K, against numpy on dequantized weights on the CPU interpreter; M not a multiple of the rows a
workgroup covers, and the errors for shapes they do not take."""

from __future__ import annotations

import numpy as np
import pytest

from coopdsl.ops import gemv as G
from coopdsl.ops import gemv_xregs as GX
from coopdsl.ops import hot, linear, quantize
from coopdsl.ops.quant import dequantize
from tests.conftest import compile_checked, weights


def _weights(fmt, m, k, rng):
    return weights(fmt, m, k, rng)


@pytest.mark.parametrize("fmt", G.FORMATS)
@pytest.mark.parametrize("n", [1, 2, 4, 8, 16])
def test_matches_numpy_on_the_interpreter(fmt, n):
    rng = np.random.default_rng(n)
    m, k = 21, 768 if fmt == "q4_K" else 320
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = G.gemv(w, x, fmt, device="cpu", q8=False)
    ref = x @ wd.T
    assert y.shape == (n, m)
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    way = G.choice(fmt, n, None, m, k)[0]
    if way == "mma":                   # x rounded to f16, W decoded to f16, cooperative matrices
        assert np.abs(G.gemv(w, x, fmt, device="cpu") - ref).max() <= 2e-3 * np.abs(ref).max()
    elif way != "f32":                 # by default x is rounded to 8 bits: within ggml's bound for that path
        y8 = G.gemv(w, x, fmt, device="cpu")
        assert ((y8 - ref) ** 2).sum() / (ref ** 2).sum() < 5e-4
    else:
        assert np.array_equal(G.gemv(w, x, fmt, device="cpu"), y)


@pytest.mark.parametrize("fmt", G.FORMATS)
def test_each_kernel_validates_and_reads_with_subgroup_sums(fmt):
    text = G.kernel(fmt, 2).disassemble()   # compile() ran spirv-val
    assert "OpGroupNonUniformFAdd %float %uint_3 Reduce" in text
    assert "OpCooperativeMatrix" not in text


def test_shapes_it_does_not_take_are_named():
    with pytest.raises(ValueError, match="unknown weight format 'q5_K'"):
        G.kernel("q5_K", 1)
    with pytest.raises(ValueError, match="17 rows of x; the decode kernels take 1 to 16"):
        G.kernel("f16", 17)
    with pytest.raises(ValueError, match=r"gemv: w uint8 \(4, 40\) has 40 bytes a row, but a row of K = 64 q4_0 values "
                                         r"\(x's K\) has 36"):
        G.gemv(np.zeros((4, 40), np.uint8), np.zeros((1, 64), np.float32), "q4_0", device="cpu")
    with pytest.raises(ValueError, match=r"gemv: x's K = 12 is not a multiple of 8 \(f16 weights: read 8 at a time\)"):
        G.gemv(np.zeros((4, 12), np.float16), np.zeros((1, 12), np.float32), "f16", device="cpu")
    with pytest.raises(ValueError, match=r"gemv: x's K = 32 is not a multiple of 256 \(q4_K weights: blocks of 256"):
        G.gemv(np.zeros((4, 18), np.uint8), np.zeros((1, 32), np.float32), "q4_K", device="cpu")
    with pytest.raises(ValueError, match="gemv: unknown weight format 'q5_0'"):
        G.gemv(np.zeros((4, 18), np.uint8), np.zeros((1, 32), np.float32), "q5_0", device="cpu")
    with pytest.raises(ValueError, match="gemv: x has 17 rows; the decode kernels take 1 to 16"):
        G.gemv(np.zeros((4, 64), np.float16), np.zeros((17, 64), np.float32), "f16", device="cpu")
    with pytest.raises(ValueError, match=r"gemv: x must be N x K and w M x K \(2-D"):
        G.gemv(np.zeros((4, 64), np.float16), np.zeros(64, np.float32), "f16", device="cpu")
    with pytest.raises(ValueError, match=r"gemv: out must be float32 of shape \(2, 4\), got float32 \(4, 2\)"):
        G.gemv(np.zeros((4, 64), np.float16), np.zeros((2, 64), np.float32), "f16", out=np.zeros((4, 2), np.float32),
               device="cpu")


@pytest.mark.parametrize("fmt", ["f16", "q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("rows,split", [(1, 1), (2, 4), (3, 2), (8, 1)])
def test_every_row_and_split_layout_matches_numpy(fmt, rows, split):
    rng = np.random.default_rng(rows * 10 + split)
    m, k, n = 13, 512 if fmt == "q4_K" else 256, 3
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = np.full((n, m), np.nan, np.float32)
    G.kernel(fmt, n, rows=rows, split=split).launch(G.grid(m, fmt, n, rows, split), G.word_view(w, fmt),
                                                    x.reshape(-1, 4), y, M=m, K=k, device="cpu")
    ref = x @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()


def test_layouts_are_checked():
    with pytest.raises(ValueError, match="rows=2, split=3; rows 1 .. 16, split 1, 2 or 4"):
        G.kernel("f16", 1, rows=2, split=3)


def _q8_1(x: np.ndarray) -> np.ndarray:
    """x rounded as the 8-bit activations of the q8 kernels see it (per block of 32: d = max |x| / 127)."""
    b = x.reshape(x.shape[0], -1, 32).astype(np.float32)
    d = np.abs(b).max(axis=-1, keepdims=True) / np.float32(127.0)
    inv = np.where(d == 0, 0, np.float32(127.0) / np.where(d == 0, 1, d * 127))
    return (np.round(b * inv) * d).reshape(x.shape)


@pytest.mark.parametrize("n", [1, 3, 8])
@pytest.mark.parametrize("x_f16", [False, True])
def test_q4_0_with_8_bit_activations_matches_numpy(n, x_f16):
    rng = np.random.default_rng(n)
    m, k = 21, 320
    w, wd = _weights("q4_0", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float16 if x_f16 else np.float32)
    y = G.gemv(w, x, "q4_0", device="cpu", q8=True)
    pre = G.choice("q4_0", n, True, 21, 320)[0] in G.PRE_WAYS   # x rounded per block of 32 by a first kernel
    xr = _q8_1(x.astype(np.float32)) if pre else _rounded(x.astype(np.float32), "q4_0")
    ref = xr @ wd.T                               # the same products, on x as it was rounded to 8 bits
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    exact = x.astype(np.float32) @ wd.T           # against unrounded x: ggml's test-backend-ops bound
    assert ((y - exact) ** 2).sum() / (exact ** 2).sum() < 5e-4


@pytest.mark.parametrize("fmt", ["q4_0", "q8_0"])
@pytest.mark.parametrize(("m", "k", "n", "rows", "split"), [(21, 320, 1, 4, 4), (21, 256, 3, 2, 2), (37, 640, 1, 1, 4),
                                                      (5, 128, 8, 8, 2), (70, 192, 16, 2, 1)])
def test_blocks_read_as_words_give_the_products_of_x_rounded_per_block(fmt, m, k, n, rows, split):
    """("prew", rows, split): whole q4_0 / q8_0 blocks read as 32-bit words against x rounded to 8 bits per block
    of 32 (q4_0: the same products as "pre"'s quarter blocks read as 16-bit words)."""
    rng = np.random.default_rng(m + n)
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    wv = G.word_view(w, fmt)
    ys = []
    for how in ("prew", "pre") if fmt == "q4_0" else ("prew",):
        y = np.zeros((n, m), np.float32)
        launches = G._launches(wv, x.reshape(-1, 4), y, fmt, n, m, k, False, (how, rows, split), "cpu")
        assert launches[-1][0].name == f"gemv_{fmt}_x{n}_q8" + ("w" if how == "prew" else "")
        hot.run(launches)
        ys.append(y)
    ref = _q8_1(x) @ wd.T
    assert np.abs(ys[0] - ys[-1]).max() <= 1e-5 * np.abs(ref).max()
    assert np.abs(ys[0] - ref).max() <= 1e-5 * np.abs(ref).max()


def test_q4_0_words_way_needs_k_a_multiple_of_64(monkeypatch):
    assert ("prew", 4, 4) in G.candidates("q4_0", 1, None, 64, 640) and ("prew", 4, 4) in G.candidates(
        "q4_0", 1, True, 64, 640)
    assert not any(c[0] == "prew" for c in G.candidates("q4_0", 1, None, 64, 608))
    assert ("prew", 8, 4) in G.candidates("q8_0", 2, None, 64, 640)
    assert not any(c[0] == "prew" for c in G.candidates("q4_K", 1, None, 64, 512) +
                   G.candidates("q4_0", 1, False, 64, 640))
    monkeypatch.setitem(G.CHOICE, ("q4_0", 1), ("prew", 2, 4))
    monkeypatch.setitem(G.XREGS, "q4_0", ())                     # (else gemv_xregs takes K = 640 from one row)
    monkeypatch.setattr(G, "SMALL_INLINE", (0, 0))               # (... or, this small, "inline")
    assert G.choice("q4_0", 1, None, 64, 640) == ("prew", 2, 4)
    assert G.choice("q4_0", 1, None, 64, 608) == ("pre", 2, 4)   # 19 blocks a row: not pairs of 36 bytes
    monkeypatch.setitem(G.CHOICE, ("q8_0", 2), ("prew", 8, 2))
    assert G.choice("q8_0", 3, None, 64, 608) == ("inline", 8, 2)   # q8_0's 16-bit reads: x rounded in the kernel
    compile_checked(G.kernel("q4_0", 2, how="prew"), r"OpSUDot %int", r"OpLoad %uint",
                    absent=(r"OpTypeInt 16",))
    compile_checked(G.kernel("q8_0", 2, how="prew"), r"OpSDot %int", r"OpLoad %uint",
                    absent=(r"OpTypeInt 16",))
    with pytest.raises(ValueError, match="whole blocks read as 32-bit words serve q4_0 and q8_0 weights, not q4_K"):
        G.kernel("q4_K", 1, how="prew")
    with pytest.raises(ValueError, match="unknown way 'q8' of reading x; expected one of f32, pre, prew, inline"):
        G.kernel("q4_0", 1, how="q8")


@pytest.mark.parametrize(("m", "k", "n", "rows", "split"), [(21, 512, 1, 4, 4), (21, 256, 3, 2, 2), (37, 768, 1, 1, 4),
                                                      (5, 256, 8, 8, 2), (40, 512, 16, 2, 1)])
def test_q4_K_against_x_rounded_per_block_first(m, k, n, rows, split):
    """("pre", rows, split) for q4_K: each sub-block of 32 against x rounded per block of 32 (ggml's q8_1)."""
    rng = np.random.default_rng(m + k + n)
    w, wd = _weights("q4_K", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = np.zeros((n, m), np.float32)
    launches = G._launches(G.word_view(w, "q4_K"), x.reshape(-1, 4), y, "q4_K", n, m, k, False, ("pre", rows, split),
                           "cpu")
    assert [kern.name for kern, *_ in launches] == ["quantize_q8", f"gemv_q4_K_x{n}_q8"]
    hot.run(launches)
    ref = _q8_1(x) @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    compile_checked(launches[-1][0], r"OpSUDot %int", absent=(r"OpConvertFToS",))


def test_8_bit_activations_compile_to_integer_dot_products():
    text = G.kernel("q4_0", 2, how="pre").disassemble()
    assert "OpSUDot %int" in text and "PackedVectorFormat4x8Bit" in text
    assert "OpGroupNonUniformShuffleXor" in G.quantize_kernel().disassemble()
    for fmt, how in (("q4_0", "pre"), ("q4_0", "prew"), ("q8_0", "prew"), ("q4_K", "pre")):
        # x's blocks as three 16-byte loads; each integer sum read as an f32 from MAGIC_BITS on, not converted
        compile_checked(G.kernel(fmt, 4, how=how), r"OpLoad %v4int", r"OpBitcast %float", r"OpFSub %float",
                        absent=(r"OpConvertSToF",))
    with pytest.raises(ValueError, match="x rounded to 8 bits by quantize_kernel first serves q4_0, q4_K weights, not "
                                         "q8_0"):
        G.kernel("q8_0", 1, how="pre")
    with pytest.raises(ValueError, match="x rounded to 8 bits in the kernel serves q4_0, q8_0, q4_K weights, not f16"):
        G.kernel("f16", 1, how="inline")
    with pytest.raises(ValueError, match="8-bit activations serve q4_0, q4_K, q8_0 weights, not bf16"):
        G.gemv(np.zeros((4, 64), np.uint16), np.zeros((1, 64), np.float32), "bf16", device="cpu", q8=True)


def _rounded(x: np.ndarray, fmt: str) -> np.ndarray:
    """x as the inline 8-bit kernels round it: one scale (max |x| / 127) for each lane's unit of values -- 8 of
    a q4_0 block (4 p .. 4 p + 3 and 16 + 4 p ..), 8 consecutive for q8_0, 16 consecutive for q4_K."""
    n, k = x.shape
    if fmt == "q4_0":
        idx = np.arange(k).reshape(-1, 2, 4, 4).transpose(0, 2, 1, 3).reshape(-1, 8)   # block, quarter, half
    else:
        idx = np.arange(k).reshape(-1, 8 if fmt == "q8_0" else 16)
    v = x[:, idx]
    a = np.abs(v).max(axis=-1, keepdims=True)
    q = np.round(v * (np.float32(127.0) / np.maximum(a, np.float32(1e-30)))) * (a * np.float32(1.0 / 127.0))
    out = np.empty_like(x)
    out[:, idx] = q
    return out


@pytest.mark.parametrize("fmt", ["q4_0", "q8_0"])
@pytest.mark.parametrize("n,rows,split", [(1, 2, 2), (3, 4, 4), (8, 8, 2), (16, 1, 4)])
def test_inline_8_bit_activations_are_x_rounded_per_unit(fmt, n, rows, split):
    """The inline kernels compute exactly (up to f32 sums) the product with x rounded per lane unit."""
    rng = np.random.default_rng(n + rows)
    m, k = 19, 256
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    x[0, :8] = 0.0                                   # a unit of zeros: scale 0, no division by it
    y = np.full((n, m), np.nan, np.float32)
    G.kernel(fmt, n, rows=rows, split=split, how="inline").launch(
        G.grid(m, fmt, n, rows, split), G.word_view(w, fmt), x.reshape(-1, 4), y, M=m, K=k, device="cpu")
    ref = _rounded(x, fmt) @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    exact = x @ wd.T
    assert ((y - exact) ** 2).sum() / (exact ** 2).sum() < 5e-4


@pytest.mark.parametrize("n", [1, 5, 16])
@pytest.mark.parametrize("x_f16", [False, True])
def test_q4_K_with_inline_8_bit_activations_matches_numpy(n, x_f16):
    """q4_K's levels and its ``-m x`` terms both against x rounded per 16 values, so that a sub-block's offset
    cancels on the same x (with x as given in the ``-m x`` terms, the rounding error of ``d q x`` was left
    whole: up to 9.4e-4 normalized squared error at one row against ggml's 5e-4, found by a docs-only check)."""
    rng = np.random.default_rng(n)
    m, k = 11, 512
    w, wd = _weights("q4_K", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float16 if x_f16 else np.float32)
    y = np.zeros((n, m), np.float32)
    hot.run(G._launches(G.word_view(w, "q4_K"), x.reshape(-1, 4), y, "q4_K", n, m, k, x_f16, ("inline", 8, 4), "cpu"))
    xf = x.astype(np.float32)
    ref = _rounded(xf, "q4_K") @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    exact = xf @ wd.T
    assert ((y - exact) ** 2).sum() / (exact ** 2).sum() < 1e-4
    assert not np.array_equal(y, G.gemv(w, x, "q4_K", device="cpu", q8=False))   # (x was rounded)


def test_inline_8_bit_activations_compile_to_integer_dot_products_without_conversions():
    for fmt, op in (("q4_0", "OpSUDot"), ("q8_0", "OpSDot"), ("q4_K", "OpSUDot")):
        text = G.kernel(fmt, 2, how="inline").disassemble()
        assert f"{op} %int" in text and "PackedVectorFormat4x8Bit" in text
        assert "OpConvertFToS" not in text                  # the rounding is an f32 addition, not a conversion


def test_choice_names_how_x_is_read_for_every_format():
    assert {G.bucket(n) for n in range(1, 17)} == {b for _, b in G.CHOICE} == {1, 2, 4, 5}
    assert [G.bucket(n) for n in (1, 2, 3, 4, 5, 16)] == [1, 2, 2, 4, 5, 5]
    for (fmt, b), (how, rows, split) in G.CHOICE.items():
        assert how in ("f32", "pre", "prew", "inline") and 1 <= rows <= 16 and split in (1, 2, 4)
        xregs = G.xregs_layout(fmt, b, 640) if GX.takes(fmt, b, 640) else None   # (tests/ops/test_gemv_xregs.py)
        want = ("xregs", *xregs) if xregs else (how, rows, split)
        if fmt in G.MMA and b >= G.MMA[fmt][0]:           # (f16 from 3 rows: the cooperative-matrix product)
            want = ("mma", *G.MMA[fmt][1:])
        assert G.choice(fmt, b, None, 8192, 640) == want
        assert G.choice(fmt, b, False if want[0] in ("f32", "mma") else None, 8192, 640)[0] != "mma"
        fallback = "pre" if fmt in G.Q8_FORMATS else "inline"                         # K not known: not as words
        assert G.choice(fmt, b) == (fallback if how == "prew" else how, rows, split)
        assert G.choice(fmt, b, False)[0] == "f32"
        if (fmt, b) in G.OTHER:
            assert G.choice(fmt, b, True)[0] != "f32"
            assert {how, G.OTHER[fmt, b][0]} & {"f32"} == {"f32"}       # one of the two keeps x as given
        else:
            with pytest.raises(ValueError, match=f"8-bit activations serve q4_0, q4_K, q8_0 weights, not {fmt}"):
                G.choice(fmt, b, True)


def test_f16_and_bf16_at_two_to_four_rows_avoid_the_layout_that_rereads_x_most():
    """At 2 and 3 rows the plain kernel takes 4 rows of W over 4 subgroups (8 over 4 re-read x's f32 rows twice as
    often: 1.4x the time at 8192 x 28672); 4 rows keep 8 x 4; f16 and bf16 from 3 rows run on cooperative matrices
    where they can (W of 16 rows or more, K a multiple of 64)."""
    for fmt in ("f16", "bf16"):
        assert G.choice(fmt, 2, None, 8192, 28672) == ("f32", 4, 4)
        assert G.choice(fmt, 3, False, 8192, 28672) == G.choice(fmt, 3) == ("f32", 4, 4)
        assert G.choice(fmt, 4, False, 8192, 28672) == G.choice(fmt, 4) == ("f32", 8, 4)
    assert G.MMA["f16"][0] == G.MMA["bf16"][0] == 3
    for fmt in ("f16", "bf16"):     # (bf16 weights rounded to f16 as they are staged)
        for n in (3, 4, 5):
            assert G.choice(fmt, n, None, 8192, 28672) == ("mma", *G.MMA[fmt][1:])
    assert G.choice("f16", 3, None, 8, 28672) == ("f32", 4, 4)              # W of 8 rows: the plain kernel
    assert G.choice("f16", 4, None, 8192, 28672 + 8) == ("f32", 8, 4)       # K not a multiple of 64


def test_small_products_at_one_row_round_x_inside_the_product():
    """gemv.SMALL_INLINE: one row of x, M and K at most 4096: "inline" (one launch), 2 rows of W a group to M = 2048,
    else 4; past either bound, more rows, x as given (q8=False) or f16 weights: the other defaults."""
    assert G.SMALL_INLINE == (4096, 4096)
    for fmt in G.INLINE_FORMATS:
        assert G.choice(fmt, 1, None, 1024, 4096) == ("inline", 2, 4)
        assert G.choice(fmt, 1, None, 2048, 64) == ("inline", 2, 4)
        assert G.choice(fmt, 1, None, 2049, 4096) == G.choice(fmt, 1, True, 4096, 4096) == ("inline", 4, 4)
        assert G.choice(fmt, 1, None, 4097, 4096)[0] != "inline" or G.CHOICE[fmt, 1][0] == "inline"
        assert G.choice(fmt, 1, None, 4096, 4096 + 64)[0] != "inline" or G.CHOICE[fmt, 1][0] == "inline"
        assert G.choice(fmt, 2, None, 1024, 4096) == G.choice(fmt, 2, None, 8192, 4096)
        assert G.choice(fmt, 1, False, 1024, 4096)[0] == "f32"
        assert G.choice(fmt, 1) == G.choice(fmt, 1, None, 1024)       # (without M and K: the plain kernels' way)
    assert G.choice("q4_0", 1, None, 4096, 14336) == ("xregs", 8, 7)
    assert G.choice("f16", 1, None, 1024, 4096) == G.CHOICE["f16", 1]
    # and its launches compute the product: one launch, x rounded per block of 32 as the first kernel would
    rng = np.random.default_rng(5)
    w, wd = _weights("q8_0", 40, 320, rng)
    x = rng.standard_normal((1, 320)).astype(np.float32)
    launches, y = G.plan(w, x, "q8_0", device="cpu")
    assert [(kern.name, grid) for kern, grid, *_ in launches] == [("gemv_q8_0_x1_i8", G.grid(40, "q8_0", 1, 2, 4))]
    hot.run(launches)
    ref = _rounded(x, "q8_0") @ wd.T                         # (a scale for each lane's 8 values, not 32)
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()


def test_one_row_of_q4_K_through_linear_is_as_accurate_as_ggml_allows():
    """The default at one row of small q4_K products ("inline", gemv.SMALL_INLINE) through the op a user calls: the
    normalized squared error against the dequantized weights stays under 1e-4 (ggml's tests allow 5e-4); with x as
    given in the ``-m x`` terms it reached 4.7e-4 at these draws (a docs-only check's report)."""
    for seed in (256, 262, 264, 265):
        rng = np.random.default_rng(seed)
        w = rng.standard_normal((64, 256)).astype(np.float32)
        wq = quantize(w, "q4_K")
        wd = dequantize(wq, "q4_K", 256).astype(np.float64)
        x = rng.standard_normal((1, 256)).astype(np.float32)
        assert G.choice("q4_K", 1, None, 64, 256)[0] == "inline"
        ref = (x @ wd.T)[0]
        y = linear(x, wq, "q4_K", device="cpu")[0]
        assert ((y - ref) ** 2).sum() / (ref ** 2).sum() < 1e-4, seed


def test_reduction_covers_more_outputs_than_invocations():
    """16 rows a group over 2 subgroups with 8 rows of x: 256 sums for 128 invocations."""
    rng = np.random.default_rng(3)
    m, k, n = 37, 256, 8
    w, wd = _weights("f16", m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = np.full((n, m), np.nan, np.float32)
    G.kernel("f16", n, rows=16, split=2).launch(G.grid(m, "f16", n, 16, 2), G.word_view(w, "f16"), x.reshape(-1, 4),
                                                y, M=m, K=k, device="cpu")
    ref = x @ wd.T
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()


_EVENTS: list[tuple[str, tuple]] = []   # ("compile" or "time", way), in order


class _FakeKernel:
    def __init__(self, way):
        self.way = way

    def compile(self):
        _EVENTS.append(("compile", self.way))


def _fake_stream_ms(launches, dev, clock_up_ms):
    """A candidate's time from its way: 8 rows of W over 2 subgroups read inline is the fastest; one way fails."""
    way = launches[0][0].way
    _EVENTS.append(("time", way))
    if way == ("inline", 1, 4):
        raise RuntimeError("the device cannot run this layout")
    return 1.0 if way == ("inline", 8, 2) else 2.0 + way[1] / 100


@pytest.fixture
def fake_gpu(monkeypatch, pretend_gpu):
    """gemv's planning on a pretend GPU: launches are stand-ins that know their way, timed by _fake_stream_ms."""
    dev, path = pretend_gpu
    monkeypatch.setattr(G, "gpu_of", lambda device, arrays: dev)
    monkeypatch.setattr(G, "_launches", lambda w, x, y, fmt, n, m, k, x_f16, way, device:
                        [(_FakeKernel(way), (1, 1, 1), (), {"device": device})])
    monkeypatch.setattr(G, "stream_ms", _fake_stream_ms)
    monkeypatch.setattr(G, "resident", lambda arrays, dev: arrays)
    return path


def test_tuning_times_each_way_and_layout_once_and_later_calls_read_the_choice(fake_gpu):
    import json

    rng = np.random.default_rng(0)
    w, _ = _weights("q4_K", 8, 256, rng)
    x = rng.standard_normal((1, 256)).astype(np.float32)
    launches, _ = G.plan(w, x, "q4_K")                     # nothing stored: choice's way (this small, "inline")
    assert launches[0][0].way == G.choice("q4_K", 1, None, 8, 256) == ("inline", 2, 4)
    _EVENTS.clear()
    launches, _ = G.plan(w, x, "q4_K", tune=True)
    assert launches[0][0].way == ("inline", 8, 2)
    kinds = [kind for kind, _ in _EVENTS]          # every candidate compiled before the first is timed
    assert kinds == ["compile"] * kinds.count("compile") + ["time"] * kinds.count("time")
    assert {w for kind, w in _EVENTS if kind == "compile"} == {w for kind, w in _EVENTS if kind == "time"}
    entry = next(iter(json.loads(fake_gpu.read_text())["entries"].values()))
    assert entry["way"] == ["inline", 8, 2] and entry["ms"] == 1.0
    assert len(entry["times_ms"]) == 1 + len(G.candidates("q4_K", 1, None, 8, 256))
    assert np.isnan(entry["times_ms"]["inlinex1x4"])
    G._TUNED.reset()                                       # a new process: read back from the file
    launches, _ = G.plan(w, x, "q4_K")
    assert launches[0][0].way == ("inline", 8, 2)
    launches, _ = G.plan(w, x, "q4_K", q8=False)          # another problem: not tuned, the fastest f32 way
    assert launches[0][0].way == G.OTHER["q4_K", True]


def test_candidates_follow_q8():
    assert {c[0] for c in G.candidates("q4_0", 1)} == {"f32", "pre", "inline"}
    assert {c[0] for c in G.candidates("q4_0", 1, q8=True)} == {"pre", "inline"}
    assert {c[0] for c in G.candidates("q8_0", 1, q8=False)} == {"f32"}
    assert {c[0] for c in G.candidates("f16", 8)} == {"f32"}
    assert len(G.candidates("f16", 8)) == len(G.LAYOUTS)


def test_nothing_is_tuned_on_the_interpreter(monkeypatch, tmp_path):
    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "autotune.json"))
    rng = np.random.default_rng(1)
    w, wd = _weights("q8_0", 5, 64, rng)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    y = G.gemv(w, x, "q8_0", device="cpu", tune=True, q8=False)
    assert np.abs(y - x @ wd.T).max() <= 1e-5 * np.abs(y).max()
    assert not (tmp_path / "autotune.json").exists()


def test_the_autotune_docs_example_runs(capsys, monkeypatch, tmp_path):
    """docs/autotune.md, "Tuning the decode products": its example runs as written and prints what it says."""
    import re
    from pathlib import Path

    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "autotune.json"))
    text = (Path(__file__).resolve().parents[2] / "docs" / "autotune.md").read_text()
    section = text[text.index("## Tuning the decode products"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "docs/autotune.md", "exec"), {})
    said = capsys.readouterr().out.split("\n")
    assert said[0] == str(G.choice("q4_K", 1)) and code.count(f"# {G.choice('q4_K', 1)}") == 1
    assert said[1] == str(len(G.candidates("q4_K", 1, None, 64, 512))) and f"# {said[1]} ways" in code


@pytest.mark.parametrize("seed", range(24))
def test_random_shapes_and_ways_match_numpy(seed):
    """Shapes no other test names: M from 1, K any multiple of the block, 1 to 16 rows of x, x f32 or f16, each
    value of q8; exact ways within f32 sums, 8-bit ways within ggml's bound."""
    rng = np.random.default_rng(1000 + seed)
    fmt = G.FORMATS[seed % len(G.FORMATS)]
    qk = {"f16": 8, "bf16": 8, "q4_0": 32, "q8_0": 32, "q4_K": 256}[fmt]
    m, k, n = int(rng.integers(1, 70)), qk * int(rng.integers(1, 5 if fmt == "q4_K" else 12)), int(rng.integers(1, 17))
    q8 = [None, True, False][seed % 3] if fmt not in ("f16", "bf16") else None
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float16 if seed % 2 else np.float32)
    y = G.gemv(w, x, fmt, device="cpu", q8=q8)
    ref = x.astype(np.float32) @ wd.T
    way = G.choice(fmt, n, q8, m, k)[0]
    if way == "f32":
        assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()
    elif way == "mma":
        assert np.abs(y - ref).max() <= 2e-3 * np.abs(ref).max()
    else:
        assert ((y - ref) ** 2).sum() / (ref ** 2).sum() < 5e-4
