"""Recording launches into one command buffer and submitting them with one wait.

Every launch goes through a :class:`Batch`: an immediate ``launch`` is a batch of one, submitted at once;
``with runtime.batch(device):`` keeps one open so that every launch on that device in the block (and every
``Array.write``) is recorded, in order, and the block's end waits once for all of it. A full memory
barrier precedes each dispatch, so each launch sees the results of the ones before it.

A long batch hands its commands to the GPU in chunks (every ``flush_every`` dispatches, without waiting), so
the GPU runs the first launches while Python records the next ones; the barriers order the chunks too (a
barrier's first scope is every command earlier in submission order on the queue), and the one wait at the end
covers them all (a fence signalled by a submission follows every earlier submission on its queue).
"""

from __future__ import annotations

import ctypes
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from . import vk
from .device import Device, default_device
from .errors import LaunchError

if TYPE_CHECKING:
    from .array import Array
    from .descriptors import DescriptorSet
    from .memory import Buffer

_open = threading.local()  # .batches: {Device: Batch} opened with `with` in this thread

ALL_RW = (vk.ACCESS_SHADER_READ | vk.ACCESS_SHADER_WRITE | vk.ACCESS_TRANSFER_READ | vk.ACCESS_TRANSFER_WRITE)
COMPUTE_AND_TRANSFER = vk.PIPELINE_STAGE_COMPUTE_SHADER | vk.PIPELINE_STAGE_TRANSFER
FULL_BARRIER = vk.MemoryBarrier(sType=vk.ST_MEMORY_BARRIER, srcAccessMask=ALL_RW, dstAccessMask=ALL_RW)
HOST_BARRIER = vk.MemoryBarrier(sType=vk.ST_MEMORY_BARRIER, srcAccessMask=vk.ACCESS_TRANSFER_WRITE,
                                dstAccessMask=vk.ACCESS_HOST_READ)
FULL_BARRIER_REF = ctypes.byref(FULL_BARRIER)
BEGIN_INFO = vk.CommandBufferBeginInfo(sType=vk.ST_COMMAND_BUFFER_BEGIN_INFO,
                                       flags=vk.COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT)
REUSE_BEGIN_INFO = vk.CommandBufferBeginInfo(sType=vk.ST_COMMAND_BUFFER_BEGIN_INFO)  # submitted again (graph.py)
FLUSH_EVERY = 64  # dispatches recorded before a batch hands them to the GPU (and records on)
MAX_GROUPS = 0x7FFFFFFF  # grid sizes passed to the untyped vkCmdDispatch as C ints
_NO_LIMIT = (0xFFFFFFFF,) * 3
_BARRIER_ARGS = (ctypes.c_uint32(COMPUTE_AND_TRANSFER), ctypes.c_uint32(COMPUTE_AND_TRANSFER), ctypes.c_uint32(0),
                 ctypes.c_uint32(1), FULL_BARRIER_REF, ctypes.c_uint32(0), None, ctypes.c_uint32(0), None)


def open_batches() -> dict[Device, Batch]:
    """The batches opened with ``with`` in this thread, by device."""
    batches = getattr(_open, "batches", None)
    if batches is None:
        batches = _open.batches = {}
    return batches


def current_batch(dev: Device) -> Batch | None:
    """The batch open on ``dev`` in this thread, if any."""
    return open_batches().get(dev)


def batch(device: Device | None = None, flush_every: int | None = FLUSH_EVERY) -> Batch:
    """A batch for ``device`` (default: the default device); use it as ``with runtime.batch(dev) as b:``.

    Every ``flush_every`` dispatches (default 64) what is recorded is handed to the GPU without waiting, so
    the GPU works while the block records on; ``flush_every=None`` keeps everything until the block ends
    (then, if the block raises, nothing of it runs).
    """
    return Batch(device, flush_every)


class Batch:
    """Launches, uploads and downloads recorded into one command buffer and submitted with one wait.

    As a context manager it captures every launch on its device in this thread; the block's end submits
    them and waits (or, if the block raised, discards what was not yet handed to the GPU and waits for what
    was). ``submit()`` may also be called inside the block to run what is recorded so far and wait.
    Every ``flush_every`` dispatches the recorded commands are handed to the GPU without waiting
    (``flush()``); ``None`` never does so before the end. Numpy arrays passed to launches in a batch are
    uploaded at their first use and written back at submission.
    """

    def __init__(self, device: Device | None = None, flush_every: int | None = FLUSH_EVERY, reusable: bool = False):
        self.device = device if device is not None else default_device()
        if not isinstance(self.device, Device):
            raise TypeError(f"batch() takes a coopdsl.runtime.Device, got {type(self.device).__name__}")
        if flush_every is not None and (type(flush_every) is not int or flush_every < 1):
            raise ValueError(f"flush_every must be a positive int or None, got {flush_every!r}")
        self.flush_every = flush_every
        self._reusable = reusable  # begun for submission again (coopdsl/runtime/graph.py): see submit(keep=True)
        self._flush_at = flush_every if flush_every is not None else -1
        self._v = self.device.vk
        info = self.device.info  # (a stand-in device may carry the listing's dict)
        self._max_groups = info.get("max_workgroup_count", _NO_LIMIT) if isinstance(info, dict) \
            else info.max_workgroup_count
        self.launches = 0  # dispatches recorded over the batch's life
        self._counted = False  # whether this batch is counted in device.recording
        self._cb: int | None = None
        self._cb_arg: ctypes.c_void_p | None = None  # _cb wrapped for the untyped entry points
        self._inflight: list[int] = []  # command buffers handed to the queue and not yet waited for
        self._pipeline: int | None = None  # state bound in the command buffer being recorded
        self._set: DescriptorSet | None = None
        self._push: bytes | None = None
        self._reset()

    def _reset(self) -> None:
        self._cb = self._cb_arg = None
        self._inflight = []
        self._recorded = 0  # dispatches in the command buffer being recorded
        self._temps: list[Buffer] = []          # pooled buffers to give back after submission
        self._staged: dict[int, list[Any]] = {}  # id(ndarray) -> [ndarray, device buffer, write back?]
        self._downloads: list[tuple[Buffer, np.ndarray]] = []
        self._arrays: dict[int, Array] = {}      # resident arrays the recorded commands use
        self._addresses = False                  # a number given for a pointer (no array to keep alive)
        self._pipeline = self._set = self._push = None

    # -- context manager ------------------------------------------------------------------------
    def __enter__(self) -> Batch:
        batches = open_batches()
        if self.device in batches:
            raise LaunchError(f"a batch is already open for {self.device!r} in this thread; batches do not nest")
        batches[self.device] = self
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        open_batches().pop(self.device, None)
        if exc_type is None:
            self.submit()
        else:
            self.discard()

    def __repr__(self) -> str:
        return f"<coopdsl.runtime.Batch on {self.device!r}: {self.launches} launches recorded>"

    # -- recording --------------------------------------------------------------------------------
    @property
    def command_buffer(self) -> int:
        """The command buffer being recorded (begun on first use)."""
        if self._cb is None:
            cb = self.device.acquire_command_buffer()
            self._v.call("vkBeginCommandBuffer", cb, ctypes.byref(REUSE_BEGIN_INFO if self._reusable else BEGIN_INFO))
            self._cb, self._cb_arg = cb, ctypes.c_void_p(cb)
            self._raw_barrier, self._raw_dispatch = self._v.raw["vkCmdPipelineBarrier"], self._v.raw["vkCmdDispatch"]
            if not self._counted:
                self.device.recording += 1
                self._counted = True
        return self._cb

    def barrier(self) -> None:
        """Record a full compute/transfer memory barrier (earlier writes visible to later commands)."""
        self._v.vkCmdPipelineBarrier(self.command_buffer, COMPUTE_AND_TRANSFER, COMPUTE_AND_TRANSFER, 0, 1,
                                     FULL_BARRIER_REF, 0, None, 0, None)

    def upload(self, buf: Buffer, data: np.ndarray) -> None:
        """Record a copy of ``data`` (C-contiguous; copied to staging now) into ``buf``."""
        if data.nbytes == 0:
            return
        staging = self.device.pool.take(data.nbytes, host_visible=True)
        self._temps.append(staging)
        staging.write_from(data.ctypes.data, data.nbytes)
        cb = self.command_buffer
        self.barrier()
        self._v.vkCmdCopyBuffer(cb, staging.handle, buf.handle, 1, ctypes.byref(vk.BufferCopy(0, 0, data.nbytes)))

    def fill(self, buf: Buffer, word: int = 0) -> None:
        """Record filling all of ``buf`` with the 32-bit ``word``."""
        cb = self.command_buffer
        self.barrier()
        self._v.vkCmdFillBuffer(cb, buf.handle, 0, vk.WHOLE_SIZE, word)

    def download(self, buf: Buffer, out: np.ndarray) -> None:
        """Copy ``buf`` into ``out`` (C-contiguous, writable) when the batch is submitted."""
        if out.nbytes:
            self.command_buffer  # noqa: B018  (the submission must happen even with nothing else recorded)
            self._downloads.append((buf, out))

    def stage(self, arr: np.ndarray, write_back: bool) -> Buffer:
        """A device buffer holding numpy ``arr`` (uploaded at its first use in this batch; written back into
        ``arr`` at submission when ``write_back``)."""
        entry = self._staged.get(id(arr))
        if entry is None:
            buf = self.device.pool.take(arr.nbytes, host_visible=False)
            self._temps.append(buf)
            self.upload(buf, arr)
            entry = self._staged[id(arr)] = [arr, buf, write_back]
        entry[2] = entry[2] or write_back
        return cast("Buffer", entry[1])

    def use(self, array: Array) -> None:
        """Note that recorded commands use resident ``array`` (it cannot be freed or read until submission)."""
        self._arrays[id(array)] = array

    def use_address(self) -> None:
        """Note that recorded commands read memory through a number given for a pointer: a command buffer that
        holds one is not kept for submitting again, since nothing tells when that memory goes."""
        self._addresses = True

    def uses(self, array: Array) -> bool:
        """Whether recorded, unsubmitted commands use ``array``'s memory: the array itself, its base, or another
        view of that base (a view shares its base's memory; launches note the view they were given)."""
        used = self._arrays
        if id(array) in used:
            return True
        base = array._base_array()
        return id(base) in used or any(a._base_array() is base for a in used.values())

    def dispatch(self, pipeline: int, layout: int, ds: DescriptorSet, push: bytes, grid: tuple[int, int, int],
                 query: tuple[int, int] | None = None) -> None:
        """Record barrier, bind, push constants and dispatch; ``query`` (pool, index) adds timestamps around it."""
        limit = self._max_groups
        if grid[0] > limit[0] or grid[1] > limit[1] or grid[2] > limit[2]:  # (before anything is recorded)
            raise LaunchError(f"grid {tuple(grid)} exceeds what the device dispatches at once "
                              f"(maxComputeWorkGroupCount {tuple(limit)}); split the work over several launches "
                              f"or let each workgroup do more")
        v = self._v
        cb = self._cb if self._cb is not None else self.command_buffer
        self._raw_barrier(self._cb_arg, *_BARRIER_ARGS)  # the hot path: untyped call, arguments pre-wrapped
        if pipeline != self._pipeline:  # state already set in this command buffer is not set again
            v.vkCmdBindPipeline(cb, vk.PIPELINE_BIND_POINT_COMPUTE, pipeline)
            self._pipeline, self._set, self._push = pipeline, None, None
        if ds is not self._set:
            v.vkCmdBindDescriptorSets(cb, vk.PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, ds.handles, 0, None)
            self._set = ds
        if push and push != self._push:
            v.vkCmdPushConstants(cb, layout, vk.SHADER_STAGE_COMPUTE_BIT, 0, len(push), push)
            self._push = push
        if query:
            v.vkCmdWriteTimestamp(cb, vk.PIPELINE_STAGE_TOP_OF_PIPE, query[0], query[1])
        if grid[0] <= MAX_GROUPS and grid[1] <= MAX_GROUPS and grid[2] <= MAX_GROUPS:
            self._raw_dispatch(self._cb_arg, grid[0], grid[1], grid[2])
        else:  # (a device whose limit is above 2**31 - 1: the typed call takes the whole uint32 range)
            v.vkCmdDispatch(cb, grid[0], grid[1], grid[2])
        if query:
            v.vkCmdWriteTimestamp(cb, vk.PIPELINE_STAGE_BOTTOM_OF_PIPE, query[0], query[1] + 1)
        self.launches += 1
        self._recorded += 1
        if self._recorded == self._flush_at:
            self.flush()

    def flush(self) -> None:
        """Hand what is recorded to the GPU without waiting; recording goes on in a new command buffer."""
        cb = self._cb
        if cb is None:
            return
        self._v.call("vkEndCommandBuffer", cb)
        self.device.submit(cb)
        self._inflight.append(cb)
        self._cb = self._cb_arg = None
        self._recorded = 0
        self._pipeline = self._set = self._push = None  # bound state does not carry over to the next one

    # -- submission -------------------------------------------------------------------------------
    def submit(self, keep: bool = False) -> tuple[int, tuple[Array, ...]] | None:
        """Run everything recorded so far and wait for it; write numpy outputs back. The batch stays usable.

        ``keep=True``, for a batch made ``reusable``: when everything recorded is in one command buffer that names
        resident arrays only (nothing staged, downloaded or handed to the GPU earlier), that command buffer is
        not given back but returned with the arrays it uses, to be submitted again (``coopdsl/runtime/graph.py``);
        otherwise None, as without ``keep``."""
        kept = keep and self._reusable and self._cb is not None and not self._inflight and not self._staged \
            and not self._downloads and not self._temps and not self._addresses
        downloads = self._downloads + [(buf, arr) for arr, buf, back in self._staged.values() if back and arr.nbytes]
        copies = self._record_downloads(self.command_buffer, downloads) if downloads else []
        cb = self._cb
        if cb is None and not self._inflight:
            self._finish()
            return None
        try:
            if cb is not None:
                self._v.call("vkEndCommandBuffer", cb)
                self.device.submit_and_wait(cb)  # its fence also waits for the chunks submitted before
            else:
                self._v.call("vkQueueWaitIdle", self.device.queue)
        except BaseException:  # the command buffers and their buffers may still be in use: never reuse them
            self._temps.clear()
            self._inflight.clear()
            self._cb = None
            self._finish()
            raise
        for done in self._inflight:
            self.device.release_command_buffer(done)
        if cb is not None and not kept:
            self.device.release_command_buffer(cb)
        for staging, out in copies:
            staging.read_into(out.ctypes.data, out.nbytes)
        arrays = tuple(self._arrays.values())
        self._finish()
        return (cb, arrays) if kept and cb is not None else None

    def discard(self) -> None:
        """Drop everything recorded and not yet handed to the GPU (it never runs); wait for what was."""
        if self._cb is not None:
            self._v.vkEndCommandBuffer(self._cb)
            self.device.release_command_buffer(self._cb)
            self._cb = None
        if self._inflight:
            self._v.call("vkQueueWaitIdle", self.device.queue)
            for done in self._inflight:
                self.device.release_command_buffer(done)
        self._finish()

    def _record_downloads(self, cb: int, downloads: list[tuple[Buffer, np.ndarray]]) -> list[tuple[Buffer, np.ndarray]]:
        """Record device-to-staging copies for ``downloads``; returns (staging buffer, target array) pairs."""
        v, pool = self._v, self.device.pool
        self.barrier()
        copies = []
        for buf, out in downloads:
            staging = pool.take(out.nbytes, host_visible=True)
            self._temps.append(staging)
            copies.append((staging, out))
            v.vkCmdCopyBuffer(cb, buf.handle, staging.handle, 1, ctypes.byref(vk.BufferCopy(0, 0, out.nbytes)))
        v.vkCmdPipelineBarrier(cb, vk.PIPELINE_STAGE_TRANSFER, vk.PIPELINE_STAGE_HOST, 0, 1,
                               ctypes.byref(HOST_BARRIER), 0, None, 0, None)
        return copies

    def _finish(self) -> None:
        dev = self.device
        if self._counted:
            dev.recording -= 1
            self._counted = False
        for buf in reversed(self._temps):  # so that the same launch takes the same buffers (and sets) again
            dev.pool.give(buf)
        self._reset()
        if not dev.recording:
            dev.descriptors.trim()
