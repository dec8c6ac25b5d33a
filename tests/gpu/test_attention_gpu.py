"""ops.attention on a GPU at real sizes against float64 numpy (run with -m gpu): ggml's flash-attention kernel
on a device with VK_NV_cooperative_matrix2 (prefill Sq = Skv = 2048, D = 128, 8 heads; decoding one query
row against 32768 keys with split_k), on resident arrays, and the KHR fallback forced with impl="khr"."""

import numpy as np
import pytest

from coopdsl import ops, runtime
from coopdsl.ops import attention_nv2 as nv2
from coopdsl.ops import device_caps as caps
from coopdsl.ops import flash_attention

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def nv2_device(device):
    if not caps.has_nv2(device):
        pytest.skip(f"{device.info.name} has no VK_NV_cooperative_matrix2 (workgroup scope, tensor addressing, ...)")
    return device


@pytest.fixture
def dispatches(monkeypatch):
    seen = []
    real = nv2.dispatch
    monkeypatch.setattr(nv2, "dispatch", lambda *a, **kw: seen.append(real(*a, **kw)) or seen[-1])
    return seen


def _inputs(hq, hkv, sq, skv, d, seed=0, spread=1.5):
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((hq, sq, d)) * spread).astype(np.float16)  # peaky enough to notice a wrong key
    k = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    v = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    return q, k, v


def _check(out, q, k, v, heads=(0, -1), tol=5e-3, **opts):
    """out (numpy or resident) against the float64 model on a few query heads."""
    got = out.numpy() if not isinstance(out, np.ndarray) else out
    hq, hkv = q.shape[0], k.shape[0]
    idx = sorted({h % hq for h in heads})
    g = hq // hkv
    mask = opts.pop("mask", None)
    if mask is not None and mask.ndim == 3 and mask.shape[0] == hq:
        mask = mask[idx]
    want = flash_attention.reference(q[idx], np.stack([k[h // g] for h in idx]), np.stack([v[h // g] for h in idx]),
                                     mask=mask, **opts)
    got = got[idx].astype(np.float64)
    assert np.isfinite(got).all()
    err = np.abs(got - want).max()
    assert err <= tol * max(1.0, np.abs(want).max()), f"max error {err}"


def _resident(dev, *xs):
    return [runtime.array(x, device=dev) for x in xs]


PREFILL = {  # (Hq, Hkv, Sq, Skv, D, options)
    "plain": (8, 8, 2048, 2048, 128, {}),
    "causal": (8, 8, 2048, 2048, 128, {"causal": True}),
    "causal_gqa": (8, 2, 2048, 2048, 128, {"causal": True}),
    "kv_cache_mqa": (8, 1, 512, 2048, 128, {"causal": True}),
    "window": (8, 2, 2048, 2048, 128, {"causal": True, "window": 300}),
    "softcap": (8, 8, 2048, 2048, 128, {"causal": True, "softcap": 20.0}),
    "f16acc": (8, 8, 2048, 2048, 128, {"causal": True, "acc": "f16"}),
    "d64": (8, 8, 2048, 2048, 64, {"causal": True}),
    "d80": (8, 8, 1000, 1000, 80, {"causal": True}),
    "d96": (8, 4, 1024, 1024, 96, {}),
    "d256": (4, 4, 1024, 1024, 256, {"causal": True}),
    "unaligned": (8, 2, 777, 1111, 128, {"causal": True}),
}


@pytest.mark.parametrize("name", sorted(PREFILL))
def test_prefill_resident(nv2_device, name, dispatches):
    hq, hkv, sq, skv, d, opts = PREFILL[name]
    opts = dict(opts)
    q, k, v = _inputs(hq, hkv, sq, skv, d)
    dq, dk, dv = _resident(nv2_device, q, k, v)
    out = ops.attention(dq, dk, dv, **opts)
    assert isinstance(out, runtime.Array) and out.shape == q.shape and out.dtype == np.float32
    opts.pop("acc", None)
    _check(out, q, k, v, **opts)
    if name == "causal":  # a causal mask alone: computed by the kernel (CAUSAL), no mask bound, no mask_opt
        assert not dispatches[-1].use_mask_opt and dispatches[-1].spec["Flags"] & 2 == 0
    if name == "window":  # a window: a built mask, whose mask_opt bits skip the blocks it hides
        assert dispatches[-1].use_mask_opt


@pytest.mark.parametrize("hq, hkv, sq, skv, d, window", [(8, 2, 2048, 2048, 128, 300), (8, 8, 1000, 1111, 64, 100),
                                                      (4, 4, 777, 777, 128, 1)])
def test_a_sliding_window_computed_by_the_kernel(nv2_device, monkeypatch, hq, hkv, sq, skv, d, window):
    # WINDOW (off by default until timed): the kernel hides the keys outside each row's window and starts each
    # tile's loop at its first visible block; the built mask's values (bit for bit on the interpreter; here the
    # driver compiles two kernels, which it may contract differently) and the float64 model's
    q, k, v = _inputs(hq, hkv, sq, skv, d, seed=3)
    dq, dk, dv = _resident(nv2_device, q, k, v)
    got = {}
    for inside in (False, True):
        monkeypatch.setattr(nv2, "WINDOW_IN_KERNEL", inside)
        with nv2.recording() as launches:
            got[inside] = ops.attention(dq, dk, dv, causal=True, window=window).numpy()
        fa = [kern for kern, *_ in launches if kern.name == "flash_attn_cm2"]
        assert [kern.consts.get("WINDOW", 0) for kern in fa] == [window if inside else 0]
    np.testing.assert_allclose(got[True], got[False], rtol=0, atol=1e-5)
    _check(got[True], q, k, v, heads=(0, hq - 1), causal=True, window=window)


@pytest.mark.parametrize("hq, hkv, sq, skv, d, causal, impl", [
    (8, 2, 777, 777, 128, True, None), (32, 8, 1, 8192, 128, True, None), (32, 8, 3, 8192, 128, True, None),
    (8, 8, 2048, 2048, 64, False, None), (8, 2, 777, 777, 128, True, "khr")])
def test_sinks_on_resident_arrays(nv2_device, hq, hkv, sq, skv, d, causal, impl):
    # attention sinks (one logit a query head): prefill (the heads as ggml's batch, SINK_BATCH), decoding by the
    # f32 decode kernel (one token) and the cooperative-matrix one (12 rows a K/V head), each sink one more chunk
    # of its K/V head, and the KHR kernel; against the float64 model
    q, k, v = _inputs(hq, hkv, sq, skv, d, seed=9)
    sinks = (np.log(skv) + np.random.default_rng(10).uniform(-1, 1, hq)).astype(np.float32)
    dq, dk, dv = _resident(nv2_device, q, k, v)
    ds = runtime.array(sinks, device=nv2_device)
    out = ops.attention(dq, dk, dv, causal=causal, sinks=ds, impl=impl)
    got = out.numpy()
    want = flash_attention.reference(q, k, v, causal, sinks=sinks)
    assert np.isfinite(got).all()
    assert np.abs(got - want).max() <= 5e-3 * np.abs(want).max()


@pytest.mark.parametrize("d", [64, 80, 128, 256])
def test_prefill_f16_out_from_the_kernel_and_row_sums_br_x_16(nv2_device, d):
    # an f16 output is stored by the flash-attention kernel itself (D_F16: no conversion launch), and the row sums
    # (L16) and to D 128 the row maxima (M16) are Br x 16 matrices, where the device offers them at the launch's
    # workgroup size
    q, k, v = _inputs(8, 2, 1536, 1536, d, seed=7)
    dq, dk, dv = _resident(nv2_device, q, k, v)
    for causal in (False, True):
        with nv2.recording() as launches:
            out = ops.attention(dq, dk, dv, causal=causal, out_dtype=np.float16)
        assert out.dtype == np.float16 and "convert" not in [kern.name for kern, *_ in launches]
        fa = [kern for kern, *_ in launches if kern.name == "flash_attn_cm2"]
        assert fa == [nv2.fa_kernel(False, True, l16=d <= nv2.L16_MAX_HEAD, d_f16=True, m16=d <= nv2.M16_MAX_HEAD,
                                    causal=causal)]   # (causal: computed by the kernel)
        _check(out, q, k, v, heads=(0, 5), causal=causal)


@pytest.mark.parametrize("d", [64, 80, 96])
def test_prefill_128_query_rows_a_workgroup_without_a_mask(nv2_device, dispatches, d):
    # without a mask to D 96 ops.attention runs 128 query rows a workgroup of 128 invocations (ggml: 64), where the
    # device offers the kernel's matrices there; odd lengths (clamped loads), grouped heads, f16 and f32 output
    q, k, v = _inputs(16, 4, 2085, 2003, d, seed=11)
    dq, dk, dv = _resident(nv2_device, q, k, v)
    for out_dtype in (np.float16, np.float32):
        out = ops.attention(dq, dk, dv, out_dtype=out_dtype)
        disp = dispatches[-1]
        assert (disp.Br, disp.Bc, disp.spec["WorkGroupSize"], disp.split_k) == (128, 64, 128, 1)
        assert out.dtype == out_dtype
        _check(out, q, k, v, heads=(0, 7, 15))


def test_masks_outputs_and_dtypes(nv2_device):
    dev = nv2_device
    hq, hkv, s, d = 8, 2, 2048, 128
    q, k, v = _inputs(hq, hkv, s, s, d, seed=1)
    dq, dk, dv = _resident(dev, q, k, v)
    rng = np.random.default_rng(2)
    mask = rng.uniform(-4, 4, (s, s)).astype(np.float16).astype(np.float32)  # values f16 holds exactly
    mask[rng.random((s, s)) < 0.3] = -np.inf
    # a resident f16 mask goes to the kernel as it is; a numpy one is converted, per head or shared
    out = ops.attention(dq, dk, dv, mask=runtime.array(mask.astype(np.float16), device=dev))
    _check(out, q, k, v, mask=mask)
    per_head = np.broadcast_to(mask, (hq, s, s)).copy()
    per_head[3] = 0.0
    out = ops.attention(dq, dk, dv, mask=per_head, causal=True)
    _check(out, q, k, v, heads=(0, 3), mask=per_head, causal=True)
    # f16 output into a resident out
    o16 = runtime.zeros(q.shape, np.float16, device=dev)
    assert ops.attention(dq, dk, dv, causal=True, out_dtype=np.float16, out=o16) is o16
    _check(o16, q, k, v, causal=True)
    # f16 and bf16 Q, bf16 K/V (converted on the device)
    qb, kb, vb = (ops.to_bf16(x.astype(np.float32)) for x in (q, k, v))
    out = ops.attention(*_resident(dev, qb, kb, vb), causal=True)
    _check(out, qb, kb, vb, causal=True)
    out = ops.attention(runtime.array(q.astype(np.float32), device=dev), dk, dv, causal=True)
    _check(out, q, k, v, causal=True)
    # numpy in, numpy out
    out = ops.attention(q, k, v, causal=True, device=dev)
    assert isinstance(out, np.ndarray)
    _check(out, q, k, v, causal=True)


def test_masks_at_an_odd_length(nv2_device):
    """777 tokens (not a multiple of 8, nor of a tile): the mask's inner blocks load unclamped (MASK_FAST with
    EDGE), the last tile of rows and block of keys clamped; a padding-like mask with whole blocks -inf and 0,
    shared and resident f16, and MPT's per-head ALiBi in f32."""
    dev = nv2_device
    hq, hkv, s, d = 8, 2, 777, 128
    q, k, v = _inputs(hq, hkv, s, s, d, seed=11)
    dq, dk, dv = _resident(dev, q, k, v)
    rng = np.random.default_rng(12)
    mask = rng.uniform(-4, 4, (s, s)).astype(np.float16).astype(np.float32)
    mask[:256, 320:640] = -np.inf
    mask[256:512, :192] = 0.0
    out = ops.attention(dq, dk, dv, mask=runtime.array(mask.astype(np.float16), device=dev))
    _check(out, q, k, v, heads=(0, 5), mask=mask)
    slopes = 2.0 ** (-8.0 * np.arange(1, hq + 1) / hq)
    alibi = (-slopes[:, None, None] * np.abs(np.arange(s)[:, None] - np.arange(s)[None, :])[None]).astype(np.float32)
    out = ops.attention(dq, dk, dv, mask=runtime.array(alibi, device=dev))
    _check(out, q, k, v, heads=(0, 7), mask=alibi.astype(np.float16).astype(np.float64))


@pytest.mark.parametrize("out_dtype", [np.float32, np.float16])
def test_decode_split_k(nv2_device, out_dtype, dispatches):
    hq, hkv, skv, d = 32, 8, 32768, 128
    q, k, v = _inputs(hq, hkv, 1, skv, d, seed=3, spread=3.0)
    dq, dk, dv = _resident(nv2_device, q, k, v)
    out = ops.attention(dq, dk, dv, causal=True, out_dtype=out_dtype, impl="nv2")  # (by default: attention_decode)
    _check(out, q, k, v, heads=(0, 5, 31), causal=True)
    disp = dispatches[-1]
    assert disp.gqa_ratio == 4 and disp.split_k > 1 and disp.push["nem1"] == 0  # no mask: causal hides nothing
    out = ops.attention(dq, dk, dv, causal=True, window=4096, out_dtype=out_dtype, impl="nv2")
    _check(out, q, k, v, heads=(0, 31), causal=True, window=4096)


def test_decode_with_a_per_head_mask(nv2_device):
    hq, skv, d = 8, 32768, 128
    q, k, v = _inputs(hq, hq, 1, skv, d, seed=4, spread=3.0)
    rng = np.random.default_rng(5)
    mask = np.where(rng.random((hq, 1, skv)) < 0.5, -np.inf, 0.0).astype(np.float16)
    out = ops.attention(*_resident(nv2_device, q, k, v), mask=runtime.array(mask, device=nv2_device))
    _check(out, q, k, v, heads=(0, 7), mask=mask.astype(np.float64))


def test_decode_with_an_f32_alibi_mask_keeps_the_f16_rule(nv2_device):
    """MPT-7B's per-head ALiBi (32 heads: slopes that are not powers of two, so the f16 rule rounds most mask
    values) at 8192 keys, an f32 mask the decode kernel reads as it is: within 2e-6 of the float64 model of the
    f16 rule. The H200's driver folded the kernel's f32(f16(x)) back to x before attention_mask.f16_rounded,
    1.7e-4 off (the difference between the rule and the unrounded mask)."""
    from coopdsl.ops.attention_mask import mask_values

    hq, skv, d = 32, 8192, 128
    q, k, v = _inputs(hq, hq, 1, skv, d, seed=13, spread=1.0)
    slopes = 2.0 ** (-8.0 * np.arange(1, hq + 1) / hq)
    mask = (-slopes[:, None, None] * (skv - 1 - np.arange(skv))[None, None, :]).astype(np.float32)
    out = ops.attention(*_resident(nv2_device, q, k, v), mask=runtime.array(mask, device=nv2_device))
    _check(out, q, k, v, heads=(0, 1, 2, 30), tol=2e-6, mask=mask_values(mask))


def test_calls_in_one_batch(nv2_device):
    # temporaries (split_k scratch, converted Q) stay alive until the batch runs
    dev = nv2_device
    cases = [_inputs(32, 8, 1, 4096, 128, seed=s) for s in range(3)] + [_inputs(4, 4, 300, 300, 64, seed=9)]
    arrays = [_resident(dev, *c) for c in cases]
    outs = []
    with runtime.batch(dev):
        for dq, dk, dv in arrays:
            outs.append(ops.attention(dq, dk, dv, causal=True, out_dtype=np.float16))
    for (q, k, v), out in zip(cases, outs):
        _check(out, q, k, v, causal=True)


def test_khr_fallback(device):
    q, k, v = _inputs(8, 2, 500, 700, 128, seed=6)
    out = ops.attention(*_resident(device, q, k, v), causal=True, window=200, impl="khr")
    _check(out, q, k, v, causal=True, window=200)


def test_the_sm_count_is_the_devices(nv2_device):
    cores = caps.shader_cores(nv2_device)
    assert 16 <= cores <= 1024
    if "H100" in nv2_device.info.name or "H200" in nv2_device.info.name:
        assert cores in (114, 132)


def test_the_examples_of_docs_ops_md_run(nv2_device):
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    (first,) = [b for b in blocks if "window=" in b]
    (decode,) = [b for b in blocks if "kc = runtime.array" in b]
    ns: dict = {}
    exec(compile(first, "docs/ops.md", "exec"), ns)
    exec(compile(decode, "docs/ops.md", "exec"), ns)  # goes on from the first block's names
    q, k, v = (ns[n].numpy() for n in ("qt", "kc", "vc"))
    _check(ns["ot"], q, k, v, heads=(0, 31), causal=True)


@pytest.mark.parametrize("d", [64, 128, 256])
def test_the_decode_kernels_knob_variants_a_tuned_call_times(device, d):
    """Each setting of the lane kernel's knobs that ops.attention(tune=True) may pick (attention_decode.variants:
    other splits, the other loads mode, the other combine), one token against 20000 keys on the GPU, against the
    float64 model."""
    from coopdsl.ops import attention_decode as AD

    hq, hkv, skv = 16, 4, 20000
    q, k, v = _inputs(hq, hkv, 1, skv, d, seed=6, spread=3.0)
    dims = (hq, 1, d, hkv, skv)
    dq, dk, dv = _resident(device, q, k, v)
    for how in AD.variants(dims):
        out = runtime.zeros((hq, 1, d), np.float32, device=device)
        for kern, grid, args, kw in AD.plan(dq, dk, dv, dims, causal=True, mask=None, window=0, scale=d ** -0.5,
                                             softcap=0.0, out_dtype=np.float32, out=out, dev=device, how=how):
            kern.launch(grid, *args, **kw)
        _check(out, q, k, v, heads=(0, 7, 15), causal=True)
