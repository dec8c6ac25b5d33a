"""How many dispatches a timing makes: the one rule of ``runtime.bench`` (``Kernel.bench``) and of
``coopdsl.autotune``'s options, which check it when the tuner is made rather than at its first tuning."""

from __future__ import annotations

import operator
from typing import Any

# the most dispatches (timed, or warm-up) one bench records: its query pool holds two timestamps a timed one
# (a pool or command buffer far past this made the driver fail, or crash the process, instead of an error)
MAX_REPEAT = 1_000_000


def count(v: Any) -> int | None:
    """``v`` as a Python int if it is an integer (a numpy one too; a bool is not), else None."""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def counts_problem(warmup: Any, repeat: Any) -> str | None:
    """Why ``warmup`` untimed and ``repeat`` timed dispatches cannot be a timing's, else None (they are then
    integers: take them as :func:`count` gives them)."""
    r, w = count(repeat), count(warmup)
    if r is None or w is None or not 1 <= r <= MAX_REPEAT or not 0 <= w <= MAX_REPEAT:
        return (f"repeat must be from 1 to {MAX_REPEAT:,} and warmup from 0 to {MAX_REPEAT:,} (one command buffer "
                f"records them all; time longer in several calls), got repeat={repeat!r}, warmup={warmup!r}")
    return None
