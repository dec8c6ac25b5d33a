"""Launches recorded once and submitted again, as CUDA graphs do: the host cost of a repeated call is one submission.

A decoding loop makes the same launches on the same resident arrays call after call. Recording them costs
host time on every call (binding, the driver's command recording), more than the GPU takes for a small
kernel. :func:`capture` records them once into a command buffer that may be submitted again and runs it;
:meth:`Graph.run` submits that command buffer again and waits. A graph holds while every resident array it
names is alive and no descriptor set has been freed since it was recorded (the descriptor cache's
generation: a freed set may be one it binds); ``run`` returns False otherwise, and the caller records anew.
Push constants and specialization constants are those of the recording: a caller replays a graph only for
the very same arguments (``coopdsl/ops/hot.py`` does, for the ops).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .batch import Batch, current_batch, open_batches
from .device import Device, default_device
from .errors import LaunchError

if TYPE_CHECKING:
    from .array import Array

__all__ = ["Graph", "capture", "keep"]


class Graph:
    """A command buffer of recorded launches, kept for submitting again (made by :func:`capture`)."""

    __slots__ = ("arrays", "cb", "device", "generation")

    def __init__(self, device: Device, cb: int, arrays: tuple[Array, ...], generation: int):
        self.device, self.cb, self.arrays, self.generation = device, cb, arrays, generation

    def valid(self) -> bool:
        """Whether the command buffer may run again now: its arrays alive, its descriptor sets not freed, and no
        batch open on the device in this thread (a launch there must be recorded in order with the batch's)."""
        dev = self.device
        if self.cb == 0 or dev.descriptors.generation != self.generation or current_batch(dev) is not None:
            return False
        for a in self.arrays:
            if a._buffer is None:
                return False
        return True

    def run(self) -> bool:
        """Submit the launches again and wait for them: True; False, with nothing run, when the graph is no
        longer :meth:`valid`."""
        if not self.valid():
            return False
        try:
            self.device.submit_and_wait(self.cb)
        except BaseException:
            self.cb = 0  # (a failed submission or wait: the command buffer may be pending; never reuse it)
            raise
        return True

    def release(self) -> None:
        """Give the command buffer back to the device (the graph no longer runs)."""
        if self.cb:
            self.device.release_command_buffer(self.cb)
            self.cb = 0


def capture(device: Device | None, record: Callable[[], object]) -> Graph | None:
    """Run ``record()`` (which launches kernels on ``device``; None: the default device) with a batch open on
    the device in this thread, submit what it recorded and wait, and return it as a :class:`Graph`; None when
    it cannot be kept (numpy data staged or downloaded, an ``Array.write``, nothing recorded) after running it
    all the same. ``record``'s return value is not used. Launches it makes on another device run there at
    once, as outside the capture, and are not part of the graph. The graph keeps the resident arrays its
    launches use alive (arrays made inside ``record`` too) until it is released. A batch already open on the
    device in this thread is a LaunchError; ``device`` not a Device or ``record`` not callable a TypeError,
    before anything runs."""
    if device is None:
        device = default_device()
    if not isinstance(device, Device):
        raise TypeError(f"capture: device must be a coopdsl.runtime.Device or None, got {type(device).__name__}")
    if not callable(record):
        raise TypeError(f"capture: record must be a function that makes the launches, got {type(record).__name__}")
    batches = open_batches()
    if device in batches:
        raise LaunchError(f"a batch is open for {device!r} in this thread: launches there are recorded into it")
    b = Batch(device, flush_every=None, reusable=True)
    batches[device] = b
    try:
        record()
    except BaseException:
        batches.pop(device, None)
        b.discard()
        raise
    batches.pop(device, None)
    return keep(b)


def keep(b: Batch) -> Graph | None:
    """Submit batch ``b`` (made ``reusable``) and wait; its command buffer as a :class:`Graph` when it can be kept
    (``Batch.submit(keep=True)``), else None."""
    generation = b.device.descriptors.generation  # (a set freed from here on, even at this submission, ends it)
    kept = b.submit(keep=True)
    return None if kept is None else Graph(b.device, kept[0], kept[1], generation)
