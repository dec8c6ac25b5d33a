"""Choosing ``ops.attention``'s flash-attention tiles on the device, as ``ops.matmul`` chooses its GEMM tiles.

ggml's own tuning (its (Br, Bc, workgroup size) by head size, row count and device) is the default. With
``ops.attention(..., tune=True)`` on a GPU, the first call of a problem (head counts, lengths, head size,
causal/window/mask, accumulator, output type) times ggml's choice and :data:`CANDIDATES` with GPU timestamps
(every kernel the call launches, each with ``Kernel.bench``) and keeps the fastest in the autotune cache
(``docs/autotune.md``: the file and ``COOPDSL_AUTOTUNE_CACHE``), keyed by problem and device; later calls, in
this process or the next, read the choice there without timing anything. A candidate the device cannot run
(shared memory, matrix shapes) is skipped. On the CPU interpreter nothing is tuned or read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import autotune
from . import op_tune

Tiles = tuple[int, int, int]  # (Br query rows, Bc keys, workgroup size)
CANDIDATES: tuple[Tiles, ...] = ((128, 128, 256), (128, 64, 256), (64, 128, 256), (64, 64, 128))
KEY_PREFIX = "ops.attention:flash_attn_cm2"

_choices = op_tune.Choices(KEY_PREFIX, field="tiles", default_name="ggml")


def cache() -> autotune.Cache:
    """The autotune cache file this process uses (``autotune.default_cache_path()`` when first asked)."""
    return op_tune.cache()


def problem(dims: tuple[int, int, int, int, int], *, causal: bool, window: int, masked: bool, acc: str,
            f16_out: bool) -> str:
    """The problem key: what decides the launch besides the device."""
    hq, sq, d, hkv, skv = dims
    return (f"hq={hq},sq={sq},d={d},hkv={hkv},skv={skv},causal={int(causal)},window={int(window > 0)},"
            f"mask={int(masked)},acc={acc},out={'f16' if f16_out else 'f32'}")


def lookup(prob: str, device: Any) -> tuple[bool, Tiles | None]:
    """(whether the cache holds ``prob`` on ``device``, the tiles it holds: None for ggml's own)."""
    stored, tiles = _choices.lookup(prob, device)
    return stored, (int(tiles[0]), int(tiles[1]), int(tiles[2])) if tiles else None


def tune(prob: str, device: Any, time_call: Callable[[Tiles | None], float],
         candidates: Sequence[Tiles] = CANDIDATES) -> Tiles | None:
    """Time ggml's tiles (None) and ``candidates`` with ``time_call(tiles) -> ms`` (``float('inf')`` or an
    exception: the device cannot run them), store the fastest for ``prob`` on ``device`` and return it."""
    best = _choices.tune(prob, device, time_call, candidates)
    return (int(best[0]), int(best[1]), int(best[2])) if best else None


# -- the decode kernel's chunks (coopdsl/ops/attention_decode.py) ------------------------------------------------
DECODE_PREFIX = "ops.attention:decode"
CHUNK_FACTORS = (0.25, 0.5, 2.0, 4.0)   # the candidates: the default chunk count times these

_decode = op_tune.Choices(DECODE_PREFIX, field="chunks", default_name="default")


def decode_lookup(prob: str, device: Any) -> tuple[bool, int | None]:
    """(whether the cache holds the decode kernel's chunk count for ``prob`` on ``device``, the count: None for
    :func:`coopdsl.ops.attention_decode.default_chunks`)."""
    stored, choice = _decode.lookup(prob, device)
    return stored, int(choice[0]) if choice else None


def decode_candidates(default: int) -> list[tuple[int]]:
    """The chunk counts a tuned decode call times besides ``default`` (:data:`CHUNK_FACTORS` of it, at least 1)."""
    out: list[tuple[int]] = []
    for f in CHUNK_FACTORS:
        n = max(1, round(default * f))
        if n != default and (n,) not in out:
            out.append((n,))
    return out


def decode_tune(prob: str, device: Any, time_call: Callable[[tuple[int] | None], float], default: int) -> int | None:
    """Time the default chunk count (None) and :func:`decode_candidates`, store the fastest for ``prob`` on
    ``device`` and return it (None: the default)."""
    best = _decode.tune(prob, device, time_call, decode_candidates(default))
    return int(best[0]) if best else None
