"""``matmul``: C = A x B for any M, N, K with cooperative matrices.

Each workgroup of four subgroups (2 x 2) computes a BM x BN block of C, each
subgroup a TI x TJ grid of 16 x 16 accumulator tiles (BM = 32 TI, BN = 32 TJ;
TI and TJ are compile-time parameters, 2 x 2 by default: 64 x 64 blocks),
stepping K by one MulAdd depth (16 for f16/bf16, 32 for 8-bit integers).
Slices of A and B are copied into shared memory with bounds checks (zeros
outside the matrices), so no size has to be a tile multiple; blocks entirely
inside C are stored directly, edge blocks through shared memory.  M, N and K
are push constants: one pipeline serves every size.  When M, N and K are
multiples of a tile of :data:`TILED` (128 x 128 x 32, say), the tiled kernel of
:mod:`coopdsl.ops.gemm_tiled` runs instead: no bounds checks, 128-bit loads,
register prefetch, and the sizes as specialization constants (one pipeline per
problem size, compiled on its first use).  The block shape comes
from the autotune cache (``coopdsl.autotune``) when it holds an entry for the
problem and device: ``matmul(..., tune=True)`` times the shapes of
:data:`CONFIGS` once and stores the fastest there.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, bf16, f16, f32, i8, i32, u8, u32
from coopdsl.autotune import Autotuner, Config
from coopdsl.interp import wants_cpu

from . import gemm_tiled, gemv, hot
from .operands import check_device, check_out, choice_name, flag, is_bfloat16, new_out, numbers_array, operand

WG = 128    # four subgroups of 32, 2 x 2
TILE = 16   # accumulator tiles are TILE x TILE
DEFAULT = Config(TI=2, TJ=2)  # 64 x 64 blocks
# the block shapes tuning tries (BM x BN = 32 TI x 32 TJ; the edge staging of BM x BN accumulators
# must fit the 48 KiB of shared memory every device offers, so 128 x 128 is left out)
CONFIGS = (DEFAULT, Config(TI=2, TJ=4), Config(TI=4, TJ=2), Config(TI=1, TJ=1))

# (path, kind, layout, M, N, K, device) -> the config the autotune cache held on this problem's first call (or
# that tune=True found): the cache is read once per problem and process, not on every call of a host op
_CONFIGS: dict[tuple[Any, ...], Any] = {}

# input kind -> (A/B component type, C type, MulAdd depth, numpy input dtype, numpy output dtype)
KINDS = {
    "f16": (f16, f32, 16, np.float16, np.float32),
    "bf16": (bf16, f32, 16, np.uint16, np.float32),
    "i8": (i8, i32, 32, np.int8, np.int32),
    "u8": (u8, u32, 32, np.uint8, np.uint32),
}


@cache
def kernel(kind: str, b_kmajor: bool = False) -> cd.Kernel:
    """The matmul kernel for input kind ``kind`` (a key of :data:`KINDS`); its ``TI``/``TJ`` Const
    parameters set the block shape (``kernel(kind).specialize(TI=.., TJ=..)``). ``b_kmajor``: B is
    given as its N x K transpose (``matmul(..., transpose_b=True)``)."""
    ab, acc_t, depth, _, _ = KINDS[kind]
    zero = 0 if ab.is_int else 0.0  # Python numbers: typed where they are used
    zero_c = 0 if acc_t.is_int else 0.0

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def matmul(a: cd.Buffer[ab], b: cd.Buffer[ab], c: cd.Buffer[acc_t], M: u32, N: u32, K: u32,
               TI: cd.Const[int] = 2, TJ: cd.Const[int] = 2):
        BM = 2 * TILE * TI  # the block of C this workgroup computes
        BN = 2 * TILE * TJ
        row0 = cd.workgroup_id.y * BM
        col0 = cd.workgroup_id.x * BN
        lid = cd.local_invocation_index
        sg_row = (cd.subgroup_id // 2) * (TILE * TI)
        sg_col = (cd.subgroup_id % 2) * (TILE * TJ)
        sa = cd.shared(ab, BM * depth)
        sb = cd.shared(ab, depth * BN)
        sc = cd.shared(acc_t, BM * BN)
        acc = [Acc[acc_t, TILE, TILE].splat(zero_c) for _ in cd.static_range(TI * TJ)]
        for k0 in range(0, K, depth):
            for t in cd.static_range(BM * depth // WG):
                e = lid + t * WG
                r = e // depth      # A: BM rows of `depth`
                col = e % depth
                va = ab(zero)
                if row0 + r < M and k0 + col < K:
                    va = a[(row0 + r) * K + k0 + col]
                sa[e] = va
            for t in cd.static_range(depth * BN // WG):
                e = lid + t * WG
                rb = e // BN        # B: `depth` rows of BN
                cb = e % BN
                vb = ab(zero)
                if k0 + rb < K and col0 + cb < N:
                    if b_kmajor:
                        vb = b[(col0 + cb) * K + k0 + rb]
                    else:
                        vb = b[(k0 + rb) * N + col0 + cb]
                sb[e] = vb
            cd.barrier()
            for i in cd.static_range(TI):
                ta = MatA[ab, TILE, depth].load(sa, (sg_row + i * TILE) * depth, stride=depth)
                for j in cd.static_range(TJ):
                    tb = MatB[ab, depth, TILE].load(sb, sg_col + j * TILE, stride=BN)
                    acc[i * TJ + j] = cd.muladd(ta, tb, acc[i * TJ + j])
            cd.barrier()
        if row0 + BM <= M and col0 + BN <= N:  # uniform: the whole block is inside C
            for i in cd.static_range(TI):
                for j in cd.static_range(TJ):
                    acc[i * TJ + j].store(c, (row0 + sg_row + i * TILE) * N + col0 + sg_col + j * TILE, stride=N)
        else:
            for i in cd.static_range(TI):
                for j in cd.static_range(TJ):
                    acc[i * TJ + j].store(sc, (sg_row + i * TILE) * BN + sg_col + j * TILE, stride=BN)
            cd.barrier()
            for t in cd.static_range(BM * BN // WG):
                e = lid + t * WG
                r = e // BN
                col = e % BN
                if row0 + r < M and col0 + col < N:
                    c[(row0 + r) * N + col0 + col] = sc[e]

    return cast(cd.Kernel, matmul)


# input kind -> configurations of the tiled kernel (coopdsl/ops/gemm_tiled.py, B row-major as matmul takes
# it) for sizes that are multiples of a tile; the first one that divides the sizes is used untuned, and is
# one every device with 16 x 16 tiles and 48 KiB of shared memory runs (tune=True tries the others too;
# on the H100 at 8192^3: f16 313-320 TFLOP/s, bf16 318-320, int8 303-323 TOP/s, benchmarks/notes/gemm-best-per-pair.md)
TILED = {
    "f16": (gemm_tiled.config(128, 128, 32, 64, 64), gemm_tiled.config(128, 256, 32, 64, 64, ln=8, a_first=0),
            gemm_tiled.config(128, 128, 32, 64, 64, a_first=0), gemm_tiled.config(256, 128, 32, 64, 64)),
    "bf16": (gemm_tiled.config(128, 128, 32, 64, 64), gemm_tiled.config(128, 128, 32, 64, 64, a_first=0),
             gemm_tiled.config(256, 128, 32, 64, 64)),
    "i8": (gemm_tiled.config(128, 128, 64, 64, 64), gemm_tiled.config(128, 256, 64, 64, 64),
           gemm_tiled.config(256, 128, 64, 64, 64)),
}
TILED["u8"] = TILED["i8"]
# the same for B given K-major (``transpose_b=True``), where 8-bit inputs reach twice the speed on NVIDIA
# (H100, 8192^3: s8 and u8 590 TOP/s with the first configuration, benchmarks/notes/gemm-best-per-pair.md)
TILED_KMAJOR = {
    "f16": (gemm_tiled.config(128, 128, 64, 64, 32), gemm_tiled.config(128, 128, 32, 64, 64),
            gemm_tiled.config(256, 128, 32, 64, 64)),
    "bf16": (gemm_tiled.config(128, 128, 64, 64, 32), gemm_tiled.config(128, 128, 32, 64, 64)),
    "i8": (gemm_tiled.config(128, 128, 128, 64, 32), gemm_tiled.config(128, 128, 128, 32, 64),
           gemm_tiled.config(128, 256, 64, 64, 64), gemm_tiled.config(128, 128, 64, 64, 64)),
}
TILED_KMAJOR["u8"] = TILED_KMAJOR["i8"]


@cache
def tiled_kernel(kind: str, b_kmajor: bool = False, edge_m: bool = False) -> cd.Kernel:
    """The tiled kernel (``coopdsl.ops.gemm_tiled``) for input kind ``kind``; B row-major, or K-major
    (given as its N x K transpose) with ``b_kmajor``; for any M (not only multiples of TILE_M) with
    ``edge_m``."""
    ab, acc_t, _, _, _ = KINDS[kind]
    return gemm_tiled.make(ab, acc_t, b_kmajor, edge_m)


@cache
def tiled_tuner(kind: str, configs: tuple[Config, ...], b_kmajor: bool = False, edge_m: bool = False) -> Autotuner:
    """The autotuner of ``tiled_kernel(kind, b_kmajor, edge_m)`` over ``configs`` (those that suit a problem's
    sizes, :func:`tiled_configs`)."""
    return Autotuner(tiled_kernel(kind, b_kmajor, edge_m), configs, key=["M", "N", "K"])


def tiled_configs(kind: str, m: int, n: int, k: int, b_kmajor: bool = False) -> tuple[tuple[Config, ...], bool]:
    """(configurations of :data:`TILED`, :data:`TILED_KMAJOR` with ``b_kmajor``, for an m x n x k problem;
    whether they need the M edge): those whose tiles divide all three sizes, else those whose tiles divide
    N and K (the kernel then handles the last, partial block row: ``gemm_tiled.make(..., edge_m=True)``);
    none: the general kernel."""
    table = TILED_KMAJOR if b_kmajor else TILED
    fit = tuple(c for c in table[kind] if n % c.values["TILE_N"] == 0 and k % c.values["TILE_K"] == 0)
    whole = tuple(c for c in fit if m % c.values["TILE_M"] == 0)
    return (whole, False) if whole else (fit, bool(fit))


@cache
def tuner(kind: str, b_kmajor: bool = False) -> Autotuner:
    """The autotuner of ``kernel(kind, b_kmajor)`` over :data:`CONFIGS`, keyed by (M, N, K), with the
    default cache."""
    return Autotuner(kernel(kind, b_kmajor), CONFIGS, key=["M", "N", "K"])


def _tiled_grid(p: dict[str, Any]) -> tuple[int, int, int]:
    return gemm_tiled.grid(p["M"], p["N"], p["TILE_M"], p["TILE_N"])


def _grid(p: dict[str, Any]) -> tuple[int, int, int]:
    return (-(-p["N"] // (32 * p["TJ"])), -(-p["M"] // (32 * p["TI"])), 1)


def matmul(a: Any, b: Any, *, out: Any = None, kind: str | None = None, device: Any = None,
           tune: bool = False, transpose_b: bool = False) -> Any:
    """``a @ b`` on the GPU (or ``device="cpu"``): a is M x K, b is K x N, both row-major;
    with ``transpose_b=True``, ``a @ b.T`` for b of N x K (a linear layer's weight matrix, as
    ``torch.nn.functional.linear`` takes it), read in place: no transposed copy is made.

    When N and K are multiples of a tile of :data:`TILED`, the tiled kernel
    (:mod:`coopdsl.ops.gemm_tiled`) computes it, with the first such
    configuration or the one the autotune cache holds; M may be any size (a
    last, partial block row is written up to row M - 1: the token count of a
    linear layer). Otherwise the general kernel computes it, with the block
    shape the autotune cache holds for (M, N, K) on the device, else 64 x 64.
    ``tune=True`` first times the candidates (the suitable configurations of
    :data:`TILED`, or the shapes of :data:`CONFIGS`) when the cache has no
    entry (writing ``out``, which is then overwritten) and stores the fastest (``docs/autotune.md``: the cache
    file and ``COOPDSL_AUTOTUNE_CACHE``). On the CPU interpreter nothing is
    tuned or read from the cache.

    ``kind`` is "f16", "bf16" (inputs hold bf16 bit patterns as uint16, see
    :func:`to_bf16`), "i8" or "u8"; by default it follows the dtype of ``a``
    (float16, int8, uint8; an ml_dtypes ``bfloat16`` array is "bf16", read as its bits).  The result is
    float32 (f16, bf16), int32 (i8) or
    uint32 (u8): ``out`` when given (a numpy array or a resident
    ``coopdsl.runtime.Array`` of that dtype and shape M x N), else a new resident
    Array on ``a``'s device when ``a`` is resident, else a new numpy array.  Inputs may be
    numpy arrays or resident arrays.  A call again with the very same resident
    arrays and options replays that call's launches (docs/ops.md, "Calls in a loop").
    With 8-bit inputs on NVIDIA the tiled kernel is about twice as fast with
    ``transpose_b=True`` (B K-major).

    Decoding shapes, ``transpose_b=True`` with 1 to 16 rows of f16/bf16 ``a`` (K a multiple of 8),
    run the bandwidth-bound kernel of :mod:`coopdsl.ops.gemv` instead (a bf16 ``a`` must then be
    a numpy array): a MulAdd would mostly multiply zeros there.  ``transpose_b=True`` with up to
    ``linear.FLOAT_MUL_MM_ROWS`` (256) rows of f16/bf16 ``a`` runs ``ops.linear``'s ggml ``mul_mm_cm2``
    launches (``a`` padded to whole tiles, K split to fill the GPU; ``tune`` times their tile and split).
    """
    options = (kind, device, transpose_b)
    if not tune and (replayed := _HOT.replay((a, b, out), options)) is not None:
        return replayed  # the same resident arrays as a recent call: its launches again (coopdsl/ops/hot.py)
    out_given = out
    bf = is_bfloat16(a)
    a, b = operand("matmul", "a", a), operand("matmul", "b", b)
    transpose_b, tune = flag("matmul", "transpose_b", transpose_b), flag("matmul", "tune", tune)
    out = operand("matmul", "out", out, optional=True)
    check_device("matmul", device, (a, b, out))

    def run_and_remember(launches: list[hot.Launch], result: Any) -> Any:
        """Make ``launches`` (which write ``result``) and remember the call."""
        hot.run(launches, "matmul")
        _HOT.remember((a, b, out_given), options, launches, made=result if out_given is None else None)
        return result

    kind = choice_name("matmul", "kind", kind, sorted(KINDS)) if kind is not None else \
        "bf16" if bf else _kind_of(a)
    _, _, _, in_dtype, out_dtype = KINDS[kind]
    (m, k1), (k2, n) = _shape(a, "a"), _shape(b, "b")
    if transpose_b:
        n, k2 = k2, n
        if k1 != k2:
            raise ValueError(f"matmul: a is {m} x {k1} but b (transpose_b=True: N x K) is {n} x {k2}")
    elif k1 != k2:
        raise ValueError(f"matmul: a is {m} x {k1} but b is {k2} x {n}")
    for name, x in (("a", a), ("b", b)):
        if x.dtype != in_dtype:
            raise ValueError(f"matmul({kind}): {name} must be {np.dtype(in_dtype).name}, got {np.dtype(x.dtype).name}")
        if isinstance(x, np.ndarray) and not x.flags.c_contiguous:
            raise ValueError(f"matmul: {name} must be C-contiguous (row-major); pass np.ascontiguousarray({name})"
                             + (" or, for a transposed b, b itself with transpose_b=True" if name == "b" else ""))
    if out is None:
        out = new_out((m, n), out_dtype, a)
    else:
        check_out("matmul", out, (m, n), out_dtype)
    if m == 0 or n == 0 or k1 == 0:  # nothing to launch: an empty result, or a sum over nothing
        if isinstance(out, np.ndarray):
            out[...] = 0
        elif m and n:
            out.write(np.zeros((m, n), out_dtype))
        return out
    if transpose_b and m <= gemv.MAX_ROWS_X and kind in ("f16", "bf16") and k1 % 8 == 0 \
            and (kind == "f16" or isinstance(a, np.ndarray)):
        # decoding: a few rows of activations against a weight matrix read once, at memory speed
        x = from_bf16(a) if kind == "bf16" else a
        return run_and_remember(*gemv.plan(b, x, kind, out=out, device=device))
    if transpose_b and m <= _linear().FLOAT_MUL_MM_ROWS and kind in ("f16", "bf16"):
        # a few tokens' activations against a weight matrix: ops.linear's mul_mm_cm2 launches (x padded to whole
        # tiles, K split to fill the GPU), 1.4-2.8x the tiled kernel's speed there on an H100
        return run_and_remember(_linear().mul_mm_launches(a, b, out, kind, device, tune), out)
    tiled, edge_m = tiled_configs(kind, m, n, k1, transpose_b)
    if tiled:  # N and K (and M, or edge_m) multiples of a tile: the faster kernel
        config = tiled[0]
        if not wants_cpu(device):
            memo = ("tiled", kind, transpose_b, edge_m, m, n, k1, device)
            if tune or memo not in _CONFIGS:
                t = tiled_tuner(kind, tiled, transpose_b, edge_m)
                _CONFIGS[memo] = (t.best_config(_tiled_grid, a, b, out, M=m, N=n, K=k1, device=device) if tune
                                  else t.cached_config(a, b, out, M=m, N=n, K=k1, device=device))
            config = _CONFIGS[memo] or config
        variant, spec = gemm_tiled.specialized(tiled_kernel(kind, transpose_b, edge_m), config)
        return run_and_remember([(variant, _tiled_grid({"M": m, "N": n, **spec}), (a, b, out),
                        {"M": m, "N": n, "K": k1, "device": device, **spec})], out)
    config = DEFAULT
    if not wants_cpu(device):
        key = ("general", kind, transpose_b, m, n, k1, device)
        if tune or key not in _CONFIGS:
            t = tuner(kind, transpose_b)
            _CONFIGS[key] = (t.best_config(_grid, a, b, out, M=m, N=n, K=k1, device=device) if tune
                             else t.cached_config(a, b, out, M=m, N=n, K=k1, device=device))
        config = _CONFIGS[key] or DEFAULT
    general = kernel(kind, transpose_b)
    variant = general.specialize(**config.values) if config != DEFAULT else general
    return run_and_remember([(variant, _grid({"M": m, "N": n, **config.values}), (a, b, out),
                    {"M": m, "N": n, "K": k1, "device": device})], out)


def _linear() -> Any:
    """The module coopdsl.ops.linear (imported when first used: it imports this module's users)."""
    import importlib

    return importlib.import_module("coopdsl.ops.linear")


_HOT = hot.Hot()  # matmul's recent calls on resident arrays


_KIND_OF = {np.dtype(row[3]): name for name, row in KINDS.items() if name != "bf16"}  # (uint16 needs kind=)


def _kind_of(a: Any) -> str:
    kind = _KIND_OF.get(a.dtype)
    if kind is not None:
        return kind
    dt = np.dtype(a.dtype)
    if dt.kind == "f":
        raise ValueError(f"matmul: {dt.name} inputs are not supported; convert them: a.astype(np.float16), or "
                         f"ops.to_bf16(a) with kind='bf16'")
    raise ValueError(f"matmul: no kind for {dt.name} inputs; pass kind= ('bf16' for uint16 bit patterns)")


def _shape(x: Any, name: str) -> tuple[int, int]:
    shape = tuple(x.shape)
    if len(shape) != 2:
        raise ValueError(f"matmul: {name} must be 2-D, got shape {shape}")
    return shape


def to_bf16(x: Any) -> np.ndarray:
    """float values as bf16 bit patterns (uint16), rounded to nearest even from the values as given (float64
    values are not rounded to float32 first: that would round twice); past bf16's largest value, inf."""
    a = numbers_array("to_bf16", "x", x)
    if np.iscomplexobj(a):
        raise TypeError("to_bf16: complex values have no bf16 pattern; pass their real or imaginary part")
    wide = a.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = wide.astype(np.float32)
        back = narrow.astype(np.float64)
        # float32 rounded to odd (toward zero, then the last bit set where inexact): rounding that to nearest
        # even at bf16's 8 bits gives what rounding the wide value directly gives
        bits = narrow.view(np.uint32)
        bits = np.where(np.abs(back) > np.abs(wide), bits - np.uint32(1), bits)
        bits = np.where((back != wide) & ~np.isnan(wide), bits | np.uint32(1), bits)
    f = np.ascontiguousarray(bits, np.uint32)
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    return np.where(np.isnan(wide), 0x7FC0, rounded).astype(np.uint16)


def from_bf16(x: Any) -> np.ndarray:
    """bf16 values as float32 (exactly): ``x`` holds their bit patterns (uint16, or a list of ints 0..65535) or is
    ml_dtypes' bfloat16.  Another dtype is a TypeError, an int outside 0..65535 a ValueError: a cast to uint16
    took float32 1.0 as the pattern 1 and wrapped 81792 to 16256."""
    a = numbers_array("from_bf16", "x", x)
    if a.size == 0 and a.dtype == np.float64 and not isinstance(x, np.ndarray):
        a = a.astype(np.uint16)         # (an empty list: numpy's float64, no values to be bit patterns or not)
    if a.dtype.name == "bfloat16":
        a = a.view(np.uint16)
    elif a.dtype != np.uint16:
        if a.dtype.kind not in "iu" or a.dtype == np.bool_:
            raise TypeError(f"from_bf16: x must hold bf16 bit patterns (uint16) or be ml_dtypes' bfloat16, got "
                            f"{a.dtype} (to round float values to bf16, use ops.to_bf16)")
        if a.size and (a.min() < 0 or a.max() > 0xFFFF):
            raise ValueError(f"from_bf16: bit patterns are 0 to 65535, got values from {a.min()} to {a.max()}")
    return (a.astype(np.uint32) << 16).view(np.float32)
