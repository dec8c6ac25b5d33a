"""coopdsl.ops.ggml_flash_attn: ggml's flash_attn_cm2.comp for F16 K/V, on the CPU interpreter.

Every launch is made as ggml makes it (coopdsl.ops.ggml_host: push constants packed to ggml's 128
bytes and read back at the offsets the kernel reflects, spec constants 0..15, the grid), and every
result is checked against a float64 model of FLASH_ATTN_EXT; split_k launches are checked twice:
the O/L/M scratch against the model of each split, and dst after a model of ggml's
flash_attn_split_k_reduce.comp. Tiles are the smallest the H100 allows at workgroup scope
(Br = Bc = 16 with 32 invocations) unless a case says otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pytest

from coopdsl.ops import ggml_flash_attn as fa
from coopdsl.ops import ggml_host as host
from coopdsl.spirv import tools

PIPELINES = {  # pipeline name -> (F16ACC, Clamp)
    "flash_attn_f32_f16_f16acc_cm2": (1, 1),
    "flash_attn_f32_f16_f32acc_cm2": (0, 1),
    "flash_attn_f32_f16_aligned_f16acc_cm2": (1, 0),
    "flash_attn_f32_f16_aligned_f32acc_cm2": (0, 0),
}


def kernel(f16acc: bool, mask_fast: int = 0, causal_end: int = 0, no_alibi: int = 0):
    """ggml's kernel, or (``mask_fast``) coopdsl's MASK_FAST variant of it, which ops.attention runs with a mask,
    or (``causal_end``) its CAUSAL_END variant, or (``no_alibi``) its NO_ALIBI variant (max_bias 0 promised)."""
    consts = {"F16ACC": int(f16acc)}
    if mask_fast:
        consts["MASK_FAST"] = mask_fast
    if no_alibi:
        consts["NO_ALIBI"] = no_alibi
    if causal_end:
        consts["CAUSAL_END"] = causal_end
    return fa.flash_attn_cm2.specialize(**consts)


# --- the interface --------------------------------------------------------------------------------


@pytest.mark.parametrize("hs", [64, 128])
@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipelines_validate(name, hs):
    f16acc, clamp = PIPELINES[name]
    spec = {"HSK": hs, "HSV": hs, "Br": 64, "Bc": 64, "WorkGroupSize": 128, "Clamp": clamp, "Flags": 7,
            "FaTypeK": 1, "FaTypeV": 1}
    binary = kernel(bool(f16acc)).compile(spec=spec, device="nvidia-h100")  # spirv-val runs here
    assert tools.validation_message(binary, "vulkan1.3") is None
    text = tools.disassemble(binary)
    assert re.search(r'OpEntryPoint GLCompute %\w+ "main"', text)
    assert re.search(r"OpExecutionModeId %\w+ LocalSizeId %WorkGroupSize %uint_1 %uint_1", text)
    assert "OpCooperativeMatrixLoadTensorNV" in text and "OpCooperativeMatrixStoreTensorNV" in text
    acc = "half" if f16acc else "float"
    assert re.search(r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row", text)
    assert re.search(rf"%\w+ = OpTypeCooperativeMatrixKHR %{acc} %uint_2 %\w+ %\w+ %uint_2", text)


def test_interface_is_ggmls():
    r = fa.flash_attn_cm2.reflect()
    assert r["entry_point"] == "main"
    assert r["workgroup_size_spec_ids"][0] == 0
    binds = [(b["name"], b["set"], b["binding"], b["readonly"]) for b in r["bindings"]]
    assert binds == [("q", 0, 0, True), ("k", 0, 1, True), ("v", 0, 2, True), ("m", 0, 3, True),
                     ("s", 0, 4, True), ("o", 0, 5, False), ("mo", 0, 6, True)]
    pc = r["push_constants"]
    assert pc["size"] == host.PUSH_SIZE == 128
    members = [(m["name"], m["offset"], m["type"]) for m in pc["members"]]
    assert members == [(f"p.{n}", 4 * i, "f32" if n in host.FLOAT_MEMBERS else "u32")
                       for i, n in enumerate(host.PUSH_MEMBERS)]
    specs = [(s["name"], s["id"]) for s in r["spec_constants"]]
    assert specs == [(n, i) for i, n in enumerate(host.SPEC_NAMES)]


def test_host_decisions_follow_ggml():
    # H100 defaults: 64 x 64 tiles, 128 invocations, aligned, no split for a large problem
    d = host.flash_attn_dispatch((128, 512, 32, 1), (128, 1024, 32, 1), (128, 1024, 32, 1), (1024, 512, 1, 1),
                                 scale=0.125)
    assert (d.Br, d.Bc, d.spec["WorkGroupSize"], d.split_k, d.gqa_ratio) == (64, 64, 128, 1, 1)
    assert d.pipeline == "flash_attn_f32_f16_aligned_f16acc_cm2" and d.grid == (8, 32, 1)
    assert d.use_mask_opt and d.spec["Flags"] == 3 and d.spec["Clamp"] == 0
    # one token, 32 heads sharing 8 KV heads: GQA (4 rows per tile), 32 x 32 tiles at 256 invocations,
    # split_k over the KV
    d = host.flash_attn_dispatch((128, 1, 32, 1), (128, 4096, 8, 1), (128, 4096, 8, 1), (4096, 1, 1, 1),
                                 prec_f32=True, logit_softcap=30.0, scale=0.125)
    assert (d.gqa_ratio, d.Br, d.Bc, d.spec["WorkGroupSize"]) == (4, 32, 32, 256)
    # split_k = 2 * 132 cores / 8 workgroups = 33, split_kv = 4096 / 33 rounded up to Bc = 128: 32 splits
    assert d.push["N"] == 4 and d.split_k == d.push["k_num"] == 32 and d.grid == (32, 8, 1)
    assert d.push["split_kv"] == 128 and d.pipeline == "flash_attn_f32_f16_aligned_f32acc_cm2"
    assert d.spec["Flags"] == 6 and np.float32(d.push["scale"]) == np.float32(0.125) / np.float32(30.0)
    # head size 72 needs the clamped variant
    d = host.flash_attn_dispatch((72, 64, 4, 1), (72, 256, 4, 1), (72, 256, 4, 1))
    assert d.pipeline == "flash_attn_f32_f16_f16acc_cm2"
    # ALiBi bases as the host computes them (n_head_log2 = 8 for 12 heads)
    d = host.flash_attn_dispatch((64, 64, 12, 1), (64, 256, 12, 1), (64, 256, 12, 1), max_bias=8.0, sinks=True)
    assert d.push["mask_n_head_log2"] == (1 << 24) | 8
    assert d.push["m0"] == pytest.approx(2 ** -1.0) and d.push["m1"] == pytest.approx(2 ** -0.5)
    packed = d.push_bytes()
    at = 4 * host.PUSH_MEMBERS.index("mask_n_head_log2")
    assert at == 104 and packed.nbytes == 128 and packed[at:at + 4].view(np.uint32)[0] == (1 << 24) | 8


# --- running it -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    B: int = 1           # batches (neq3)
    H: int = 2           # Q heads (neq2)
    N: int = 16          # query rows (neq1)
    KV: int = 32
    HSK: int = 32
    HSV: int = 32
    Hk: int = 0          # K/V heads (0: H)
    Bk: int = 0          # K/V batches (0: B)
    mask: str = ""       # "", "random" or "causal"
    mask_rows: int = 0   # nem1 (0: N)
    mask_heads: int = 1  # nem2
    mask_batch: int = 1  # nem3
    sinks: bool = False
    max_bias: float = 0.0
    softcap: float = 0.0
    f32acc: bool = False
    kv_permuted: bool = False  # K/V stored [B][KV][Hk][HS]: nb1 = Hk HS 2, nb2 = HS 2
    Br: int = 16
    Bc: int = 16
    wg: int = 32
    cores: int = 1       # shader cores (ggml's split_k heuristic); 1: no split_k for >= 2 workgroups
    mask_opt: str = ""   # "": as ggml decides; "lie": a mask_opt buffer that contradicts the mask
    seed: int = 0


# case -> (pipeline, gqa_ratio, split_k > 1, mask_opt)
CASES = {
    "plain": (Case(), ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, False)),
    "plain_f32acc": (Case(f32acc=True), ("flash_attn_f32_f16_aligned_f32acc_cm2", 1, False, False)),
    "mask": (Case(mask="random", N=16, KV=48, mask_rows=16),
             ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, False)),
    "mask_unaligned": (Case(mask="random", N=13, KV=37, f32acc=True),
                       ("flash_attn_f32_f16_f32acc_cm2", 1, False, False)),
    "mask_rows_padded": (Case(mask="causal", N=13, KV=37, mask_rows=16),
                         ("flash_attn_f32_f16_f16acc_cm2", 1, False, False)),
    "mask_per_head_batch_alibi": (Case(mask="random", B=2, H=4, N=16, KV=32, mask_rows=16, mask_heads=4,
                                       mask_batch=2, max_bias=8.0, f32acc=True),
                                  ("flash_attn_f32_f16_aligned_f32acc_cm2", 1, False, False)),
    "alibi_12_heads": (Case(mask="random", H=12, N=8, KV=32, mask_rows=16, max_bias=4.0, Hk=12),
                       ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, False)),
    "softcap": (Case(softcap=2.0, mask="random", N=13, KV=37), ("flash_attn_f32_f16_f16acc_cm2", 1, False, False)),
    "sinks": (Case(sinks=True, mask="causal", N=16, KV=32, mask_rows=16),
              ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, False)),
    "sinks_f32acc_unaligned": (Case(sinks=True, N=13, KV=37, f32acc=True),
                               ("flash_attn_f32_f16_f32acc_cm2", 1, False, False)),
    "head_sizes_48_32": (Case(HSK=48, HSV=32, mask="random", N=16, KV=32, mask_rows=16),
                         ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, False)),
    "head_size_40_clamped": (Case(HSK=40, HSV=40, N=16, KV=32, f32acc=True),
                             ("flash_attn_f32_f16_f32acc_cm2", 1, False, False)),
    "kv_permuted_batch_broadcast": (Case(B=2, Bk=1, H=4, Hk=2, N=16, KV=32, kv_permuted=True, mask="random",
                                         mask_rows=16, mask_batch=2),
                                    ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, False)),
    "gqa": (Case(H=8, Hk=2, N=3, KV=48, mask="random", cores=1),
            ("flash_attn_f32_f16_aligned_f16acc_cm2", 4, False, False)),
    "gqa_alibi_sinks_unaligned": (Case(H=8, Hk=2, N=5, KV=37, mask="random", max_bias=8.0, sinks=True,
                                       f32acc=True, cores=1),
                                  ("flash_attn_f32_f16_f32acc_cm2", 4, False, False)),
    "split_k": (Case(H=1, N=16, KV=64, mask="random", mask_rows=16, cores=2),
                ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, True, False)),
    "split_k_unaligned_sinks_softcap": (Case(H=2, N=13, KV=75, mask="causal", sinks=True, softcap=3.0,
                                             f32acc=True, cores=4),
                                        ("flash_attn_f32_f16_f32acc_cm2", 1, True, False)),
    "split_k_gqa": (Case(H=4, Hk=1, N=2, KV=64, mask="random", sinks=True, max_bias=2.0, cores=4),
                    ("flash_attn_f32_f16_aligned_f16acc_cm2", 4, True, False)),
    "split_k_gqa_f32acc_unaligned": (Case(H=6, Hk=2, N=1, KV=45, f32acc=True, cores=8, Br=16),
                                     ("flash_attn_f32_f16_f32acc_cm2", 3, True, False)),
    "mask_opt": (Case(H=1, N=32, KV=1048, mask="causal", mask_rows=32),
                 ("flash_attn_f32_f16_f16acc_cm2", 1, False, True)),
    "mask_opt_bits_are_obeyed": (Case(H=2, N=32, KV=1040, mask="random", mask_rows=32, mask_heads=2,
                                      mask_opt="lie"),
                                 ("flash_attn_f32_f16_aligned_f16acc_cm2", 1, False, True)),
    "ggml_tiles_64": (Case(H=2, N=40, KV=96, HSK=64, HSV=64, mask="causal", mask_rows=40, Br=64, Bc=64, wg=128),
                      ("flash_attn_f32_f16_f16acc_cm2", 1, False, False)),
    "ggml_tiles_32_gqa": (Case(H=16, Hk=2, N=3, KV=64, Br=32, Bc=32, wg=256, cores=1, sinks=True),
                          ("flash_attn_f32_f16_aligned_f16acc_cm2", 8, False, False)),
}


def _inputs(c: Case):
    rng = np.random.default_rng(c.seed)
    hk = c.Hk or c.H
    bk = c.Bk or c.B
    q = rng.uniform(-1.0, 1.0, (c.B, c.H, c.N, c.HSK)).astype(np.float32)
    k = rng.uniform(-1.0, 1.0, (bk, hk, c.KV, c.HSK)).astype(np.float16)
    v = rng.uniform(-1.0, 1.0, (bk, hk, c.KV, c.HSV)).astype(np.float16)
    mask = None
    if c.mask:
        rows = c.mask_rows or c.N
        if c.mask == "random":
            mask = rng.uniform(-2.0, 2.0, (c.mask_batch, c.mask_heads, rows, c.KV)).astype(np.float16)
            mask[rng.random(mask.shape) < 0.2] = -np.inf
            mask[..., 0] = 0.0  # every row keeps a key
        else:  # causal, the cache longer than the queries (KV - N earlier tokens)
            r = np.arange(rows)[:, None] + (c.KV - c.N)
            mask = np.where(np.arange(c.KV)[None, :] <= r, 0.0, -np.inf).astype(np.float16)
            mask = np.broadcast_to(mask, (c.mask_batch, c.mask_heads, rows, c.KV)).copy()
    sinks = rng.uniform(-2.0, 6.0, c.H).astype(np.float32) if c.sinks else None  # above and below M
    return q, k, v, mask, sinks


def _push_dict(push_bytes: np.ndarray) -> dict:
    """The push constants as the kernel reads them: each member at the offset its reflection gives, out
    of the 128 bytes ggml's struct holds."""
    out = {}
    for m in fa.flash_attn_cm2.reflect()["push_constants"]["members"]:
        dt = np.float32 if m["type"] == "f32" else np.uint32
        out[m["name"].split(".", 1)[1]] = np.frombuffer(push_bytes[m["offset"]:m["offset"] + 4].tobytes(), dt)[0].item()
    return out


def _dispatch(c: Case, mask) -> host.FaDispatch:
    hk, bk = c.Hk or c.H, c.Bk or c.B
    k_ne = (c.HSK, c.KV, hk, bk)
    v_ne = (c.HSV, c.KV, hk, bk)
    k_nb = v_nb = None
    if c.kv_permuted:
        k_nb = (2, hk * c.HSK * 2, c.HSK * 2, c.KV * hk * c.HSK * 2)
        v_nb = (2, hk * c.HSV * 2, c.HSV * 2, c.KV * hk * c.HSV * 2)
    mask_ne = tuple(reversed(mask.shape)) if mask is not None else None
    return host.flash_attn_dispatch((c.HSK, c.N, c.H, c.B), k_ne, v_ne, mask_ne, c.sinks, 1.0 / np.sqrt(c.HSK),
                                    c.max_bias, c.softcap, c.f32acc, k_nb=k_nb, v_nb=v_nb,
                                    device=host.FaDevice(shader_core_count=c.cores), Br=c.Br, Bc=c.Bc,
                                    workgroup_size=c.wg)


def _launch(c: Case, d: host.FaDispatch, q, k, v, mask, sinks, mo=None, mask_fast=0, causal_end=0,
            no_alibi=0) -> np.ndarray:
    f16acc, clamp = PIPELINES[d.pipeline]
    assert d.spec["Clamp"] == clamp and d.f16acc == bool(f16acc)
    qb = q.reshape(-1).view(np.uint8)
    if c.kv_permuted:  # [B][KV][Hk][HS] in memory
        k = np.ascontiguousarray(k.transpose(0, 2, 1, 3))
        v = np.ascontiguousarray(v.transpose(0, 2, 1, 3))
    out = np.full(d.split_k_floats if d.split_k > 1 else c.B * c.N * c.H * c.HSV, np.nan, np.float32)
    if mo is None and d.use_mask_opt:
        mo = host.mask_opt(mask, d.Br, d.Bc)
    # where ggml has no tensor it binds Q's buffer
    kern = kernel(d.f16acc, mask_fast, causal_end, no_alibi)
    kern.launch(d.grid, qb, k.reshape(-1).view(np.uint8), v.reshape(-1).view(np.uint8),
                mask.reshape(-1).view(np.uint8) if mask is not None else qb,
                sinks if sinks is not None else q.reshape(-1),
                out, mo if mo is not None else q.reshape(-1).view(np.uint32),
                _push_dict(d.push_bytes()), device="cpu", **d.spec)
    return out


def _close(got, want, tol):
    assert not np.isnan(got).any(), "elements never written"
    err = np.abs(got - want).max()
    assert err <= tol * max(0.1, np.abs(want).max()), f"max error {err}, largest value {np.abs(want).max()}"


def _check_split_k(c: Case, d: host.FaDispatch, scratch, q, k, mask, sinks, tol):
    """The scratch layout ggml's reduce shader reads: per split, the unscaled O, then L and M per row."""
    s = host.attention_scores(q, k, mask, 1.0 / np.sqrt(c.HSK), c.max_bias, c.softcap)  # (B, H, N, KV)
    hk, bk = c.Hk or c.H, c.Bk or c.B
    v64 = _inputs(c)[2].astype(np.float64)
    v64 = np.repeat(np.repeat(v64, c.B // bk, axis=0), c.H // hk, axis=1)
    kn, hsv = d.split_k, c.HSV
    o_part = scratch[:hsv * c.H * kn * c.N * c.B].reshape(c.B, c.N, kn, c.H, hsv)
    lm = scratch[hsv * c.H * kn * c.N * c.B:].reshape(c.B, c.N, kn, 2, c.H)
    offset = float(np.float16(fa.FATTN_KQ_MAX_OFFSET)) if d.f16acc else fa.FATTN_KQ_MAX_OFFSET
    m_init = -fa.ACC_TYPE_MAX / 2 if d.f16acc else fa.NEG_FLT_MAX_OVER_2
    for split in range(kn):
        cols = slice(split * d.split_kv, min(c.KV, (split + 1) * d.split_kv))
        ss = s[..., cols]
        dead = np.isneginf(ss.max(axis=-1))  # every key of this split masked: M keeps its start, L = O = 0
        m_ref = np.where(dead, 0.0, ss.max(axis=-1) + offset)  # (B, H, N)
        e = np.exp(ss - m_ref[..., None])
        l_ref = e.sum(axis=-1)
        o_ref = np.einsum("bhnk,bhkd->bhnd", e, v64[:, :, cols])
        got_m = lm[:, :, split, 1, :].transpose(0, 2, 1)
        got_l = lm[:, :, split, 0, :].transpose(0, 2, 1)
        got_o = o_part[:, :, split].transpose(0, 2, 1, 3)
        assert (got_m[dead] == np.float32(m_init)).all() and (got_l[dead] == 0).all() and (got_o[dead] == 0).all()
        _close(got_m[~dead], m_ref[~dead], tol)
        _close(got_l[~dead], l_ref[~dead], tol)
        _close(got_o[~dead], o_ref[~dead], tol)
    return host.split_k_reduce(scratch, hsv, c.H, c.N, c.B, kn, sinks)


@pytest.mark.parametrize("name, mask_fast, no_alibi", [(name, 0, 0) for name in sorted(CASES)]
                         + [(name, 1, 0) for name in sorted(CASES) if CASES[name][0].mask]
                         + [(name, 1, 1) for name in sorted(CASES)
                            if CASES[name][0].mask and CASES[name][0].max_bias == 0.0])
def test_flash_attn_ext(name, mask_fast, no_alibi):
    """ggml's kernel against ggml's reference at each case, and coopdsl's MASK_FAST variant of it (no per-block
    maximum of the mask where mask_opt ran, no add of a block mask_opt marks all 0, no ALiBi slopes multiplied
    when max_bias is 0; ALiBi, sinks, GQA, split_k and mask_opt bits that lie are obeyed the same), with
    NO_ALIBI too (ops.attention's launch) where max_bias is 0."""
    c, (pipeline, gqa, split, mask_opt) = CASES[name]
    q, k, v, mask, sinks = _inputs(c)
    d = _dispatch(c, mask)
    assert (d.pipeline, d.gqa_ratio, d.split_k > 1, d.use_mask_opt) == (pipeline, gqa, split, mask_opt)
    mo = None
    scale = 1.0 / np.sqrt(c.HSK)
    if c.mask_opt == "lie":
        # a mask_opt buffer that says "all -inf" (skip the block) or "all zero" (do not read the mask)
        # where the mask says otherwise: the kernel must obey the bits
        nd, tile_rows, nem2, nem3 = d.mask_opt_dims
        bits = host.mask_opt(mask, d.Br, d.Bc).reshape(nem3, nem2, tile_rows, nd)
        obeyed = mask.astype(np.float32).copy()

        def claim(head, tile_row, block, code):
            word, pos = divmod(block, 16)
            old = bits[0, head, tile_row, word] & ~np.uint32(3 << 2 * pos)
            bits[0, head, tile_row, word] = old | np.uint32(code << 2 * pos)
            rows, cols = slice(tile_row * d.Br, (tile_row + 1) * d.Br), slice(block * d.Bc, (block + 1) * d.Bc)
            obeyed[0, head, rows, cols] = -np.inf if code == host.MASK_OPT_ALL_NEG_INF else 0.0

        for tile_row in range(tile_rows):
            claim(0, tile_row, 2, host.MASK_OPT_ALL_NEG_INF)
            claim(1, tile_row, 5, host.MASK_OPT_ALL_NEG_INF)
            claim(0, tile_row, 3, host.MASK_OPT_ALL_ZERO)
            claim(1, tile_row, 17, host.MASK_OPT_ALL_ZERO)
        claim(1, 1, 40, host.MASK_OPT_ALL_NEG_INF)
        mo = bits.reshape(-1)
        want = host.flash_attn_ext_reference(q, k, v, obeyed.astype(np.float16), sinks, scale, c.max_bias,
                                             c.softcap)
    else:
        want = host.flash_attn_ext_reference(q, k, v, mask, sinks, scale, c.max_bias, c.softcap)
    out = _launch(c, d, q, k, v, mask, sinks, mo, mask_fast, no_alibi=no_alibi)
    tol = 2e-3 if c.f32acc else 4e-3  # O is an f16 accumulator in both; so are P, L and M with f16acc
    if d.split_k > 1:
        out = _check_split_k(c, d, out, q, k, mask, sinks, tol)
    _close(out.reshape(c.B, c.N, c.H, c.HSV), want, tol)


def test_f16acc_clamps_the_output():
    # O is an f16 accumulator in both variants; past f16's range it becomes inf, which the f16acc
    # kernel clamps to +-65504 (ACC_TYPE_MAX) and the f32acc kernel stores as it is
    for f32acc, finite in ((False, True), (True, False)):
        c = replace(CASES["plain"][0], f32acc=f32acc)
        q, k, v, mask, sinks = _inputs(c)
        v = np.full_like(v, 60000.0)
        d = _dispatch(c, mask)
        out = _launch(c, d, q, k, v, mask, sinks)
        assert np.isfinite(out).all() == finite
        if finite:
            assert (np.abs(out) <= 65504.0).all() and (out == 65504.0).any()


@pytest.mark.parametrize("n, kv, split", [(40, 96, False), (45, 77, False), (40, 8, False), (40, 300, True)])
def test_causal_end_stops_each_tile_at_its_diagonal_block(n, kv, split):
    """CAUSAL_END ends each row tile's loop at the block of the last key its last row sees (causal aligned at the
    end): with a mask that hides nothing, row r of tile i = r // Br attends to exactly the keys before
    ceil((min((i + 1) Br, N) + KV - N) / Bc) Bc, and to none where that is not above 0 (more rows than keys);
    split_k's splits past the diagonal run no block."""
    c = Case(H=2, N=n, KV=kv, mask="random", f32acc=True, cores=8 if split else 1, seed=3)
    q, k, v, mask, sinks = _inputs(c)
    mask[...] = 0.0
    d = _dispatch(c, mask)
    assert (d.split_k > 1) == split
    limit = np.zeros(n, np.int64)
    for r in range(n):
        seen = min((r // d.Br + 1) * d.Br, n) + kv - n
        limit[r] = min(kv, -(-seen // d.Bc) * d.Bc) if seen > 0 else 0
    cut = np.where(np.arange(kv)[None, :] < limit[:, None], 0.0, -np.inf).astype(np.float16)
    want = host.flash_attn_ext_reference(q, k, v, np.broadcast_to(cut, mask.shape).copy(), sinks,
                                         1.0 / np.sqrt(c.HSK), 0.0, 0.0)
    want = np.nan_to_num(want)   # (rows that see no key: 0, as the kernel's 1/L)
    out = _launch(c, d, q, k, v, mask, sinks, causal_end=1)
    if d.split_k > 1:
        out = host.split_k_reduce(out, c.HSV, c.H, c.N, c.B, d.split_k, sinks)
    _close(out.reshape(c.B, c.N, c.H, c.HSV), want, 2e-3)
