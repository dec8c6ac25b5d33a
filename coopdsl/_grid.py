"""The grid a launch takes, decided in one place for ``Kernel.launch``, ``Kernel.bench``, the runtime's
``launch`` and ``bench`` (the lower-level API) and the interpreter's ``run``: one to three workgroup counts
(Python ints, numpy integers, or one int), the missing ones 1, each a 32-bit unsigned int as a dispatch's
counts are."""

from __future__ import annotations

import numbers
from typing import Any

U32 = 0xFFFFFFFF
INTERPRETER_WORKGROUP = 1024  # the most invocations of a workgroup the CPU interpreter runs (as NVIDIA, AMD, Intel)


def grid3(grid: Any, *, least: int, error: type[Exception]) -> tuple[int, int, int]:
    """``grid`` as three Python ints.  Counts below ``least`` (1 for a launch; 0 for the interpreter's ``run``,
    where a count of 0 runs nothing), anything but 1 to 3 integers, and counts past 2^32 - 1 raise ``error``."""
    if type(grid) is tuple and len(grid) == 3 and type(grid[0]) is int and type(grid[1]) is int \
            and type(grid[2]) is int and least <= grid[0] <= U32 and least <= grid[1] <= U32 \
            and least <= grid[2] <= U32:
        return grid  # the common cases, checked without building anything
    if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and least <= grid[0] <= U32:
        return (grid[0], 1, 1)
    try:
        g = (grid,) if isinstance(grid, numbers.Integral) else \
            tuple(grid) if not isinstance(grid, (str, bytes, dict, set, frozenset)) else ()   # (no order, or keys)
    except TypeError:  # launch(None, ...), launch(2.5, ...)
        g = ()
    if not 1 <= len(g) <= 3 or not all(isinstance(n, numbers.Integral) and not isinstance(n, bool)
                                       and int(n) >= least for n in g):
        what = "positive ints" if least >= 1 else "workgroup counts (ints)"
        raise error(f"grid must be 1 to 3 {what}, got {grid!r}")
    x, y, z = (*(int(n) for n in g), 1, 1)[:3]  # (int subclasses and numpy integers as Python ints)
    if x > U32 or y > U32 or z > U32:
        raise error(f"grid {(x, y, z)} does not fit a dispatch: each count is a 32-bit unsigned int "
                    f"(up to {U32}; devices allow less, see maxComputeWorkGroupCount)")
    return (x, y, z)
