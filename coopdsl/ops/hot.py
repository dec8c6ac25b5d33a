"""The last call of an op on the very same resident arrays, replayed without its checks.

A decoding loop calls ``ops.linear(x, w, out=y)`` again and again with the same ``coopdsl.runtime.Array``
objects: their shapes and dtypes cannot change, so everything the op worked out the first time (checks,
kernel, grid, views, scratch memory) holds, and the call can go straight to its launches. Calls whose arrays
are all resident (not numpy) are remembered, one call per op (``ops.linear``, ``ops.matmul``,
``ops.attention``).

Outside a batch the launches are not recorded again either: a replay records them into a command buffer kept
for submitting again (``coopdsl/runtime/graph.py``), and the next ones submit it and wait, for as long as it
holds (its arrays alive, no descriptor set freed since); a call inside a ``runtime.batch`` records the
launches into the batch as usual.

A call without ``out`` is remembered with the output array the op made: a call again with the very same
arrays gets a new output array of the same shape, dtype and device (what :meth:`Hot.replay` returns), put in
the launches in the place of the one made before. The kept command buffers are per output buffer: when the
caller has let go of the last result, the device's buffer pool hands its memory to the new array, and the
command buffer that wrote it runs again (a result the caller still holds is never written: the new array has
other memory, and its launches are recorded for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Launch = tuple[Any, tuple[int, int, int], tuple[Any, ...], dict[str, Any]]  # (kernel, grid, args, keywords)
GRAPHS = 4  # command buffers kept per op for calls without out (one per output buffer; the oldest goes first)


class _Made:
    """In a remembered call's launches, the place of the output array the op made (``dtype`` None), or of its
    view as ``dtype``."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: Any = None):
        self.dtype = dtype


class Hot:
    """One op's remembered call: the arrays (compared by identity), the options (by equality), the launches."""

    __slots__ = ("arrays", "graphs", "launches", "made", "options")

    def __init__(self) -> None:
        self.arrays: tuple[Any, ...] = ()
        self.options: tuple[Any, ...] = ()
        self.launches: Sequence[Launch] = ()  # with _Made in the made output's places when ``made``
        self.graphs: dict[Any, Any] = {}  # command buffers of the launches (coopdsl.runtime.graph.Graph), by
        #                                    the made output's buffer uid (None: the call gave out)
        self.made: tuple[tuple[int, ...], Any, Any] | None = None  # (shape, dtype, device) of a made output

    @property
    def graph(self) -> Any:
        """The kept command buffer of a call that gave ``out`` (None before the first replay)."""
        return self.graphs.get(None)

    def replay(self, arrays: tuple[Any, ...], options: tuple[Any, ...]) -> Any:
        """Launch again if ``arrays`` are the very objects of the remembered call and ``options`` equal its, and
        return the call's result (the ``out`` given, the last of ``arrays``, or a new output array); else None,
        with nothing done."""
        if not self.launches or len(arrays) != len(self.arrays) or options != self.options:
            return None
        for new, old in zip(arrays, self.arrays):
            if new is not old:
                return None
        launches = self.launches
        key = None
        if self.made is not None:   # a call without out: a new output array
            from ..runtime import empty

            shape, dtype, device = self.made
            result = empty(shape, dtype, device=device)
            key = result.buffer().uid
        else:
            result = arrays[-1]
        g = self.graphs.get(key)
        if g is not None:
            if g.run():
                return result
            g.release()
            del self.graphs[key]
        if key is not None:
            launches = _fill(launches, result)
        dev = _graph_device(launches)
        if dev is None:
            run(launches)
            return result
        from ..runtime.graph import capture

        g = capture(dev, lambda: run(launches))
        if g is not None:
            if key is not None:   # (the graph must not keep the output alive: its memory is the key)
                g.arrays = tuple(a for a in g.arrays if a._base_array() is not result)
            while len(self.graphs) >= GRAPHS:
                self.graphs.pop(next(iter(self.graphs))).release()
            self.graphs[key] = g
        return result

    def remember(self, arrays: tuple[Any, ...], options: tuple[Any, ...], launches: Sequence[Launch],
                 made: Any = None) -> None:
        """Keep this call if its arrays are all resident (``coopdsl.runtime``) arrays, or all but the last, None (no
        ``out``), where ``made`` is the resident output array the op made; else forget any."""
        self.forget()
        given = arrays[:-1] if arrays and arrays[-1] is None else arrays
        if given is not arrays and not _resident(made):
            return
        if all(_resident(a) for a in given):
            self.arrays, self.options = arrays, options
            if given is arrays:
                self.launches = tuple(launches)
            else:
                self.launches = _hollow(launches, made)
                self.made = (made.shape, made.dtype, made.device)

    def forget(self) -> None:
        """Remember no call (the next one is planned in full)."""
        for g in self.graphs.values():
            g.release()
        self.graphs = {}
        self.arrays, self.options, self.launches, self.made = (), (), (), None


def _resident(a: Any) -> bool:
    return type(a).__module__.startswith("coopdsl.runtime")


def _hollow(launches: Sequence[Launch], made: Any) -> tuple[Launch, ...]:
    """``launches`` with :class:`_Made` in the places of array ``made`` and of its views."""
    from ..runtime.array import ArrayView

    def sub(a: Any) -> Any:
        if a is made:
            return _Made()
        if isinstance(a, ArrayView) and a.base is made:
            return _Made(a.dtype)
        return a
    return tuple((kernel, grid, tuple(sub(a) for a in args), {k: sub(v) for k, v in keywords.items()})
                 for kernel, grid, args, keywords in launches)


def _fill(launches: Sequence[Launch], out: Any) -> tuple[Launch, ...]:
    """``launches`` with array ``out`` (or its view) in the places :func:`_hollow` marked."""
    def sub(a: Any) -> Any:
        if type(a) is _Made:
            return out if a.dtype is None else out.view(a.dtype)
        return a
    return tuple((kernel, grid, tuple(sub(a) for a in args), {k: sub(v) for k, v in keywords.items()})
                 for kernel, grid, args, keywords in launches)


def _graph_device(launches: Sequence[Launch]) -> Any:
    """The GPU (``coopdsl.runtime.Device``) ``launches`` run on, when they may be kept in a command buffer: none
    goes to the interpreter and no batch is open on it in this thread; else None."""
    from ..interp.launch import wants_cpu
    from ..runtime import Array, Device
    from ..runtime.batch import current_batch

    dev = None
    for _, _, args, keywords in launches:
        d = keywords.get("device")
        if d is None:
            if wants_cpu(None):
                return None
            d = next((a.device for a in args if isinstance(a, Array)), None)
        if not isinstance(d, Device) or (dev is not None and d is not dev):
            return None
        dev = d
    return dev if dev is not None and current_batch(dev) is None else None


def run(launches: Sequence[Launch]) -> None:
    """Make the launches, in order."""
    for kernel, grid, args, keywords in launches:
        kernel.launch(grid, *args, **keywords)
