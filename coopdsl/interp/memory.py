"""Memory: byte regions, pointers, and reading/writing typed values at per-invocation addresses.

Three kinds of :class:`Region`, each one flat ``uint8`` array:

* the *device* region holds every buffer, uniform block, push-constant block
  and array passed for a ``Ptr`` member (one allocation each, with a guard
  gap between them); device addresses are ``DEVICE_BASE`` + offset, so 0 is
  never a valid pointer;
* a *shared* region per shared array, one instance per workgroup of the batch;
* a *function* region per local variable, one instance per invocation slot.

A :class:`Ptr` holds per-invocation byte offsets into its region and the
bounds the access must stay in (per invocation, or looked up among the
device allocations for a device address).  Accesses outside raise
:class:`Fault`, which the interpreter reports at the user's line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ..ir import types as T
from .layout import Layout
from .values import PerLane, decode, encode, storage_dtype

DEVICE_BASE = 1 << 20  # device address of the first byte of the device region
GUARD = 256  # bytes between device allocations (an overrun lands in no allocation)


class Fault(Exception):
    """A memory access the hardware leaves undefined; ``slot`` is an offending invocation slot."""

    def __init__(self, message: str, slot: int | None = None):
        super().__init__(message)
        self.message = message
        self.slot = slot


@dataclass
class Allocation:
    """One buffer in the device region."""

    start: int
    size: int
    label: str
    array: np.ndarray | None = None  # the user's array, written back after the launch when writable
    writable: bool = False
    pointer: bool = False  # whether an argument passes it for a Ptr member (written back before buffers)


@dataclass
class Region:
    """A flat byte array: device memory, or one shared array / local variable for every instance."""

    kind: str  # "device" | "shared" | "function"
    label: str
    data: np.ndarray
    instance_size: int = 0
    tracker: Any = None  # a RaceTracker for shared memory
    element: int = 0  # bytes per element of an array region (for messages), 0 if not an array
    allocations: list[Allocation] = field(default_factory=list)
    written: np.ndarray | None = None  # per byte, whether anything wrote it yet (local and private memory)


class DeviceMemory:
    """Builds the device region: buffers are copied in, and writable ones copied back after the launch.

    One numpy array (the same object) given for several parameters or pointers is placed once, as the GPU
    runtime uploads it once: every parameter sees the others' stores, and it is written back once, when any of
    them writes it.  Different arrays are placed apart even when they are views of the same memory (the GPU
    runtime uploads each); they are written back in the GPU's order, arrays given for pointers first, so that
    where they overlap the same store wins (docs/interpreter.md).
    """

    def __init__(self) -> None:
        self.allocations: list[Allocation] = []
        self._chunks: list[tuple[int, np.ndarray]] = []  # (start, bytes)
        self._end = 0
        self._placed: dict[int, Allocation] = {}  # id(user's array) -> its allocation
        self.region: Region | None = None

    def allocate(self, label: str, data: bytes | np.ndarray, array: np.ndarray | None = None,
                 writable: bool = False, pointer: bool = False) -> Allocation:
        """Place ``data`` (bytes, or C-contiguous ``array`` itself) in device memory; ``array`` is written back
        when ``writable``; ``pointer``: it is given for a Ptr member.  An array placed before is not placed
        again: the allocation returned (named ``label``) has its memory."""
        if array is not None:
            placed = self._placed.get(id(array))
            if placed is not None:
                placed.writable = placed.writable or writable
                placed.pointer = placed.pointer or pointer
                return Allocation(placed.start, placed.size, label)
        raw = np.frombuffer(bytes(data), np.uint8) if isinstance(data, (bytes, bytearray)) else \
            np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        start = self._end
        a = Allocation(start, raw.size, label, array, writable, pointer)
        self.allocations.append(a)
        if array is not None:
            self._placed[id(array)] = a
        self._chunks.append((start, raw))
        self._end = _round_up(start + raw.size + GUARD, GUARD)
        return a

    def finish(self) -> Region:
        """The device region holding every allocation."""
        data = np.zeros(self._end + GUARD, np.uint8)
        for start, raw in self._chunks:
            data[start:start + raw.size] = raw
        self.region = Region("device", "device memory", data, allocations=self.allocations)
        return self.region

    def write_back(self) -> None:
        """Copy writable allocations back into the user's arrays (those given for pointers first, then the
        others in parameter order: the GPU runtime's order)."""
        assert self.region is not None, "finish() first"
        for a in sorted(self.allocations, key=lambda a: not a.pointer):
            if a.writable and a.array is not None:
                flat = a.array.reshape(-1).view(np.uint8)
                flat[:] = self.region.data[a.start:a.start + a.size]


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class Ptr(PerLane):
    """Per-invocation pointers into one region: byte offsets ``addr`` and bounds [lo, hi).

    ``addr``/``lo``/``hi`` are 0-d (the same for every invocation) or per slot;
    ``lo is None`` marks device addresses, checked against the allocations.
    """

    region: Region
    addr: np.ndarray
    lo: np.ndarray | None
    hi: np.ndarray | None
    label: str

    def offset(self, delta: np.ndarray) -> Ptr:
        """The pointers ``delta`` bytes further."""
        return Ptr(self.region, self.addr + delta, self.lo, self.hi, self.label)

    def merged(self, mask: np.ndarray, old: Ptr) -> Ptr:
        """``self`` where ``mask``, ``old`` elsewhere (same region)."""
        def pick(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
            return None if a is None or b is None else np.where(mask, a, b)

        return Ptr(self.region, np.where(mask, self.addr, old.addr), pick(self.lo, old.lo), pick(self.hi, old.hi),
                   self.label)

    def taken(self, idx: np.ndarray) -> Ptr:
        """The pointers of slots ``idx``."""
        def take(a: np.ndarray) -> np.ndarray:
            return a[idx] if np.ndim(a) else np.broadcast_to(a, idx.shape)

        return Ptr(self.region, take(self.addr), None if self.lo is None else take(self.lo),
                   None if self.hi is None else take(self.hi), self.label)

    def scattered(self, n: int, idx: np.ndarray) -> Ptr:
        """Pointers of ``n`` slots with these (compressed) pointers at ``idx``."""
        def put(a: np.ndarray) -> np.ndarray:
            out = np.zeros(n, np.int64)
            out[idx] = a
            return out
        return Ptr(self.region, put(self.addr), None if self.lo is None else put(self.lo),
                   None if self.hi is None else put(self.hi), self.label)

    @property
    def device_address(self) -> np.ndarray:
        """The 64-bit device address (device region only)."""
        return (self.addr + DEVICE_BASE).astype(np.uint64)


def device_pointer(region: Region, address: np.ndarray) -> Ptr:
    """A pointer from a 64-bit device address."""
    addr = np.asarray(address).astype(np.int64) - DEVICE_BASE
    return Ptr(region, addr, None, None, "device address")


# -- bounds -----------------------------------------------------------------------------------------
def check_range(p: Ptr, first: np.ndarray, end: np.ndarray, what: str, slots: np.ndarray) -> None:
    """Raise Fault unless each access [first, end) through ``p`` stays in its bounds.

    ``p`` holds the pointers of the accessing slots ``slots`` (compressed, shape (M,)).
    """
    if p.lo is None:
        allocs = p.region.allocations
        starts = np.array([a.start for a in allocs], np.int64)
        ends = np.array([a.start + a.size for a in allocs], np.int64)
        i = np.searchsorted(starts, first, side="right") - 1
        below = np.maximum(i, 0)
        bad = (i < 0) | (end > ends[below])
        if bad.any():
            k = int(np.argmax(bad))
            address = (int(first[k]) + DEVICE_BASE) % (1 << 64)  # (int64 offsets: an address past 2**63 is negative)
            where = ("past the end of every buffer" if address >= DEVICE_BASE else "below every buffer") \
                if i[k] < 0 else f"{int(end[k] - ends[i[k]])} bytes past the end of {allocs[i[k]].label}"
            raise Fault(f"{what} of {int(end[k] - first[k])} bytes at device address 0x{address:x} reaches {where}",
                        int(slots[k]))
        return
    assert p.hi is not None  # bounds come in pairs
    lo = np.broadcast_to(p.lo, first.shape)
    hi = np.broadcast_to(p.hi, first.shape)
    bad = (first < lo) | (end > hi)
    if bad.any():
        k = int(np.argmax(bad))
        raise Fault(f"{what} of {p.label} out of bounds: bytes [{int(first[k] - lo[k])}, {int(end[k] - lo[k])}) "
                    f"but it holds {int(hi[k] - lo[k])} bytes", int(slots[k]))


def check_alignment(p: Ptr, addr: np.ndarray, aligned: int | None, what: str, slots: np.ndarray) -> None:
    """Raise Fault if a device address breaks the access's ``Aligned`` memory operand."""
    if aligned is None or p.region.kind != "device":
        return
    bad = (np.asarray(addr) + DEVICE_BASE) % aligned != 0
    if np.any(bad):
        k = int(np.argmax(np.broadcast_to(bad, np.shape(slots))))
        a = int(np.broadcast_to(addr, np.shape(slots))[k]) + DEVICE_BASE
        raise Fault(f"{what} at device address 0x{a:x} is not {aligned}-byte aligned, as its Aligned memory operand "
                    f"promises", int(slots[k]))


# -- typed reads and writes -------------------------------------------------------------------------
def read_scalars(region: Region, addr: np.ndarray, t: T.ScalarType) -> np.ndarray:
    """Values of scalar type ``t`` at byte offsets ``addr`` (any shape)."""
    sd = storage_dtype(t)
    raw = _gather(region.data, addr, sd)
    return decode(t, raw)


def write_scalars(region: Region, addr: np.ndarray, t: T.ScalarType, values: np.ndarray) -> None:
    """Store values of scalar type ``t`` at byte offsets ``addr`` (same shape as values)."""
    sd = storage_dtype(t)
    raw = encode(t, np.broadcast_to(values, np.shape(addr)))
    _scatter(region.data, addr, sd, raw)
    if region.written is not None:
        _mark(region.written, np.asarray(addr), sd.itemsize)


_WORD = {2: np.uint16, 4: np.uint32, 8: np.uint64}  # a scalar's bytes seen as one word of the written map
_ALL = {2: 0x0101, 4: 0x01010101, 8: 0x0101010101010101}  # ... all of them written


def _mark(written: np.ndarray, addr: np.ndarray, size: int) -> None:
    """Mark the ``size`` bytes at each of ``addr`` written (aligned scalars as one word each)."""
    if size == 1:
        written[addr] = True
    elif size in _WORD and not np.any(addr % size):
        written[:len(written) // size * size].view(_WORD[size])[addr // size] = _ALL[size]
    else:
        written[addr[..., None] + np.arange(size)] = True


def _all_written(written: np.ndarray, addr: np.ndarray, size: int) -> np.ndarray:
    """Per address of ``addr`` (M,), whether the ``size`` bytes there were all written."""
    if size == 1:
        return cast(np.ndarray, written[addr])
    word = 4 if size % 4 == 0 else 2 if size % 2 == 0 else 1
    if word > 1 and not np.any(addr % word):
        words = written[:len(written) // word * word].view(_WORD[word])
        return cast(np.ndarray, np.all(words[addr[:, None] // word + np.arange(size // word)] == _ALL[word], axis=1))
    return cast(np.ndarray, np.all(written[addr[:, None] + np.arange(size)], axis=1))


def check_written(p: Ptr, addr: np.ndarray, t: T.Type, layout: Layout, what: str, slots: np.ndarray) -> None:
    """Raise Fault if a read of ``t`` at ``addr`` (M,) through ``p`` takes a byte of a value nothing stored:
    shared, local and private memory start undefined, and a GPU reads whatever was left there."""
    written = p.region.written
    if written is None:
        return
    a = np.asarray(addr)
    offsets = _value_bytes(t, layout)
    if isinstance(t, (T.ScalarType, T.VectorType, T.CoopMatType)):  # one run of bytes
        k = first_unwritten(p.region, a, len(offsets))
    else:
        ok = written[a[:, None] + offsets].all(axis=1)
        k = None if ok.all() else int(np.argmin(ok))
    if k is not None:
        at = int(a[k] - np.broadcast_to(p.lo, a.shape)[k]) if p.lo is not None else int(a[k])
        first = int(offsets[int(np.argmin(written[int(a[k]) + offsets]))])   # the value's first byte not written
        where = f"byte {at}" if first == 0 else f"byte {at + first} (byte {first} of the value read at {at})"
        raise Fault(f"{what} of {p.label} at {where} before anything was stored there: the value is undefined "
                    f"(a GPU reads whatever was left there)", int(slots[k]))


def first_unwritten(region: Region, addr: np.ndarray, nbytes: int) -> int | None:
    """The flat index of the first element at byte offsets ``addr`` (elements of ``nbytes``) that has a byte
    nothing wrote, or None (also when the region is not tracked)."""
    if region.written is None:
        return None
    ok = _all_written(region.written, np.asarray(addr).reshape(-1), nbytes)
    return None if ok.all() else int(np.argmin(ok))


def _value_bytes(t: T.Type, layout: Layout) -> np.ndarray:
    """The byte offsets a value of ``t`` occupies (struct padding left out)."""
    if isinstance(t, T.ScalarType):
        return np.arange(t.nbytes)
    if isinstance(t, T.VectorType):
        return np.arange(t.count * t.elem.nbytes)
    if isinstance(t, T.CoopMatType):
        return np.arange(layout.coop_length(t) * t.elem.nbytes)
    if isinstance(t, T.StructType):
        return np.concatenate([layout.member_offset(t, i) + _value_bytes(m, layout) for i, (_, m) in
                               enumerate(t.members)])
    if isinstance(t, T.ArrayType):
        inner, stride = _value_bytes(t.elem, layout), layout.stride(t)
        return np.concatenate([i * stride + inner for i in range(layout.length(t))])
    return np.arange(layout.size(t))


def _gather(data: np.ndarray, addr: np.ndarray, sd: np.dtype) -> np.ndarray:
    size = sd.itemsize
    if size == 1:
        return cast(np.ndarray, data[addr].view(sd))
    if not np.any(addr % size):
        return cast(np.ndarray, data.view(sd)[addr // size])
    raw = data[np.asarray(addr)[..., None] + np.arange(size)]
    return np.ascontiguousarray(raw).view(sd)[..., 0]


def _scatter(data: np.ndarray, addr: np.ndarray, sd: np.dtype, raw: np.ndarray) -> None:
    size = sd.itemsize
    raw = np.ascontiguousarray(raw, sd)
    if size == 1:
        data[addr] = raw.view(np.uint8)
    elif not np.any(addr % size):
        data.view(sd)[addr // size] = raw
    else:
        data[np.asarray(addr)[..., None] + np.arange(size)] = raw[..., None].view(np.uint8)


def read(region: Region, addr: np.ndarray, t: T.Type, layout: Layout) -> Any:
    """A value of type ``t`` (leading axis: the accesses) read at byte offsets ``addr`` (M,).

    Matrices in local memory read each invocation's components: shape (M, length).
    """
    if isinstance(t, T.ScalarType):
        return read_scalars(region, addr, t)
    if isinstance(t, T.VectorType):
        return read_scalars(region, addr[:, None] + np.arange(t.count) * t.elem.nbytes, t.elem)
    if isinstance(t, T.CoopMatType):
        n = layout.coop_length(t)
        return read_scalars(region, addr[:, None] + np.arange(n) * t.elem.nbytes, t.elem)
    if isinstance(t, T.StructType):
        return tuple(read(region, addr + layout.member_offset(t, i), m, layout) for i, (_, m) in enumerate(t.members))
    if isinstance(t, T.ArrayType):
        stride = layout.stride(t)
        return [read(region, addr + i * stride, t.elem, layout) for i in range(layout.length(t))]
    if isinstance(t, T.PointerType):
        bits = read_scalars(region, addr, T.u64)
        return device_pointer(region, bits)
    raise TypeError(f"cannot read {t} from memory")


def write(region: Region, addr: np.ndarray, t: T.Type, value: Any, layout: Layout) -> None:
    """Store ``value`` of type ``t`` (leading axis: the accesses) at byte offsets ``addr`` (M,)."""
    if isinstance(t, T.ScalarType):
        write_scalars(region, addr, t, value)
    elif isinstance(t, T.VectorType):
        write_scalars(region, addr[:, None] + np.arange(t.count) * t.elem.nbytes, t.elem, value)
    elif isinstance(t, T.CoopMatType):
        n = layout.coop_length(t)
        write_scalars(region, addr[:, None] + np.arange(n) * t.elem.nbytes, t.elem, value)
    elif isinstance(t, T.StructType):
        for i, ((_, m), v) in enumerate(zip(t.members, value)):
            write(region, addr + layout.member_offset(t, i), m, v, layout)
    elif isinstance(t, T.ArrayType):
        stride = layout.stride(t)
        for i, v in enumerate(value):
            write(region, addr + i * stride, t.elem, v, layout)
    elif isinstance(t, T.PointerType):
        write_scalars(region, addr, T.u64, value.device_address)
    else:
        raise TypeError(f"cannot write {t} to memory")
