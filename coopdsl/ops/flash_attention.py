"""``attention``: forward scaled-dot-product attention for inference (flash attention).

O = softmax(scale * Q K^T [soft-capped] + mask) V per query head, with Q of shape
(Hq, Sq, D), K and V of shape (Hkv, Skv, D) (Hkv dividing Hq: grouped-query and multi-query
attention), causal and sliding-window masks aligned at the end of the keys (a KV cache), an
additive mask, and f32 or f16 output. Two kernels:

* on devices with ``VK_NV_cooperative_matrix2`` and on the CPU interpreter: ggml's
  flash-attention kernel (:mod:`coopdsl.ops.ggml_flash_attn`, a coopdsl port of llama.cpp's
  ``flash_attn_cm2.comp``), launched as ggml launches it, with split_k and its reduce for
  decoding (:mod:`coopdsl.ops.attention_nv2`);
* elsewhere (any device with ``VK_KHR_cooperative_matrix`` and subgroups of 32): :func:`kernel`
  below. One workgroup (one subgroup) takes 16 queries of one head and walks the keys in blocks
  of 16: S = Q K^T with cooperative matrices (K read column-major from shared memory as K^T), an
  online softmax per query row in scalar code (running max and sum, the running output
  rescaled; causal, window, the mask and the soft-cap applied there), then O += P V with
  cooperative matrices. Rows and keys past the ends are zero-filled and masked, so no length
  need be a multiple of 16; D is a compile-time parameter (a multiple of 16). Only the element
  copies and the per-row softmax branch; every matrix operation stays in uniform control flow.
  It is simple rather than fast (about 1% of torch's attention on an H100).
"""

from __future__ import annotations

import math
import numbers
import re
from functools import cache
from typing import Any, cast, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, i32, u32
from coopdsl._numbers import LiteralError, fit_named

from . import attention_decode, attention_decode_mma, attention_tune, hot
from . import attention_nv2 as nv2
from . import device_caps as caps
from .attention_mask import mask_values
from .operands import check_device, check_out, flag, is_bfloat16, operand

NEG = -1.0e30  # the running max's start (finite: exp(NEG - m) is 0); scores at or below it count as masked
NEG_INF = float("-inf")
IMPLS = ("nv2", "khr", "decode")


def _fits_f32(value: Any) -> bool:
    """Whether a number fits the f32 the kernels take it as (:mod:`coopdsl._numbers` decides)."""
    try:
        fit_named(value, "f32")
    except LiteralError:
        return False
    return True


@cache
def kernel(d: int, out_f16: bool = False) -> cd.Kernel:
    """The KHR attention kernel for head size ``d`` (a multiple of 16), writing f32 (or f16) output; with
    ``has_sinks``, the sink of each query head (``s``) takes part in its rows' softmax."""
    nd = d // 16
    tile_loads = 16 * d // 32  # elements of a 16 x d tile each invocation copies
    out_t = f16 if out_f16 else f32

    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def attention(q: cd.Buffer[f16], k: cd.Buffer[f16], v: cd.Buffer[f16], m: cd.Buffer[f16], o: cd.Buffer[out_t],
                  s: cd.Buffer[f32], Sq: u32, Skv: u32, scale: f32, causal: u32, off: i32, window: u32, group: u32,
                  softcap: f32, has_mask: u32, mask_stride: u32, has_sinks: u32):
        q0 = cd.workgroup_id.x * 16
        head = cd.workgroup_id.y
        qbase = head * Sq * d
        kvbase = (head // group) * Skv * d
        mbase = head * mask_stride  # 0: one mask for every head
        lid = cd.local_invocation_index
        sq = cd.shared(f16, 16 * d)
        sk = cd.shared(f16, 16 * d)
        sv = cd.shared(f16, 16 * d)
        so = cd.shared(f32, 16 * d)
        ss = cd.shared(f32, 256)
        sp = cd.shared(f16, 256)
        row_max = cd.shared(f32, 16)
        row_sum = cd.shared(f32, 16)
        rescale = cd.shared(f32, 16)
        for t in cd.static_range(tile_loads):
            e = lid + t * 32
            r = e // d
            val = f16(0.0)
            if q0 + r < Sq:
                val = q[qbase + (q0 + r) * d + e % d]
            sq[e] = val
            so[e] = 0.0
        if lid < 16:
            row_max[lid] = NEG
            row_sum[lid] = 0.0
        start = u32(0)
        end = Skv
        if window != 0:  # earlier key blocks are outside every row's window
            lo = i32(q0) + off - i32(window) + 1
            if lo > 0:
                start = (u32(lo) // 16) * 16
        if causal != 0:  # later key blocks are all masked
            hi = i32(q0) + 16 + off
            if hi < i32(end):
                end = u32(max(hi, 0))
        cd.barrier()
        for j0 in range(start, end, 16):
            for t in cd.static_range(tile_loads):
                e = lid + t * 32
                r = e // d
                kv = f16(0.0)
                vv = f16(0.0)
                if j0 + r < Skv:
                    kv = k[kvbase + (j0 + r) * d + e % d]
                    vv = v[kvbase + (j0 + r) * d + e % d]
                sk[e] = kv
                sv[e] = vv
            cd.barrier()
            scores = Acc[f32, 16, 16].splat(0.0)
            for c in cd.static_range(nd):  # S = Q K^T: K^T's column j is K's row j
                scores = cd.muladd(MatA[f16, 16, 16].load(sq, c * 16, stride=d),
                                   MatB[f16, 16, 16].load(sk, c * 16, stride=d, layout=ColumnMajor), scores)
            scores.store(ss, 0, stride=16)
            cd.barrier()
            if lid < 16:  # online softmax of row `lid`
                row = q0 + lid
                last = i32(row) + off  # the last key this row sees (causal)
                m_old = row_max[lid]
                m_new = m_old
                for c in cd.static_range(16):
                    col = j0 + c
                    s = ss[lid * 16 + c] * scale
                    if softcap != 0.0:
                        s = softcap * cd.tanh(s)
                    if has_mask != 0 and row < Sq and col < Skv:
                        s += f32(m[mbase + row * Skv + col])
                    if col >= Skv or (causal != 0 and i32(col) > last) or \
                            (window != 0 and i32(col) < last - i32(window) + 1):
                        s = f32(NEG_INF)
                    ss[lid * 16 + c] = s
                    m_new = max(m_new, s)
                total = 0.0
                for c in cd.static_range(16):
                    s = ss[lid * 16 + c]
                    p = 0.0
                    if s > NEG:
                        p = cd.exp(s - m_new)
                    sp[lid * 16 + c] = f16(p)
                    total += p
                a = cd.exp(m_old - m_new)
                rescale[lid] = a
                row_sum[lid] = row_sum[lid] * a + total
                row_max[lid] = m_new
            cd.barrier()
            for t in cd.static_range(tile_loads):
                e = lid + t * 32
                so[e] = so[e] * rescale[e // d]
            cd.barrier()
            p_tile = MatA[f16, 16, 16].load(sp, 0, stride=16)
            for c in cd.static_range(nd):
                acc = Acc[f32, 16, 16].load(so, c * 16, stride=d)
                acc = cd.muladd(p_tile, MatB[f16, 16, 16].load(sv, c * 16, stride=d), acc)
                acc.store(so, c * 16, stride=d)
            cd.barrier()
        for t in cd.static_range(tile_loads):
            e = lid + t * 32
            r = e // d
            if q0 + r < Sq:
                total = row_sum[r]
                acc_e = so[e]
                if has_sinks != 0:  # the head's sink: one more logit in the row's softmax, without a value
                    sink = s[head]
                    mx = row_max[r]
                    if sink > mx:
                        fac = cd.exp(mx - sink)
                        acc_e = acc_e * fac
                        total = total * fac + 1.0
                    else:
                        total += cd.exp(sink - mx)
                val = 0.0
                if total != 0.0:  # a row that sees no key gives 0
                    val = acc_e / total
                o[qbase + (q0 + r) * d + e % d] = out_t(val)

    return cast(cd.Kernel, attention)


# --- the public op -------------------------------------------------------------------------------


def _fail(msg: str) -> ValueError:
    return ValueError(f"attention: {msg}")


def _check_array(name: str, x: Any) -> Any:
    """``x`` as the op takes it (:func:`coopdsl.ops.operands.operand`); ``out`` must also be C-contiguous."""
    x = operand("attention", name, x)
    if isinstance(x, np.ndarray) and not x.flags.c_contiguous and name == "out":
        raise _fail("out must be C-contiguous")
    return x


def _resolve_device(device: Any, arrays: list[Any]) -> Any:
    """'cpu' for the interpreter, else a runtime Device (the resident arrays' one by default)."""
    from coopdsl.interp import wants_cpu

    check_device("attention", device, tuple(arrays))
    resident = [x for x in arrays if nv2.is_resident(x)]
    if device is None or isinstance(device, str):
        if wants_cpu(device):  # (raises for any other string)
            return "cpu"
        if resident:
            return resident[0].device
        from ..runtime import default_device

        return default_device()
    return device


def attention(q: Any, k: Any, v: Any, *, causal: bool = False, mask: Any = None, window: int | None = None,
              scale: float | None = None, softcap: float = 0.0, out_dtype: Any = np.float32, out: Any = None,
              device: Any = None, acc: str = "f32", impl: str | None = None, tune: bool = False,
              sinks: Any = None) -> Any:
    """Attention ``softmax(scale * q k^T [soft-capped] + mask) v`` per query head.

    * ``q``: (Hq, Sq, D); ``k``, ``v``: (Hkv, Skv, D) with Hkv dividing Hq (grouped-query
      attention; Hkv = 1 is multi-query). 2-D inputs (S, D) are one head. Sq may differ from Skv.
      q may be float16, float32 or bf16 (uint16 bit patterns, :func:`coopdsl.ops.to_bf16`); k and v
      float16 or bf16. The decode kernel of 1 to 4 query rows a K/V head reads bf16 K/V as they are
      (widened exactly); the other kernels' bf16 K/V are converted to f16 first (their format; values
      past 65504 become inf). numpy arrays or resident ``coopdsl.runtime.Array``s.
    * D: a multiple of 16 from 16 to 256 (64, 80, 96, 128 and 256 are tested).
    * ``causal=True``: query i sees keys j <= i + Skv - Sq (the diagonal aligned at the end of the
      keys, as for new tokens after a KV cache). ``window=W``: query i also no longer sees keys
      j < i + Skv - Sq - W + 1 (a sliding window of the W latest keys). ``mask``: an additive float
      mask (Sq, Skv) or (Hq, Sq, Skv) (-inf hides a key; resident masks float16 or float32),
      combined with causal and window. A row that sees no key gives 0.
    * ``scale``: default 1 / sqrt(D). ``softcap`` > 0: scores -> softcap * tanh(scores / softcap)
      (ggml's logit soft-cap, applied before the mask).
    * ``sinks``: None, or one float per query head, shape (Hq,) (float32 or float16; resident: float32): an
      attention sink, a logit each row of the head adds to its softmax without a value (gpt-oss's; ggml's
      FLASH_ATTN_EXT sinks): ``o = sum_j e^(s_j - m) v_j / (sum_j e^(s_j - m) + e^(sink - m))``, m the largest
      of the row's scores and its sink. Every kernel takes them (the decode kernels as one more chunk of each
      K/V head, in the launch that combines the chunks).
    * ``out_dtype``: np.float32 or np.float16. The result has q's shape: ``out`` if given (numpy or
      resident, of that dtype and shape), else a new numpy array, or a new resident Array on q's
      device when q is resident.
    * ``acc``: "f32" (default, llama.cpp's choice) or "f16": the component type of ggml's scores,
      probabilities and softmax statistics, and of the running output (ggml keeps that f16 in both; f16's
      65504 is then reached by a row spreading its weight over many keys with large V values).
    * ``device``: a ``coopdsl.runtime.Device``, ``"cpu"`` (the interpreter), or None (the
      resident arrays' device, else the default one). ``impl``: "nv2", "khr" or "decode" forces a kernel
      ("decode" takes at most 16 query rows per K/V head, 128 on cooperative matrices with D up to 128).
    * ``tune=True`` (GPU): the first call of a problem times the default tiles and a few others (decoding: the chunk
      count and a few others, with each decode kernel that takes the problem) and keeps the fastest in the
      autotune cache; later calls (with or without ``tune``) use the cached choice
      (:mod:`coopdsl.ops.attention_tune`, ``docs/autotune.md``).

    Decoding (at most 16 query rows per K/V head, ``(Hq / Hkv) * Sq``; to 128 with cooperative matrices where
    :func:`coopdsl.ops.attention_decode.matrices_beat_prefill`) runs the
    flash-decoding kernels of :mod:`coopdsl.ops.attention_decode` on any device with subgroups of 32 and on the
    interpreter (``acc`` does not apply; ``tune`` times their chunk counts): to 4 rows lane = key in f32 arithmetic
    throughout; from 5 rows (to 128) and D up to 128, where the device has 16 x 16 x 16 f16 -> f32 cooperative
    matrices, :mod:`coopdsl.ops.attention_decode_mma`'s products on them, 16 rows a workgroup (Q scaled and rounded
    to f16 as in ggml's kernel, f32 sums and softmax). Otherwise, on a device with
    VK_NV_cooperative_matrix2 and on the interpreter, ggml's flash-attention kernel runs (with ggml's split_k
    over the keys when there are few query rows); elsewhere the simple KHR kernel of this module (``acc``
    does not apply there). A device that runs none of them is a ``DeviceFeatureError`` saying what each needs;
    one that cannot run the kernel ``impl`` names, a ``DeviceFeatureError`` that starts ``attention: impl=...``.
    """
    arrays = (q, k, v, out) if mask is None else (q, k, v, mask, out)
    if sinks is not None:
        arrays += (sinks,)
    options = (causal, window, scale, softcap, out_dtype, device, acc, impl, tune, mask is None, sinks is None)
    if not nv2.is_recording() and (replayed := _HOT.replay(arrays, options)) is not None:
        return replayed  # the same resident arrays and options as a recent call: its launches again (ops/hot.py)
    fills = nv2.cache_fills()
    with nv2.recording() as launches:
        try:
            result = _attention(q, k, v, causal=causal, mask=mask, window=window, scale=scale, softcap=softcap,
                                out_dtype=out_dtype, out=out, device=device, acc=acc, impl=impl, tune=tune,
                                sinks=sinks)
        except Exception as e:
            from ..runtime.features import DeviceFeatureError

            if impl is None or not isinstance(e, DeviceFeatureError) or str(e.args[0]).startswith("attention:"):
                raise
            # (the launch's own message names and quotes a line of this library: say which op and kernel it was)
            why = re.sub(r"^.*?:\d+:\d+: error: ", "", str(e.args[0]).split("\n")[0])
            raise DeviceFeatureError(f"attention: impl={impl!r} cannot run on this device: {why}",
                                     e.mismatches) from None
    if nv2.cache_fills() == fills:   # (a call that built a cached mask launched work the next one does not)
        _HOT.remember(arrays, options, launches, made=result if out is None else None)
    else:
        _HOT.forget()
    return result


_HOT = hot.Hot()  # attention's recent calls on resident arrays


def _attention(q: Any, k: Any, v: Any, *, causal: bool, mask: Any, window: int | None, scale: float | None,
               softcap: float, out_dtype: Any, out: Any, device: Any, acc: str, impl: str | None,
               tune: bool, sinks: Any = None) -> Any:
    """:func:`attention` without the replay of a remembered call: checks, plans and launches."""
    q, k, v = _check_array("q", q), _check_array("k", k), _check_array("v", v)
    causal, tune = flag("attention", "causal", causal), flag("attention", "tune", tune)
    if mask is not None:   # (an ml_dtypes bfloat16 mask holds values, not bits: as float32, exactly)
        mask = _check_array("mask", mask.astype(np.float32) if is_bfloat16(mask) else mask)
    if out is not None:
        out = _check_array("out", out)
    if sinks is not None:
        sinks = _check_array("sinks", sinks)
    qs, ks, vs = tuple(q.shape), tuple(k.shape), tuple(v.shape)
    if len(qs) not in (2, 3):
        raise _fail(f"q must be (heads, S, D) or (S, D), got shape {qs}")
    if len(ks) != len(qs):
        raise _fail(f"k has shape {ks}, q has {qs}: both (heads, S, D) or both (S, D)")
    if vs != ks:
        raise _fail(f"v has shape {vs} but k has shape {ks}: k and v must have the same shape")
    hq, sq, d = (1, *qs) if len(qs) == 2 else qs
    hkv, skv, dk = (1, *ks) if len(ks) == 2 else ks
    if dk != d:
        raise _fail(f"k has shape {ks}, q has {qs}: the head size D differs ({dk} vs {d})")
    if hkv == 0 and hq != 0:
        raise _fail(f"k and v have 0 heads (shape {ks}): attention needs at least one K/V head")
    if hkv and hq % hkv:
        raise _fail(f"k and v have {hkv} heads, q has {hq}: the K/V heads must divide the query heads")
    if d % 16 or not 16 <= d <= 256:
        raise _fail(f"the head size D must be a multiple of 16 from 16 to 256, got {d}")
    for name, x, ok in (("q", q, ("f16", "f32", "bf16")), ("k", k, ("f16", "bf16")), ("v", v, ("f16", "bf16"))):
        dt = np.dtype(x.dtype)
        if dt not in (np.float16, np.float32, np.uint16) or nv2.kind_of(x) not in ok:
            allowed = "float16, float32 or bf16 (uint16 bit patterns)" if name == "q" else \
                "float16 or bf16 (uint16 bit patterns)"
            raise _fail(f"{name} must be {allowed}, got {dt.name}")
    if mask is not None:
        ms = tuple(mask.shape)
        if ms not in ((sq, skv), (1, sq, skv), (hq, sq, skv)):
            raise _fail(f"mask must be (Sq, Skv) = {(sq, skv)} (or (1, Sq, Skv)) for every head or (Hq, Sq, Skv) = "
                        f"{(hq, sq, skv)} per head, got {ms}")
        mdt = np.dtype(mask.dtype)
        if mdt.kind != "f" or (nv2.is_resident(mask) and mdt not in (np.float16, np.float32)):
            raise _fail(f"mask must hold floats (float16 or float32 when resident), got {mdt.name}")
    if sinks is not None:
        sdt = np.dtype(sinks.dtype)
        if tuple(sinks.shape) != (hq,):
            raise _fail(f"sinks must hold one value per query head, shape ({hq},), got {tuple(sinks.shape)}")
        if sdt not in (np.float32, np.float16) or (nv2.is_resident(sinks) and sdt != np.float32):
            raise _fail(f"sinks must be float32 or float16 (float32 when resident), got {sdt.name}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1):
        raise _fail(f"window must be a positive int (keys a query sees), got {window!r}")
    if isinstance(softcap, bool) or not isinstance(softcap, numbers.Real) or not float(softcap) >= 0.0 \
            or math.isinf(softcap) or not _fits_f32(softcap):
        raise _fail(f"softcap must be 0 (off) or a positive finite number, got {softcap!r} (the kernels take it as "
                    f"f32: at most 3.4028235e38)")
    softcap = float(softcap)
    try:
        odt = np.dtype(out_dtype)
    except TypeError:
        odt = None
    if odt not in (np.float32, np.float16):
        raise _fail(f"out_dtype must be np.float32 or np.float16, got {out_dtype!r}")
    if acc not in ("f32", "f16"):
        raise _fail(f"acc must be 'f32' or 'f16', got {acc!r}")
    if impl is not None and impl not in IMPLS:
        raise _fail(f"impl must be None, 'nv2', 'khr' or 'decode', got {impl!r}")
    if out is not None:
        check_out("attention", out, qs, odt)
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, numbers.Real)
                              or not math.isfinite(scale) or not _fits_f32(scale)):
        raise _fail(f"scale must be None (1 / sqrt(D)) or a finite number, got {scale!r} (the kernels take it as "
                    f"f32: at most 3.4028235e38 in magnitude)")
    dev = _resolve_device(device, [q, k, v, mask, out, sinks])
    if out is None:
        out = np.empty(qs, odt) if not nv2.is_resident(q) else nv2.empty(qs, odt, dev)
    if sq == 0 or hq == 0:
        return out
    if skv == 0:  # every row sees no key
        if isinstance(out, np.ndarray):
            out[...] = 0
        else:
            out.write(np.zeros(qs, odt))
        return out
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    win = min(int(window or 0), sq + skv)   # (a window wider than every key hides none, and fits the kernels' u32)
    dims = (hq, sq, d, hkv, skv)
    impl_given = impl
    if impl is None:
        impl = default_impl(dims, dev)
    if softcap and abs(scale) / softcap > SOFTCAP_Q_SCALE_MAX and (
            impl == "nv2" or impl == "decode" and attention_decode.default_how(dims, dev) == "mma"):
        # ggml's kernel and the cooperative-matrix decode kernel round Q * scale / softcap to f16: past this a
        # query value of 32 overflows it (inf, then NaN); the KHR kernel applies the soft-cap in f32
        if impl_given is not None:
            raise _fail(f"softcap={softcap!r} with scale={scale!r}: impl={impl!r} rounds Q * scale / softcap to "
                        f"f16 here, which overflows past scale / softcap = {SOFTCAP_Q_SCALE_MAX:g}; use "
                        f"impl='khr', or None (which picks it)")
        impl = "khr"
    if impl == "decode":
        rows = attention_decode.rows_per_head(dims)
        if not attention_decode.hows(dims, dev):
            raise _fail(f"impl='decode' takes at most {attention_decode.MAX_ROWS} query rows per K/V head "
                        f"((Hq / Hkv) * Sq), or {attention_decode_mma.MAX_ROWS} on a device with 16 x 16 x 16 f16 "
                        f"cooperative matrices and D a multiple of 16 up to {attention_decode_mma.MAX_D}; got {rows} "
                        f"rows, D {dims[2]}")
        chunks, how = None, None
        if not isinstance(dev, str):
            prob = attention_tune.problem(dims, causal=bool(causal), window=win, masked=mask is not None, acc="f32",
                                          f16_out=odt == np.float16)
            stored, (chunks, how) = attention_tune.decode_lookup(prob, dev)
            if tune and not stored:
                timer = attention_tune.LaunchTimer()

                def time_decode(c: Any) -> float:
                    return timer(attention_decode.plan(q, k, v, dims, causal=bool(causal), mask=mask, window=win,
                                                       scale=scale, softcap=softcap, out_dtype=odt, out=out, dev=dev,
                                                       chunks=c[0] if c else None,
                                                       how=c[1] if c and len(c) > 1 else None, sinks=sinks))
                mine = attention_decode.default_how(dims, dev)
                keys = dims[4] - attention_decode.visible_keys(dims[1], dims[4], win)   # (what plan cuts into chunks)
                cores = caps.shader_cores(dev)
                default = attention_decode.default_chunks(dims[3], keys, cores, mine)
                other = [h for h in attention_decode.hows(dims, dev) if h != mine]
                chunks, how = attention_tune.decode_tune(prob, dev, time_decode, default, other[0] if other else None,
                                                         attention_decode.variants(dims),
                                                         attention_decode.default_chunks(dims[3], keys, cores))
        return attention_decode.run(q, k, v, dims, causal=bool(causal), mask=mask, window=win, scale=scale,
                                    softcap=softcap, out_dtype=odt, out=out, dev=dev, chunks=chunks, how=how,
                                    sinks=sinks)
    if impl == "nv2":
        tiles = None
        if not isinstance(dev, str):
            prob = attention_tune.problem(dims, causal=bool(causal), window=win, masked=mask is not None, acc=acc,
                                          f16_out=odt == np.float16)
            stored, tiles = attention_tune.lookup(prob, dev)
            if tune and not stored:
                tile_timer = attention_tune.LaunchTimer()

                def time_call(t: Any) -> float:
                    with nv2.recording(isolated=True) as launches:   # (the call runs: it checks the tiles work)
                        nv2.run(q, k, v, dims, causal=bool(causal), mask=mask, window=win, scale=scale,
                                softcap=softcap, out_dtype=odt, out=out, dev=dev, acc=acc, tiles=t, sinks=sinks)
                    return tile_timer(launches)
                tiles = attention_tune.tune(prob, dev, time_call)
        return nv2.run(q, k, v, dims, causal=bool(causal), mask=mask, window=win, scale=scale, softcap=softcap,
                       out_dtype=odt, out=out, dev=dev, acc=acc, tiles=tiles, sinks=sinks)
    if impl_given is None and not isinstance(dev, str) and not caps.offers_coopmat(dev, 16, 16, 16):
        raise _runs_none(dims, dev, any(nv2.is_resident(a) for a in (q, k, v)))
    return _khr(q, k, v, dims, causal=bool(causal), mask=mask, window=win, scale=scale, softcap=softcap,
                out_dtype=odt, out=out, dev=dev, sinks=sinks)


def _runs_none(dims: tuple[int, int, int, int, int], dev: Any, resident: bool = False) -> Exception:
    """The error for a device that runs none of the kernels: what each one needs (the KHR kernel's launch would
    blame only its cooperative matrices, though a decoding call's kernel is missing subgroups of 32), and where
    the op runs instead (with ``resident`` operands: the interpreter on their contents, as numpy arrays)."""
    from ..runtime.features import DeviceFeatureError, hinted

    info = dev.info
    lo, hi = caps.subgroup_sizes(dev)
    sizes = f"{lo}" if lo == hi else f"{lo} to {hi}"
    rows = attention_decode.rows_per_head(dims)
    decode = (f"the decode kernels, for this call's {rows} query rows a K/V head, need subgroups of 32 (it runs "
              f"{sizes})" if rows <= attention_decode.MAX_ROWS else
              f"the decode kernels take at most {attention_decode.MAX_ROWS} query rows a K/V head, or "
              f"{attention_decode_mma.MAX_ROWS} on 16 x 16 x 16 f16 cooperative matrices (this call has {rows})")
    text = (f"attention: {getattr(info, 'name', dev)} runs none of ops.attention's kernels: {decode}, ggml's "
            f"flash_attn_cm2 needs VK_NV_cooperative_matrix2, and the KHR kernel 16 x 16 x 16 f16 cooperative "
            f"matrices (VK_KHR_cooperative_matrix)")
    return DeviceFeatureError(text + hot.resident_hint("attention") if resident else hinted(text))


# the largest scale / softcap for which the kernels that round Q * scale / softcap to f16 run (see _attention): f16's
# 65504 holds query values to 32 (soft-caps in use are 30-50 with scales about 0.1: a ratio near 0.003)
SOFTCAP_Q_SCALE_MAX = 2048.0


def default_impl(dims: tuple[int, int, int, int, int], dev: Any) -> str:
    """The kernel :func:`attention` runs by default for ``dims`` = (Hq, Sq, D, Hkv, Skv) on ``dev`` (a runtime
    Device or "cpu"): "decode" (:mod:`coopdsl.ops.attention_decode`) where
    :func:`coopdsl.ops.attention_decode.takes` (decoding: at most 16 query rows per K/V head, or up to 128 of grouped
    heads on cooperative matrices), else "nv2" (ggml's kernel) on the interpreter and on devices with
    VK_NV_cooperative_matrix2, "khr" elsewhere."""
    if attention_decode.takes(dims, dev):
        return "decode"
    return "nv2" if isinstance(dev, str) or caps.has_nv2(dev) else "khr"


def _khr(q: Any, k: Any, v: Any, dims: tuple[int, int, int, int, int], *, causal: bool, mask: Any, window: int,
         scale: float, softcap: float, out_dtype: Any, out: Any, dev: Any, sinks: Any = None) -> Any:
    """The KHR kernel for checked arguments (see :func:`attention`)."""
    hq, sq, d, hkv, skv = dims
    qh = nv2.as_kind(q, "f16", hq * sq * d, dev)
    kh = nv2.as_kind(k, "f16", hkv * skv * d, dev)
    vh = nv2.as_kind(v, "f16", hkv * skv * d, dev)
    m, mask_stride = qh, 0
    if mask is not None:
        heads = hq if len(mask.shape) == 3 and mask.shape[0] != 1 else 1
        if not isinstance(mask, np.ndarray) and np.dtype(mask.dtype) == np.float16:
            m = mask
        else:
            m = nv2.build_mask(nv2.MaskSpec(sq, skv, False, 0, heads), mask, dev)
        mask_stride = sq * skv if heads > 1 else 0
    if softcap:
        scale = float(np.float32(scale) / np.float32(softcap))
    if sinks is not None:
        sd = nv2.view(nv2.as_kind(sinks, "f32", hq, dev), np.float32)
    else:
        sd = nv2.scratch("unused", 4, np.uint32, dev).as_(np.float32)   # (bound, not read)
    nv2.go(kernel(d, np.dtype(out_dtype) == np.float16), (-(-sq // 16), hq, 1), nv2.view(qh, np.float16),
           nv2.view(kh, np.float16), nv2.view(vh, np.float16), nv2.view(m, np.float16), nv2.view(out, out.dtype), sd,
           sq, skv, scale, int(causal), skv - sq, window, hq // hkv, softcap, int(mask is not None), mask_stride,
           int(sinks is not None), device=nv2.launch_device(dev))
    return out


# --- the model ----------------------------------------------------------------------------------


def reference(q: Any, k: Any, v: Any, causal: bool = False, scale: float | None = None, *, mask: Any = None,
              window: int | None = None, softcap: float = 0.0, sinks: Any = None) -> np.ndarray:
    """The float64 numpy model of :func:`attention` (bf16 inputs as uint16 bit patterns); rows that see no
    key give 0; ``sinks`` (Hq,) add ``e^(sink - m)`` to each row's sum."""
    def f64(x: Any) -> np.ndarray:
        x = np.asarray(x)
        if x.dtype == np.uint16:
            x = (x.astype(np.uint32) << 16).view(np.float32)
        return cast(np.ndarray, x.astype(np.float64))

    q64, k64, v64 = f64(q), f64(k), f64(v)
    two_d = q64.ndim == 2
    if two_d:
        q64, k64, v64 = q64[None], k64[None], v64[None]
    hq, sq, d = q64.shape
    hkv, skv, _ = k64.shape
    k64 = np.repeat(k64, hq // hkv, axis=0)
    v64 = np.repeat(v64, hq // hkv, axis=0)
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    s = np.matmul(q64, k64.transpose(0, 2, 1)) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = s + mask_values(mask)      # as every kernel reads it: f16, -inf below -65504
    last = np.arange(sq)[:, None] + (skv - sq)
    j = np.arange(skv)[None, :]
    hidden = np.zeros((sq, skv), bool)
    if causal:
        hidden |= j > last
    if window:
        hidden |= j < last - window + 1
    s = np.where(hidden, -np.inf, s)
    mx = s.max(axis=-1, keepdims=True)
    sk = None
    if sinks is not None:
        sk = np.asarray(sinks, np.float64).reshape(-1, 1, 1)
        mx = np.maximum(mx, sk)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(s - mx)
    total = e.sum(axis=-1, keepdims=True)
    if sk is not None:
        total = total + np.exp(sk - mx)
    o = np.matmul(e, v64) / np.where(total == 0.0, 1.0, total)
    return cast(np.ndarray, o[0] if two_d else o)
