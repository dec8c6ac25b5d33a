"""The flash-decoding kernels of ops.attention (coopdsl/ops/attention_decode.py, lane = key, and
coopdsl/ops/attention_decode_mma.py, cooperative matrices) on the CPU interpreter against the float64 numpy model:
1 to 16 query rows per K/V head, D 64 to 256, several chunks (the last workgroup of each head combines them, or the
separate combine kernel), causal, window, soft-cap, masks, f16 output, rows that see no key; which kernel
ops.attention picks; every variant's SPIR-V through spirv-val. A GPU test (-m gpu) runs real sizes."""

import importlib.util
import re

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import attention_decode as AD
from coopdsl.ops import attention_decode_mma as ADM
from coopdsl.ops import attention_nv2 as nv2
from coopdsl.ops import flash_attention as FA
from tests.conftest import compile_checked
from tests.ops.test_attention import _close, _mask  # (one model tolerance for both attention paths)

needs_interp = pytest.mark.skipif(importlib.util.find_spec("coopdsl.interp") is None,
                                  reason="the CPU interpreter (coopdsl.interp) is not installed")


def _inputs(hq, hkv, sq, skv, d, seed=0, q_dtype=np.float16):
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((hq, sq, d)) * 1.5).astype(q_dtype)   # peaky enough to notice a wrong key
    k = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    v = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    return q, k, v


def _run(hq, hkv, sq, skv, d, *, chunks=None, fused=None, loads=None, q_dtype=np.float16, out_dtype=np.float32,
         how=None, split=None, **opts):
    """attention_decode.run on the interpreter, checked against the model; returns the output."""
    q, k, v = _inputs(hq, hkv, sq, skv, d, q_dtype=q_dtype)
    if "mask" in opts:
        opts["mask"] = _mask(opts["mask"])
    out = np.full(q.shape, np.nan, out_dtype)
    AD.run(q, k, v, (hq, sq, d, hkv, skv), causal=opts.get("causal", False), mask=opts.get("mask"),
           window=opts.get("window", 0), scale=opts.get("scale", d ** -0.5), softcap=opts.get("softcap", 0.0),
           out_dtype=out_dtype, out=out, dev="cpu", chunks=chunks, fused=fused, loads=loads, how=how, split=split)
    want = FA.reference(q, k, v, opts.get("causal", False), opts.get("scale"), mask=opts.get("mask"),
                        window=opts.get("window"), softcap=opts.get("softcap", 0.0))
    _close(out, want)
    return out


# (Hq, Hkv, Sq, Skv, D, options): rows per K/V head (Hq / Hkv) * Sq from 1 to 16; Skv a few hundred keys in
# 3 or 4 chunks (chunks are multiples of 128 keys)
CASES = {
    "sq1_g1_d64": (2, 2, 1, 300, 64, {}),
    "sq1_g4_d128_causal": (8, 2, 1, 600, 128, {"causal": True}),
    "sq4_g1_d80_causal": (2, 2, 4, 400, 80, {"causal": True}),
    "sq4_g4_d80_causal_16_rows": (4, 1, 4, 300, 80, {"causal": True}),         # 4 row groups of 4
    "sq16_g1_d256_causal_window": (1, 1, 16, 500, 256, {"causal": True, "window": 300}),
    "sq4_g3_d128_12_rows": (3, 1, 4, 400, 128, {"causal": True}),              # 2 row groups of 6
    "sq5_g3_d96_15_rows_window": (3, 1, 5, 400, 96, {"window": 200}),          # a padding row in a group
    "sq2_g4_d64_causal_window": (8, 2, 2, 600, 64, {"causal": True, "window": 250}),
    "softcap_d128": (4, 2, 1, 300, 128, {"softcap": 2.0, "scale": 0.3}),
    "mask_shared_16_rows": (4, 1, 4, 300, 64, {"mask": (4, 300), "causal": True}),
    "mask_per_head_f16_out": (4, 2, 2, 300, 64, {"mask": (4, 2, 300), "out_dtype": np.float16}),
}


@needs_interp
@pytest.mark.parametrize("how", AD.HOWS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_model(name, how):
    # both kernels on every case (by default the cooperative-matrix one runs from 5 rows a K/V head)
    hq, hkv, sq, skv, d, opts = CASES[name]
    opts = dict(opts)
    if how == "mma" and not ADM.takes(d, hq // hkv * sq):
        with pytest.raises(ValueError, match=f"got D {d}"):
            _run(hq, hkv, sq, skv, d, chunks=4, how=how, **opts)
        return
    _run(hq, hkv, sq, skv, d, chunks=4, how=how, **opts)


@needs_interp
def test_default_combine_and_loads():
    # the last workgroup combines a head's chunks while each invocation has one vec4 of the head's output to
    # combine (rows * D <= 512), a second launch beyond; D <= 64 pipelines its loads across steps
    assert [AD.default_fused(d, r) for d, r in ((64, 8), (128, 4), (256, 2), (128, 5), (256, 4), (128, 16))] == [
        True, True, True, False, False, False]
    assert [AD.default_loads(d, 4) for d in (32, 64, 80, 128, 256)] == [2, 2, 1, 1, 1]
    for hq, d, kernels in ((4, 128, ["attention_decode_d128_r4"]),
                           (8, 128, ["attention_decode_d128_r8", "attention_decode_combine_d128"])):
        q, k, v = _inputs(hq, 1, 1, 600, d)
        out = np.zeros(q.shape, np.float32)
        launches = AD.plan(q, k, v, (hq, 1, d, 1, 600), causal=False, mask=None, window=0, scale=0.1, softcap=0.0,
                           out_dtype=np.float32, out=out, dev="cpu", chunks=4, how="lanes")
        assert [kern.name for kern, *_ in launches] == kernels


@needs_interp
@pytest.mark.parametrize("split", [1, 2, 4])
def test_score_splits(split):
    # 1, 2 or 4 lanes sharing a key's dot products (each its slice of D, then added across the lanes):
    # every split gives the model's result, with each load order (D 96 has 12 pieces a row, D 64 8)
    _run(8, 2, 1, 500, 96, chunks=3, split=split, causal=True, how="lanes")
    _run(4, 1, 2, 300, 64, chunks=2, split=split, loads=2, window=90, how="lanes")
    _run(2, 2, 3, 260, 128, chunks=2, split=split, loads=0, how="lanes", softcap=3.0)
    _run(4, 2, 2, 330, 128, chunks=3, split=split, loads=3, causal=True, how="lanes")   # 3: the next rows after P V
    assert [AD.default_split(d) for d in (8, 16, 40, 64, 80, 96, 128, 256)] == [1, 2, 1, 4, 2, 4, 4, 4]


def test_a_split_that_does_not_divide_the_row_is_refused():
    with pytest.raises(ValueError, match="split=4; 1, 2 or 4 dividing the 10 16-byte pieces of a row"):
        AD.kernel(80, 4, split=4)
    with pytest.raises(ValueError, match="split=3"):
        AD.kernel(96, 4, split=3)


@pytest.mark.parametrize("fused, loads", [(False, 0), (False, 1), (True, 0), (True, 2)])
def test_combine_and_load_variants(fused, loads):
    # the separate combine kernel and the other load orders (the cases above: the fused combine, loads=1)
    _run(8, 2, 1, 700, 128, chunks=5, fused=fused, loads=loads, causal=True, how="lanes")
    _run(3, 1, 5, 300, 80, chunks=3, fused=fused, loads=loads, window=100, out_dtype=np.float16, how="lanes")


@needs_interp
def test_mma_steps_at_the_ends_of_the_keys():
    # chunks that end inside a step of 64 keys (the rows past the chunk repeat its last and are hidden), fewer
    # keys than a step, one chunk; f32 q
    _run(4, 1, 4, 37, 64, chunks=3, how="mma", causal=True)
    _run(16, 1, 1, 200, 32, chunks=1, how="mma")
    _run(3, 1, 4, 5, 48, chunks=2, how="mma", q_dtype=np.float32, causal=True, window=5)
    _run(2, 2, 1, 700, 128, chunks=3, how="mma", softcap=3.0, out_dtype=np.float16)
    # a row that sees no key over several chunks (the combine's L = 0), and rows past Skv in causal order
    q, k, v = _inputs(12, 1, 1, 300, 64)
    m = np.zeros((12, 1, 300))
    m[5] = -np.inf
    out = np.full(q.shape, np.nan, np.float32)
    AD.run(q, k, v, (12, 1, 64, 1, 300), causal=False, mask=m, window=0, scale=0.125, softcap=0.0,
           out_dtype=np.float32, out=out, dev="cpu", chunks=3, how="mma")
    assert (out[5] == 0).all()
    _close(out, FA.reference(q, k, v, False, 0.125, mask=m))
    out = _run(1, 1, 16, 10, 64, how="mma", causal=True)                # Sq > Skv: rows 0 .. 5 see no key
    assert (out[:, :6] == 0).all() and (out[:, 6:] != 0).any()
    out = _run(1, 1, 16, 18, 64, chunks=1, how="mma", causal=True, window=1)   # one key a row
    assert np.abs(out).max() > 0


def test_mma_takes_and_errors():
    assert ADM.takes(128, 16) and ADM.takes(80, 1) and ADM.takes(16, 9) and ADM.takes(128, 17) and ADM.takes(64, 128)
    assert not ADM.takes(72, 16) and not ADM.takes(128, 129) and not ADM.takes(256, 16)
    with pytest.raises(ValueError, match="head size 72; a multiple of 16 up to 128"):
        ADM.kernel(72)
    with pytest.raises(ValueError, match="head size 256; a multiple of 16 up to 128"):
        ADM.kernel(256)
    with pytest.raises(ValueError, match="mask kind 'bf16'"):
        ADM.kernel(64, mask="bf16")
    q, k, v = _inputs(4, 1, 4, 10, 256)
    out = np.zeros(q.shape, np.float32)
    with pytest.raises(ValueError, match="takes D a multiple of 16 up to 128 and at most 128 rows per K/V head; "
                                         "got D 256, 16 rows"):
        AD.run(q, k, v, (4, 4, 256, 1, 10), causal=False, mask=None, window=0, scale=0.125, softcap=0.0,
               out_dtype=np.float32, out=out, dev="cpu", how="mma")
    with pytest.raises(ValueError, match="how='tiles'; one of"):
        AD.plan(q, k, v, (4, 4, 64, 1, 10), causal=False, mask=None, window=0, scale=0.125, softcap=0.0,
                out_dtype=np.float32, out=out, dev="cpu", how="tiles")


@needs_interp
def test_one_chunk_and_rows_that_see_no_key():
    # one chunk: the workgroup writes the output itself; with Sq > Skv the first rows see no key and give 0
    out = _run(2, 2, 16, 10, 64, chunks=None, causal=True)
    assert (out[:, :6] == 0).all() and (out[:, 6:] != 0).any()
    out = _run(2, 2, 16, 300, 64, chunks=3, causal=True, window=3)
    assert np.abs(out).max() > 0
    # a mask that hides every key of a row, over several chunks (the combine's L = 0)
    q, k, v = _inputs(4, 1, 1, 300, 64)
    m = np.zeros((4, 1, 300))
    m[1] = -np.inf
    out = np.full(q.shape, np.nan, np.float32)
    AD.run(q, k, v, (4, 1, 64, 1, 300), causal=False, mask=m, window=0, scale=0.125, softcap=0.0,
           out_dtype=np.float32, out=out, dev="cpu", chunks=3)
    assert (out[1] == 0).all()
    _close(out, FA.reference(q, k, v, False, 0.125, mask=m))


@needs_interp
def test_q_f32_and_bf16_inputs():
    _run(4, 1, 1, 300, 64, chunks=3, q_dtype=np.float32, causal=True)
    rng = np.random.default_rng(4)
    q32, k32, v32 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 2, 64), (2, 260, 64), (2, 260, 64)))
    qb, kb, vb = ops.to_bf16(q32), ops.to_bf16(k32), ops.to_bf16(v32)
    with nv2.recording() as launches:
        out = ops.attention(qb, kb, vb, causal=True, device="cpu")
    # Q, K and V read as they are, widened exactly: no conversion launch, and Q's bf16 values given as f32 give
    # the same result bit for bit
    assert [kern.name for kern, *_ in launches] == ["attention_decode_d64_r4_qbf16_kbf16_vbf16"]
    assert np.array_equal(out, ops.attention(ops.from_bf16(qb), kb, vb, causal=True, device="cpu"))
    _close(out, FA.reference(qb, kb, vb, True))   # the bf16 values
    # ... and through the cooperative-matrix kernel (8 rows a K/V head: 4 heads of 2 query rows)
    qb8 = ops.to_bf16(rng.standard_normal((8, 2, 64)).astype(np.float32))
    with nv2.recording() as launches:
        out = ops.attention(qb8, kb, vb, causal=True, window=100, device="cpu")
    assert [kern.name for kern, *_ in launches] == ["attention_decode_mma_d64_qbf16_kbf16_vbf16",
                                                    "attention_decode_combine_d64"]
    assert np.array_equal(out, ops.attention(ops.from_bf16(qb8), kb, vb, causal=True, window=100, device="cpu"))
    _close(out, FA.reference(qb8, kb, vb, True, window=100))


@needs_interp
def test_ops_attention_picks_the_decode_kernel_for_decoding_only():
    assert FA.default_impl((32, 1, 128, 8, 131072), "cpu") == "decode"      # 4 rows per K/V head
    assert FA.default_impl((32, 4, 128, 8, 16384), "cpu") == "decode"       # 16
    assert FA.default_impl((32, 5, 128, 8, 16384), "cpu") == "decode"       # 20: cooperative matrices
    assert FA.default_impl((32, 16, 128, 8, 16384), "cpu") == "decode"      # 64
    assert FA.default_impl((32, 17, 128, 8, 16384), "cpu") == "decode"      # 68: 40 passes over the keys, 32
    assert FA.default_impl((32, 33, 128, 8, 16384), "cpu") == "nv2"         # 132: prefill
    assert FA.default_impl((8, 20, 256, 8, 16384), "cpu") == "nv2"          # 20 rows of D 256: prefill
    assert FA.default_impl((8, 80, 64, 8, 80), "cpu") == "nv2"
    q, k, v = _inputs(8, 2, 1, 300, 64)                                        # 4 rows a K/V head: lanes
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, causal=True, device="cpu")
    # (2 chunks, combined by the last)
    assert [kern.name.rsplit("_d", 1)[0] for kern, *_ in launches] == ["attention_decode"]
    _close(out, FA.reference(q, k, v, True))
    with nv2.recording() as launches:
        ops.attention(q, k, v, causal=True, device="cpu", impl="nv2")         # forcing ggml's kernel still works
    assert "flash_attn_cm2" in [kern.name for kern, *_ in launches]
    q, k, v = _inputs(2, 2, 70, 80, 64)                       # prefill: 70 rows per K/V head, no grouped heads
    with nv2.recording() as launches:
        ops.attention(q, k, v, causal=True, device="cpu")
    assert "flash_attn_cm2" in [kern.name for kern, *_ in launches]
    with nv2.recording() as launches:                                         # ... unless forced (16 rows:
        out = ops.attention(q[:1, :16], k[:1], v[:1], causal=True, device="cpu", impl="decode")  # matrices)
    with pytest.raises(ValueError, match=r"impl='decode' takes at most 16 query rows per K/V head \(\(Hq / Hkv\) "
                                         r"\* Sq\), or 128 on a device with 16 x 16 x 16 f16 cooperative matrices "
                                         r"and D a multiple of 16 up to 128; got 140 rows, D 64"):
        ops.attention(*_inputs(2, 1, 70, 80, 64), causal=True, device="cpu", impl="decode")
    assert [kern.name.rsplit("_d", 1)[0] for kern, *_ in launches] == ["attention_decode_mma",
                                                                       "attention_decode_combine"]
    _close(out, FA.reference(q[:1, :16], k[:1], v[:1], True))


def test_which_devices_take_it():
    class Info:
        def __init__(self, lo, hi):
            self.min_subgroup_size, self.max_subgroup_size, self.subgroup_size = lo, hi, lo

    class Dev:
        def __init__(self, lo, hi):
            self.info = Info(lo, hi)

    dims = (32, 1, 128, 8, 16384)
    assert AD.takes(dims, Dev(32, 32)) and AD.takes(dims, Dev(16, 64)) and AD.takes(dims, "cpu")
    assert not AD.takes(dims, Dev(64, 64)) and not AD.takes(dims, Dev(4, 16))   # no subgroups of 32
    assert not AD.takes((32, 5, 128, 8, 16384), Dev(32, 32))
    # which decode kernel: cooperative matrices from 9 rows a K/V head, where the device has 16 x 16 x 16 f16 -> f32
    mats = Dev(32, 32)
    mats.info.coopmat_configs = [{"M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", "C": "f32", "scope": "Subgroup"}]
    assert AD.default_how((32, 4, 128, 8, 16384), mats) == "mma"              # 16 rows
    assert AD.default_how((32, 2, 128, 8, 16384), mats) == "mma"              # 8
    assert AD.default_how((20, 1, 128, 4, 16384), mats) == "mma"              # 5
    assert AD.default_how((16, 1, 128, 4, 16384), mats) == "lanes"            # 4
    assert AD.default_how((32, 4, 256, 8, 16384), mats) == "lanes"            # D past 128
    assert AD.default_how((32, 4, 72, 8, 16384), mats) == "lanes"             # D not a multiple of 16
    assert AD.default_how((32, 4, 128, 8, 16384), Dev(32, 32)) == "lanes"     # no such matrices
    assert AD.default_how((32, 4, 128, 8, 16384), "cpu") == "mma"
    # past 16 rows, matrices_beat_prefill weighs the decode kernel against ggml's prefill kernel: on a device
    # without VK_NV_cooperative_matrix2 (whose prefill kernel is the simple KHR one) it keeps every row it takes
    mats.info.coopmat2 = None
    chunk = (32, 64, 128, 32, 32768)                # 64 tokens without grouping: ggml's kernel on the interpreter
    assert not AD.matrices_beat_prefill(chunk) and not AD.takes(chunk, "cpu")
    assert AD.takes(chunk, mats) and AD.default_how(chunk, mats) == "mma"
    assert not AD.takes((8, 17, 64, 1, 100), mats)  # (136 rows: past the kernel's 128)


def test_chunks():
    # about 2 workgroups per shader core, no chunk under 256 keys, multiples of 128 keys
    assert AD.default_chunks(8, 16384, 132) == 33 and AD.chunking(16384, 33) == (512, 32)
    assert AD.default_chunks(8, 131072, 132) == 33 and AD.chunking(131072, 33) == (4096, 32)
    assert AD.default_chunks(32, 16384, 132) == 8
    assert AD.default_chunks(8, 300, 132) == 2 and AD.chunking(300, 2) == (256, 2)
    assert AD.default_chunks(64, 100, 132) == 1 and AD.chunking(100, 1) == (128, 1)
    assert AD.chunking(1000, 3) == (384, 3) and AD.chunking(1000, 1000) == (128, 8)
    assert AD.visible_keys(1, 1000, 0) == 0 and AD.visible_keys(4, 1000, 100) == 897
    assert AD.row_groups(128, 4) == (1, 4) and AD.row_groups(128, 8) == (1, 8)
    assert AD.row_groups(128, 12) == (2, 6) and AD.row_groups(128, 16) == (4, 4)
    assert AD.row_groups(256, 8) == (2, 4) and AD.row_groups(256, 16) == (4, 4)
    # the cooperative-matrix kernel: about one workgroup per shader core, chunks multiples of its 64-key step
    assert AD.default_chunks(8, 16384, 132, "mma") == 16 and AD.chunking(16384, 16, 64) == (1024, 16)
    assert AD.default_chunks(8, 131072, 132, "mma") == 16 and AD.default_chunks(4, 131072, 132, "mma") == 33
    assert AD.default_chunks(8, 1000, 132, "mma") == 4 and AD.chunking(1000, 4, 64) == (256, 4)
    # ... which is what plan launches for each kernel (16 query rows a K/V head, 16384 keys, 132 cores)
    q, k = np.zeros((32, 4, 64), np.float16), np.zeros((8, 16384, 64), np.float16)
    grids = {how: [grid for _, grid, *_ in AD.plan(q, k, k, (32, 4, 64, 8, 16384), causal=True, mask=None, window=0,
                                                   scale=0.125, softcap=0.0, out_dtype=np.float32, out=q, dev="cpu",
                                                   how=how)] for how in AD.HOWS}
    # (both combine in a second launch: 16 rows of D 64 are more than one vec4 an invocation, default_fused)
    assert grids == {"lanes": [(32, 8, 1), (8 * 16, 1, 1)], "mma": [(16, 8, 1), (8 * 16, 1, 1)]}
    assert AD.chunking(100, 3, 64) == (64, 2)
    with pytest.raises(ValueError, match="17 query rows per K/V head; the decode kernel takes 1 to 16"):
        AD.kernel(64, 17)
    with pytest.raises(ValueError, match="head size 260; a multiple of 8 up to 256"):
        AD.kernel(260, 1)


@needs_interp
def test_the_f32_kernel_reads_bf16_k_and_v_as_they_are():
    """No conversion pass over K/V (a copy of the whole cache each call, 3.9x torch's time on an H200): each value
    is widened exactly in the kernel, so the result is bit for bit that of the same values given as f16, and a
    value past f16's 65504 counts as itself (the conversion made it inf)."""
    rng = np.random.default_rng(6)
    q = rng.standard_normal((8, 1, 64)).astype(np.float16)
    k32, v32 = (rng.standard_normal((2, 300, 64)).astype(np.float32) for _ in range(2))
    kb, vb = (ops.to_bf16(np.where(np.abs(x) < 2 ** -14, 0, x)) for x in (k32, v32))   # (f16's normal range:
    kh, vh = (ops.from_bf16(x).astype(np.float16) for x in (kb, vb))   # there bf16 values are f16 values)
    for kk, vv, name in ((kb, vb, "_kbf16_vbf16"), (kh, vb, "_vbf16"), (kb, vh, "_kbf16")):
        with nv2.recording() as launches:
            out = ops.attention(q, kk, vv, causal=True, device="cpu")
        assert [kern.name for kern, *_ in launches] == [f"attention_decode_d64_r4{name}"]
        assert np.array_equal(out, ops.attention(q, kh, vh, causal=True, device="cpu"))
    vb[1, 7, 3] = ops.to_bf16(np.float32([3e5]))[0]                   # (f16: inf)
    out = ops.attention(q, kb, vb, device="cpu")
    assert np.isfinite(out).all()
    _close(out, FA.reference(q, kb, vb))


@needs_interp
def test_the_mma_kernel_rounds_bf16_k_and_v_as_it_stages_them():
    """Five or more query rows a K/V head (Qwen2's 7 query heads a K/V head, one token) take the
    cooperative-matrix kernel, whose products are f16: bf16 K/V are rounded to f16 in the kernel as a step's rows
    go to shared memory, not by a pass over the whole cache each call, with the result of that pass."""
    rng = np.random.default_rng(7)
    q = rng.standard_normal((14, 1, 64)).astype(np.float16)
    k32, v32 = (rng.standard_normal((2, 300, 64)).astype(np.float32) for _ in range(2))
    kb, vb = ops.to_bf16(k32), ops.to_bf16(v32)
    kh, vh = ops.from_bf16(kb).astype(np.float16), ops.from_bf16(vb).astype(np.float16)   # (numpy's rounding)
    want = ops.attention(q, kh, vh, causal=True, device="cpu")
    for kk, vv, name in ((kb, vb, "_kbf16_vbf16"), (kh, vb, "_vbf16"), (kb, vh, "_kbf16")):
        with nv2.recording() as launches:
            out = ops.attention(q, kk, vv, causal=True, device="cpu")
        assert [kern.name for kern, *_ in launches] == [f"attention_decode_mma_d64{name}",
                                                        "attention_decode_combine_d64"]
        assert np.array_equal(out, want)
    _close(want, FA.reference(q, kb, vb, True))


@pytest.mark.parametrize("d, rows, options", [
    (64, 1, {}),
    (128, 4, {"causal": True}),
    (80, 16, {"causal": True, "window": True, "mask": "f16", "out_f16": True}),
    (256, 12, {"q_f16": True, "softcap": True, "mask": "f32", "fused": False}),
    (96, 8, {"loads": 0}),
    (128, 2, {"loads": 2, "causal": True}),
    (64, 4, {"k_bf16": True, "v_bf16": True}),
    (128, 1, {"v_bf16": True, "loads": 2}),
    (96, 2, {"q_bf16": True, "causal": True}),
])
def test_every_kernel_validates(d, rows, options):
    text = compile_checked(AD.kernel(d, rows, **options), r"OpGroupNonUniformShuffle ", r"OpGroupNonUniformFMax",
                           absent=("OpCooperativeMatrix",))
    assert ("OpAtomicIAdd" in text) == options.get("fused", True)
    bf16 = options.get("k_bf16") or options.get("v_bf16")   # (a bf16 is widened by a shift or a mask, no FConvert)
    assert bool(re.search(r"OpShiftLeftLogical %uint", text)) == bool(bf16 or options.get("q_bf16"))
    assert bool(re.search(r"OpBitwiseAnd %uint %\S+ %uint_4294901760", text)) == bool(bf16)
    assert ("OpBitcast %v2half" in text) == (not (options.get("k_bf16") and options.get("v_bf16")))
    # a bf16 Q: u16 elements, each widened (OpUConvert to u32, shifted, bitcast to f32)
    assert bool(re.search(r"OpUConvert %uint %\S+", text)) == bool(options.get("q_bf16"))
    for out_f16 in (False, True):
        compile_checked(AD.combine_kernel(d, rows, out_f16), absent=("OpCooperativeMatrix",))
    r = AD.kernel(d, rows, **options).reflect()
    assert r["subgroup_size"] == 32 and tuple(r["workgroup_size"]) == (128, 1, 1)


@pytest.mark.parametrize("d, options", [
    (64, {}),
    (128, {"causal": True, "q_f16": True}),
    (80, {"causal": True, "window": True, "mask": "f16"}),
    (32, {"softcap": True, "mask": "f32"}),
    (64, {"k_bf16": True, "v_bf16": True}),
    (128, {"v_bf16": True, "causal": True}),
    (64, {"q_bf16": True, "k_bf16": True}),
])
def test_every_mma_kernel_validates(d, options):
    text = compile_checked(ADM.kernel(d, **options), r"OpCooperativeMatrixMulAddKHR", r"OpCooperativeMatrixLoadKHR",
                           r"OpGroupNonUniformShuffleXor", r"OpGroupNonUniformAny ", r"OpFMul %\S+ %\S+ %\S+")
    assert (re.search(r"OpExtInst %\S+ %\S+ Tanh", text) is not None) == bool(options.get("softcap"))
    # bf16 K/V: each widened to f32 by a shift or a mask, rounded to f16 and packed in pairs into a u32
    bf16 = bool(options.get("k_bf16") or options.get("v_bf16"))
    assert bool(re.search(r"OpShiftLeftLogical %uint", text)) == bf16
    assert bool(re.search(r"OpBitwiseAnd %uint %\S+ %uint_4294901760", text)) == bf16
    f32_mask = options.get("mask") == "f32"   # (the f16 rule rounds an f32 mask value from its bits too)
    assert bool(re.search(r"OpBitcast %uint %\S+", text)) == (bf16 or f32_mask)
    assert bool(re.search(r"OpUConvert %uint %\S+", text)) == bool(options.get("q_bf16"))   # (a bf16 Q's u16)
    assert ADM.kernel(d, **options).name.endswith("_qbf16" * bool(options.get("q_bf16"))
                                                 + "_kbf16" * bool(options.get("k_bf16"))
                                                 + "_vbf16" * bool(options.get("v_bf16")))
    r = ADM.kernel(d, **options).reflect()
    assert r["subgroup_size"] == 32 and tuple(r["workgroup_size"]) == (128, 1, 1)


# --- a real GPU (pytest -m gpu) ------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_decoding_on_a_gpu():
    from coopdsl import runtime

    try:
        dev = runtime.Device()
    except (runtime.VulkanUnavailableError, runtime.VulkanError, OSError) as e:
        pytest.skip(f"no Vulkan device: {e}")
    if not AD.takes((32, 1, 128, 8, 32768), dev):
        pytest.skip(f"{dev.info.name} cannot run subgroups of 32")
    for hq, hkv, sq, skv, d, opts in [(32, 8, 1, 32768, 128, {"causal": True}),
                                      (32, 8, 4, 20000, 128, {"causal": True, "window": 3000}),
                                      (24, 2, 1, 40000, 80, {"mask": (24, 1, 40000)}),     # 12 rows
                                      (4, 1, 4, 5000, 256, {"causal": True, "softcap": 20.0}),
                                      (16, 16, 1, 50000, 64, {"out_dtype": np.float16}),
                                      (8, 2, 2, 9000, 256, {"softcap": 30.0, "mask": (8, 2, 9000)}),
                                      (8, 8, 1, 200, 128, {"causal": True}),             # one chunk
                                      (64, 8, 5, 30000, 128, {"causal": True}),          # 40 rows: 3 row tiles
                                      (28, 4, 3, 7000, 96, {"causal": True, "mask": (28, 3, 7000)})]:  # 21
        q, k, v = _inputs(hq, hkv, sq, skv, d)
        mask = _mask(opts.pop("mask")).astype(np.float32) if "mask" in opts else None
        dq, dk, dv = (runtime.array(x, device=dev) for x in (q, k, v))
        with nv2.recording() as launches:
            out = ops.attention(dq, dk, dv, mask=mask, **opts)
        names = [kern.name.rsplit("_d", 1)[0] for kern, *_ in launches]
        how = AD.default_how((hq, sq, d, hkv, skv), dev)
        rows = hq // hkv * sq
        chunks = launches[0][1][0]                 # (the grid's x; one chunk: the kernel writes the output)
        one_launch = how == "lanes" and (chunks == 1 or AD.default_fused(d, rows))
        assert names == (["attention_decode"] if one_launch else
                         [f"attention_decode{'_mma' if how == 'mma' else ''}", "attention_decode_combine"])
        assert (how == "mma") == (hq // hkv * sq >= 5 and d <= 128)         # (an H100 has the matrices)
        heads = [0, hq - 1]
        g = hq // hkv
        opts.pop("out_dtype", None)
        want = FA.reference(q[heads], np.stack([k[h // g] for h in heads]), np.stack([v[h // g] for h in heads]),
                            mask=None if mask is None else mask[heads], **opts)
        _close(out.numpy()[heads], want)
    # bf16 K/V, resident: read as they are by the f32 kernel, bit for bit the result of the same values in f16
    q, k, v = _inputs(32, 8, 1, 30000, 64)
    kb, vb = (ops.to_bf16(np.where(np.abs(x) < 2 ** -14, 0, x).astype(np.float32)) for x in (k, v))  # (f16 normals)
    kh, vh = (ops.from_bf16(x).astype(np.float16) for x in (kb, vb))
    dq, dkb, dvb, dkh, dvh = (runtime.array(x, device=dev) for x in (q, kb, vb, kh, vh))
    with nv2.recording() as launches:
        out = ops.attention(dq, dkb, dvb, causal=True)
    assert [kern.name for kern, *_ in launches] == ["attention_decode_d64_r4_kbf16_vbf16"]
    assert np.array_equal(out.numpy(), ops.attention(dq, dkh, dvh, causal=True).numpy())
    _close(out.numpy()[:2], FA.reference(q[:2], kb[:1], vb[:1]))
    # a resident bf16 Q too: one launch, and the result of its values given as f32
    qb = ops.to_bf16(q.astype(np.float32))
    dqb, dq32 = runtime.array(qb, device=dev), runtime.array(ops.from_bf16(qb), device=dev)
    with nv2.recording() as launches:
        out = ops.attention(dqb, dkb, dvb, causal=True)
    assert [kern.name for kern, *_ in launches] == ["attention_decode_d64_r4_qbf16_kbf16_vbf16"]
    assert np.array_equal(out.numpy(), ops.attention(dq32, dkb, dvb, causal=True).numpy())
    # ... and by the cooperative-matrix kernel (7 rows a K/V head), rounded to f16 as they are staged
    q, k, v = _inputs(28, 4, 1, 30000, 128)
    kb, vb = (ops.to_bf16(np.where(np.abs(x) < 2 ** -14, 0, x).astype(np.float32)) for x in (k, v))
    kh, vh = (ops.from_bf16(x).astype(np.float16) for x in (kb, vb))
    dq, dkb, dvb, dkh, dvh = (runtime.array(x, device=dev) for x in (q, kb, vb, kh, vh))
    with nv2.recording() as launches:
        out = ops.attention(dq, dkb, dvb, causal=True)
    assert [kern.name for kern, *_ in launches] == ["attention_decode_mma_d128_kbf16_vbf16",
                                                    "attention_decode_combine_d128"]
    assert np.array_equal(out.numpy(), ops.attention(dq, dkh, dvh, causal=True).numpy())
    _close(out.numpy()[:7], FA.reference(q[:7], kb[:1], vb[:1]))
    qb = ops.to_bf16(q.astype(np.float32))
    dqb, dq32 = runtime.array(qb, device=dev), runtime.array(ops.from_bf16(qb), device=dev)
    with nv2.recording() as launches:
        out = ops.attention(dqb, dkb, dvb, causal=True)
    assert [kern.name for kern, *_ in launches] == ["attention_decode_mma_d128_qbf16_kbf16_vbf16",
                                                    "attention_decode_combine_d128"]
    assert np.array_equal(out.numpy(), ops.attention(dq32, dkb, dvb, causal=True).numpy())


def test_the_benchmark_parses_its_arguments():
    # benchmarks/attention_bench.py imports and lists what it would time without a GPU (--dry-run)
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import child_env

    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "benchmarks/attention_bench.py", "--dry-run", "--shapes", "0,6,8",
                        "--decode-impls", "nv2,decode", "--chunks", "16,32"], cwd=root, env=child_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "6: decode Hq/Hkv 32/8 Sq 1 Skv 16384 D 128 causal True: decode impls nv2,decode" in r.stdout
    assert "0: prefill Hq/Hkv 32/32 Sq 4096 Skv 4096 D 128 causal False: ops.attention" in r.stdout
    r = subprocess.run([sys.executable, "benchmarks/attention_bench.py", "--decode-impls", "fast"], cwd=root,
                       env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--decode-impls: 'fast' is not auto, nv2, khr, decode" in r.stderr
    r = subprocess.run([sys.executable, "benchmarks/attention_bench.py", "--dry-run", "--shapes", "15",
                        "--decode-hows", "lanes,mma"], cwd=root, env=child_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "15: decode 3 rows Hq/Hkv 16/8 Sq 3 Skv 32768 D 128" in r.stdout, r.stderr
    r = subprocess.run([sys.executable, "benchmarks/attention_bench.py", "--decode-hows", "tiles"], cwd=root,
                       env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--decode-hows: attention_decode: how='tiles'; one of ('lanes', 'mma')" in r.stderr
    r = subprocess.run([sys.executable, "benchmarks/attention_bench.py", "--dry-run", "--shapes", "6",
                        "--decode-hows", "lanes:loads3"], cwd=root, env=child_env(), capture_output=True,
                       text=True, timeout=120)                     # (a knob of the lane kernel is a row too)
    assert r.returncode == 0, r.stderr
    # benchmarks/attention_decode_tune.py lists its shapes and which decode kernels take them
    r = subprocess.run([sys.executable, "benchmarks/attention_decode_tune.py", "--dry-run"], cwd=root,
                       env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Hq/Hkv 32/8 Sq 4 Skv 16384 D 128: 16 rows a K/V head, kernels lanes, mma, default mma" in r.stdout
    assert "Hq/Hkv 32/8 Sq 1 Skv 32768 D 64: 4 rows a K/V head, kernels lanes, mma, default lanes" in r.stdout


@needs_interp
@pytest.mark.parametrize("value", [-1e9, -7e4, float(np.finfo(np.float32).min), -6e4])
@pytest.mark.parametrize("hq, sq", [(2, 1), (16, 1), (2, 40)])   # lane kernel, cooperative-matrix kernel, prefill
def test_a_mask_value_means_the_same_on_every_path(hq, sq, value):
    """A value below -65504 (-1e9, float32's min) hides a key as -inf does on every kernel, so a row whose keys it
    all hides gives 0 (the decode kernels read f32 masks and gave the mean of V for -1e9); -6e4 is an ordinary
    offset (f16 holds it) and gives the row's softmax. The model follows the same rule."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((hq, sq, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, 30, 64)).astype(np.float16) for _ in range(2))
    m = rng.uniform(-1, 1, (sq, 30)).astype(np.float32)
    m[0] = value
    want = FA.reference(q, k, v, mask=m)
    impls = ("decode", "nv2", "khr") if hq // 2 * sq <= AD.MAX_ROWS else ("nv2", "khr")
    for impl in impls:
        with nv2.recording() as launches:
            out = ops.attention(q, k, v, mask=m, device="cpu", impl=impl)
        names = " ".join(kern.name for kern, *_ in launches)
        if impl == "decode":
            assert names.startswith("attention_decode_mma" if hq == 16 else "attention_decode_d64"), names
        _close(out, want)
        if value < -65504:
            assert not out[:, 0].any(), (impl, names)
        else:
            assert np.abs(out[:, 0]).max() > 0.1, (impl, names)


@pytest.mark.parametrize("sq", [1, 40])
def test_a_device_that_runs_no_kernel_is_told_what_each_needs(sq, device):
    """On a Vulkan device with neither subgroups of 32, NV2 nor KHR cooperative matrices (lavapipe) the KHR
    kernel's launch blamed only its cooperative matrices, also for a decoding call whose own kernel is missing
    subgroups of 32 (found by a check written from the docs alone)."""
    from coopdsl import runtime
    from coopdsl.ops import device_caps as caps
    from coopdsl.runtime.features import DeviceFeatureError

    dims = (2, sq, 64, 2, 300)
    if AD.takes(dims, device) or caps.has_nv2(device) or caps.offers_coopmat(device, 16, 16, 16):
        pytest.skip(f"{device.info.name} runs one of the kernels")
    q = runtime.array(np.zeros((2, sq, 64), np.float16), device=device)
    k = runtime.array(np.zeros((2, 300, 64), np.float16), device=device)
    want = (r"needs? subgroups of 32 \(it runs \d+( to \d+)?\)" if sq == 1 else
            r"the decode kernels take at most 16 query rows a K/V head, or 128 on 16 x 16 x 16 f16 cooperative "
            r"matrices \(this call has 40\)")
    with pytest.raises(DeviceFeatureError, match=rf"attention: .* runs none of ops.attention's kernels: .*{want}, "
                                                 r"ggml's flash_attn_cm2 needs VK_NV_cooperative_matrix2, and the "
                                                 r"KHR kernel 16 x 16 x 16 f16 cooperative matrices"):
        ops.attention(q, k, k)


def test_both_decode_kernels_round_an_f32_mask_to_f16_and_leave_an_f16_one():
    """The f32 mask's value goes through attention_mask.mask_f16 (OpFOrdLessThan against -65504, then OpFConvert
    to f16) in the lane and the cooperative-matrix kernel; an f16 mask is read as it is."""
    for f32_mask, f16_mask in ((AD.kernel(64, 1, mask="f32"), AD.kernel(64, 1, mask="f16")),
                               (ADM.kernel(64, mask="f32"), ADM.kernel(64, mask="f16"))):
        compile_checked(f32_mask, r"OpFOrdLessThan %bool %\S+ %float_n65504", r"OpFConvert %half")
        compile_checked(f16_mask, absent=(r"%float_n65504",))


def test_a_kernel_name_with_a_knob_plans_that_knob():
    """attention_decode.variant: "lanes:split2" plans the lane kernel with split 2 (an explicit split wins),
    "lanes:loads1" with loads 1, "lanes:fused0" / "lanes:fused1" with the combine launch or without, the same
    outputs as the default on the interpreter; names it does not take are errors that say why."""
    rng = np.random.default_rng(3)
    dims = (4, 1, 64, 2, 700)
    q = rng.standard_normal((4, 1, 64)).astype(np.float32)
    k = rng.standard_normal((2, 700, 64)).astype(np.float16)
    v = rng.standard_normal((2, 700, 64)).astype(np.float16)
    assert AD.variant("lanes:split2") == ("lanes", {"split": 2}) and AD.variant("mma") == ("mma", {})
    assert AD.variant("lanes:fused0") == ("lanes", {"fused": 0})
    outs = []
    # (name, explicit split, the (fused, loads, split) plan passes to kernel: None its default)
    for how, split, want in (("lanes", None, (True, None, None)), ("lanes:split2", None, (True, None, 2)),
                             ("lanes:split2", 1, (True, None, 1)), ("lanes:loads1", None, (True, 1, None)),
                             ("lanes:fused0", None, (False, None, None)), ("lanes:fused1", None, (True, None, None))):
        out = np.zeros((4, 1, 64), np.float32)
        launches = AD.plan(q, k, v, dims, causal=False, mask=None, window=0, scale=0.125, softcap=0.0,
                           out_dtype=np.float32, out=out, dev="cpu", chunks=3, how=how, split=split)
        fused, loads, spl = want
        assert launches[0][0] is AD.kernel(64, 2, False, False, None, False, False, False, fused, loads, None, spl)
        assert len(launches) == (1 if fused else 2)
        for kern, grid, args, kw in launches:
            kern.launch(grid, *args, **kw)
        outs.append(out)
    for o in outs[1:]:
        assert np.abs(o - outs[0]).max() < 1e-5
    for bad, says in (("tiles", "how='tiles'; one of"), ("mma:split2", "only 'lanes' takes a knob"),
                      ("lanes:width2", "the knob is one of split<n>, loads<n>, fused<n>"),
                      ("lanes:split", "the knob is one of"), ("lanes:", "the knob is one of"),
                      ("lanes:fused7", "fused is 0")):
        with pytest.raises(ValueError, match=says):
            AD.variant(bad)
    with pytest.raises(ValueError, match="split=3; 1, 2 or 4"):     # a value the kernel does not take: its own check
        AD.plan(q, k, v, dims, causal=False, mask=None, window=0, scale=0.125, softcap=0.0, out_dtype=np.float32,
                out=np.zeros((4, 1, 64), np.float32), dev="cpu", how="lanes:split3")


# (Hq, Hkv, Sq, Skv, D, options): past 16 rows per K/V head, the cooperative-matrix kernel's row tiles of 16
MANY_ROWS = {
    "40_rows_causal": (8, 1, 5, 300, 64, {"causal": True}),                 # 3 tiles, the last of 8 rows
    "21_rows_window_mask": (28, 4, 3, 250, 32, {"window": 100, "mask": (28, 3, 250)}),
    "64_rows_softcap": (16, 2, 8, 200, 16, {"causal": True, "softcap": 3.0}),  # 4 whole tiles
    "17_rows_f16_out": (1, 1, 17, 150, 128, {"causal": True, "out_dtype": np.float16}),
    "71_rows_one_kv_head": (71, 1, 1, 200, 64, {"causal": True}),             # Falcon-7B, one token: 5 tiles
    "128_rows_window": (32, 2, 8, 300, 32, {"causal": True, "window": 50}),   # 8 whole tiles
}


def test_past_16_rows_grouped_heads_take_the_matrix_kernel_and_long_prompt_chunks_the_prefill_one():
    """Its passes over the keys (Hkv x 16-row tiles) against the prefill kernel's (Hq x 64-row tiles), at most 2x
    (H200: a 64-token chunk of 32 heads on 32, 128 passes against 32, took 490 us against ggml's 225)."""
    cases = {(71, 1, 64, 1, 16384): True,         # Falcon-7B, one token: 5 passes against 71
             (128, 5, 128, 8, 16384): True,       # Llama-3.1-405B, 5 tokens: 40 against 128
             (32, 24, 128, 8, 32768): True,       # 24 tokens of 32 heads on 8: 48 against 32
             (32, 32, 128, 32, 32768): True,      # 32 tokens, no grouping: 64 against 32
             (32, 33, 128, 32, 32768): False,     # 33 tokens: 96 against 32
             (32, 64, 128, 32, 32768): False,     # 64 tokens: 128 against 32
             (8, 17, 64, 1, 100): False}          # 136 rows: past the kernel's 128
    for dims, decode in cases.items():
        assert AD.takes(dims, "cpu") == decode, dims
        assert FA.default_impl(dims, "cpu") == ("decode" if decode else "nv2"), dims
        if AD.rows_per_head(dims) <= ADM.MAX_ROWS:
            assert AD.matrices_beat_prefill(dims) == decode
            assert AD.hows(dims, "cpu") == ["mma"]   # (impl="decode" still runs it)
    assert AD.takes((32, 16, 128, 32, 32768), "cpu")   # (16 rows: the decode kernels, whatever the passes)


@needs_interp
@pytest.mark.parametrize("name", sorted(MANY_ROWS))
def test_past_16_rows_the_matrix_kernel_takes_16_rows_a_workgroup(name):
    """Speculative decoding with grouped heads (Llama-3-70B's 8 query heads a K/V head, 5 tokens: 40 rows) went
    to ggml's prefill kernel, 2.4-2.6x slower than torch there (H200): the cooperative-matrix decode kernel now
    takes up to 128 rows (one token of Falcon-7B's 71 query heads on one K/V head: 7.7x torch's time on ggml's
    kernel), a chunk's row tiles of 16 in neighbouring workgroups of the grid."""
    hq, hkv, sq, skv, d, opts = MANY_ROWS[name]
    rows = hq // hkv * sq
    assert AD.takes((hq, sq, d, hkv, skv), "cpu") and AD.hows((hq, sq, d, hkv, skv)) == ["mma"]
    assert AD.variants((hq, sq, d, hkv, skv)) == []
    q, k, v = _inputs(hq, hkv, sq, skv, d)
    plan = AD.plan(q, k, v, (hq, sq, d, hkv, skv), causal=opts.get("causal", False), mask=None, window=0,
                   scale=0.1, softcap=0.0, out_dtype=np.float32, out=np.zeros(q.shape, np.float32), dev="cpu",
                   chunks=2)
    assert plan[0][1] == (-(-rows // 16) * 2, hkv, 1)      # (row tiles x chunks, K/V heads)
    out = _run(hq, hkv, sq, skv, d, chunks=2, **opts)
    assert np.isfinite(out).all()
    with nv2.recording() as launches:
        got = ops.attention(q, k, v, device="cpu", **{o: x for o, x in opts.items() if o != "mask"})
    assert [kern.name.rsplit("_d", 1)[0] for kern, *_ in launches] == ["attention_decode_mma",
                                                                       "attention_decode_combine"]
    assert got.shape == q.shape


@pytest.mark.parametrize("impl, why", [
    ("khr", r"llvmpipe .*cannot run this module .*missing: extension VK_KHR_cooperative_matrix"),
    ("nv2", r"llvmpipe .*cannot run this module .*extension VK_NV_cooperative_matrix2"),
    ("decode", r"the kernel requires subgroups of 32 invocations \(subgroup_size=32\); .* runs only subgroups of \d+"),
])
def test_a_forced_kernel_the_device_cannot_run_is_named(impl, why, device):
    """With ``impl=`` on a device without what that kernel needs, the launch's error named no op, and for the
    decode kernel a line of this library, quoted: it now says it is ops.attention's impl and why."""
    from coopdsl.ops import device_caps as caps
    from coopdsl.runtime.features import DeviceFeatureError

    if caps.has_nv2(device) or caps.offers_coopmat(device, 16, 16, 16) or AD.takes((2, 4, 64, 2, 300), device):
        pytest.skip(f"{device.info.name} runs one of the kernels")
    q = np.zeros((2, 4, 64), np.float16)
    with pytest.raises(DeviceFeatureError, match=rf"^attention: impl='{impl}' cannot run on this device: {why}") \
            as info:
        ops.attention(q, q, q, impl=impl, device=device)
    assert "coopdsl/ops/" not in str(info.value) and "\n" not in str(info.value)
