"""Device memory: buffers with their own allocation, and a pool that reuses them across launches."""

from __future__ import annotations

import bisect
import ctypes
import itertools
import weakref
from typing import TYPE_CHECKING, Any

from . import vk

if TYPE_CHECKING:
    from .device import Device

_uids = itertools.count(1)
DEVICE_USAGE = (vk.BUFFER_USAGE_STORAGE_BUFFER | vk.BUFFER_USAGE_UNIFORM_BUFFER | vk.BUFFER_USAGE_TRANSFER_SRC
                | vk.BUFFER_USAGE_TRANSFER_DST)
STAGING_USAGE = vk.BUFFER_USAGE_TRANSFER_SRC | vk.BUFFER_USAGE_TRANSFER_DST


def _sized(e: vk.VulkanError, size: int, host_visible: bool) -> vk.VulkanError:
    """``e`` with the size of the buffer that could not be made in its message."""
    kind = "host-visible" if host_visible else "device-local"
    e.args = (f"{e.args[0]} making a buffer of {size} bytes ({size / 2 ** 30:.2f} GiB) of {kind} memory",)
    return e


class AddressRanges:
    """The device address ranges of a device's live arrays whose address was handed out (``Array.address``): a
    number given for a pointer must lie in one, since an address outside every array would fault the GPU (a lost
    device) or write into whatever the pool gave that memory to next.  A range holds while its array is alive
    and not freed (its buffer back in the pool is no longer the array's)."""

    PRUNE_FROM = 64   # entries past which add() drops the ranges no array holds any more

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ranges: dict[int, tuple[int, Any, Any]] = {}   # start -> (end, weakref to the array, its buffer)
        self._prune_at = self.PRUNE_FROM

    def __len__(self) -> int:
        return len(self._ranges)

    def add(self, start: int, nbytes: int, array: Any, buffer: Any) -> None:
        """Note ``array``'s ``nbytes`` at ``start`` (in ``buffer``); a later array at the same start replaces it.
        Past :data:`PRUNE_FROM` entries (then past twice the entries left) the ranges of dead or freed arrays go,
        so that a long run handing out many addresses keeps only its live arrays' (and their buffers)."""
        if start not in self._ranges:
            bisect.insort(self._starts, start)
        self._ranges[start] = (start + nbytes, weakref.ref(array), buffer)
        if len(self._ranges) > self._prune_at:
            self._ranges = {s: r for s, r in self._ranges.items() if self._live(r)}
            self._starts = sorted(self._ranges)
            self._prune_at = max(self.PRUNE_FROM, 2 * len(self._ranges))

    @staticmethod
    def _live(entry: tuple[int, Any, Any]) -> bool:
        array = entry[1]()
        return array is not None and array._buffer is entry[2]

    def holds(self, address: int) -> bool:
        """Whether ``address`` is inside a noted array that is alive and still has its memory."""
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return False
        entry = self._ranges[self._starts[i]]
        return address < entry[0] and self._live(entry)


class Buffer:
    """A VkBuffer with its own memory; host-visible ones stay mapped. ``uid`` is unique for the process
    (Vulkan may reuse handle values), so caches can key on it."""

    def __init__(self, dev: Device, size: int, usage: int, host_visible: bool, device_address: bool = False):
        self.dev, self.size, self.host_visible = dev, max(int(size), 4), host_visible
        self.uid = next(_uids)
        v, d = dev.vk, dev.handle
        if device_address:
            usage |= vk.BUFFER_USAGE_SHADER_DEVICE_ADDRESS
        info = vk.BufferCreateInfo(sType=vk.ST_BUFFER_CREATE_INFO, size=self.size, usage=usage,
                                   sharingMode=vk.SHARING_MODE_EXCLUSIVE)
        self.handle = vk.VkNonDispatchable()
        try:
            v.call("vkCreateBuffer", d, ctypes.byref(info), None, ctypes.byref(self.handle))
        except vk.VulkanError as e:
            raise _sized(e, self.size, host_visible) from None
        req = vk.MemoryRequirements()
        v.vkGetBufferMemoryRequirements(d, self.handle, ctypes.byref(req))
        want = (vk.MEMORY_PROPERTY_HOST_VISIBLE | vk.MEMORY_PROPERTY_HOST_COHERENT) if host_visible \
            else vk.MEMORY_PROPERTY_DEVICE_LOCAL
        alloc = vk.MemoryAllocateInfo(sType=vk.ST_MEMORY_ALLOCATE_INFO, allocationSize=req.size,
                                      memoryTypeIndex=dev.memory_type(req.memoryTypeBits, want))
        flags = vk.MemoryAllocateFlagsInfo(sType=vk.ST_MEMORY_ALLOCATE_FLAGS_INFO,
                                           flags=vk.MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT)
        if device_address:
            alloc.pNext = ctypes.cast(ctypes.pointer(flags), ctypes.c_void_p)
        self.memory = vk.VkNonDispatchable()
        try:
            v.call("vkAllocateMemory", d, ctypes.byref(alloc), None, ctypes.byref(self.memory))
        except vk.VulkanError as e:
            v.vkDestroyBuffer(d, self.handle, None)
            raise _sized(e, self.size, host_visible) from None
        v.call("vkBindBufferMemory", d, self.handle, self.memory, 0)
        self.ptr = None
        if host_visible:
            p = ctypes.c_void_p()
            v.call("vkMapMemory", d, self.memory, 0, self.size, 0, ctypes.byref(p))
            self.ptr = p.value
        self._address: int | None = None

    def address(self) -> int:
        """The buffer's device address (needs a buffer created with ``device_address=True``)."""
        if self._address is None:
            info = vk.BufferDeviceAddressInfo(sType=vk.ST_BUFFER_DEVICE_ADDRESS_INFO, buffer=self.handle)
            self._address = int(self.dev.vk.vkGetBufferDeviceAddress(self.dev.handle, ctypes.byref(info)))
        return self._address

    def _mapped(self) -> int:
        """The host address of a host-visible buffer's memory (ValueError for a device-local buffer)."""
        if self.ptr is None:
            raise ValueError("the buffer is not host-visible: create it with host_visible=True to read or "
                             "write it from the host")
        return self.ptr

    def write(self, data: bytes | memoryview) -> None:
        """Copy ``data`` to the start of a host-visible buffer."""
        ctypes.memmove(self._mapped(), bytes(data), len(data))

    def write_from(self, address: int, nbytes: int) -> None:
        """Copy ``nbytes`` from host ``address`` (e.g. ``ndarray.ctypes.data``) into a host-visible buffer."""
        ctypes.memmove(self._mapped(), address, nbytes)

    def read(self, nbytes: int) -> bytes:
        """The first ``nbytes`` of a host-visible buffer."""
        return ctypes.string_at(self._mapped(), nbytes)

    def read_into(self, address: int, nbytes: int) -> None:
        """Copy the first ``nbytes`` of a host-visible buffer to host ``address``."""
        ctypes.memmove(address, self._mapped(), nbytes)

    def destroy(self) -> None:
        """Release the buffer and its memory (descriptor sets that name it are dropped from the cache)."""
        v, d = self.dev.vk, self.dev.handle
        self.dev.descriptors.forget(self.uid)
        if self.ptr is not None:
            v.vkUnmapMemory(d, self.memory)
        v.vkDestroyBuffer(d, self.handle, None)
        v.vkFreeMemory(d, self.memory, None)


def size_class(nbytes: int) -> int:
    """The allocation size a request of ``nbytes`` is served from (powers of two up to 1 MiB, then MiB steps)."""
    n = max(int(nbytes), 256)
    if n <= 1 << 20:
        return 1 << (n - 1).bit_length()
    return -(-n // (1 << 20)) << 20


class BufferPool:
    """Idle buffers kept for reuse, by size class and kind (device-local or host-visible staging).

    ``take`` hands out a buffer at least as large as asked; ``give`` returns it. At most ``limit`` bytes
    stay idle per kind; beyond that returned buffers are destroyed.
    """

    def __init__(self, dev: Device, limit: int = 256 << 20):
        self.dev, self.limit = dev, limit
        self._idle: dict[tuple[int, bool], list[Buffer]] = {}
        self._idle_bytes = {False: 0, True: 0}

    def take(self, nbytes: int, host_visible: bool) -> Buffer:
        """A buffer of at least ``nbytes``: device-local with every usage coopdsl binds, or a mapped staging one."""
        size = size_class(nbytes)
        free = self._idle.get((size, host_visible))
        if free:
            self._idle_bytes[host_visible] -= size
            return free.pop()
        if host_visible:
            return Buffer(self.dev, size, STAGING_USAGE, True)
        return Buffer(self.dev, size, DEVICE_USAGE, False, device_address=self.dev.has_device_address)

    def give(self, buf: Buffer) -> None:
        """Return ``buf`` for reuse (or destroy it when the pool is full)."""
        if self._idle_bytes[buf.host_visible] + buf.size > self.limit:
            buf.destroy()
            return
        self._idle.setdefault((buf.size, buf.host_visible), []).append(buf)
        self._idle_bytes[buf.host_visible] += buf.size

    def clear(self) -> None:
        """Destroy every idle buffer."""
        for bufs in self._idle.values():
            for b in bufs:
                b.destroy()
        self._idle.clear()
        self._idle_bytes = {False: 0, True: 0}
