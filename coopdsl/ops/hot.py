"""An op's recent calls on the very same resident arrays, replayed without their checks.

A decoding loop calls ``ops.linear(x, w[layer], out=y[layer])`` again and again with the same
``coopdsl.runtime.Array`` objects: their shapes and dtypes cannot change, so everything the op worked out the
first time (checks, kernel, grid, views, scratch memory) holds, and the call can go straight to its launches.
Calls whose arrays are all resident (not numpy) are remembered, the last :data:`CALLS` of each op
(``ops.linear``, ``ops.matmul``, ``ops.attention``), by the identity of their arrays and their options. A
remembered call holds its arrays weakly: it is forgotten when one of them is collected, and keeps none alive.

Outside a batch the launches are not recorded again either: a replay records them into a command buffer kept
for submitting again (``coopdsl/runtime/graph.py``), and the next ones submit it and wait, for as long as it
holds (its arrays alive, no descriptor set freed since); a call inside a ``runtime.batch`` records the
launches into the batch, the first time through ``Kernel.launch`` and from then on straight from the runtime's
recordings of them (``Kernel.batch_recording``: the pipeline, the descriptor set and the push constants of each),
for as long as those hold (no descriptor set freed since), which a call that makes its output does not use.

A call without ``out`` is remembered with the output array the op made: a call again with the very same
arrays gets a new output array of the same shape, dtype and device (what :meth:`Hot.replay` returns), put in
the launches in the place of the one made before. The kept command buffers are per output buffer: when the
caller has let go of the last result, the device's buffer pool hands its memory to the new array, and the
command buffer that wrote it runs again (a result the caller still holds is never written: the new array has
other memory, and its launches are recorded for it).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from .operands import is_resident

Launch = tuple[Any, tuple[int, int, int], tuple[Any, ...], dict[str, Any]]  # (kernel, grid, args, keywords)
CALLS = 1024  # calls remembered per op (the least recently used goes first): a decoding step of a 32-layer model
# calls ops.linear 224 times (7 products a layer), and a loop over more calls than are remembered replays none
GRAPHS = 4  # command buffers kept per call without out (one per output buffer; the oldest goes first)


class _Slot:
    """In a remembered call's launches, the place of the call's array ``index`` (-1: the output the op made),
    or of its view as ``dtype`` (the view made last is remembered weakly, with the array it was made of)."""

    __slots__ = ("dtype", "index", "last")

    def __init__(self, index: int, dtype: Any = None):
        self.index, self.dtype = index, dtype
        self.last: tuple[Any, Any] | None = None   # (weak reference to the array, to its view as dtype)

    def value(self, arrays: tuple[Any, ...], made: Any) -> Any:
        """What goes in this place for the call's ``arrays`` and output ``made``."""
        x = made if self.index < 0 else arrays[self.index]
        if self.dtype is None:
            return x
        last = self.last
        if last is not None and last[0]() is x:
            v = last[1]()
            if v is not None:
                return v
        v = x.view(self.dtype)
        self.last = (weakref.ref(x), weakref.ref(v))
        return v


class _Call:
    """One remembered call: its arrays (weakly), the launches with :class:`_Slot` in their places, the kept
    command buffers (by the made output's buffer uid; None: the call gave ``out``), the made output's
    (shape, dtype, device)."""

    __slots__ = ("graphs", "launches", "made", "places", "recorded", "refs")

    def __init__(self, refs: tuple[Any, ...], launches: tuple[Launch, ...], made: Any):
        self.refs, self.launches, self.made = refs, launches, made
        self.places = _places(launches)
        self.graphs: dict[Any, Any] = {}
        self.recorded: tuple[tuple[Any, tuple[int, int, int]], ...] | None = None   # (:func:`_recordings`; None:
        # not taken yet, or to be taken again; (): its launches cannot be recorded again that way)

    def fill(self, arrays: tuple[Any, ...], made: Any) -> tuple[Launch, ...]:
        """The launches with ``arrays`` (and ``made``) in their places (:func:`_fill`)."""
        return _fill(self.launches, arrays, made, self.places)

    def alive(self, arrays: tuple[Any, ...]) -> bool:
        """Whether ``arrays`` are the very objects remembered (a collected one's id may be reused)."""
        for a, r in zip(arrays, self.refs):
            if (a is None) != (r is None) or (r is not None and r() is not a):
                return False
        return True

    def release(self) -> None:
        for g in self.graphs.values():
            g.release()
        self.graphs = {}


class Hot:
    """One op's remembered calls: by the identity of their arrays and by their options (equal and hashable).
    Each thread has its own (a Device is one thread's at a time, and another thread's kept command buffers are
    not this thread's to run or release)."""

    __slots__ = ("_local", "dead")

    def __init__(self) -> None:
        self._local = threading.local()
        self.dead = False  # an array of a remembered call was collected: drop such calls at the next remember

    @property
    def calls(self) -> OrderedDict[Any, _Call]:
        """This thread's remembered calls, oldest first."""
        calls: OrderedDict[Any, _Call] | None = getattr(self._local, "calls", None)
        if calls is None:
            calls = self._local.calls = OrderedDict()
        return calls

    def _collected(self, _ref: Any) -> None:
        self.dead = True

    @property
    def last(self) -> _Call | None:
        """The call remembered or replayed last (None: none)."""
        return next(reversed(self.calls.values()), None)

    @property
    def launches(self) -> tuple[Launch, ...]:
        """The launches of the last call that gave ``out``, with its arrays (for benchmarks; () if there is none
        or one of its arrays is gone)."""
        call = self.last
        if call is None or call.made is not None:
            return ()
        arrays = tuple(None if r is None else r() for r in call.refs)
        if any(a is None and r is not None for a, r in zip(arrays, call.refs)):
            return ()
        return call.fill(arrays, None)

    @property
    def graph(self) -> Any:
        """The kept command buffer of the last call, when it gave ``out`` (None before its first replay)."""
        call = self.last
        return None if call is None else call.graphs.get(None)

    def replay(self, arrays: tuple[Any, ...], options: tuple[Any, ...]) -> Any:
        """Launch again if ``arrays`` are the very objects of a remembered call and ``options`` equal its, and
        return the call's result (the ``out`` given, the last of ``arrays``, or a new output array); else None,
        with nothing done."""
        key = _key(arrays, options)
        call = self.calls.get(key) if key is not None else None
        if call is None:
            return None
        if not call.alive(arrays):
            del self.calls[key]
            call.release()
            return None
        self.calls.move_to_end(key)
        gkey = None
        made = None
        if call.made is not None:   # a call without out: a new output array
            from ..runtime import empty

            shape, dtype, device = call.made
            made = result = empty(shape, dtype, device=device)
            gkey = result.buffer().uid
        else:
            result = arrays[-1]
        for a in arrays:
            if a is not None and a._buffer is None:   # freed: the launches report it, as a first call would
                run(call.fill(arrays, made))
                return result
        if _open_batches()():   # inside a batch: recorded into it (a kept command buffer waits for outside one)
            if call.recorded and _record_again(call, arrays):
                return result
            launches = call.fill(arrays, made)
            run(launches)
            if made is None and call.recorded is None:
                call.recorded = _recordings(launches)
            return result
        g = call.graphs.get(gkey)
        if g is not None:
            if g.run():
                return result
            g.release()
            del call.graphs[gkey]
        launches = call.fill(arrays, made)
        dev = _graph_device(launches)
        if dev is None:
            run(launches)
            return result
        from ..runtime.graph import capture

        g = capture(dev, lambda: run(launches))
        if g is not None:   # (the graph keeps none of the call's arrays alive: they are checked above)
            own = {id(a._base_array()) for a in (*arrays, made) if a is not None}
            g.arrays = tuple(a for a in g.arrays if id(a._base_array()) not in own)
            while len(call.graphs) >= GRAPHS:
                call.graphs.pop(next(iter(call.graphs))).release()
            call.graphs[gkey] = g
        return result

    def remember(self, arrays: tuple[Any, ...], options: tuple[Any, ...], launches: Sequence[Launch],
                 made: Any = None) -> None:
        """Remember this call if its arrays are all resident (``coopdsl.runtime``) arrays, or all but the last,
        None (no ``out``), where ``made`` is the resident output array the op made."""
        given = arrays[:-1] if arrays and arrays[-1] is None else arrays
        if given is not arrays and not is_resident(made):
            return
        if not all(is_resident(a) for a in given):
            return
        key = _key(arrays, options)
        if key is None:
            return
        if self.dead:   # (their scratch memory goes with them)
            self.dead = False
            for k, c in list(self.calls.items()):
                if any(r is not None and r() is None for r in c.refs):
                    del self.calls[k]
                    c.release()
        old = self.calls.pop(key, None)
        if old is not None:
            old.release()
        refs = tuple(None if a is None else weakref.ref(a, self._collected) for a in arrays)
        self.calls[key] = _Call(refs, _hollow(launches, arrays, made if given is not arrays else None),
                                None if given is arrays else (made.shape, made.dtype, made.device))
        while len(self.calls) > CALLS:
            self.calls.popitem(last=False)[1].release()

    def forget(self) -> None:
        """Remember no call (the next ones are planned in full)."""
        for call in self.calls.values():
            call.release()
        self.calls.clear()


def _key(arrays: tuple[Any, ...], options: tuple[Any, ...]) -> Any:
    """The dictionary key of a call (None: its options are not hashable, and it is not remembered)."""
    key = (tuple(map(id, arrays)), options)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _hollow(launches: Sequence[Launch], arrays: tuple[Any, ...], made: Any) -> tuple[Launch, ...]:
    """``launches`` with a :class:`_Slot` in the places of the call's arrays, of the output ``made`` and of
    their views (anything else, the op's own scratch memory, stays as it is)."""
    from ..runtime.array import ArrayView

    places = {id(a): i for i, a in enumerate(arrays) if a is not None}
    if made is not None:
        places[id(made)] = -1

    def sub(a: Any) -> Any:
        i = places.get(id(a))
        if i is not None:
            return _Slot(i)
        if isinstance(a, ArrayView):
            i = places.get(id(a.base))
            if i is not None:
                return _Slot(i, a.dtype)
        return a
    return _map_arguments(launches, sub)


Places = tuple[tuple[tuple[tuple[int, _Slot], ...], tuple[tuple[str, _Slot], ...]], ...]


def _places(launches: Sequence[Launch]) -> Places:
    """For each launch, the positions and keywords that hold a :class:`_Slot`, with it."""
    return tuple((tuple((i, a) for i, a in enumerate(args) if type(a) is _Slot),
                  tuple((k, a) for k, a in keywords.items() if type(a) is _Slot))
                 for _, _, args, keywords in launches)


def _fill(launches: Sequence[Launch], arrays: tuple[Any, ...], made: Any,
          places: Places | None = None) -> tuple[Launch, ...]:
    """``launches`` with the call's arrays (and ``made``, or their views) in the places :func:`_hollow` marked
    (``places``: :func:`_places` of them, worked out once per remembered call); the arguments that are not the
    call's are the remembered objects themselves."""
    filled = []
    for (kernel, grid, args, keywords), (at, by) in zip(launches, places or _places(launches)):
        if at:
            new = list(args)
            for i, slot in at:
                new[i] = slot.value(arrays, made)
            args = tuple(new)
        if by:
            keywords = dict(keywords)
            for k, slot in by:
                keywords[k] = slot.value(arrays, made)
        filled.append((kernel, grid, args, keywords))
    return tuple(filled)


def _map_arguments(launches: Sequence[Launch], sub: Callable[[Any], Any]) -> tuple[Launch, ...]:
    """``launches`` with ``sub`` applied to every argument, positional and keyword."""
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


def _recordings(launches: Sequence[Launch]) -> tuple[tuple[Any, tuple[int, int, int]], ...] | None:
    """What the runtime needs to record ``launches`` into a batch again, each with its grid
    (``Kernel.batch_recording``), once they were recorded into a batch: the next replay inside a batch records
    them straight from these, without going through ``Kernel.launch`` (its arguments are the remembered call's,
    whose arrays the replay has checked); () where one of them never has one (a dict argument, a kernel that is
    not a coopdsl.Kernel), None where one has none now (not remembered: taken again at the next replay)."""
    from .._grid import grid3

    out = []
    for kernel, grid, args, keywords in launches:
        get = getattr(kernel, "batch_recording", None)
        if get is None or any(type(a) is dict for a in (*args, *keywords.values())):
            return ()
        rec = get(*args, **keywords)
        if rec is None:
            return None
        out.append((rec, grid3(grid, least=1, error=ValueError)))
    return tuple(out)


def _record_again(call: _Call, arrays: tuple[Any, ...]) -> bool:
    """Record ``call``'s launches into the open batch from their recordings (:func:`_recordings`): True when
    done; False, with nothing recorded, where the environment sends launches to the interpreter or the first
    cannot be recorded again (a descriptor set freed since, an array gone); where a later one cannot, the rest
    go through ``Kernel.launch`` (and the recordings are dropped, to be taken again)."""
    wants_cpu, replay = _replaying()
    recorded = call.recorded
    assert recorded is not None
    if wants_cpu(None):
        return False
    for i, (rec, grid) in enumerate(recorded):
        if not replay(rec, grid):
            call.recorded = None
            if i == 0:
                return False
            run(call.fill(arrays, None)[i:])
            return True
    return True


@cache
def _replaying() -> tuple[Callable[[Any], bool], Callable[[Any, tuple[int, int, int]], bool]]:
    """(``coopdsl.interp.launch.wants_cpu``, ``coopdsl.runtime.launch.replay``), imported on first use."""
    from ..interp.launch import wants_cpu
    from ..runtime.launch import replay

    return wants_cpu, replay


@cache
def _open_batches() -> Callable[[], Any]:
    """``coopdsl.runtime.batch.open_batches`` (imported on first use)."""
    from ..runtime.batch import open_batches

    return open_batches


def run(launches: Sequence[Launch], op: str | None = None) -> None:
    """Make the launches, in order.  With ``op`` (the op's name), a device that cannot run one of the kernels
    raises the runtime's ``DeviceFeatureError`` in the op's words (:func:`cannot_run`)."""
    for kernel, grid, args, keywords in launches:
        try:
            kernel.launch(grid, *args, **keywords)
        except Exception as e:
            if op is None or type(e).__name__ != "DeviceFeatureError":   # (the runtime's: imported only with it)
                raise
            raise cannot_run(op, kernel.name, e, args) from None


def cannot_run(op: str, kernel: str, e: Any, args: Sequence[Any]) -> Exception:
    """The runtime's DeviceFeatureError ``e`` for one of ``op``'s kernels, said for the op's caller: what the kernel
    needs (without the kernel's source line, which is coopdsl's own), and where the op runs instead: the
    interpreter, with numpy arrays where the caller gave resident ones (which it does not take)."""
    from ..runtime import Array
    from ..runtime.features import INTERPRETER_HINT

    mismatches = tuple(getattr(e, "mismatches", ()))
    text = str(e)
    runs = INTERPRETER_HINT in text
    reason = "; ".join(m.message for m in mismatches) if mismatches else \
        text.split("\n")[0].replace(INTERPRETER_HINT, "")
    hint = ""
    if runs:
        hint = (resident_hint(op) if any(isinstance(a, Array) for a in args) else
                f"; the CPU interpreter runs ops.{op}: device=\"cpu\" (or COOPDSL_DEVICE=cpu in the environment)")
    error: Exception = type(e)(f"{op}: its kernel '{kernel}' cannot run here: {reason}{hint}", mismatches, None)
    return error


def resident_hint(op: str) -> str:
    """Where ``op`` runs when the device cannot, for a caller with resident arrays: the interpreter, on their
    contents (it takes numpy arrays only; "device='cpu'" alone led to a second error)."""
    return f"; the CPU interpreter runs ops.{op} on numpy arrays: pass the arrays' contents (arr.numpy()) with " \
           f"device=\"cpu\""
