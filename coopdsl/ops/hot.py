"""The last call of an op on the very same resident arrays, replayed without its checks.

A decoding loop calls ``ops.linear(x, w, out=y)`` again and again with the same ``coopdsl.runtime.Array``
objects: their shapes and dtypes cannot change, so everything the op worked out the first time (checks,
kernel, grid, views, scratch memory) holds, and the call can go straight to its launches. Only calls whose
arrays are all resident (not numpy) and that name ``out`` are remembered; one call per op (``ops.linear``,
``ops.matmul``, ``ops.attention``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Launch = tuple[Any, tuple[int, int, int], tuple[Any, ...], dict[str, Any]]  # (kernel, grid, args, keywords)


class Hot:
    """One op's remembered call: the arrays (compared by identity), the options (by equality), the launches."""

    __slots__ = ("arrays", "launches", "options")

    def __init__(self) -> None:
        self.arrays: tuple[Any, ...] = ()
        self.options: tuple[Any, ...] = ()
        self.launches: Sequence[Launch] = ()

    def replay(self, arrays: tuple[Any, ...], options: tuple[Any, ...]) -> bool:
        """Launch again if ``arrays`` are the very objects of the remembered call and ``options`` equal its."""
        if not self.launches or len(arrays) != len(self.arrays) or options != self.options:
            return False
        for new, old in zip(arrays, self.arrays):
            if new is not old:
                return False
        run(self.launches)
        return True

    def remember(self, arrays: tuple[Any, ...], options: tuple[Any, ...], launches: Sequence[Launch]) -> None:
        """Keep this call if its arrays are all resident (``coopdsl.runtime``) arrays; else forget any."""
        if all(type(a).__module__.startswith("coopdsl.runtime") for a in arrays):
            self.arrays, self.options, self.launches = arrays, options, tuple(launches)
        else:
            self.forget()


    def forget(self) -> None:
        """Remember no call (the next one is planned in full)."""
        self.arrays, self.options, self.launches = (), (), ()


def run(launches: Sequence[Launch]) -> None:
    """Make the launches, in order."""
    for kernel, grid, args, keywords in launches:
        kernel.launch(grid, *args, **keywords)
