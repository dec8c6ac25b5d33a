"""``linear``: a linear layer's product ``y = x W^T`` with f16, bf16 or ggml-quantized weights.

``W`` is M x K (``out_features`` x ``in_features``, as ``torch.nn.functional.linear`` takes
it): float16, bf16 bit patterns (uint16), or the uint8 blocks of
:func:`coopdsl.ops.quant.quantize` in ggml's q4_0, q8_0 or q4_K format.  ``x`` is N x K.
The kernel follows N, as an inference engine's does:

* N <= 16 (decoding): the bandwidth-bound kernels of :mod:`coopdsl.ops.gemv`, which read W
  once at close to the memory's speed;
* larger N (prefill): ggml's ``mul_mm_cm2`` kernel (:mod:`coopdsl.ops.ggml_mul_mm`:
  workgroup-scope cooperative matrices, quantized W decoded from its blocks as it is loaded),
  its tile and split of K picked for the GPU's SM count (:func:`prefill_choice`); for f16/bf16
  W from :data:`FLOAT_MUL_MM_ROWS` rows on, :func:`coopdsl.ops.matmul` with ``transpose_b=True``.
"""

from functools import cache
from typing import Any, cast, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import u16, u32

from . import device_caps as caps
from . import gemv as G
from . import ggml_mul_mm as MM
from . import hot, op_tune
from .operands import (
    check_device,
    check_out,
    choice_name,
    count,
    flag,
    flag_or_none,
    is_bfloat16,
    matrices,
    new_out,
    operand,
)

QUANTIZED = ("q4_0", "q8_0", "q4_K")
_HOT = hot.Hot()  # linear's recent calls on resident arrays


def _fmt_of(w: Any, fmt: str | None) -> str:
    dt = np.dtype(w.dtype)
    if fmt is None:
        if dt == np.float16:
            return "f16"
        if dt in (np.uint8, np.uint16):
            raise ValueError(f"linear: give fmt= for {dt} weights ('bf16' for uint16 bit patterns, "
                             f"one of {', '.join(QUANTIZED)} for uint8 blocks)")
        raise ValueError(f"linear: {dt} weights are not a format of the op: float16 (w.astype(np.float16)), "
                         f"uint16 bf16 bit patterns (ops.to_bf16(w), fmt='bf16') or uint8 blocks of "
                         f"ops.quantize(w, fmt) with fmt= one of {', '.join(QUANTIZED)}")
    choice_name("linear", "weight format", fmt, G.WEIGHT_DTYPES)
    G.check_weight_type("linear", w, fmt)
    return fmt


def linear(x: Any, w: Any, fmt: str | None = None, *, out: Any = None, device: Any = None,
           q8: bool | None = None, tune: bool = False) -> Any:
    """``y = x W^T`` (float32, N x M) on the GPU (or ``device="cpu"``).

    ``x``: N x K, float32 or float16 (bf16 weights: also uint16 bf16 bit patterns; N may be 0, giving an empty
    result); ``w``: M x K weights, float16 (``fmt`` "f16", the default for float16 arrays),
    uint16 bf16 bit patterns (``"bf16"``; ml_dtypes' bfloat16 arrays need no ``fmt``) or uint8 ggml blocks
    (``"q4_0"``, ``"q8_0"``, ``"q4_K"``, one row of blocks per weight row; K a multiple of 32, or 256 for q4_K).
    Inputs may be numpy arrays or resident ``coopdsl.runtime.Array``s; ``out`` (N x M float32)
    likewise; without ``out`` the result is a new resident Array on ``x``'s device when ``x`` is resident, else
    a new numpy array. A call again with the very same resident arrays and options as a recent one replays its
    launches (docs/ops.md, "Calls in a loop").
    For N > 16 a resident x must be float16 (uint16 bf16 bit patterns for bf16 weights), for N <= 16
    float32 or float16; numpy x is converted.
    ``q8`` (N <= 16): whether x is rounded to 8 bits a value and multiplied with integer dot products
    (:func:`coopdsl.ops.gemv.gemv`; by default where that was faster on an H100, for q4_0, q8_0 and q4_K up to
    the rows where cooperative matrices take over, as ggml does: an error of about 5e-3 of the largest output,
    docs/ops.md;
    ``q8=False`` keeps x as it is).
    ``tune=True`` (GPU): time the candidates once per problem and device and keep the fastest in the autotune
    cache: for N <= 16 the decode kernel's ways and layouts (:func:`coopdsl.ops.gemv.gemv`'s ``tune``), past
    that mul_mm_cm2's tile and split of K (:func:`mul_mm_launches`), or ops.matmul's tiles where it runs.
    """
    if (replayed := _HOT.replay((x, w, out), (fmt, device, q8))) is not None:
        return replayed  # the same resident arrays as a recent call: its launches again (coopdsl/ops/hot.py)
    if fmt is None and is_bfloat16(w):
        fmt = "bf16"    # ml_dtypes' bfloat16 weights say their format, as for ops.matmul
    x, w = operand("linear", "x", x), operand("linear", "w", w)
    if isinstance(w, np.ndarray) and not w.flags.c_contiguous:
        w = np.ascontiguousarray(w)   # (numpy weights are uploaded anyway; every kernel reads whole rows)
    out = operand("linear", "out", out, optional=True)
    q8, tune = flag_or_none("linear", "q8", q8), flag("linear", "tune", tune)
    check_device("linear", device, (x, w, out))
    fmt_given = fmt
    fmt = _fmt_of(w, fmt)
    matrices("linear", x, w)
    _check_x(x, fmt)
    n, k = x.shape
    if q8 and fmt not in QUANTIZED:
        raise ValueError(f"linear: q8=True (x rounded to 8 bits) serves quantized weights ({', '.join(QUANTIZED)}), "
                         f"not {fmt}")
    if n == 0 or w.shape[0] == 0 or k == 0:
        # nothing to launch: an empty result, or (K = 0) a sum over nothing, zeros (as ops.matmul and torch give)
        G.check_weights("linear", w, fmt, k, G.block_shape(fmt)[0])
        shape = (n, w.shape[0])
        if out is None:
            out = new_out(shape, np.float32, x)
        else:
            check_out("linear", out, shape, np.float32)
        if isinstance(out, np.ndarray):
            out[...] = 0
        elif n and w.shape[0]:
            out.write(np.zeros(shape, np.float32))
        return out
    if fmt == "bf16" and isinstance(x, np.ndarray) and x.dtype == np.uint16 and n <= G.MAX_ROWS_X:
        from .gemm import from_bf16

        x = from_bf16(x)    # bf16 bits given for x: the decode kernels read f32 (exactly the same values)
    if n <= G.MAX_ROWS_X:   # (plan checks the rest: K against the weights' rows, out)
        launches, y = G.plan(w, x, fmt, out=out, device=device, q8=q8, tune=tune, op="linear")
        hot.run(launches, "linear")
        _HOT.remember((x, w, out), (fmt_given, device, q8), launches, made=y if out is None else None)
        return y
    m = w.shape[0]
    G.check_weights("linear", w, fmt, k, G.block_shape(fmt)[0])   # (before either kernel: the error names linear)
    if out is not None:
        check_out("linear", out, (n, m), np.float32)
    # past 16 rows both kernels read x as the weights' type: numpy x is converted here, once for either
    x_dt: Any = np.float16
    x_name = "float16"
    if fmt == "bf16":
        x_dt, x_name = np.uint16, "uint16 (bf16 bit patterns)"
        if isinstance(x, np.ndarray) and x.dtype != np.uint16:
            from .gemm import to_bf16

            x = to_bf16(x)
    if isinstance(x, np.ndarray):
        with np.errstate(over="ignore"):   # (past f16's range a value becomes inf, as documented: no warning)
            x = np.ascontiguousarray(x, dtype=x_dt)
    elif np.dtype(x.dtype) != x_dt:
        raise ValueError(f"linear: a resident x for {fmt} weights and N > {G.MAX_ROWS_X} must be {x_name}, "
                         f"got {x.dtype}")
    if fmt in ("f16", "bf16") and n > FLOAT_MUL_MM_ROWS:
        from .gemm import matmul

        return matmul(x, w, out=out, kind=fmt, device=device, transpose_b=True, tune=tune)
    y = new_out((n, m), np.float32, x) if out is None else out
    launches = mul_mm_launches(x, w, y, fmt, device, tune)
    hot.run(launches, "linear")
    _HOT.remember((x, w, out), (fmt_given, device, q8), launches, made=y if out is None else None)
    return y


# above how many rows of x f16/bf16 weights take ops.matmul's kernel rather than ggml's mul_mm_cm2: on an H100
# (benchmarks/linear_prefill.py; benchmarks/results/linear_prefill-h100-2026-11-27-b.md, -c.md) mul_mm_cm2 with
# :func:`prefill_choice`'s tile and split and x padded took 4096 x 14336 weights with 32 to 200 rows of x in 70-134
# against 196-212 us, and ops.matmul was 1-9% faster from 512 rows (and at 128 rows of 14336 x 4096 weights)
FLOAT_MUL_MM_ROWS = 256

# the tiles of ops.linear's mul_mm_cm2 launches (BLOCK_SIZE, BM, BN, BK, enable_smaller_matrices): ggml's large
# and medium tiles, both with the narrow last column (BN / 2, BN / 4 wide) that ggml gives only quantized A
TILES = {"l": (256, 128, 256, 64, 1), "m": (256, 128, 128, 64, 1)}


def mul_mm_launches(x: Any, w: Any, y: Any, fmt: str, device: Any, tune: bool = False) -> list[hot.Launch]:
    """The launches of ``y = x W^T`` on mul_mm_cm2 as ``ops.linear`` makes them past 16 rows (checked arrays:
    x N x K float16, or uint16 bf16 bit patterns for bf16 weights; w M x K in ``fmt``; y N x M float32): x padded
    to whole tiles (:func:`pad`), the tile and split of :func:`prefill_choice` for the GPU's SMs
    (:func:`~coopdsl.ops.device_caps.shader_cores`; or the ones the autotune cache holds for the problem on
    this GPU), the sum of K's slices.

    ``tune=True`` on a GPU, when the cache holds nothing for the problem (format, N, M, K): time the default and
    every :func:`prefill_candidates` tile and split, each as :data:`TUNE_CALLS` calls back to back in one
    command buffer (:func:`coopdsl.ops.gemv.stream_ms`, on resident copies of numpy operands), and store the
    fastest under ``ops.linear|<problem>|<device>`` (``docs/autotune.md``)."""
    n, k = x.shape
    m = w.shape[0]
    dev = G.gpu_of(device, (x, w, y))
    tile, split = prefill_choice(fmt, m, n, k, caps.shader_cores(dev or "cpu"))
    if dev is not None:
        prob = f"fmt={fmt},n={n},m={m},k={k}"
        stored, picked = _TUNED.lookup(prob, dev)
        if tune and not stored:
            xr, wr, yr = G.resident((x, w, y), dev)

            def time_call(c: tuple[Any, ...] | None) -> float:
                t, sp = (str(c[0]), int(c[1])) if c else (tile, split)
                pads, xp = pad(xr, TILES[t][2], device)
                return G.stream_ms(pads + prefill_launches(xp, wr, yr, fmt, device=device, tile=t, split_k=sp),
                                   dev, calls=TUNE_CALLS)

            picked = _TUNED.tune(prob, dev, time_call, prefill_candidates(k))
        if picked:
            tile, split = str(picked[0]), int(picked[1])
    launches, x = pad(x, TILES[tile][2], device)
    return launches + prefill_launches(x, w, y, fmt, device=device, tile=tile, split_k=split)


_TUNED = op_tune.Choices("ops.linear", field="tile")
TUNE_CALLS = 50          # calls a tuning candidate is timed over, back to back in one command buffer
SPLITS = (1, 2, 3, 4, 6, 8)


def prefill_candidates(k: int) -> list[tuple[str, int]]:
    """What ``tune=True`` times besides the default: each of :data:`TILES` with each of :data:`SPLITS` slices
    of K that leaves no slice empty."""
    return [(t, s) for t in TILES for s in SPLITS if s == 1 or MM.k_slice(k, s) * (s - 1) < k]


def pad(x: Any, bn: int, device: Any) -> tuple[list[hot.Launch], Any]:
    """x (N x K, 16-bit values) with its rows rounded up to a multiple of ``bn`` (the tile's width), so that
    mul_mm_cm2 reads whole tiles of x, without the bounds checks that cost it half its speed or more (32 rows
    of x against 4096 x 14336 q4_0 weights on an H100: 79 us padded against 148,
    ``benchmarks/results/linear_prefill-h100-2026-11-27-b.md``): (launches, padded x).  Numpy x: padded with
    zeros here, no launch; resident x: the launch that copies it into a work array whose rows past N are left
    as they are (they reach no output); x whose N is a multiple: as it is."""
    n, k = x.shape
    if n % bn == 0:
        return [], x
    if isinstance(x, np.ndarray):
        return [], np.concatenate([x, np.zeros((-n % bn, k), x.dtype)])
    padded = G.scratch(x, (n + -n % bn, k), x.dtype)
    wide = k % 2 == 0                       # copied as 32-bit words where rows hold an even count
    src, dst = (x.view(np.uint32), padded.view(np.uint32)) if wide else (x.view(np.uint16), padded.view(np.uint16))
    total = n * k // 2 if wide else n * k
    return [(pad_kernel(wide), MM.flat_grid(total), (src, dst), {"n": total, "device": device})], padded


@cache
def pad_kernel(wide: bool) -> cd.Kernel:
    """``dst[i] = src[i]`` for ``i < n``, one 32-bit (``wide``) or 16-bit value an invocation, 256 a workgroup,
    ``i = x + 65535 * 256 y`` (:func:`~coopdsl.ops.ggml_mul_mm.flat_grid`)."""
    t = u32 if wide else u16

    @cd.kernel(workgroup_size=(256, 1, 1))
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def linear_pad_x(src: cd.Buffer[t], dst: cd.Buffer[t], n: u32):
        i = cd.global_invocation_id.x + cd.global_invocation_id.y * (65535 * 256)
        if i < n:
            dst[i] = src[i]

    linear_pad_x.__name__ = linear_pad_x.__qualname__ = "linear_pad_x" + ("32" if wide else "16")
    return cast(cd.Kernel, linear_pad_x)


def prefill_choice(fmt: str, m: int, n: int, k: int, cores: int) -> tuple[str, int]:
    """(tile, slices of K) of ``ops.linear``'s mul_mm_cm2 launch for ``n`` rows of x (rounded up to the tile's
    width, :func:`pad`) and M x K weights on a GPU of ``cores`` SMs: the large tile (BN 256) above 128 rows of
    x, else the medium one (BN 128), and K split in as many slices as fit the tiles into one wave
    (``cores // tiles``, at most 8, none empty).  Timed on an H100 against both tiles with 1 to 4 slices, x
    padded or not, and ggml's own choice (:func:`~coopdsl.ops.ggml_mul_mm.guess_tile`, ``guess_split_k``), by
    ``benchmarks/linear_prefill.py`` (``benchmarks/results/linear_prefill-h100-2026-11-27-b.md``): with 4096 x
    14336 weights this was the fastest or within 5% of it at 32, 64, 128, 200, 512 and 2048 rows for q4_0,
    q8_0 and q4_K, and f16 to 200 rows; ggml's choice was 1.2-2.6x slower at 32, 64, 200 and 512 rows."""
    choice_name("prefill_choice", "weight format", fmt, G.WEIGHT_DTYPES)
    for name, v in (("M", m), ("N", n), ("K", k), ("cores", cores)):
        count("prefill_choice", name, v, 1)
    tile = "l" if n > 128 else "m"
    tiles = -(-m // TILES[tile][1]) * -(-n // TILES[tile][2])
    split = max(1, min(8, cores // tiles))
    while split > 1 and MM.k_slice(k, split) * (split - 1) >= k:
        split -= 1
    return tile, split


def prefill_launches(x: Any, w: Any, y: Any, fmt: str, *, device: Any = None,
                     tile: str | tuple[int, ...] = "m", split_k: int = 1) -> list[hot.Launch]:
    """The launches of a product on ggml's ``mul_mm_cm2`` kernel (:mod:`coopdsl.ops.ggml_mul_mm`), checked
    arrays given: x (N x K, float16; uint16 bf16 bit patterns for bf16 weights; or more rows than N, which the
    kernel may read but which reach no output), w (M x K in ``fmt``), y (N x M, float32), with :data:`TILES`'
    ``tile`` (or the five spec values of another, as :data:`coopdsl.ops.ggml_mul_mm.TILES` holds them) and K in
    ``split_k`` slices (:func:`prefill_choice` picks both).
    With K split, the kernel writes ``split_k`` partial products to a work array and
    :func:`~coopdsl.ops.ggml_mul_mm.reduce_kernel` adds them into y."""
    rows, k = x.shape
    n, m = y.shape
    if isinstance(tile, str) and tile not in TILES:
        raise ValueError(f"linear: tile {tile!r}; expected one of {', '.join(TILES)}")
    spec = TILES[tile] if isinstance(tile, str) else tuple(tile)
    if not isinstance(split_k, int) or isinstance(split_k, bool) or split_k < 1:
        raise ValueError(f"linear: split_k={split_k!r}; expected a count of slices of K, 1 or more")
    kern, grid, values = MM.dispatch(fmt, False, m, n, k, tile=spec, aligned=k % 8 == 0,
                                     k_split=MM.k_slice(k, split_k), rows_b=rows)
    split = split_k
    if grid[0] != -(-m // spec[1]) * split:
        raise ValueError(f"linear: K={k} does not split into {split} slices of {MM.k_slice(k, split)}")
    if split == 1:
        return [(kern, grid, (w, x, y), {**values, "device": device})]
    stride = -(-n * m // 4) * 4     # each slice's partial product 16-byte aligned (the kernel's tensor stores)
    part = G.scratch(y, split * stride, np.float32)
    return [(kern, grid, (w, x, part), {**values, "batch_stride_d": stride, "device": device}),
            (MM.reduce_kernel(), MM.flat_grid(n * m), (part, y), {"ne": n * m, "k_num": split, "stride": stride,
                                                                       "device": device})]


def _check_x(x: Any, fmt: str) -> None:
    """x's dtype, the same for every row count (past 16 rows numpy x is converted to the kernels' type, which
    took any dtype: bf16 bit patterns given with f16 weights were read as integers): float32 or float16, and
    with bf16 weights also bf16 (uint16 bit patterns or ml_dtypes' bfloat16)."""
    dt = np.dtype(x.dtype)
    if dt in (np.float32, np.float16) or (fmt == "bf16" and (dt == np.uint16 or dt.name == "bfloat16")):
        return
    extra = " (or bf16: uint16 bit patterns or ml_dtypes' bfloat16)" if fmt == "bf16" else ""
    raise ValueError(f"linear: x must be float32 or float16{extra}, got {dt}")
