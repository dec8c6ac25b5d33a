"""The host side of ``ops.attention`` on devices with ``VK_NV_cooperative_matrix2`` (and on the CPU
interpreter): ggml's flash-attention kernel (:mod:`coopdsl.ops.ggml_flash_attn`) launched as
ggml's ``ggml_vk_flash_attn`` launches it (:func:`coopdsl.ops.ggml_host.flash_attn_dispatch`),
with the split_k reduce (:mod:`coopdsl.ops.fa_reduce`) and the mask_opt pass
(:mod:`coopdsl.ops.fa_mask_opt`) in coopdsl, plus the small kernels around them: the f16
additive mask of ``causal``/``window`` (combined with a user mask), and element-type conversions
(bf16 to f32 for Q, bf16 to f16 for K/V, f32 to f16 for the output where split_k or grouped heads store it
per element; f16 Q goes to the kernel as it is, through its ``Q_F16`` variant, and an f16 output stored through
the kernel's tensor layout is written by it, through its ``D_F16`` variant).

Tensors in ggml's terms. ``ops.attention`` takes Q (Hq, Sq, D), K and V (Hkv, Skv, D) and
returns O (Hq, Sq, D). ggml's kernel reads Q as ``[D, rows, heads, batch]`` and writes dst as
``[D, heads, rows, batch]`` (rows and heads swapped), so the heads are given as ggml's *batch*
dimension (``ne3``): Q ``ne = (D, Sq, 1, Hq)``, K/V ``(D, Skv, 1, Hkv)`` (grouped-query
attention through ggml's batch broadcast ``iq3 / (Hq / Hkv)``), dst ``[D, 1, Sq, Hq]``, which
is O's memory order. With one query row (decoding) both orders are the same, and the heads stay
ggml's heads (``ne = (D, 1, Hq, 1)``), so that ggml's grouped-query path applies: one workgroup
takes the Hq / Hkv query heads sharing a K/V head as the rows of its tile, and reads that K/V
head once. ggml's split_k (several workgroups per row over ranges of keys, then the reduce)
gives one query token enough workgroups to fill the GPU.
"""

import contextlib
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, cast, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import f16, f32, i32, u16, u32, vec2, vec4

from . import device_caps as caps
from . import fa_mask_opt, fa_reduce
from . import ggml_host as host
from .attention_mask import mask_f16
from .bf16_bits import bf16_as_f16
from .ggml_flash_attn import flash_attn_cm2
from .operands import is_resident as is_resident

NEG_INF = float("-inf")
GROUP = 256          # invocations of the element-wise kernels
MAX_GROUPS = 65535   # their grid (each invocation strides over the rest)

# element kinds of the conversion kernel: coopdsl type (bf16 travels as uint16 bit patterns)
KINDS = {"f16": f16, "f32": f32, "bf16": u16}


# --- kernels -------------------------------------------------------------------------------------


# the largest head size (V's) for which the f32 pipeline keeps the row sums in a Br x 16 matrix (flash_attn_cm2's
# L16 variant) instead of ggml's Br x Bc (a product with a Bc x Bc matrix of ones), and the largest for which the
# row maxima and rescale factors are Br x 16 too (M16: a quarter of the exponentials for eM at Bc 64, one more
# smear of M back to Br x Bc). On the H200, 32 heads x 4096, f16 output, one call
# (benchmarks/results/attention-m16-*-h200-2026-11-28.md): with both D 64 757 -> 663 us, D 80 945 -> 916-943,
# D 96 1085 -> 1045-1053, D 128 1273 -> 1245, causal 886 -> 866; L16 alone was slower at D 128 (1309) and M16 at
# D 256 (Bc 32: 1616 with L16 alone, 1677-1692 with both, 1666 with neither). 0 turns them off
L16_MAX_HEAD = 256
M16_MAX_HEAD = 128


def small_sums(disp: host.FaDispatch, d: int, dev: Any, q_f16: bool) -> tuple[bool, bool]:
    """Whether the f32 pipeline runs with its row sums in a Br x 16 matrix (``L16``: head size at most
    :data:`L16_MAX_HEAD`), and whether with its row maxima and rescale factors Br x 16 too (``M16``: at most
    :data:`M16_MAX_HEAD`), for this launch: both need a device that offers that kernel's matrices at this
    launch's tile and workgroup size (NVIDIA offers Br x 16 workgroup matrices with 128 invocations, not with
    256)."""
    if disp.f16acc or d > L16_MAX_HEAD:
        return False, False
    m16 = d <= M16_MAX_HEAD
    if not offered(dev, fa_kernel(False, q_f16, l16=True, m16=m16), disp):
        return False, False
    return True, m16


# ops.attention's own tiles (Br, Bc, workgroup size) where ggml's tuning gives (64, 64, 128): without a mask and to
# this head size, 128 query rows a workgroup of 128 invocations. On the H200, 32 heads x 4096, f16 output, one call
# (benchmarks/results/attention-m16-tiles-h200-2026-11-28.md): D 80 928 -> 789 us, D 96 1053 -> 930, D 64 676 ->
# 649; with the causal mask D 80 620 -> 653, D 96 691 -> 820, and D 128 1251 -> 1287 without it, so neither.
# 0 turns it off
WIDE_ROWS_MAX_HEAD = 96
WIDE_ROWS = (128, 64, 128)


def stores_f16(disp: host.FaDispatch, d: int, f16_out: bool) -> bool:
    """Whether the launch ``disp`` stores an f16 output itself (the f32 pipeline's ``D_F16``): where it stores
    through its tensor layout (no split_k, ``gqa_ratio`` 1) and its rows start at multiples of 16 bytes (NV2's
    rule), instead of an f32 scratch and a conversion launch."""
    return f16_out and not disp.f16acc and disp.split_k == 1 and disp.gqa_ratio == 1 and d % 8 == 0


def wide_rows(disp: host.FaDispatch, d: int, masked: bool, dev: Any, q_f16: bool, f16_out: bool,
              redo: Any) -> host.FaDispatch:
    """``disp`` with :data:`WIDE_ROWS` tiles (``redo(tiles)`` makes that launch) where they are ops.attention's
    choice for it (see :data:`WIDE_ROWS_MAX_HEAD`) and the device offers the kernel's matrices there; else
    ``disp``."""
    if (masked or disp.f16acc or d > WIDE_ROWS_MAX_HEAD or disp.split_k != 1 or disp.gqa_ratio != 1
            or (disp.Br, disp.Bc, disp.spec["WorkGroupSize"]) != (64, 64, 128)):
        return disp
    wide = cast(host.FaDispatch, redo(WIDE_ROWS))
    if wide.split_k != 1:
        return disp
    l16, m16 = small_sums(wide, d, dev, q_f16)
    kernel = fa_kernel(False, q_f16, l16=l16, d_f16=stores_f16(wide, d, f16_out), m16=m16)
    return wide if offered(dev, kernel, wide) else disp


def edge_only(disp: host.FaDispatch, q_f16: bool) -> bool:
    """Whether the launch ``disp`` of ggml's unaligned pipeline (KV not a multiple of Bc) can clamp only its last
    block of keys (``fa_kernel(edge=True)``): the Q, K and V strides are multiples of 8 values, as they are for
    ``ops.attention``'s contiguous arrays with D a multiple of 16 (ggml's rule for its aligned pipeline, less
    the KV rule).  H200, 32 query heads on 8, D 128, causal, 1000 tokens: 280 us a call with every load clamped
    against 95 at 1024 tokens, 112 with this and mask_opt at any width (``benchmarks/attention_shapes.py``,
    ``benchmarks/results/attention-unaligned-h200-2026-11-29.md``)."""
    if disp.aligned:
        return False
    p = disp.push
    strides = [p["nb01"], p["nb11"], p["nb21"]]
    if disp.gqa_ratio > 1:
        strides.append(p["nb02"] // (2 if q_f16 else 4))
    return all(s % 8 == 0 for s in strides) and disp.spec["HSK"] % 16 == 0 and disp.spec["HSV"] % 16 == 0


# invocations of a mask_opt workgroup (ggml's 128): a workgroup reads 16 blocks of the mask, so a mask shared by the
# heads of a 777-token prompt is 13 workgroups, too few to keep enough loads in flight at 128 invocations each
MASK_OPT_BLOCK_SIZE = 512


def mask_opt_block_size(dev: Any) -> int:
    """:data:`MASK_OPT_BLOCK_SIZE`, or fewer where ``dev`` (a runtime Device) takes fewer invocations a workgroup
    (Vulkan asks for 128 at least: ggml's size); the interpreter ("cpu") takes any."""
    info = getattr(dev, "info", None)
    limit = getattr(info, "max_workgroup_invocations", 0) or MASK_OPT_BLOCK_SIZE
    return max(fa_mask_opt.BLOCK_SIZE, min(MASK_OPT_BLOCK_SIZE, limit // 32 * 32))


# causal prefill: each tile's loop over the keys ends at its diagonal (fa_kernel(causal_end=True)), instead of
# visiting the blocks past it to skip them: on the H200, 32 heads, D 128, 4096 tokens 814 -> 783 us, 2049
# 305 -> 292, 777 the same (benchmarks/attention_masks.py --causal-end off|on)
CAUSAL_END = True

# a causal mask alone (no window, no user mask) of prefill is computed by the kernel (fa_kernel(causal=True)):
# no Sq x Skv f16 mask built and cached per shape (2 GiB at 32768 tokens), no mask_opt pass or bits read
CAUSAL_IN_KERNEL = True
# and with a sliding window (causal, no mask; fa_kernel(causal=True, window=W), one kernel per W): no mask, and the
# loop starts at each tile's first visible block, where a built mask's loop visits every block from the first
# and skips the hidden ones; bit for bit the built mask's outputs on the interpreter, not yet timed on a GPU
# (benchmarks/attention_masks.py --masks window --window-in-kernel on|off)
WINDOW_IN_KERNEL = False


# per device (held weakly), per (kernel, launch's specialization): whether the device offers the kernel's matrices
_offered: weakref.WeakKeyDictionary[Any, dict[Any, bool]] = weakref.WeakKeyDictionary()


def offered(dev: Any, kernel: cd.Kernel, disp: host.FaDispatch) -> bool:
    """Whether ``dev`` (a runtime Device, "cpu", or anything :func:`coopdsl.devices.load_profile` takes) offers the
    cooperative matrices of ``kernel`` at ``disp``'s specialization (``coopdsl.devices`` decides; the interpreter
    takes any)."""
    from ..devices.check import mismatches

    if dev == "cpu":
        return True
    spec = tuple(sorted(disp.spec.items()))
    try:
        known = _offered.setdefault(dev, {})
    except TypeError:   # (a profile name or dict: not weakly referenceable; asked every time)
        known = {}
    key = (kernel, spec)
    if key not in known:
        known[key] = not mismatches(kernel.reflect(), dev, dict(spec))
    return known[key]


@cache
def fa_kernel(f16acc: bool, q_f16: bool = False, l16: bool = False, d_f16: bool = False,
              m16: bool = False, edge: bool = False, mask_fast: bool = False,
              mask_rows_8: bool = False, causal_end: bool = False, no_alibi: bool = False,
              causal: bool = False, window: int = 0, sink_batch: bool = False) -> cd.Kernel:
    """ggml's flash_attn_cm2 with f16 (``f16acc``) or f32 softmax accumulators, reading Q as f32 (ggml's) or,
    with ``q_f16``, as f16 (no conversion launch first).  With f32 accumulators the running output O is f32 too
    (``O_F32``; ggml keeps it f16 in both pipelines, where a flat row over many keys with large V values passes
    65504 and gives inf: 2049 keys of |V| ~ 300, or 33000 of |V| ~ 50), and with ``l16`` the row sums L are a
    Br x 16 matrix (``L16``: P times a Bc x 16 matrix of ones, where ggml multiplies by Bc x Bc), and with ``m16``
    too the row maxima and rescale factors (``M16``: Br x 16 exponentials a step for eM).  ``d_f16``: the
    output is written as f16 (``D_F16``; only where the kernel stores through its tensor layout: no split_k,
    ``gqa_ratio`` 1).  ``edge``: for the unaligned pipeline (``Clamp`` 1: KV not a multiple of Bc) whose Q, K
    and V strides are multiples of 8 values, only the last block of keys loads K and V through the clamped
    layouts (``EDGE``; ggml clamps every load there).  ``mask_fast`` (for a launch with a mask): the kernel
    trusts the mask_opt bits to skip the blocks whose mask is all -inf, where ggml's also reduces each loaded
    block of the mask to its maximum to find them, and with ``edge`` loads the mask's blocks inside the keys
    and the mask's rows unclamped (``MASK_FAST``); ``mask_rows_8`` too: the mask's rows (KV keys) are a multiple
    of 8 values, which the kernel then tells the driver (``MASK_FAST`` 2, as ggml's aligned pipeline does).
    ``causal_end`` (the mask is causal, at least): each tile's loop over the keys ends at the block of the last
    key its last row sees (``CAUSAL_END``; ggml's visits every block and skips those the mask_opt bits mark),
    the same output bit for bit (:data:`CAUSAL_END`, on).  ``no_alibi``: the launch's ``max_bias`` is 0, so the
    kernel builds no ALiBi slopes and adds the mask without a branch on it (``NO_ALIBI``; ``ops.attention``
    always launches so: its ALiBi, if any, is in the mask).  ``causal`` (a launch without a mask, one query
    row a tile row: ``gqa_ratio`` 1): the kernel computes the causal mask (aligned at the end) itself, hiding the
    keys past each row's diagonal in the blocks that cross it, and ends each tile's loop there (``CAUSAL``): no
    mask of Sq x Skv values, no mask_opt pass, and the same output bit for bit as the mask's
    (:data:`CAUSAL_IN_KERNEL`); with ``window`` > 0 (and ``causal``) a sliding window of that many keys too, the
    loop starting at the tile's first row's first key (``WINDOW``; :data:`WINDOW_IN_KERNEL`).  ``sink_batch``: the
    attention sinks are read by ggml's batch index, where ops.attention puts the query heads when Sq > 1
    (``SINK_BATCH``)."""
    f32acc = not f16acc
    switches = {"EDGE": edge, "CAUSAL_END": causal_end, "NO_ALIBI": no_alibi, "CAUSAL": causal,
                "SINK_BATCH": sink_batch, "Q_F16": q_f16, "O_F32": f32acc, "L16": f32acc and l16,
                "M16": f32acc and l16 and m16, "D_F16": d_f16}
    consts = {"F16ACC": int(f16acc)} | {name: 1 for name, on in switches.items() if on}
    if mask_fast:
        consts["MASK_FAST"] = 2 if mask_rows_8 else 1
    if causal and window:
        consts["WINDOW"] = window
    return cast(cd.Kernel, flash_attn_cm2.specialize(**consts))


@cache
def convert_kernel(src: str, dst: str) -> cd.Kernel:
    """``y[i] = dst(x[i])`` for ``n`` elements; ``src``/``dst`` are keys of :data:`KINDS` (a bf16
    source is read as bit patterns and widened exactly; f32 to f16 rounds, past 65504 to inf)."""
    s_t, d_t = KINDS[src], KINDS[dst]
    from_bf16 = src == "bf16"

    @cd.kernel(workgroup_size=(GROUP, 1, 1))
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def convert(x: cd.Buffer[s_t], y: cd.Buffer[d_t], n: u32):
        i = cd.global_invocation_id.x
        stride = cd.num_workgroups.x * GROUP
        while i < n:
            if from_bf16:
                val = cd.bitcast(u32(x[i]) << 16, f32)
            else:
                val = f32(x[i])
            y[i] = d_t(val)
            i += stride

    return cast(cd.Kernel, convert)


@cache
def bf16_f16_kernel() -> cd.Kernel:
    """bf16 to f16 8 values an invocation (``uvec4`` in, ``uvec4`` out, ``n8`` of them): :func:`convert_kernel`'s
    result (each widened exactly, then rounded to f16) with 16-byte loads and stores, for the K and V of the
    prefill kernels (a 2-byte access an invocation read and wrote about a third of the GPU's bandwidth)."""

    @cd.kernel(workgroup_size=(GROUP, 1, 1))
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def convert_bf16_f16_x8(x: cd.Buffer[vec4[u32]], y: cd.Buffer[vec4[u32]], n8: u32):
        i = cd.global_invocation_id.x
        stride = cd.num_workgroups.x * GROUP
        while i < n8:
            y[i] = bf16_as_f16(x[i])
            i += stride

    return cast(cd.Kernel, convert_bf16_f16_x8)


@cache
def mask_kernel(user_t: Any) -> cd.Kernel:
    """The f16 additive mask of ``n`` elements, rows of ``Skv`` keys, ``Sq`` rows a head: a user mask
    (``user_t`` f16 or f32; element ``i % user_len``, so a shared (Sq, Skv) mask repeats over the
    heads; values below -65504 become -inf, above 65504 65504) plus -inf where ``causal`` hides key
    j from query row i (j > i + off) and where ``window`` does (j < i + off - window + 1)."""

    @cd.kernel(workgroup_size=(GROUP, 1, 1))
    @no_type_check
    def build_mask(user: cd.Buffer[user_t], out: cd.Buffer[f16], n: u32, Skv: u32, Sq: u32, off: i32,
                   causal: u32, window: u32, user_len: u32):
        i = cd.global_invocation_id.x
        stride = cd.num_workgroups.x * GROUP
        while i < n:
            j = i32(i % Skv)
            last = i32((i // Skv) % Sq) + off  # the last key row i sees
            val = f16(0.0)
            if user_len != 0:
                val = mask_f16(f32(user[i % user_len]))
            if causal != 0 and j > last:
                val = f16(NEG_INF)
            if window != 0 and j < last - i32(window) + 1:
                val = f16(NEG_INF)
            out[i] = val
            i += stride

    return cast(cd.Kernel, build_mask)


@cache
def mask_f32_x8_kernel() -> cd.Kernel:
    """:func:`mask_kernel`'s result for an f32 user mask alone (no causal, no window, one value an element: a per
    head mask), 8 values an invocation (two ``vec4`` of f32 in, a ``uvec4`` of f16 pairs out, ``n8`` of them):
    16- and 32-byte accesses where :func:`mask_kernel` reads 4 bytes and writes 2 an invocation (H200, MPT-7B's
    32-head ALiBi mask at 777 tokens: 31 us, where :func:`mask_kernel` took 82)."""

    @cd.func
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def pair(a, b):
        return cd.bitcast(vec2[f16](mask_f16(a), mask_f16(b)), u32)

    @cd.kernel(workgroup_size=(GROUP, 1, 1))
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def build_mask_f32_x8(user: cd.Buffer[vec4[f32]], out: cd.Buffer[vec4[u32]], n8: u32):
        i = cd.global_invocation_id.x
        stride = cd.num_workgroups.x * GROUP
        while i < n8:
            a = user[2 * i]
            b = user[2 * i + 1]
            out[i] = vec4[u32](pair(a.x, a.y), pair(a.z, a.w), pair(b.x, b.y), pair(b.z, b.w))
            i += stride

    return cast(cd.Kernel, build_mask_f32_x8)


def go_x8(kernel: cd.Kernel, x: Any, out: Any, n: int, dev: Any) -> Any:
    """Launch an 8-values-an-invocation element-wise ``kernel`` (``vec4`` buffers in, a ``uvec4`` of f16 pairs
    out, ``n // 8`` of them) on ``x`` (already viewed as the kernel's scalar type) into ``out`` (``n`` f16
    values); returns ``out``."""
    x4, y4 = x, view(out, np.uint32)
    if isinstance(x4, np.ndarray):   # (numpy: vec4 buffers take (n, 4) arrays)
        x4, y4 = x4.reshape(-1, 4), y4.reshape(-1, 4)
    go(kernel, elementwise_grid(n // 8), x4, y4, n // 8, device=launch_device(dev))
    return out


def elementwise_grid(n: int) -> tuple[int]:
    return (max(1, min(-(-n // GROUP), MAX_GROUPS)),)


# --- devices and arrays --------------------------------------------------------------------------


def empty(shape: tuple[int, ...], dtype: Any, dev: Any) -> Any:
    """An uninitialised array on ``dev``: numpy on the interpreter, a resident Array on a GPU."""
    if isinstance(dev, str):
        return np.empty(shape, dtype)
    from ..runtime import empty as rt_empty

    return rt_empty(shape, dtype, device=dev)


class Owned:
    """An array this module made (a cached mask, a scratch buffer) with its views, made once."""

    def __init__(self, arr: Any):
        self.arr = arr
        self.views: dict[Any, Any] = {}

    def as_(self, dtype: Any) -> Any:
        v = self.views.get(dtype)
        if v is None:
            v = self.views[dtype] = view(self.arr, dtype)
        return v


# scratch buffers per (device, role): the largest one needed so far, reused by every call (launches on a
# device run in order, each after a full barrier, so a call never overwrites what an earlier one still reads)
_scratch: dict[tuple[Any, str], Owned] = {}


def scratch(role: str, n: int, dtype: Any, dev: Any) -> Owned:
    """A buffer of at least ``n`` elements of ``dtype`` on ``dev`` for ``role`` (numpy: a new one)."""
    if isinstance(dev, str):
        return Owned(np.empty((n,), dtype))
    key = (dev, role)
    s = _scratch.get(key)
    if s is None or s.arr.size < n or s.arr.device is not dev:
        s = _scratch[key] = Owned(empty((max(n, 4),), dtype, dev))
    return s


def upload(x: np.ndarray, dev: Any) -> Any:
    if isinstance(dev, str):
        return x
    from ..runtime import array

    return array(x, device=dev)


def view(x: Any, dtype: Any) -> Any:
    """The memory of ``x`` (numpy or resident) as a flat ``dtype`` array (resident: a view)."""
    if isinstance(x, np.ndarray):
        return x.reshape(-1).view(dtype)
    return x if np.dtype(x.dtype) == np.dtype(dtype) else x.view(dtype)


def launch_device(dev: Any) -> Any:
    return "cpu" if isinstance(dev, str) else dev


_recording: list[Any] | None = None


@contextlib.contextmanager
def recording(isolated: bool = False) -> Iterator[list[Any]]:
    """Collects every kernel launch ``ops.attention`` makes in the block (both paths), as
    ``(kernel, grid, args, kwargs)``: a benchmark can time each with ``kernel.bench(grid, *args, **kwargs)``
    (``benchmarks/attention_bench.py``). The launches still run. Recordings nest: an enclosing one also
    gets the launches of the blocks inside it, unless the inner one is ``isolated`` (a tuner's trial runs)."""
    global _recording
    outer = _recording
    mine: list[Any] = []
    _recording = mine
    try:
        yield mine
    finally:
        _recording = outer
        if outer is not None and not isolated:
            outer.extend(mine)


def is_recording() -> bool:
    """Whether a :func:`recording` is open."""
    return _recording is not None


def go(kernel: cd.Kernel, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> None:
    """``kernel.launch(grid, *args, **kwargs)``, noted when :func:`recording`."""
    if _recording is not None:
        _recording.append((kernel, grid, args, kwargs))
    kernel.launch(grid, *args, **kwargs)


def convert(x: Any, src: str, dst: str, n: int, dev: Any, out: Any = None) -> Any:
    """``x`` (on ``dev``) converted from ``src`` to ``dst`` by :func:`convert_kernel` (bf16 to f16, ``n`` a
    multiple of 8: :func:`bf16_f16_kernel`): a new array, or ``out``."""
    if out is None:
        out = empty((n,), np.float16 if dst == "f16" else np.float32, dev)
    if (src, dst) == ("bf16", "f16") and n % 8 == 0 and all(a.shape[-1] % 2 == 0 for a in (x, out)):
        # (a resident array views as 32-bit words only with an even last dimension)
        return go_x8(bf16_f16_kernel(), view(x, np.uint32), out, n, dev)
    go(convert_kernel(src, dst), elementwise_grid(n), view(x, x.dtype), view(out, out.dtype), n,
       device=launch_device(dev))
    return out


_KIND_OF = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.uint16): "bf16"}


def kind_of(x: Any) -> str:
    """'f16', 'f32' or 'bf16' (uint16 bit patterns) for the dtype of ``x``."""
    return _KIND_OF[np.dtype(x.dtype)]


def as_kind(x: Any, kind: str, n: int, dev: Any, role: str | None = None) -> Any:
    """``x`` (numpy, or resident on ``dev``) as ``kind`` ('f16' or 'f32') on ``dev``: numpy inputs are
    converted on the host and uploaded, resident ones of another kind converted on the device (into the
    scratch buffer of ``role`` when given, else a new array)."""
    src = kind_of(x)
    if isinstance(x, np.ndarray):
        with np.errstate(over="ignore"):
            if src == "bf16":
                h = (x.astype(np.uint32) << 16).view(np.float32)
            else:
                h = x
            h = np.ascontiguousarray(h, np.float16 if kind == "f16" else np.float32)
        return upload(h, dev)
    if src == kind:
        return x
    if role is None:
        return convert(x, src, kind, n, dev)
    return convert(x, src, kind, n, dev, out=scratch(role, n, np.float16 if kind == "f16" else np.float32, dev).arr)


# --- masks ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaskSpec:
    """What the additive mask holds: the query rows and keys, causal and window, and whether it is per
    head (``heads`` > 1: (heads, Sq, Skv); otherwise one (Sq, Skv) mask for all heads)."""

    Sq: int
    Skv: int
    causal: bool
    window: int  # 0: none
    heads: int


def structural_mask_is_empty(Sq: int, Skv: int, causal: bool, window: int) -> bool:
    """Whether causal/window hide no key (causal with one query row, a window of at least Skv)."""
    off = Skv - Sq
    hides_future = causal and off < Skv - 1                    # row 0's last key is not the last key
    hides_past = bool(window) and (Sq - 1) + off - window + 1 > 0  # the last row's first key > 0
    return not hides_future and not hides_past


def build_mask(spec: MaskSpec, user: Any, dev: Any) -> Any:
    """The f16 mask (flat, ``spec.heads * Sq * Skv`` elements) on ``dev``; ``user``: None, or the user's
    mask (numpy, or resident f16/f32) of ``spec.heads`` or one head."""
    n = spec.heads * spec.Sq * spec.Skv
    out = empty((n,), np.float16, dev)
    if user is None:
        user_arr, user_t, user_len = out, f16, 0
    else:
        if isinstance(user, np.ndarray):
            user = upload(np.ascontiguousarray(user, np.float32), dev)
        user_t = f16 if np.dtype(user.dtype) == np.float16 else f32
        user_arr, user_len = view(user, user.dtype), user.size
    if user_t is f32 and user_len == n and n % 8 == 0 and not spec.causal and not spec.window:
        return go_x8(mask_f32_x8_kernel(), view(user_arr, np.float32), out, n, dev)
    go(mask_kernel(user_t), elementwise_grid(n), user_arr, out, n, spec.Skv, spec.Sq, spec.Skv - spec.Sq,
       int(spec.causal), spec.window, user_len, device=launch_device(dev))
    return out


class _Lru(OrderedDict[Any, Any]):
    """At most ``size`` entries and ``max_bytes`` of arrays, least recently used dropped first."""

    def __init__(self, size: int, max_bytes: int):
        super().__init__()
        self.size, self.max_bytes = size, max_bytes
        self.fills = 0   # entries put so far (a call that built a cached mask is not replayed as it was: ops.hot)

    def put(self, key: Any, value: Any) -> Any:
        self.fills += 1
        self[key] = value
        self.move_to_end(key)
        while len(self) > 1 and (len(self) > self.size or sum(v.arr.nbytes for v in self.values()) > self.max_bytes):
            self.popitem(last=False)
        return value

    def fetch(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value


# causal/window masks (and their mask_opt bits) per (device, MaskSpec, ...): built once per shape; at most
# 16 of them and 512 MiB (an 8192 x 8192 causal mask is 128 MiB)
_masks = _Lru(16, 512 << 20)


def cache_fills() -> int:
    """How many masks (and mask_opt bits) have been built and cached so far: a call that built one launched
    work that a later call with the same arguments does not launch again."""
    return _masks.fills


def _dev_key(dev: Any) -> Any:
    return "cpu" if isinstance(dev, str) else id(dev)


def clear_caches() -> None:
    """Forget the cached causal/window masks and the scratch buffers."""
    _masks.clear()
    _scratch.clear()


# --- the launch ----------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def ggml_dispatch(q_ne: tuple[int, int, int, int], k_ne: tuple[int, int, int, int],
                  mask_ne: tuple[int, int, int, int] | None, scale: float, softcap: float, f32acc: bool, cores: int,
                  tiles: tuple[int, int, int] | None, q_f16: bool = False, sinks: bool = False) -> host.FaDispatch:
    """ggml's decisions for these tensors (cached: the same shapes give the same launch); ``q_f16``: Q is f16;
    ``sinks``: the launch has attention sinks."""
    br, bc, wg = tiles if tiles is not None else (None, None, None)
    return host.flash_attn_dispatch(q_ne, k_ne, k_ne, mask_ne, sinks, scale, 0.0, softcap, f32acc,
                                    device=host.FaDevice(shader_core_count=cores), Br=br, Bc=bc,
                                    workgroup_size=wg, q_f16=q_f16, narrow_mask_opt=True)


def dispatch(q_ne: tuple[int, int, int, int], k_ne: tuple[int, int, int, int],
             mask_ne: tuple[int, int, int, int] | None, scale: float, softcap: float, f32acc: bool, cores: int,
             tiles: tuple[int, int, int] | None, q_f16: bool = False, dev: Any = None,
             f16_out: bool = False, masked: bool = False, sinks: bool = False) -> host.FaDispatch:
    """The launch for these tensors: ggml's decisions (:func:`ggml_dispatch`), with ops.attention's own tiles
    where ``tiles`` is None and it has them for ``dev`` (:func:`wide_rows`; none without ``dev``); ``f16_out``:
    the output is f16; ``masked``: the kernel masks without a mask buffer (``CAUSAL``), tiled as with one;
    ``sinks``: the launch has attention sinks."""
    disp = ggml_dispatch(q_ne, k_ne, mask_ne, scale, softcap, f32acc, cores, tiles, q_f16, sinks)
    if tiles is not None or dev is None:
        return disp
    d = q_ne[0]
    return wide_rows(disp, d, mask_ne is not None or masked, dev, q_f16, f16_out,
                     lambda t: ggml_dispatch(q_ne, k_ne, mask_ne, scale, softcap, f32acc, cores, t, q_f16, sinks))


def run(q: Any, k: Any, v: Any, dims: tuple[int, int, int, int, int], *, causal: bool, mask: Any, window: int,
        scale: float, softcap: float, out_dtype: Any, out: Any, dev: Any, acc: str = "f32",
        tiles: tuple[int, int, int] | None = None, cores: int | None = None, sinks: Any = None) -> Any:
    """:func:`_run`; on the interpreter without its TensorPointerWarning for the mask's loads: ggml's kernel
    offsets a mask load by whole rows of KV keys (``m_offset``, its interface, which ggml fills the same way),
    which is not a multiple of 16 bytes when KV is not a multiple of 8; NVIDIA's implementation reads such a
    load as the interpreter does, and the warning would name a line of this library, not of the caller."""
    if not isinstance(dev, str):
        return _run(q, k, v, dims, causal=causal, mask=mask, window=window, scale=scale, softcap=softcap,
                    out_dtype=out_dtype, out=out, dev=dev, acc=acc, tiles=tiles, cores=cores, sinks=sinks)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="tensor (load|store): its Pointer")
        return _run(q, k, v, dims, causal=causal, mask=mask, window=window, scale=scale, softcap=softcap,
                    out_dtype=out_dtype, out=out, dev=dev, acc=acc, tiles=tiles, cores=cores, sinks=sinks)


def _run(q: Any, k: Any, v: Any, dims: tuple[int, int, int, int, int], *, causal: bool, mask: Any, window: int,
         scale: float, softcap: float, out_dtype: Any, out: Any, dev: Any, acc: str = "f32",
         tiles: tuple[int, int, int] | None = None, cores: int | None = None, sinks: Any = None) -> Any:
    """Attention on ``dev`` (a runtime Device with NV2, or "cpu") for checked arguments.

    ``dims`` = (Hq, Sq, D, Hkv, Skv); ``q``, ``k``, ``v``, ``mask`` numpy or resident on ``dev``
    (``mask`` None, or (Sq, Skv) / (Hq, Sq, Skv) values); ``out`` the output array (numpy or resident,
    ``out_dtype``) that is filled and returned. ``tiles`` = (Br, Bc, workgroup size) replaces ggml's
    tuning and ``cores`` the SM count (for tests: the interpreter runs small tiles faster, and the
    core count decides split_k). ``sinks``: None, or Hq f32 values (numpy or resident on ``dev``), one attention
    sink a query head (ggml's sinks)."""
    hq, sq, d, hkv, skv = dims
    ldev = launch_device(dev)
    q_f16 = kind_of(q) == "f16"   # read as it is; f32 as it is, bf16 converted to f32 first
    qf = as_kind(q, "f16" if q_f16 else "f32", hq * sq * d, dev, "q")
    kh = as_kind(k, "f16", hkv * skv * d, dev, "k")
    vh = as_kind(v, "f16", hkv * skv * d, dev, "v")
    heads_layout = sq == 1  # see the module docstring

    # the mask
    user_heads = 0 if mask is None else (hq if len(mask.shape) == 3 and mask.shape[0] != 1 else 1)
    structural = not structural_mask_is_empty(sq, skv, causal, window)
    # a causal mask alone, of more than one query row: computed by the kernel (CAUSAL), not built
    in_kernel = (CAUSAL_IN_KERNEL and causal and structural and mask is None and not heads_layout
                 and (not window or window >= skv or WINDOW_IN_KERNEL))
    kernel_window = window if in_kernel and 0 < window < skv else 0   # (a window of Skv keys or more hides none)
    m = None
    mspec = None
    mask_heads = 1
    if (mask is not None or structural) and not in_kernel:
        mask_heads = user_heads if mask is not None else 1
        mspec = MaskSpec(sq, skv, causal and structural, window if structural else 0, mask_heads)
        if mask is None:
            key = (_dev_key(dev), mspec)
            m = _masks.fetch(key)
            if m is None:
                m = _masks.put(key, Owned(build_mask(mspec, None, dev)))
        elif not structural and not isinstance(mask, np.ndarray) and np.dtype(mask.dtype) == np.float16:
            m = Owned(mask)  # a resident f16 mask goes to the kernel as it is
            mspec = None
        else:
            m = Owned(build_mask(mspec, mask, dev))
            mspec = None
    if heads_layout:
        q_ne, k_ne = (d, 1, hq, 1), (d, skv, hkv, 1)
        mask_ne = (skv, 1, mask_heads, 1) if m is not None else None
    else:
        q_ne, k_ne = (d, sq, 1, hq), (d, skv, 1, hkv)
        mask_ne = (skv, sq, 1, mask_heads) if m is not None else None
    f16_out = np.dtype(out_dtype) == np.float16
    disp = dispatch(q_ne, k_ne, mask_ne, float(scale), float(softcap), acc == "f32",
                    cores if cores is not None else caps.shader_cores(dev), tiles, q_f16, dev, f16_out,
                    masked=in_kernel, sinks=sinks is not None)
    assert not in_kernel or disp.gqa_ratio == 1   # (one query row a tile row: what CAUSAL computes)

    # mask_opt: two bits per Br x Bc block of the mask (cached with a cached mask)
    mo = None
    if disp.use_mask_opt:
        mo_key = (_dev_key(dev), mspec, disp.Br, disp.Bc, "mask_opt") if mspec is not None else None
        mo = _masks.fetch(mo_key) if mo_key is not None else None
        if mo is None:
            assert m is not None  # (mask_opt comes with a mask)
            grid, values = fa_mask_opt.launch_args(mask_ne, disp.Br, disp.Bc,  # type: ignore[arg-type]
                                                   mask_opt_block_size(dev))
            nd, rows, nem2, nem3 = disp.mask_opt_dims
            mo = Owned(empty((nd * rows * nem2 * nem3,), np.uint32, dev))
            go(fa_mask_opt.fa_mask_opt, grid, m.as_(np.float16), mo.arr, device=ldev, **values)
            if mo_key is not None:
                _masks.put(mo_key, mo)

    qb = view(qf, np.uint8)
    out_flat = view(out, out.dtype)
    d_f16 = stores_f16(disp, d, f16_out)   # f16 output straight from the kernel
    if disp.split_k > 1:
        o = scratch("split_k", disp.split_k_floats, np.float32, dev).arr
    elif d_f16:
        o = view(out, np.float32)   # the kernel stores f16 into this memory
    elif f16_out:
        o = scratch("o", hq * sq * d, np.float32, dev).arr
    else:
        o = out_flat
    unused = scratch("unused", 4, np.uint32, dev)  # ggml binds Q's buffer there; any buffer will do
    s = view(as_kind(sinks, "f32", hq, dev), np.float32) if sinks is not None else unused.as_(np.float32)
    l16, m16 = small_sums(disp, d, dev, q_f16)
    causal_end = CAUSAL_END and causal and structural and disp.gqa_ratio <= 1 and not in_kernel  # (CAUSAL ends there)
    go(fa_kernel(disp.f16acc, q_f16, l16=l16, d_f16=d_f16, m16=m16, edge=edge_only(disp, q_f16),
                 mask_fast=m is not None, mask_rows_8=m is not None and skv % 8 == 0, causal_end=causal_end,
                 no_alibi=m is not None, causal=in_kernel, window=kernel_window,
                 sink_batch=sinks is not None and not heads_layout),
       disp.grid, qb,
       view(kh, np.uint8),
       view(vh, np.uint8),
       m.as_(np.uint8) if m is not None else unused.as_(np.uint8), s, o,
       mo.arr if mo is not None else unused.arr, disp.push, device=ldev, **disp.spec)
    if disp.split_k > 1:
        ne1, ne2, ne3 = disp.push["ne1"], disp.push["ne2"], disp.push["ne3"]
        go(fa_reduce.kernel(f16_out, sink_batch=sinks is not None and not heads_layout),
           fa_reduce.grid(d, ne1, ne2, ne3), o, s, out_flat, d, ne1, ne2, ne3, disp.split_k,
           int(sinks is not None), device=ldev)
    elif f16_out and not d_f16:
        convert(o, "f32", "f16", hq * sq * d, dev, out=out_flat)
    return out
