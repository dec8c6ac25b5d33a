"""ops.attention on the CPU interpreter against a float64 numpy model: ggml's flash-attention kernel (the
NV2 path, which the interpreter runs) and the KHR fallback kernel, every option; the helper kernels
(split_k reduce, mask_opt, mask building, conversions) against their numpy models; every error. Resident
arrays run on the Vulkan device of the `device` fixture (lavapipe in CI) where the kernels allow it; the
NV2 path on resident arrays is tested on the GPU (tests/gpu/test_attention_gpu.py)."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import attention_nv2 as nv2
from coopdsl.ops import device_caps as caps
from coopdsl.ops import fa_mask_opt, fa_reduce, flash_attention
from coopdsl.ops import ggml_host as host
from coopdsl.spirv import tools
from tests.conftest import compile_checked

pytestmark = pytest.mark.skipif(importlib.util.find_spec("coopdsl.interp") is None,
                                reason="the CPU interpreter (coopdsl.interp) is not installed")


def _inputs(hq, hkv, sq, skv, d, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((hq, sq, d)).astype(np.float16)
    k = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    v = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    return q, k, v


def _mask(shape, seed=1):
    rng = np.random.default_rng(seed)
    m = rng.uniform(-3.0, 3.0, shape)
    m[rng.random(shape) < 0.25] = -np.inf
    return m


def _close(got, want, tol=4e-3):
    assert got.shape == want.shape
    got = np.asarray(got, np.float64)
    assert np.isfinite(got).all()
    err = np.abs(got - want).max()
    assert err <= tol * max(1.0, np.abs(want).max()), f"max error {err}"


@pytest.fixture
def dispatches(monkeypatch):
    """ggml's launch decisions of each NV2 call (ggml_host.FaDispatch), in order."""
    seen = []
    real = nv2.dispatch
    monkeypatch.setattr(nv2, "dispatch", lambda *a, **kw: seen.append(real(*a, **kw)) or seen[-1])
    return seen


# (Hq, Hkv, Sq, Skv, D, options); "mask" is the mask's shape
CASES = {
    "plain": (2, 2, 40, 40, 64, {}),
    "causal": (2, 2, 40, 40, 64, {"causal": True}),
    "causal_kv_cache_gqa": (4, 2, 20, 70, 64, {"causal": True}),
    "causal_more_queries_than_keys": (2, 2, 70, 10, 64, {"causal": True}),  # the first 60 rows see nothing
    "window_mqa_d80": (4, 1, 20, 70, 80, {"causal": True, "window": 16}),
    "window_not_causal": (2, 2, 30, 50, 64, {"window": 10}),
    "mask_d96": (2, 1, 33, 50, 96, {"mask": (33, 50)}),
    "mask_per_head_causal": (4, 2, 25, 45, 64, {"mask": (4, 25, 45), "causal": True}),
    "softcap_d128": (2, 2, 30, 30, 128, {"softcap": 2.0, "causal": True}),
    "gqa_aligned_d128": (4, 2, 24, 64, 128, {}),
    "mqa": (4, 1, 40, 64, 64, {"causal": True}),
    "d256": (2, 1, 20, 40, 256, {"causal": True}),
    "f16_out": (2, 2, 20, 20, 64, {"out_dtype": np.float16}),
    "f16acc": (2, 2, 40, 70, 64, {"acc": "f16", "causal": True}),
    "decode_gqa": (8, 2, 1, 300, 128, {"causal": True}),
    "decode_mask_per_head": (2, 2, 1, 100, 64, {"mask": (2, 1, 100)}),
    "decode_window": (4, 2, 1, 200, 64, {"window": 50, "causal": True}),
    "decode_f16_out": (4, 2, 1, 100, 64, {"out_dtype": np.float16}),
    "speculative_rows": (4, 2, 5, 200, 64, {"causal": True}),
    "mask_opt": (2, 1, 40, 1100, 64, {"causal": True, "window": 600}),
    "causal_long_split": (2, 1, 40, 1100, 64, {"causal": True}),   # computed by the kernel, split over the keys
}
# case -> (gqa_ratio > 1, split_k > 1, mask_opt) of ggml's launch
EXPECT = {"decode_gqa": (True, True, False), "decode_f16_out": (True, True, False),
          "decode_mask_per_head": (False, True, False), "speculative_rows": (False, True, False),
          "mask_opt": (False, True, True), "plain": (False, False, False), "d256": (False, True, False),
          "causal_long_split": (False, True, False)}


def _run_case(name, impl, dispatches=None):
    hq, hkv, sq, skv, d, opts = CASES[name]
    opts = dict(opts)
    q, k, v = _inputs(hq, hkv, sq, skv, d)
    if "mask" in opts:
        opts["mask"] = _mask(opts["mask"])
    out = ops.attention(q, k, v, device="cpu", impl=impl, **opts)
    want = flash_attention.reference(q, k, v, opts.get("causal", False), mask=opts.get("mask"),
                                     window=opts.get("window"), softcap=opts.get("softcap", 0.0))
    assert out.dtype == opts.get("out_dtype", np.float32) and out.shape == q.shape
    _close(out, want)
    if name == "causal_more_queries_than_keys":
        assert (out[:, :60] == 0).all()


@pytest.mark.parametrize("name", sorted(CASES))
def test_nv2_path(name, dispatches):
    _run_case(name, "nv2", dispatches)  # ggml's kernel (decoding shapes run attention_decode by default)
    assert len(dispatches) == 1
    if name in EXPECT:
        d = dispatches[0]
        assert (d.gqa_ratio > 1, d.split_k > 1, d.use_mask_opt) == EXPECT[name]


KHR_CASES = ["causal", "causal_kv_cache_gqa", "causal_more_queries_than_keys", "window_mqa_d80",
             "window_not_causal", "mask_per_head_causal", "softcap_d128", "f16_out", "decode_window"]


@pytest.mark.parametrize("name", KHR_CASES)
def test_khr_path(name, dispatches):
    _run_case(name, "khr")
    assert not dispatches


def test_small_tiles_and_forced_split_k():
    # the smallest tiles the H100 runs at workgroup scope, and split_k from a made-up core count
    q, k, v = _inputs(4, 2, 19, 53, 64)
    for cores, tiles in ((1, (16, 16, 32)), (64, (16, 16, 32)), (300, None)):
        out = np.empty(q.shape, np.float32)
        nv2.run(q, k, v, (4, 19, 64, 2, 53), causal=True, mask=None, window=0, scale=0.125, softcap=0.0,
                out_dtype=np.float32, out=out, dev="cpu", tiles=tiles, cores=cores)
        _close(out, flash_attention.reference(q, k, v, True, 0.125))


@pytest.mark.parametrize("impl", [None, "khr"])
def test_bf16_and_f32_inputs_and_2d(impl):
    rng = np.random.default_rng(5)
    q32, k32, v32 = (rng.standard_normal((s, 64)).astype(np.float32) for s in (21, 37, 37))
    qb, kb, vb = ops.to_bf16(q32), ops.to_bf16(k32), ops.to_bf16(v32)
    out = ops.attention(qb, kb, vb, causal=True, device="cpu", impl=impl)
    _close(out, flash_attention.reference(qb, kb, vb, True))   # the bf16 values, K/V rounded to f16
    out = ops.attention(q32, k32.astype(np.float16), vb, device="cpu", impl=impl)  # f32 q, mixed k/v
    _close(out, flash_attention.reference(q32, k32.astype(np.float16), vb))
    assert out.shape == (21, 64)


def test_scale_out_and_shared_mask_broadcast():
    q, k, v = _inputs(3, 3, 18, 33, 64)
    m = _mask((1, 18, 33))
    out = np.full((3, 18, 64), np.nan, np.float16)
    got = ops.attention(q, k, v, mask=m, scale=0.3, out_dtype=np.float16, out=out, device="cpu")
    assert got is out
    _close(out, flash_attention.reference(q, k, v, False, 0.3, mask=m[0]))


def test_empty_sizes():
    q, k, v = _inputs(2, 1, 5, 0, 64)
    assert (ops.attention(q, k, v, device="cpu") == 0).all()  # no key: every row gives 0
    q, k, v = _inputs(2, 1, 0, 7, 64)
    assert ops.attention(q, k, v, device="cpu").shape == (2, 0, 64)


def test_window_masks_are_built_once_per_shape_and_causal_alone_not_at_all(monkeypatch, dispatches):
    nv2.clear_caches()
    built = []
    real = nv2.build_mask
    monkeypatch.setattr(nv2, "build_mask", lambda *a: built.append(a[0]) or real(*a))
    q, k, v = _inputs(2, 1, 40, 1100, 64)
    for _ in range(2):
        _close(ops.attention(q, k, v, causal=True, window=600, device="cpu"),
               flash_attention.reference(q, k, v, True, window=600))
    assert len(built) == 1 and dispatches[0].use_mask_opt
    assert sum(1 for key in nv2._masks if "mask_opt" in key) == 1
    # causal alone: the kernel computes it (CAUSAL), no mask built, cached or bound
    _close(ops.attention(q, k, v, causal=True, device="cpu"), flash_attention.reference(q, k, v, True))
    assert len(built) == 1 and dispatches[-1].push["nem1"] == 0 and dispatches[-1].spec["Flags"] & 2 == 0
    q1 = q[:, :1]
    ops.attention(q1, k, v, causal=True, device="cpu", impl="nv2")  # one query row: causal hides nothing, no mask
    assert len(built) == 1 and dispatches[-1].push["nem1"] == 0 and dispatches[-1].spec["Flags"] & 2 == 0


@pytest.mark.parametrize("hq, hkv, sq, skv", [(4, 2, 19, 53), (8, 2, 1, 300), (2, 2, 40, 40)])
def test_f16_q_is_read_as_it_is(hq, hkv, sq, skv):
    # f16 Q goes to ggml's kernel through its Q_F16 variant, with no conversion launch first, and gives the same
    # output bit for bit as its f32 copy through ggml's own variant (the f16 -> f32 conversion is exact either way);
    # rows of one head, heads of one K/V head (the GQA layout), split_k
    q, k, v = _inputs(hq, hkv, sq, skv, 64)
    with nv2.recording() as launches:
        a = ops.attention(q, k, v, causal=True, device="cpu", impl="nv2")
    assert "convert" not in [kernel.name for kernel, *_ in launches]
    b = ops.attention(q.astype(np.float32), k, v, causal=True, device="cpu", impl="nv2")
    np.testing.assert_array_equal(a, b)
    _close(a, flash_attention.reference(q, k, v, True))


def test_the_q_f16_variant_validates_and_loads_f16():
    disassemble = tools.disassemble
    for f16acc in (False, True):
        words = nv2.fa_kernel(f16acc, q_f16=True).compile()
        assert tools.validation_message(words, "vulkan1.3") is None
        text, ggmls = disassemble(words), disassemble(nv2.fa_kernel(f16acc).compile())
        q_f16 = "OpTypeCooperativeMatrixKHR %half %uint_2 %Br %32 %uint_2"   # Q: Br x HSK_pad, workgroup, an Acc
        assert q_f16 in text and q_f16 not in ggmls
        assert text.count("OpFConvert") == ggmls.count("OpFConvert") + 1     # (to f32, then as ggml's)
        assert text.count("OpCooperativeMatrixLoadTensorNV") == ggmls.count("OpCooperativeMatrixLoadTensorNV")


def test_recording_lists_the_launches_of_a_call():
    q, k, v = _inputs(8, 2, 1, 300, 64)
    ops.attention(q, k, v, causal=True, out_dtype=np.float16, device="cpu", impl="nv2")
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, causal=True, out_dtype=np.float16, device="cpu", impl="nv2")
    assert [kernel.name for kernel, *_ in launches] == ["flash_attn_cm2", "fa_split_k_reduce"]
    kernel, grid, args, kwargs = launches[1]
    out2 = np.zeros_like(out)
    kernel.launch(grid, *args[:2], out2.reshape(-1), *args[3:], **kwargs)  # launches again as recorded
    np.testing.assert_array_equal(out, out2)


class _Info:
    def __init__(self, extensions=(), coopmat2=None):
        self.extensions, self.coopmat2 = list(extensions), coopmat2 or {}


class _Dev:
    def __init__(self, info):
        self.info = info


def test_device_facts():
    assert caps.shader_cores("cpu") == caps.DEFAULT_CORES == 132
    assert caps.shader_cores(_Dev(_Info())) == 132  # no VK_NV_shader_sm_builtins: ggml's guess for NVIDIA
    full = {f: True for f in caps.NV2_FEATURES}
    assert caps.has_nv2(_Dev(_Info(coopmat2={**full, "max_workgroup_size": 256})))
    assert not caps.has_nv2(_Dev(_Info(coopmat2={**full, "max_workgroup_size": 128})))
    assert not caps.has_nv2(_Dev(_Info(coopmat2={**full, "cooperativeMatrixTensorAddressing": False,
                                                "max_workgroup_size": 256})))
    assert not caps.has_nv2(_Dev(_Info()))


# --- the helper kernels --------------------------------------------------------------------------


@pytest.mark.parametrize("sinks", [False, True])
@pytest.mark.parametrize("out_f16", [False, True])
def test_split_k_reduce_is_ggmls(sinks, out_f16):
    rng = np.random.default_rng(3)
    D, ne1, ne2, ne3, kn = 40, 3, 2, 2, 37
    scratch = rng.uniform(0.1, 2.0, (D * ne1 + 2 * ne1) * kn * ne2 * ne3).astype(np.float32)
    s = rng.uniform(-1.0, 3.0, ne1).astype(np.float32)
    out = np.zeros(ne3 * ne2 * ne1 * D, np.float16 if out_f16 else np.float32)
    fa_reduce.kernel(out_f16).launch(fa_reduce.grid(D, ne1, ne2, ne3), scratch, s, out, D, ne1, ne2, ne3, kn,
                                     int(sinks), device="cpu")
    want = host.split_k_reduce(scratch, D, ne1, ne2, ne3, kn, s if sinks else None)
    _close(out.reshape(want.shape), want, 1e-6 if not out_f16 else 1e-3)


@pytest.mark.parametrize("shape, br, bc, block_size", [((1, 2, 40, 300), 16, 16, 128), ((2, 1, 33, 1100), 32, 32, 128),
                                                     ((1, 2, 40, 300), 16, 16, 512), ((1, 1, 70, 260), 32, 32, 1024)])
def test_mask_opt_is_ggmls(shape, br, bc, block_size):
    """The bits of ggml's model at its workgroup size (128) and at ops.attention's (MASK_OPT_BLOCK_SIZE), where a
    block has fewer values (256) than the workgroup invocations (512) or as many (1024)."""
    nem3, nem2, nem1, nem0 = shape
    rows = np.arange(nem1)[:, None]
    m = np.broadcast_to(np.where(np.arange(nem0)[None, :] <= rows + 100, 0.0, -np.inf), shape).astype(np.float16)
    m[0, 0, 3, 200] = 1.5
    m[..., 5, 17] = -30000.0  # very negative is not -inf
    grid, values = fa_mask_opt.launch_args((nem0, nem1, nem2, nem3), br, bc, block_size)
    nd, tile_rows, _, _ = fa_mask_opt.dims(nem0, nem1, nem2, nem3, br, bc)
    out = np.zeros(nd * tile_rows * nem2 * nem3, np.uint32)
    fa_mask_opt.fa_mask_opt.launch(grid, m.reshape(-1), out, device="cpu", **values)
    np.testing.assert_array_equal(out, host.mask_opt(m, br, bc))
    if block_size == 128:
        for bad in (200, 16, 2048):   # a partial subgroup would write another block's slots
            with pytest.raises(ValueError, match=f"multiple of 32 from 32 to 1024, got {bad}"):
                fa_mask_opt.launch_args((nem0, nem1, nem2, nem3), br, bc, bad)


def test_the_reduce_and_mask_opt_have_ggmls_interfaces():
    r = fa_reduce.kernel().reflect()
    assert r["entry_point"] == "main" and r["workgroup_size_spec_ids"][0] == 0
    assert [(b["name"], b["binding"]) for b in r["bindings"]] == [("data_a", 0), ("data_s", 1), ("data_d", 2)]
    assert [(m["name"], m["offset"]) for m in r["push_constants"]["members"]] == \
        [(n, 4 * i) for i, n in enumerate(("D", "ne1", "ne2", "ne3", "k_num", "sinks"))]
    r = fa_mask_opt.fa_mask_opt.reflect()
    assert r["entry_point"] == "main" and r["subgroup_size"] == 32
    assert [(b["name"], b["binding"]) for b in r["bindings"]] == [("data_a", 0), ("data_d", 1)]
    assert r["push_constants"]["size"] == 36
    assert [(s["name"], s["id"]) for s in r["spec_constants"]] == \
        [("BLOCK_SIZE", 0), ("NUM_SUBGROUPS", 1), ("Br", 2), ("Bc", 3)]


def test_helper_kernels_validate():
    kernels = [fa_reduce.kernel(False), fa_reduce.kernel(True), fa_mask_opt.fa_mask_opt,
               nv2.mask_kernel(nv2.f16), nv2.mask_kernel(nv2.f32), flash_attention.kernel(80, True)]
    kernels += [nv2.convert_kernel(s, d) for s, d in (("bf16", "f32"), ("f16", "f32"), ("bf16", "f16"),
                                                       ("f32", "f16"))]
    for k in kernels:
        assert tools.validation_message(k.compile(), "vulkan1.3") is None
    # bf16 to f16 8 values an invocation: 16-byte loads and stores, each pair widened, rounded and packed
    text = compile_checked(nv2.bf16_f16_kernel(), r"OpLoad %v4uint", r"OpStore %\S+ %\S+", r"OpShiftLeftLogical %uint",
                           r"OpBitwiseAnd %uint %\S+ %uint_4294901760", r"OpFConvert %half", r"OpBitcast %uint %\S+")
    assert "OpTypeInt 16" not in text


def test_resident_bf16_converts_8_values_an_invocation_where_its_rows_are_whole_words(device):
    """The 8-at-a-time conversion views its arrays as 32-bit words: a resident array with an odd last dimension
    cannot be (a reviewer's case, (8, 3)), and takes the one-value kernel."""
    from coopdsl import runtime

    rng = np.random.default_rng(8)
    for shape, kernel in (((8, 4), "convert_bf16_f16_x8"), ((8, 3), "convert")):
        bits = ops.to_bf16(rng.standard_normal(shape).astype(np.float32))
        x = runtime.array(bits, device=device)
        with nv2.recording() as launches:
            got = nv2.convert(x, "bf16", "f16", bits.size, device)
        assert [k.name for k, *_ in launches] == [kernel]
        np.testing.assert_array_equal(got.numpy().reshape(shape), ops.from_bf16(bits).astype(np.float16))


def test_conversions_and_mask_building():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(1000).astype(np.float32) * 1e3
    x[:3] = (np.inf, -1e6, 7e4)
    bits = ops.to_bf16(x)
    got = nv2.convert(bits, "bf16", "f32", x.size, "cpu")
    np.testing.assert_array_equal(got, ops.from_bf16(bits))
    with np.errstate(over="ignore"):
        with nv2.recording() as launches:
            np.testing.assert_array_equal(nv2.convert(bits, "bf16", "f16", x.size, "cpu"),
                                          ops.from_bf16(bits).astype(np.float16))
        assert [k.name for k, *_ in launches] == ["convert_bf16_f16_x8"]   # (1000 values: 8 an invocation)
        with nv2.recording() as launches:
            np.testing.assert_array_equal(nv2.convert(bits[:999], "bf16", "f16", 999, "cpu"),
                                          ops.from_bf16(bits[:999]).astype(np.float16))
        assert [k.name for k, *_ in launches] == ["convert"]
        np.testing.assert_array_equal(nv2.convert(x, "f32", "f16", x.size, "cpu"), x.astype(np.float16))
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    np.testing.assert_array_equal(nv2.convert(h, "f16", "f32", x.size, "cpu"), h.astype(np.float32))
    # causal + window + a per-head user mask with values past f16's range
    user = rng.uniform(-2, 2, (3, 6, 9))
    user[0, 0, 0], user[1, 1, 1], user[2, 2, 2] = -1e30, 1e9, -np.inf
    spec = nv2.MaskSpec(6, 9, True, 4, 3)
    got = nv2.build_mask(spec, user, "cpu").reshape(3, 6, 9)
    last = np.arange(6)[:, None] + 3
    j = np.arange(9)[None, :]
    with np.errstate(over="ignore"):
        want = np.where((j > last) | (j < last - 3), -np.inf, np.minimum(user, 65504.0)).astype(np.float16)
    np.testing.assert_array_equal(got, want)


# --- the documented example ----------------------------------------------------------------------


def test_the_attention_example_of_docs_ops_md_runs(monkeypatch):
    page = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "window=" in b]
    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")  # every launch on the interpreter
    exec(compile(code, "docs/ops.md", "exec"), {"np": np, "ops": ops})


def _ops_md_block(marker: str, timing: bool) -> str:
    """The one python block of docs/ops.md that calls ``marker`` and, with ``timing``, times kernels (``.bench(``)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if marker in b and (".bench(" in b) == timing]
    return code


def test_the_recording_example_of_docs_ops_md_runs():
    """docs/ops.md's way to see which kernels a call launched: its assert names the decode kernel."""
    exec(compile(_ops_md_block("recording()", timing=False), "docs/ops.md", "exec"), {})


@pytest.mark.gpu
def test_the_timing_example_of_docs_ops_md_runs_on_a_gpu(device):
    """docs/ops.md's "Timing an op yourself" example runs where the decode kernels do (a GPU; skipped elsewhere)."""
    from coopdsl.ops import attention_decode

    if not attention_decode.takes((32, 1, 128, 8, 32768), device):
        pytest.skip(f"{device.info.name} does not run the decode kernels")
    scope: dict = {}
    exec(compile(_ops_md_block("recording()", timing=True), "docs/ops.md", "exec"), scope)
    assert 0 < scope["gpu_ms"] * 1e3 < scope["waited_us"]


# --- errors --------------------------------------------------------------------------------------


def test_errors():
    q, k, v = _inputs(4, 2, 8, 16, 64)

    def fails(exc, pattern, *args, **kw):
        with pytest.raises(exc, match=pattern):
            ops.attention(*args, device="cpu", **kw)

    fails(TypeError, r"q must be a numpy array or a coopdsl.runtime.Array \(or an object with __array__ or the buffer "
                     r"protocol\), got list", q.tolist(), k, v)
    fails(TypeError, r"mask must be a numpy array .* got float", q, k, v, mask=0.0)
    fails(ValueError, r"q must be \(heads, S, D\) or \(S, D\), got shape \(64,\)", q[0, 0], k, v)
    for bad in (float("nan"), float("inf"), "0.1", True):
        fails(ValueError, r"attention: scale must be None \(1 / sqrt\(D\)\) or a finite number, got ", q, k, v,
              scale=bad)
    for bad in ("x", None, True, -1.0, float("inf"), float("nan")):   # ("x" and None reached float())
        fails(ValueError, r"attention: softcap must be 0 \(off\) or a positive finite number, got ", q, k, v,
              softcap=bad)
    fails(ValueError, r"k has shape \(16, 64\), q has \(4, 8, 64\)", q, k[0], v[0])
    fails(ValueError, r"v has shape \(2, 15, 64\) but k has shape \(2, 16, 64\)", q, k, v[:, :15])
    fails(ValueError, r"the head size D differs \(32 vs 64\)", q, k[..., :32], v[..., :32])
    fails(ValueError, r"k and v have 3 heads, q has 4", q, *_inputs(1, 3, 1, 16, 64)[1:])
    fails(ValueError, r"D must be a multiple of 16 from 16 to 256, got 72", *_inputs(1, 1, 4, 4, 72))
    fails(ValueError, r"D must be a multiple of 16 from 16 to 256, got 272", *_inputs(1, 1, 4, 4, 272))
    fails(ValueError, r"q must be float16, float32 or bf16 \(uint16 bit patterns\), got float64",
          q.astype(np.float64), k, v)
    fails(ValueError, r"k must be float16 or bf16 \(uint16 bit patterns\), got float32", q, k.astype(np.float32), v)
    fails(ValueError, r"v must be float16 or bf16 .* got int8", q, k, v.astype(np.int8))
    fails(ValueError, r"mask must be \(Sq, Skv\) = \(8, 16\) \(or \(1, Sq, Skv\)\) for every head or \(Hq, Sq, Skv\) = "
                      r"\(4, 8, 16\) per head, got \(8, 15\)",
          q, k, v, mask=np.zeros((8, 15)))
    fails(ValueError, r"mask must be .* got \(2, 8, 16\)", q, k, v, mask=np.zeros((2, 8, 16)))
    fails(ValueError, r"mask must hold floats .* got int32", q, k, v, mask=np.zeros((8, 16), np.int32))
    fails(ValueError, r"window must be a positive int .* got 0", q, k, v, window=0)
    fails(ValueError, r"window must be a positive int .* got 2.5", q, k, v, window=2.5)
    fails(ValueError, r"softcap must be 0 \(off\) or a positive finite number, got -1", q, k, v, softcap=-1)
    fails(ValueError, r"out_dtype must be np.float32 or np.float16, got <class 'numpy.float64'>", q, k, v,
          out_dtype=np.float64)
    fails(ValueError, r"out must be float32 of shape \(4, 8, 64\), got float16 \(4, 8, 64\)", q, k, v,
          out=np.zeros(q.shape, np.float16))
    fails(ValueError, r"out must be float16 of shape \(4, 8, 64\), got float16 \(4, 64, 8\)", q, k, v,
          out_dtype=np.float16, out=np.zeros((4, 64, 8), np.float16))
    fails(ValueError, r"out must be C-contiguous", q, k, v, out=np.zeros((4, 64, 8), np.float32).transpose(0, 2, 1))
    fails(ValueError, r"acc must be 'f32' or 'f16', got 'bf16'", q, k, v, acc="bf16")
    fails(ValueError, r"impl must be None, 'nv2', 'khr' or 'decode', got 'fast'", q, k, v, impl="fast")
    fails(ValueError, r"impl='decode' takes at most 16 query rows per K/V head \(\(Hq / Hkv\) \* Sq\), or 128 on "
                      r"a device with 16 x 16 x 16 f16 cooperative matrices and D a multiple of 16 up to 128; got 136 "
                      r"rows, D 64", *_inputs(8, 1, 17, 32, 64), impl="decode")
    with pytest.raises(TypeError, match=r"device must be None, 'cpu' or a coopdsl.runtime.Device, got int 3"):
        ops.attention(q, k, v, device=3)


# --- resident arrays (the Vulkan device of the `device` fixture: lavapipe in CI) ---------------------


def test_resident_conversions_and_masks(device):
    from coopdsl import runtime

    rng = np.random.default_rng(9)
    x = rng.standard_normal(3000).astype(np.float32)
    bits = ops.to_bf16(x)
    dx = runtime.array(bits, device=device)
    got = nv2.as_kind(dx, "f32", x.size, device)
    np.testing.assert_array_equal(got.numpy(), ops.from_bf16(bits))
    got = nv2.as_kind(runtime.array(x.astype(np.float16), device=device), "f32", x.size, device)
    np.testing.assert_array_equal(got.numpy(), x.astype(np.float16).astype(np.float32))
    dh = runtime.array(x.astype(np.float16), device=device)
    assert nv2.as_kind(dh, "f16", x.size, device) is dh  # already the kernel's format: no copy
    user = runtime.array(rng.uniform(-2, 2, (5, 70)).astype(np.float32), device=device)
    got = nv2.build_mask(nv2.MaskSpec(5, 70, True, 0, 1), user, device).numpy().reshape(5, 70)
    want = np.where(np.arange(70)[None, :] > np.arange(5)[:, None] + 65, -np.inf, user.numpy()).astype(np.float16)
    np.testing.assert_array_equal(got, want)


def test_resident_attention_runs_or_names_what_the_device_lacks(device):
    from coopdsl import runtime

    q, k, v = _inputs(2, 1, 20, 40, 64)
    dq, dk, dv = (runtime.array(x, device=device) for x in (q, k, v))
    if caps.has_nv2(device) or not device.info.has_coopmat:
        # lavapipe (no cooperative matrices) refuses the KHR kernel; an NV2 GPU is tests/gpu's
        if not caps.has_nv2(device):
            with pytest.raises(runtime.DeviceFeatureError):
                ops.attention(dq, dk, dv, causal=True)
        return
    out = ops.attention(dq, dk, dv, causal=True)
    assert isinstance(out, runtime.Array)
    _close(out.numpy(), flash_attention.reference(q, k, v, True))


def test_a_mask_of_odd_key_counts_warns_the_caller_of_nothing():
    """ggml's kernel offsets mask loads by whole rows of KV keys (not 16-byte multiples for KV % 8 != 0): the
    interpreter's TensorPointerWarning would name a line of the library, so ops.attention keeps it to itself."""
    import warnings

    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 20, 32)).astype(np.float16)
    k = rng.standard_normal((2, 37, 32)).astype(np.float16)
    v = rng.standard_normal((2, 37, 32)).astype(np.float16)
    mask = rng.uniform(-2, 2, (2, 20, 37)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ops.attention(q, k, v, mask=mask, impl="nv2", device="cpu")
    assert np.abs(out - flash_attention.reference(q, k, v, mask=mask)).max() < 1e-2


@pytest.mark.parametrize("seed", range(40))
def test_random_shapes_and_options_match_numpy(seed):
    """Shapes no other test names, as ops.attention picks its kernel for them (the decode kernel for at most 16
    query rows per K/V head, ggml's otherwise): grouped heads, Sq 1-40, Skv 1-400, D 16-256, causal, window,
    soft-cap, a shared or per-head mask, f16 or f32 q and output."""
    rng = np.random.default_rng(500 + seed)
    hkv = int(rng.choice([1, 2, 3]))
    hq = hkv * int(rng.choice([1, 2, 4, 5]))
    sq = int(rng.integers(1, 17 // (hq // hkv) + 1)) if rng.random() < 0.7 else int(rng.integers(1, 40))
    skv, d = int(rng.integers(1, 400)), int(rng.choice([16, 32, 48, 64, 80, 96, 128, 256]))
    causal = bool(rng.random() < 0.5)
    window = int(rng.integers(1, 300)) if rng.random() < 0.3 else None
    softcap = float(rng.choice([0.0, 0.0, 5.0]))
    mask = None
    if rng.random() < 0.3:
        shape = (sq, skv) if rng.random() < 0.5 else (hq, sq, skv)
        mask = rng.uniform(-2, 2, shape).astype(np.float32)
        mask[rng.random(shape) < 0.2] = -np.inf
    q = rng.standard_normal((hq, sq, d)).astype(np.float16 if rng.random() < 0.6 else np.float32)
    k = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    v = rng.standard_normal((hkv, skv, d)).astype(np.float16)
    odt = np.float16 if rng.random() < 0.3 else np.float32
    out = ops.attention(q, k, v, causal=causal, window=window, mask=mask, softcap=softcap, out_dtype=odt,
                        device="cpu")
    want = flash_attention.reference(q, k, v, causal, mask=mask, window=window, softcap=softcap)
    assert out.dtype == odt and np.isfinite(out).all()
    assert np.abs(out.astype(np.float64) - want).max() <= 1e-2 * max(1.0, np.abs(want).max())


def test_the_output_accumulates_in_f32_unless_acc_is_f16():
    """ggml keeps the running output O in f16 in both pipelines; a flat row over 2049 keys of V ~ 300 passes
    65504 there (inf on the H100 in a check written from the docs alone; the f16acc pipeline clamps it).
    ops.attention's default (acc="f32") accumulates O in f32 (flash_attn_cm2's O_F32); acc="f16" is ggml's."""
    rng = np.random.default_rng(0)
    sq, skv, d = 128, 2049, 64
    q = np.zeros((2, sq, d), np.float16)                  # flat scores: every key weighs the same
    k = rng.standard_normal((1, skv, d)).astype(np.float16)
    v = (300 + rng.standard_normal((1, skv, d))).astype(np.float16)
    want = flash_attention.reference(q, k, v)
    got = {}
    for acc in ("f32", "f16"):
        with nv2.recording() as launches:   # cores=1: one split of the keys, as on a GPU with these shapes
            got[acc] = nv2.run(q, k, v, (2, sq, d, 1, skv), causal=False, mask=None, window=0, scale=d ** -0.5,
                               softcap=0.0, out_dtype=np.float32, out=np.zeros(q.shape, np.float32), dev="cpu",
                               acc=acc, cores=1)
        assert [kern.name for kern, *_ in launches] == ["flash_attn_cm2"]
    assert np.abs(got["f32"] - want).max() <= 1e-6 * np.abs(want).max()
    assert np.abs(got["f16"] - want).max() > 0.5 * np.abs(want).max()   # ggml's f16 O: clamped, far off
    # ggml's own pipelines (the ggml client's modules) are unchanged; ops.attention's f32 one differs by O
    assert nv2.fa_kernel(True).compile() == nv2.flash_attn_cm2.specialize(F16ACC=1).compile()
    assert nv2.fa_kernel(False).compile() != nv2.flash_attn_cm2.specialize(F16ACC=0).compile()   # (spirv-val'd)
    # the difference is O: ggml's has one more f16 workgroup accumulator of Br rows (Br x HSV_pad), ours none
    f16_acc = re.compile(r"OpTypeCooperativeMatrixKHR %half %uint_2 %Br %\S+ %uint_2$", re.M)
    ours, ggmls = nv2.fa_kernel(False).disassemble(), nv2.flash_attn_cm2.specialize(F16ACC=0).disassemble()
    assert len(f16_acc.findall(ggmls)) == len(f16_acc.findall(ours)) + 1
    assert "OpCooperativeMatrixMulAddKHR" in ours


@pytest.mark.parametrize("d", [64, 128, 256])
def test_row_sums_and_maxima_in_br_x_16_matrices(d):
    """flash_attn_cm2's L16 variant keeps the row sums L in a Br x 16 matrix, P times a Bc x 16 matrix of ones,
    where ggml's multiplies by Bc x Bc, and M16 the row maxima M and the rescale factors eM too (M smeared back
    to Br x Bc for P): the same output, M16 bit for bit the same as L16 alone."""
    q, k, v = _inputs(2, 1, 70, 70, d)
    want = flash_attention.reference(q, k, v, True)
    got = {}
    for l16, m16 in ((True, True), (True, False), (False, False)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nv2, "L16_MAX_HEAD", 256 if l16 else 0)
            mp.setattr(nv2, "M16_MAX_HEAD", 256 if m16 else 0)
            with nv2.recording() as launches:
                got[l16, m16] = nv2.run(q, k, v, (2, 70, d, 1, 70), causal=True, mask=None, window=0,
                                        scale=d ** -0.5, softcap=0.0, out_dtype=np.float32,
                                        out=np.zeros(q.shape, np.float32), dev="cpu", tiles=(32, 32, 128), cores=1)
        kernels = [kern for kern, *_ in launches if kern.name == "flash_attn_cm2"]
        # 70 keys: unaligned; causal: computed by the kernel
        assert kernels == [nv2.fa_kernel(False, True, l16=l16, m16=m16, edge=True, causal=True)]
        _close(got[l16, m16], want, tol=1e-3)
    np.testing.assert_array_equal(got[True, True], got[True, False])
    np.testing.assert_allclose(got[True, False], got[False, False], rtol=0, atol=1e-6)
    # ops.attention's own choice: both to D 128, L16 alone at D 256 (Bc 32 there; M16 cost the H200 4%)
    assert (nv2.L16_MAX_HEAD, nv2.M16_MAX_HEAD) == (256, 128)
    with nv2.recording() as launches:
        ops.attention(q, k, v, causal=True, device="cpu", impl="nv2")
    kernel = nv2.fa_kernel(False, True, l16=True, m16=d <= 128, edge=True, causal=True)
    assert kernel in [kern for kern, *_ in launches]


def test_the_l16_variant_needs_br_x_16_workgroup_matrices_of_the_device():
    # NVIDIA offers Br x 16 workgroup-scope matrices with 128 invocations, not with 256 (columns in 32s there)
    for q_ne, wg in [((64, 4096, 1, 32), 128), ((64, 1, 32, 1), 256)]:   # prefill D 64; one decoding token
        disp = nv2.dispatch(q_ne, (64, 4096, 1, 32) if wg == 128 else (64, 32768, 8, 1), None, 0.125, 0.0, True,
                            132, None, True)
        assert disp.spec["WorkGroupSize"] == wg
        for m16 in (False, True):
            kernel = nv2.fa_kernel(False, True, l16=True, m16=m16)
            assert nv2.offered("nvidia-h100", kernel, disp) == (wg == 128)
        assert nv2.small_sums(disp, 64, "cpu", True) == (True, True)      # the interpreter takes any shape
        assert nv2.small_sums(disp, 256, "cpu", True) == (True, False)    # past M16_MAX_HEAD
        assert nv2.small_sums(disp, 512, "cpu", True) == (False, False)   # past L16_MAX_HEAD


def test_an_f16_output_is_stored_by_the_kernel_where_it_can():
    """The D_F16 variant stores O as f16 through the kernel's tensor layout: no f32 scratch and no conversion
    launch, and the same f16 values as the f32 output rounded; split_k (and grouped heads) still reduce into f16."""
    q, k, v = _inputs(4, 2, 40, 90, 64)

    def run(dtype):   # cores=1: one split of the keys, as on a GPU with these shapes
        return nv2.run(q, k, v, (4, 40, 64, 2, 90), causal=True, mask=None, window=0, scale=0.125, softcap=0.0,
                       out_dtype=dtype, out=np.zeros(q.shape, dtype), dev="cpu", cores=1)

    with nv2.recording() as launches:
        h = run(np.float16)
    assert [kern.name for kern, *_ in launches if kern.name != "build_mask"] == ["flash_attn_cm2"]
    # (90 keys; causal: a mask)
    assert launches[-1][0] is nv2.fa_kernel(False, True, l16=True, d_f16=True, m16=True, edge=True, causal=True)
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h, run(np.float32).astype(np.float16))
    with nv2.recording() as launches:   # one query row: grouped heads and split_k, reduced into f16
        h1 = ops.attention(q[:, :1], k, v, out_dtype=np.float16, device="cpu", impl="nv2")
    assert [kern.name for kern, *_ in launches] == ["flash_attn_cm2", "fa_split_k_reduce"]
    _close(h1, flash_attention.reference(q[:, :1], k, v))


def test_the_l16_m16_and_d_f16_variants_validate_and_say_what_they_do():
    ggmls = nv2.fa_kernel(False, True).disassemble()
    narrow_max = re.compile(r"(%\S+) = OpCooperativeMatrixReduceNV (%\S+) %\S+ Row %reduce_max_f32")
    for l16, d_f16, m16 in [(True, False, False), (False, True, False), (True, True, False), (True, False, True)]:
        kernel = nv2.fa_kernel(False, True, l16=l16, d_f16=d_f16, m16=m16)
        assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
        text = kernel.disassemble()
        assert text.count("OpCooperativeMatrixMulAddKHR") == ggmls.count("OpCooperativeMatrixMulAddKHR") == 3
        ones_16 = "OpTypeCooperativeMatrixKHR %half %uint_2 %Bc %uint_16 %uint_1"   # B: Bc x 16 ones
        ones_bc = "OpTypeCooperativeMatrixKHR %half %uint_2 %Bc %Bc %uint_1"        # B: ggml's Bc x Bc ones
        assert (ones_16 in text, ones_bc in text) == ((True, False) if l16 else (False, True))
        assert ("OpTypeCooperativeMatrixKHR %float %uint_2 %Br %uint_16 %uint_2" in text) == l16   # L: Br x 16
        stored = re.search(r"OpCooperativeMatrixStoreTensorNV %\S+ (%\S+) ", text).group(1)
        stored_type = re.search(rf"{stored} = \S+ (%\S+)", text).group(1)
        half_acc = re.search(rf"{stored_type} = OpTypeCooperativeMatrixKHR (%\S+) %uint_2 %Br", text).group(1)
        assert half_acc == ("%half" if d_f16 else "%float")
        # each step's row maximum: Br x 16 with M16 (then smeared back to Br x Bc), else Br x Bc
        (_, max_type), = narrow_max.findall(text)
        assert re.search(rf"{max_type} = OpTypeCooperativeMatrixKHR %float %uint_2 %Br (%\S+) %uint_2$", text,
                         re.M).group(1) == ("%uint_16" if m16 else "%Bc")


@pytest.mark.parametrize("d, masked, wide", [(64, False, True), (96, False, True), (128, False, False),
                                             (80, True, False)])
def test_128_query_rows_a_workgroup_without_a_mask_to_head_size_96(d, masked, wide):
    """Where ggml's tuning gives 64 x 64 tiles with 128 invocations, ops.attention takes 128 query rows a workgroup
    without a mask to D 96 (faster on NVIDIA; slower with the causal mask and at D 128), where the device offers
    the kernel's matrices there; tiles given by the caller or the tuner are kept."""
    q_ne, k_ne = (d, 4096, 1, 32), (d, 4096, 1, 32)
    mask_ne = (4096, 4096, 1, 1) if masked else None

    disp = nv2.ggml_dispatch(q_ne, k_ne, mask_ne, 0.125, 0.0, True, 132, None, True)
    assert (disp.Br, disp.Bc, disp.spec["WorkGroupSize"]) == (64, 64, 128)
    for dev in ("cpu", "nvidia-h100"):
        got = nv2.dispatch(q_ne, k_ne, mask_ne, 0.125, 0.0, True, 132, None, True, dev, True)
        assert (got.Br, got.Bc, got.spec["WorkGroupSize"]) == ((128, 64, 128) if wide else (64, 64, 128))
        assert nv2.dispatch(q_ne, k_ne, mask_ne, 0.125, 0.0, True, 132, (64, 64, 128), True, dev, True) == disp
    # what the interpreter runs: the same output as ggml's tiles
    q, k, v = _inputs(2, 2, 150, 150, d)
    with nv2.recording() as launches:   # cores=1: one split of the keys, as on a GPU with many rows
        got = nv2.run(q, k, v, (2, 150, d, 2, 150), causal=masked, mask=None, window=0, scale=d ** -0.5,
                      softcap=0.0, out_dtype=np.float16, out=np.zeros(q.shape, np.float16), dev="cpu", cores=1)
    fa = [kw for kern, grid, args, kw in launches if kern.name == "flash_attn_cm2"]
    assert [(kw["Br"], kw["Bc"], kw["WorkGroupSize"]) for kw in fa] == [(128, 64, 128) if wide else (64, 64, 128)]
    _close(got, flash_attention.reference(q, k, v, masked), tol=1e-3)


def test_a_tiny_softcap_runs_the_f32_kernel_and_a_huge_window_hides_nothing():
    """ggml's kernel (and the cooperative-matrix decode kernel) round Q * scale / softcap to f16: a soft-cap so small
    that this overflows runs the KHR kernel (soft-cap in f32) instead of giving NaN, and a forced impl="nv2" is a
    ValueError saying why; a window wider than the keys (even past 2**32) is no window."""
    q, k, v = _inputs(2, 1, 40, 50, 32)
    for softcap in (1e-6, 1e-30):
        with nv2.recording() as launches:
            got = ops.attention(q, k, v, softcap=softcap, device="cpu")
        assert [kern.name for kern, *_ in launches] == ["attention"]   # the KHR kernel
        assert np.isfinite(got).all()
        _close(got, flash_attention.reference(q, k, v, softcap=softcap), tol=1e-3)
        with pytest.raises(ValueError, match="impl='nv2' rounds Q \\* scale / softcap to f16 here, which overflows "
                                             "past scale / softcap = 2048; use impl='khr'"):
            ops.attention(q, k, v, softcap=softcap, device="cpu", impl="nv2")
    _close(ops.attention(q, k, v, softcap=30.0, device="cpu", impl="nv2"),
           flash_attention.reference(q, k, v, softcap=30.0), tol=1e-3)   # (a soft-cap in use: ggml's kernel)
    for window in (90, 2 ** 32, 2 ** 40):
        np.testing.assert_array_equal(ops.attention(q, k, v, causal=True, window=window, device="cpu"),
                                      ops.attention(q, k, v, causal=True, device="cpu"))


def test_a_second_call_launches_the_same_kernel_objects():
    """The kernel factories are cached: a call again (another soft-cap, the same shapes) launches the very kernels the
    first did, compiled once (a helper slipped between ``@cache`` and the KHR factory once took its cache away,
    and every call built and compiled the kernel again)."""
    q, k, v = _inputs(2, 1, 40, 50, 32)
    kernels = []
    for softcap in (1e-6, 1e-30):
        with nv2.recording() as launches:
            ops.attention(q, k, v, softcap=softcap, device="cpu")
        kernels.append([kern for kern, *_ in launches])
    assert [kern.name for kern in kernels[0]] == ["attention"]
    assert all(a is b for a, b in zip(kernels[0], kernels[1], strict=True))
    assert flash_attention.kernel(32) is flash_attention.kernel(32)


def test_empty_queries_no_keys_and_a_nan_in_the_mask_are_as_docs_ops_md_says():
    """docs/ops.md: Sq = 0 gives an empty result, Skv = 0 zeros (every query sees no key), and a NaN in the mask
    makes its row NaN on the interpreter, the other rows untouched (a docs-only check found these undocumented;
    on a GPU, where a driver may assume no NaN, the docs say it is not defined)."""
    rng = np.random.default_rng(2)
    k = rng.standard_normal((2, 10, 64)).astype(np.float16)
    assert ops.attention(np.zeros((4, 0, 64), np.float16), k, k, device="cpu").shape == (4, 0, 64)
    # no query heads: empty, whatever the K/V heads (Hkv = 0 was refused, Hq = 0 with K/V heads was not)
    none = np.zeros((0, 3, 64), np.float16)
    assert ops.attention(none, k, k, device="cpu").shape == (0, 3, 64)
    assert ops.attention(none, none[:, :0], none[:, :0], device="cpu").shape == (0, 3, 64)
    with pytest.raises(ValueError, match=r"k and v have 0 heads \(shape \(0, 10, 64\)\): attention needs at least "
                                         r"one K/V head"):
        ops.attention(np.zeros((4, 3, 64), np.float16), k[:0], k[:0], device="cpu")
    q = rng.standard_normal((4, 3, 64)).astype(np.float16)
    none = np.zeros((2, 0, 64), np.float16)
    out = ops.attention(q, none, none, device="cpu")
    assert out.shape == (4, 3, 64) and not out.any()
    mask = np.zeros((3, 10), np.float32)
    mask[1, 2] = np.nan
    out = ops.attention(q, k, k, mask=mask, device="cpu")
    assert np.isnan(out[:, 1]).all() and not np.isnan(out[:, 0]).any() and not np.isnan(out[:, 2]).any()


def test_unaligned_keys_clamp_only_their_last_block_and_narrow_masks_get_mask_opt():
    """Prompts are rarely a multiple of 64 tokens. At 1000 tokens ggml's unaligned pipeline (every K/V load
    clamped, strides not known to be multiples of 8) and its mask_opt rule (only for masks 16 key blocks wide)
    took 280 us where 1024 tokens took 95 (H200, 32 query heads on 8, D 128, causal): the kernel now clamps only
    the last block (``fa_kernel(edge=True)``) and ``ops.attention`` skips the masked blocks at any width (a
    causal mask alone is now computed by the kernel: a window keeps a mask here)."""
    q, k, v = _inputs(2, 1, 200, 200, 32)
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, causal=True, window=150, device="cpu", impl="nv2")
    kernels = [kern for kern, *_ in launches]
    assert nv2.fa_kernel(False, True, l16=True, m16=True, edge=True, mask_fast=True, mask_rows_8=True,
                         causal_end=True, no_alibi=True) in kernels
    assert "fa_mask_opt" in [kern.name for kern in kernels]      # 200 keys: 4 blocks of 64
    _close(out, flash_attention.reference(q, k, v, True, window=150), tol=1e-3)
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, causal=True, device="cpu", impl="nv2")
    kernels = [kern for kern, *_ in launches]
    assert nv2.fa_kernel(False, True, l16=True, m16=True, edge=True, causal=True) in kernels
    assert "fa_mask_opt" not in [kern.name for kern in kernels] and "build_mask" not in [kern.name for kern in kernels]
    _close(out, flash_attention.reference(q, k, v, True), tol=1e-3)
    q, k, v = _inputs(2, 1, 192, 192, 32)                       # aligned: ggml's aligned pipeline, no clamping
    with nv2.recording() as launches:
        ops.attention(q, k, v, causal=True, device="cpu", impl="nv2")
    kernel = nv2.fa_kernel(False, True, l16=True, m16=True, causal=True)
    assert kernel in [kern for kern, *_ in launches]
    # ggml's own dispatch keeps its rule (the ggml client runs it as ggml does)
    from coopdsl.ops import ggml_host

    assert not ggml_host.flash_attn_dispatch((32, 200, 1, 2), (32, 200, 1, 1), (32, 200, 1, 1),
                                             (200, 200, 1, 1)).use_mask_opt
    assert ggml_host.flash_attn_dispatch((32, 200, 1, 2), (32, 200, 1, 1), (32, 200, 1, 1), (200, 200, 1, 1),
                                         narrow_mask_opt=True).use_mask_opt


def test_the_edge_variant_validates_and_loads_inner_blocks_unclamped():
    """EDGE runs the block loop twice, the blocks inside KV loading K and V through unclamped tensor layouts
    (OpTypeTensorLayoutNV with ClampMode Undefined, 0), then the last through the clamped ones; EDGE 0 is ggml's
    kernel unchanged (one loop)."""
    ggmls = nv2.fa_kernel(False, True, l16=True, m16=True).disassemble()
    kernel = nv2.fa_kernel(False, True, l16=True, m16=True, edge=True)
    assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
    text = kernel.disassemble()
    assert text.count("OpCooperativeMatrixMulAddKHR") == 2 * ggmls.count("OpCooperativeMatrixMulAddKHR")
    assert "OpTypeTensorLayoutNV %uint_2 %uint_0" in text and "OpTypeTensorLayoutNV %uint_2 %uint_0" not in ggmls
    assert text.count("OpCooperativeMatrixLoadTensorNV") == 2 * ggmls.count("OpCooperativeMatrixLoadTensorNV") - 1


@pytest.mark.parametrize("s", [200, 203])
def test_a_mask_at_an_unaligned_length_is_read_unclamped_inside_and_trusts_mask_opt(s):
    """MASK_FAST (with a mask): the kernel leaves out ggml's per-block maximum of the mask (mask_opt has already
    found the all -inf blocks) and, with EDGE, loads the mask's blocks inside the keys of a tile whose rows are
    inside the mask unclamped; the last tile of rows and the last block of keys stay clamped.  A mask with
    blocks all -inf, all 0 and mixed, per head and shared, at 200 and 203 tokens (tiles of 32: six inner tiles
    of rows and an edge one, as a 777-token prompt has; rows of a multiple of 8 keys or not: MASK_FAST 2 or 1),
    and one query row of grouped heads (ggml's gqa layout: a mask row of stride 0)."""
    hq, d = 2, 32
    q, k, v = _inputs(hq, 1, s, s, d, seed=7)
    rng = np.random.default_rng(8)
    mask = rng.uniform(-3, 3, (hq, s, s)).astype(np.float16).astype(np.float32)
    mask[:, :64, 64:128] = -np.inf     # whole blocks hidden
    mask[:, 64:128, :64] = 0.0         # whole blocks of zeros
    mask[1, 195:, :] = -np.inf         # a row of the last tile all -inf: its output is 0 (ggml's 1/L)
    for m in (mask, mask[0], mask.astype(np.float16)):
        with nv2.recording() as launches:
            got = nv2.run(q, k, v, (hq, s, d, 1, s), causal=False, mask=m, window=0, scale=d ** -0.5, softcap=0.0,
                          out_dtype=np.float32, out=np.zeros(q.shape, np.float32), dev="cpu", tiles=(32, 32, 128),
                          cores=1)
        names = [kern.name for kern, *_ in launches]
        assert "fa_mask_opt" in names
        kernel = nv2.fa_kernel(False, True, l16=True, m16=True, edge=True, mask_fast=True, mask_rows_8=s % 8 == 0,
                               no_alibi=True)
        assert kernel in [kn for kn, *_ in launches]
        want = flash_attention.reference(q, k, v, False, mask=np.broadcast_to(m, (hq, s, s)).astype(np.float32))
        rows = np.isfinite(np.broadcast_to(m, (hq, s, s))).any(axis=-1)
        _close(got * rows[..., None], np.nan_to_num(want) * rows[..., None], tol=1e-3)
        np.testing.assert_array_equal(got[~rows], 0.0)
    # one query row of 4 heads on 1 (ggml's grouped-heads layout, gqa_ratio 4, split over the keys): the mask row
    # is read with row stride 0, the inner blocks unclamped (no mask_opt for a mask of one row)
    q1 = _inputs(4, 1, 1, s, d, seed=9)[0]
    m1 = rng.uniform(-3, 3, (1, s)).astype(np.float16)
    m1[0, 64:128] = -np.inf
    seen = []
    real = nv2.dispatch
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nv2, "dispatch", lambda *a, **kw: seen.append(real(*a, **kw)) or seen[-1])
        with nv2.recording() as launches:
            got = ops.attention(q1, k[:1], v[:1], mask=m1, device="cpu", impl="nv2")
    assert seen[-1].gqa_ratio == 4 and not seen[-1].use_mask_opt
    assert nv2.fa_kernel(False, True, l16=True, m16=True, edge=True, mask_fast=True,
                         mask_rows_8=s % 8 == 0, no_alibi=True) in [kn for kn, *_ in launches]
    _close(got, flash_attention.reference(q1, k[:1], v[:1], False, mask=m1.astype(np.float32)), tol=1e-3)


def test_the_mask_fast_variant_validates_and_keeps_ggmls_kernel():
    """MASK_FAST leaves out the mask's per-block max reduction (OpCooperativeMatrixReduceNV on the mask) only;
    with EDGE it adds one unclamped mask load (phase 0); ggml's kernel (MASK_FAST 0) is unchanged."""
    ggmls = nv2.fa_kernel(False, True, l16=True, m16=True, edge=True).disassemble()
    for edge in (False, True):
        kernel = nv2.fa_kernel(False, True, l16=True, m16=True, edge=edge, mask_fast=True)
        assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
    for rows_8 in (False, True):   # (MASK_FAST 1 or 2)
        text = nv2.fa_kernel(False, True, l16=True, m16=True, edge=True, mask_fast=True, mask_rows_8=rows_8)
        text = text.disassemble()
        assert "OpCooperativeMatrixReduceNV" in text
        assert text.count("OpCooperativeMatrixLoadTensorNV") == ggmls.count("OpCooperativeMatrixLoadTensorNV") + 1


def test_a_per_head_f32_mask_is_rounded_8_values_an_invocation_bit_for_bit():
    """build_mask_f32_x8 (an f32 mask alone, one value an element) gives mask_kernel's f16 bits: rounding, -inf
    below -65504 (and -inf itself), 65504 above (and inf); with causal (or a shared mask, repeated over the
    heads) the general kernel runs."""
    rng = np.random.default_rng(3)
    hq, sq, skv = 3, 5, 16
    m = (rng.standard_normal((hq, sq, skv)) * 3e4).astype(np.float32)
    m[0, 0, :6] = [-1e9, 1e9, np.inf, -np.inf, -65504.0, 65519.0]
    n = hq * sq * skv
    want = np.empty(n, np.float16)
    nv2.mask_kernel(nv2.f32).launch(nv2.elementwise_grid(n), m.reshape(-1), want, n, skv, sq, 0, 0, 0, n, device="cpu")
    with nv2.recording() as launches:
        got = nv2.build_mask(nv2.MaskSpec(sq, skv, False, 0, hq), m, "cpu")
    assert [kern.name for kern, *_ in launches] == ["build_mask_f32_x8"]
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(got[:4], [-np.inf, 65504.0, 65504.0, -np.inf])
    for spec in (nv2.MaskSpec(sq, skv, True, 0, hq), nv2.MaskSpec(sq, skv, False, 3, hq)):
        with nv2.recording() as launches:
            nv2.build_mask(spec, m, "cpu")
        assert [kern.name for kern, *_ in launches] == ["build_mask"]
    kernel = nv2.mask_f32_x8_kernel()
    assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
    assert "OpFConvert" in kernel.disassemble() and "OpBitcast" in kernel.disassemble()


def test_mask_opt_takes_no_more_invocations_than_the_device_offers():
    """ops.attention's mask_opt workgroups are MASK_OPT_BLOCK_SIZE (512) where the device takes that many, else
    its limit (a multiple of 32; never below ggml's 128, which Vulkan guarantees)."""
    from types import SimpleNamespace

    def dev(limit):
        return SimpleNamespace(info=SimpleNamespace(max_workgroup_invocations=limit))

    assert nv2.MASK_OPT_BLOCK_SIZE == 512
    assert [nv2.mask_opt_block_size(dev(n)) for n in (1024, 512, 256, 200, 128)] == [512, 512, 256, 192, 128]
    assert nv2.mask_opt_block_size("cpu") == 512


@pytest.mark.parametrize("hq, hkv, sq, skv, opts, tiles, cores", [
    (2, 1, 100, 100, {}, (32, 32, 128), 1),                                   # odd length, EDGE
    (2, 2, 64, 192, {}, (32, 32, 128), 1),                                    # a KV cache longer than the queries
    (2, 2, 90, 40, {}, (32, 32, 128), 1),                                     # more queries than keys: rows see none
    (2, 1, 70, 203, {"window": 50}, (32, 32, 128), 1),                        # causal with a window
    (2, 2, 64, 256, {"mask": "user"}, (32, 32, 128), 1),                      # causal with a user mask
    (2, 2, 40, 300, {}, (16, 16, 128), 64),                                   # split_k over the keys
])
def test_causal_loops_that_end_at_the_diagonal_give_the_same_bits(hq, hkv, sq, skv, opts, tiles, cores):
    """CAUSAL_END: each tile's loop over the keys ends at the block of the last key its last row sees, instead
    of visiting the blocks past the diagonal to skip them (ggml's); CAUSAL (a causal mask alone): the kernel also
    computes the mask instead of reading one. The outputs are those of ggml's loop over a built mask, bit for bit,
    whether the tile's rows see all, some or none of the keys, with a window or a user mask (where a mask is still
    built, and CAUSAL_END alone applies), or split_k."""
    q, k, v = _inputs(hq, hkv, sq, skv, 32, seed=5)
    opts = dict(opts)
    mask = _mask((sq, skv)) if opts.pop("mask", None) else None
    window = opts.get("window", 0)
    alone = mask is None and not window
    got = {}
    # (CAUSAL_END, CAUSAL_IN_KERNEL) -> the consts of the launch
    ways = {(False, False): (0, 0), (True, False): (1, 0), (True, True): (0, 1) if alone else (1, 0)}
    for (end, inside), want_consts in ways.items():
        nv2.clear_caches()   # (a causal mask once built is cached)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nv2, "CAUSAL_END", end)
            mp.setattr(nv2, "CAUSAL_IN_KERNEL", inside)
            with nv2.recording() as launches:
                got[end, inside] = nv2.run(q, k, v, (hq, sq, 32, hkv, skv), causal=True, mask=mask, window=window,
                                           scale=32 ** -0.5, softcap=0.0, out_dtype=np.float32,
                                           out=np.zeros(q.shape, np.float32), dev="cpu", tiles=tiles, cores=cores)
        fa = [kern for kern, *_ in launches if kern.name == "flash_attn_cm2"]
        assert [(kern.consts.get("CAUSAL_END", 0), kern.consts.get("CAUSAL", 0)) for kern in fa] == [want_consts]
        names = [kern.name for kern, *_ in launches]
        assert ("build_mask" in names) == (want_consts[1] == 0)
    np.testing.assert_array_equal(got[True, False], got[False, False])
    np.testing.assert_array_equal(got[True, True], got[False, False])
    want = flash_attention.reference(q, k, v, True, window=window or None, mask=mask)
    _close(got[True, True], np.nan_to_num(want), tol=1e-3)


@pytest.mark.parametrize("hq, hkv, sq, skv, window, tiles, cores", [
    (2, 1, 100, 100, 50, (32, 32, 128), 1),     # odd length, EDGE; the window starts inside a block
    (2, 2, 64, 192, 40, (32, 32, 128), 1),      # a KV cache longer than the queries: the first blocks unseen
    (2, 2, 90, 40, 7, (32, 32, 128), 1),        # more queries than keys: rows see none
    (2, 1, 70, 203, 1, (32, 32, 128), 1),       # a window of one key: each row its own (the output is V's row)
    (2, 2, 40, 300, 100, (16, 16, 128), 64),    # split_k over the keys: splits before the window see nothing
    (1, 1, 128, 128, 64, (32, 32, 128), 1),     # aligned, the window a multiple of the block
])
def test_a_sliding_window_computed_by_the_kernel_gives_the_built_masks_bits(hq, hkv, sq, skv, window, tiles, cores):
    """WINDOW (with CAUSAL): each row sees its ``window`` latest keys, the kernel hiding the others in the blocks
    that hold both, and each tile's loop starting at its first row's first block; the outputs are the built
    mask's bit for bit. Off by default (attention_nv2.WINDOW_IN_KERNEL) until timed on a GPU."""
    assert nv2.WINDOW_IN_KERNEL is False
    q, k, v = _inputs(hq, hkv, sq, skv, 32, seed=13)
    got = {}
    for inside in (False, True):
        nv2.clear_caches()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nv2, "WINDOW_IN_KERNEL", inside)
            with nv2.recording() as launches:
                got[inside] = nv2.run(q, k, v, (hq, sq, 32, hkv, skv), causal=True, mask=None, window=window,
                                      scale=32 ** -0.5, softcap=0.0, out_dtype=np.float32,
                                      out=np.zeros(q.shape, np.float32), dev="cpu", tiles=tiles, cores=cores)
        fa = [kern for kern, *_ in launches if kern.name == "flash_attn_cm2"]
        assert [(kern.consts.get("CAUSAL", 0), kern.consts.get("WINDOW", 0)) for kern in fa] == \
            [(1, window) if inside else (0, 0)]
        assert ("build_mask" in [kern.name for kern, *_ in launches]) == (not inside)
    np.testing.assert_array_equal(got[True], got[False])
    _close(got[True], np.nan_to_num(flash_attention.reference(q, k, v, True, window=window)), tol=1e-3)


def test_a_window_that_hides_no_key_is_causal_alone():
    """A window of Skv keys or more hides nothing causal does not: the kernel is CAUSAL alone (no WINDOW, no
    mask), whether or not windows are computed by the kernel."""
    q, k, v = _inputs(2, 1, 40, 60, 32)
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, causal=True, window=60, device="cpu", impl="nv2")
    assert [kern.consts.get("WINDOW", 0) for kern, *_ in launches] == [0]
    assert [kern.consts.get("CAUSAL", 0) for kern, *_ in launches] == [1]
    _close(out, flash_attention.reference(q, k, v, True), tol=1e-3)


@pytest.mark.parametrize("acc, out_dtype, d", [("f16", np.float32, 64), ("f32", np.float16, 80),
                                               ("f32", np.float32, 128)])
def test_a_causal_mask_computed_by_the_kernel_gives_the_built_masks_bits(acc, out_dtype, d):
    """CAUSAL with f16 accumulators (the f16 scores take -inf too), an f16 output stored by the kernel, D 80
    and 128, at an odd length with more keys than queries; on the interpreter with ops.attention's own tiles."""
    q, k, v = _inputs(2, 1, 75, 130, d, seed=11)
    got = {}
    for inside in (False, True):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nv2, "CAUSAL_IN_KERNEL", inside)
            with nv2.recording() as launches:
                got[inside] = ops.attention(q, k, v, causal=True, acc=acc, out_dtype=out_dtype, device="cpu",
                                            impl="nv2")
        assert [kern.consts.get("CAUSAL", 0) for kern, *_ in launches if kern.name == "flash_attn_cm2"] == [inside]
    np.testing.assert_array_equal(got[True], got[False])
    _close(got[True].astype(np.float32), flash_attention.reference(q, k, v, True), tol=4e-3 if acc == "f16" else 1e-3)


def test_the_causal_end_and_no_alibi_variants_validate_and_are_on():
    """CAUSAL_END is on for causal prefill (timed on the H200: 4096 tokens 814 -> 783 us, 2049 305 -> 292;
    benchmarks/notes/attention-masks-h200-2026-11-29.md); each variant validates and changes the module."""
    assert nv2.CAUSAL_END is True
    base = dict(l16=True, m16=True, edge=True, mask_fast=True)
    plain = nv2.fa_kernel(False, True, **base).disassemble()
    for extra in ({"causal_end": True}, {"no_alibi": True}, {"causal_end": True, "no_alibi": True}):
        kernel = nv2.fa_kernel(False, True, **base, **extra)
        assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
        assert kernel.disassemble() != plain


@pytest.mark.parametrize("edge", [False, True])
def test_the_causal_variant_validates_and_hides_keys_with_a_per_element_op(edge):
    """CAUSAL: one more OpCooperativeMatrixPerElementOpNV a loop (the diagonal blocks' -inf) than the kernel
    without a mask, a signed comparison of key and row in the function it calls, and no mask loads."""
    plain = nv2.fa_kernel(False, True, l16=True, m16=True, edge=edge).disassemble()
    kernel = nv2.fa_kernel(False, True, l16=True, m16=True, edge=edge, causal=True)
    assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
    text = kernel.disassemble()
    loops = 2 if edge else 1
    per_elem = "OpCooperativeMatrixPerElementOpNV"
    assert text.count(per_elem) == plain.count(per_elem) + loops
    assert "OpSGreaterThan" in text and "OpSGreaterThan" not in plain
    assert text.count("OpCooperativeMatrixLoadTensorNV") == plain.count("OpCooperativeMatrixLoadTensorNV")
    # and a sliding window: as many per-element ops (their function also hides the keys before the window)
    window = nv2.fa_kernel(False, True, l16=True, m16=True, edge=edge, causal=True, window=100)
    assert tools.validation_message(window.compile(), "vulkan1.3") is None
    wtext = window.disassemble()
    assert wtext.count(per_elem) == text.count(per_elem)
    assert "OpSLessThanEqual" in wtext and "OpSLessThanEqual" not in text


def test_no_alibi_leaves_out_the_slopes_and_the_branch_on_max_bias():
    """NO_ALIBI: no slope matrix, no comparison of max_bias with 0 before or inside the loop, no multiply of the
    mask by the slopes; MASK_FAST alone has all three."""
    base = dict(l16=True, m16=True, edge=True, mask_fast=True)
    fast = nv2.fa_kernel(False, True, **base).disassemble()
    bare = nv2.fa_kernel(False, True, **base, no_alibi=True).disassemble()
    for op in ("OpFOrdGreaterThan", "OpFMul", "OpFAdd"):
        assert bare.count(op) < fast.count(op), op


# --- attention sinks -----------------------------------------------------------------------------------

SINK_CASES = {   # (Hq, Hkv, Sq, Skv, D, options)
    "prefill_gqa_causal": (4, 2, 40, 70, 64, {"causal": True}),        # heads as ggml's batch, split over the keys
    "prefill_one_tile": (2, 2, 64, 64, 32, {}),                           # no split: the kernel applies the sinks
    "prefill_window_f16_out": (4, 1, 37, 200, 64, {"causal": True, "window": 50, "out_dtype": np.float16}),
    "prefill_mask_f16acc": (4, 4, 20, 20, 64, {"mask": True, "acc": "f16", "impl": "nv2"}),  # (else decode's)
    "decode_gqa": (8, 2, 1, 500, 64, {"causal": True}),                  # one token: the f32 decode kernel
    "decode_one_chunk": (8, 2, 1, 100, 64, {"chunks": 1}),               # ... one chunk: its sink is a second
    "decode_heads": (4, 4, 1, 300, 128, {}),
    "decode_mma": (16, 2, 3, 257, 64, {"causal": True, "mask": True}),   # 24 rows: the cooperative-matrix one
    "decode_as_ggml": (8, 2, 1, 500, 64, {"impl": "nv2"}),              # ggml's heads, its split_k reduce
    "khr_prefill": (4, 2, 40, 70, 64, {"causal": True, "impl": "khr"}),  # the KHR kernel: the sink at its end
    "khr_window_mask_f16_out": (4, 4, 37, 100, 32, {"causal": True, "window": 20, "mask": True, "impl": "khr",
                                                    "out_dtype": np.float16}),
}


@pytest.mark.parametrize("name", sorted(SINK_CASES))
def test_sinks_take_part_in_each_rows_softmax(name, monkeypatch):
    """``sinks``: one logit a query head, added to each row's softmax sum without a value. The decode kernels take
    them as one more chunk of each K/V head (``attention_decode.sinks_kernel``, then the launch that combines the
    chunks); ggml's kernel reads the sink of the query head whether the heads are ggml's heads (one query row) or
    its batch (SINK_BATCH, in the kernel and in the split_k reduce). Against the float64 model, and far enough from
    the result without sinks that ignoring them fails."""
    from coopdsl.ops import attention_decode

    hq, hkv, sq, skv, d, opts = SINK_CASES[name]
    opts = dict(opts)
    q, k, v = _inputs(hq, hkv, sq, skv, d, seed=21)
    if opts.pop("mask", False):
        opts["mask"] = _mask((sq, skv))
    if "chunks" in opts:
        chunks = opts.pop("chunks")
        monkeypatch.setattr(attention_decode, "default_chunks", lambda *a, **kw: chunks)
    # (a sink near the log of the keys a row sees weighs about as much as they do)
    sinks = (np.log(skv) + np.random.default_rng(22).uniform(-1.0, 1.0, hq)).astype(np.float32)
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, sinks=sinks, device="cpu", **opts)
    names = [kern.name for kern, *_ in launches]
    if name.startswith("decode") and name != "decode_as_ggml":
        assert names[1:] == [f"attention_decode_sinks_d{d}", f"attention_decode_combine_d{d}"]
        assert names[0].startswith("attention_decode_mma" if name == "decode_mma" else f"attention_decode_d{d}_r")
    elif name.startswith("khr"):
        assert names[-1] == "attention"
    else:
        fa = [kern for kern, *_ in launches if kern.name == "flash_attn_cm2"]
        assert [kern.consts.get("SINK_BATCH", 0) for kern in fa] == [int(sq > 1)]
    opts.pop("impl", None)
    ref = dict(causal=opts.get("causal", False), window=opts.get("window"), mask=opts.get("mask"))
    want = flash_attention.reference(q, k, v, sinks=sinks, **ref)
    without = flash_attention.reference(q, k, v, **ref)
    tol = 4e-3 if opts.get("acc") == "f16" or opts.get("out_dtype") == np.float16 else 1e-3
    assert np.abs(want - without).max() > 20 * tol * np.abs(want).max()
    _close(out.astype(np.float32), want, tol=tol)


def test_sinks_of_the_wrong_shape_or_type_are_refused(device):
    q, k, v = _inputs(4, 2, 3, 40, 64)
    ok = np.zeros(4, np.float32)
    for sinks, message in ((np.zeros(3, np.float32), r"sinks must hold one value per query head, shape \(4,\), "
                                                     r"got \(3,\)"),
                           (np.zeros((4, 1), np.float32), r"sinks must hold one value per query head, shape \(4,\), "
                                                          r"got \(4, 1\)"),
                           (np.zeros(4, np.int32), r"sinks must be float32 or float16 \(float32 when resident\), "
                                                   r"got int32"),
                           (np.zeros(4, np.float64), r"sinks must be float32 or float16 \(float32 when resident\), "
                                                     r"got float64")):
        with pytest.raises(ValueError, match=r"^attention: " + message):
            ops.attention(q, k, v, sinks=sinks, device="cpu")
    with pytest.raises(TypeError, match="sinks"):
        ops.attention(q, k, v, sinks=[0.0] * 4, device="cpu")
    from coopdsl.runtime.features import DeviceFeatureError

    if caps.offers_coopmat(device, 16, 16, 16) or caps.has_nv2(device):
        pytest.skip(f"{device.info.name} runs an attention kernel")
    with pytest.raises(DeviceFeatureError, match=r"^attention: .*VK_KHR_cooperative_matrix"):   # (as without sinks)
        ops.attention(q, k, v, sinks=ok, device=device)


def test_the_sink_variants_validate_and_read_the_batch_index():
    """SINK_BATCH: the flash-attention kernel and the split_k reduce read the sink of ggml's batch index (where
    ops.attention puts query heads when Sq > 1); ggml's (the default) read its head index."""
    from coopdsl.ops import fa_reduce

    for ggmls, batch in ((nv2.fa_kernel(False, True, l16=True, m16=True),
                          nv2.fa_kernel(False, True, l16=True, m16=True, sink_batch=True)),
                         (fa_reduce.kernel(False), fa_reduce.kernel(False, sink_batch=True))):
        assert tools.validation_message(batch.compile(), "vulkan1.3") is None
        assert batch.disassemble() != ggmls.disassemble()
    assert "SINK_BATCH" not in nv2.fa_kernel(False, True, l16=True, m16=True).consts


@pytest.mark.parametrize("impl", ["decode", "nv2", "khr"])
def test_infinite_and_nan_sinks_follow_the_docs(impl):
    """docs/ops.md: a +inf sink gives 0 rows (the formula's limit), -inf is no sink, NaN makes its head's rows NaN;
    the decode kernels' sink chunk (+inf taken as the largest f32) and ggml's kernel alike."""
    q, k, v = _inputs(4, 2, 1, 200, 64, seed=31)
    sinks = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    with nv2.recording() as launches:
        out = ops.attention(q, k, v, sinks=sinks, impl=impl, device="cpu")
    assert any(kern.name.startswith("attention_decode_sinks") for kern, *_ in launches) == (impl == "decode")
    assert (out[0] == 0).all()
    _close(out[1:2], flash_attention.reference(q, k, v)[1:2], tol=1e-3)
    assert np.isnan(out[2]).all() and np.isfinite(out[3]).all()


def test_the_decode_sinks_kernel_validates_and_writes_a_chunk():
    from coopdsl.ops import attention_decode

    kernel = attention_decode.sinks_kernel(128)
    assert tools.validation_message(kernel.compile(), "vulkan1.3") is None
    text = kernel.disassemble()
    assert "OpFOrdGreaterThan" in text and text.count("OpStore") >= 3   # (O zeros, M the sink, L 1)
