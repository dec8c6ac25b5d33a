"""Per-device choices of an op, timed once and kept in the autotune cache: the part that ``ops.attention``'s
tiles (:mod:`coopdsl.ops.attention_tune`) and ``ops.gemv``'s ways and layouts (``gemv(..., tune=True)``)
share.

An op names its problem (a string of what decides the launch besides the device) and its candidates (tuples
of ints and strings; None is the op's own default).  :meth:`Choices.tune` times each with a callback, stores
the fastest with every candidate's time in the cache file of ``docs/autotune.md`` under
``<prefix>|<problem>|<device>``, and :meth:`Choices.lookup` reads it back, in this process or the next.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import autotune

Choice = tuple[Any, ...]


class Choices:
    """The stored choices of one op: cache key prefix ``prefix``, the record's field ``field`` holding the choice,
    the op's default named ``default_name`` among the timed candidates."""

    def __init__(self, prefix: str, field: str = "choice", default_name: str = "default"):
        self.prefix, self.field, self.default_name = prefix, field, default_name
        self._memo: dict[tuple[str, str], Choice | None] = {}   # (problem, device) -> stored choice
        _ALL.append(self)

    def reset(self) -> None:
        """Forget what was read: the next lookup reads the cache file again (for tests)."""
        self._memo.clear()

    def lookup(self, prob: str, device: Any) -> tuple[bool, Choice | None]:
        """(whether the cache holds ``prob`` on ``device``, the choice it holds: None for the op's default)."""
        key = (prob, autotune.device_key(device))
        if key not in self._memo:  # (the file is read once a process; a choice stored here is remembered)
            record = cache().get(f"{self.prefix}|{prob}|{key[1]}")
            if record is None:
                return False, None
            choice = record.get(self.field)
            self._memo[key] = tuple(choice) if choice else None
        return True, self._memo[key]

    def tune(self, prob: str, device: Any, time_call: Callable[[Choice | None], float],
             candidates: Sequence[Choice]) -> Choice | None:
        """Time the op's default (None) and ``candidates`` with ``time_call(choice) -> ms`` (an exception: the
        device cannot run that candidate, which is skipped; on the default it is raised), store the fastest
        for ``prob`` on ``device`` and return it."""
        best: Choice | None = None
        best_ms = float("inf")
        times: dict[str, float] = {}
        for choice in (None, *candidates):
            name = self.default_name if choice is None else "x".join(map(str, choice))
            try:
                ms = time_call(choice)
            except Exception:  # noqa: BLE001 - a candidate the device refuses is not a candidate
                times[name] = float("nan")
                if choice is None:
                    raise
                continue
            times[name] = ms
            if ms < best_ms:
                best, best_ms = choice, ms
        dkey = autotune.device_key(device)
        cache().put(f"{self.prefix}|{prob}|{dkey}", {self.field: list(best) if best else None, "ms": best_ms,
                                                     "times_ms": times})
        self._memo[(prob, dkey)] = best
        return best


_cache: autotune.Cache | None = None
_ALL: list[Choices] = []   # every op's Choices, for reset_all


def cache() -> autotune.Cache:
    """The autotune cache file this process uses (``autotune.default_cache_path()`` when first asked)."""
    global _cache
    if _cache is None:
        _cache = autotune.Cache(autotune.default_cache_path())
    return _cache


def reset_cache() -> None:
    """Forget the cache file: the next use reads ``autotune.default_cache_path()`` again (for tests)."""
    global _cache
    _cache = None


def reset_all() -> None:
    """Forget the cache file and what every op's :class:`Choices` read from it (for tests)."""
    reset_cache()
    for choices in _ALL:
        choices.reset()
