"""Choosing ``ops.attention``'s flash-attention tiles on the device, as ``ops.matmul`` chooses its GEMM tiles.

ggml's own tuning (its (Br, Bc, workgroup size) by head size, row count and device) is the default, but for
:data:`coopdsl.ops.attention_nv2.WIDE_ROWS` without a mask to head size 96
(:func:`~coopdsl.ops.attention_nv2.dispatch`). With
``ops.attention(..., tune=True)`` on a GPU, the first call of a problem (head counts, lengths, head size,
causal/window/mask, accumulator, output type) times the default and :data:`CANDIDATES` with GPU timestamps
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
CANDIDATES: tuple[Tiles, ...] = ((128, 128, 256), (128, 64, 256), (64, 128, 256), (64, 64, 128),
                                 (128, 64, 128))
KEY_PREFIX = "ops.attention:flash_attn_cm2"

_choices = op_tune.Choices(KEY_PREFIX, field="tiles", default_name="ggml")


CLOCK_UP_FIRST_MS, CLOCK_UP_MS = autotune.CLOCK_UP_MS, 50.0   # untimed work before the first candidate, each other


class LaunchTimer:
    """Times the launches of one candidate call: the sum of each kernel's median GPU time (``Kernel.bench``,
    ``warmup`` untimed and ``repeat`` timed dispatches), after the longest of them has run untimed for
    :data:`CLOCK_UP_FIRST_MS` (the first candidate of a tuning) or :data:`CLOCK_UP_MS` (each later one) of GPU
    time: an idle GPU's clocks take about half a second of work to come back (``autotune.BenchTimer``), and the
    candidates must not be judged at different clocks."""

    def __init__(self, warmup: int = 3, repeat: int = 10):
        self.warmup, self.repeat, self.clock_up_ms = warmup, repeat, CLOCK_UP_FIRST_MS

    def __call__(self, launches: Sequence[tuple[Any, tuple[int, ...], tuple[Any, ...], dict[str, Any]]]) -> float:
        probes = [kern.bench(grid, *args, warmup=0, repeat=1, **kw).median_ms for kern, grid, args, kw in launches]
        kern, grid, args, kw = launches[probes.index(max(probes))]
        device = kw.get("device")
        autotune.bench_timer(0, 1, self.clock_up_ms).start(kern, tuple(grid), args,
                                                          {k: v for k, v in kw.items() if k != "device"}, device)
        self.clock_up_ms = CLOCK_UP_MS
        return float(sum(kern.bench(grid, *args, warmup=self.warmup, repeat=self.repeat, **kw).median_ms
                         for kern, grid, args, kw in launches))


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
    """(whether the cache holds ``prob`` on ``device``, the tiles it holds: None for the default)."""
    stored, tiles = _choices.lookup(prob, device)
    return stored, (int(tiles[0]), int(tiles[1]), int(tiles[2])) if tiles else None


def tune(prob: str, device: Any, time_call: Callable[[Tiles | None], float],
         candidates: Sequence[Tiles] = CANDIDATES) -> Tiles | None:
    """Time the default tiles (None) and ``candidates`` with ``time_call(tiles) -> ms`` (``float('inf')`` or an
    exception: the device cannot run them), store the fastest for ``prob`` on ``device`` and return it."""
    best = _choices.tune(prob, device, time_call, candidates)
    return (int(best[0]), int(best[1]), int(best[2])) if best else None


# -- the decode kernels' chunks (coopdsl/ops/attention_decode.py) and which of them runs ------------------------
DECODE_PREFIX = "ops.attention:decode"
CHUNK_FACTORS = (0.25, 0.5, 2.0, 4.0)   # the candidates: the default chunk count times these

_decode = op_tune.Choices(DECODE_PREFIX, field="chunks", default_name="default")
Decode = tuple[int | None, str | None]   # (chunks per K/V head, the kernel: "lanes" or "mma"), None: the default


def decode_lookup(prob: str, device: Any) -> tuple[bool, Decode]:
    """(whether the cache holds a decode choice for ``prob`` on ``device``, (the chunk count, the kernel)): None
    for :func:`coopdsl.ops.attention_decode.default_chunks` and :func:`~coopdsl.ops.attention_decode.default_how`.
    An entry from before the kernel was part of the choice holds the chunk count alone (the default kernel)."""
    stored, choice = _decode.lookup(prob, device)
    if not choice:
        return stored, (None, None)
    return stored, (int(choice[0]), str(choice[1]) if len(choice) > 1 else None)


def decode_candidates(default: int, other: str | None = None, knobs: Sequence[str] = (),
                      knob_chunks: int | None = None) -> list[tuple[int] | tuple[int, str]]:
    """What a tuned decode call times besides the default: the chunk counts :data:`CHUNK_FACTORS` of ``default``
    (at least 1), then, where the other decode kernel ``other`` also takes the problem, ``(chunks, other)`` for
    the default count and each of those, then ``(knob_chunks, k)`` for each of ``knobs`` (the lane kernel with one
    knob set, :func:`coopdsl.ops.attention_decode.variants`, at the lane kernel's own default count
    ``knob_chunks``; ``default`` when not given)."""
    counts: list[int] = []
    for f in CHUNK_FACTORS:
        n = max(1, round(default * f))
        if n != default and n not in counts:
            counts.append(n)
    out: list[tuple[int] | tuple[int, str]] = [(n,) for n in counts]
    if other is not None:
        out += [(n, other) for n in [default, *counts]]
    return out + [(knob_chunks or default, k) for k in knobs]


def decode_tune(prob: str, device: Any, time_call: Callable[[tuple[Any, ...] | None], float], default: int,
                other: str | None = None, knobs: Sequence[str] = (), knob_chunks: int | None = None) -> Decode:
    """Time the default (None) and :func:`decode_candidates`, store the fastest for ``prob`` on ``device`` and
    return it as (chunks, kernel) (None: the default)."""
    best = _decode.tune(prob, device, time_call, decode_candidates(default, other, knobs, knob_chunks))
    if not best:
        return None, None
    return int(best[0]), str(best[1]) if len(best) > 1 else None
