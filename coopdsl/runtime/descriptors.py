"""Descriptor sets reused across launches.

A set is written once, for one set layout and one list of (binding, buffer, range), and never rewritten:
a launch that binds the same buffers again (resident arrays, pooled staging buffers) finds it in the cache
and records no descriptor update. Sets come from pools created with FREE_DESCRIPTOR_SET, a new pool when
the last one is full. Sets naming a destroyed buffer are freed; the least recently used ones are freed
when the cache holds more than ``limit``, but never while a batch is recording (its command buffer may
name them).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from typing import TYPE_CHECKING

from . import vk

if TYPE_CHECKING:
    from .device import Device
    from .memory import Buffer

POOL_SETS = 256
POOL_DESCRIPTORS = 1024


class DescriptorSet:
    """A written descriptor set: ``handles`` is the one-element array ``vkCmdBindDescriptorSets`` takes."""

    __slots__ = ("handle", "handles", "pool", "uids")

    def __init__(self, handle: int, pool: int, uids: tuple[int, ...]):
        self.handle, self.pool, self.uids = handle, pool, uids
        self.handles = (vk.VkNonDispatchable * 1)(handle)


class DescriptorCache:
    """Descriptor sets keyed by (set layout, bound buffer uids and ranges); see the module docstring."""

    def __init__(self, dev: Device, limit: int = 4096):
        self.dev, self.limit = dev, limit
        self._sets: OrderedDict[tuple[int, ...], DescriptorSet] = OrderedDict()
        self._by_buffer: dict[int, set[tuple[int, ...]]] = {}
        self._pools: list[int] = []
        self.generation = 0  # counts freed sets: a set remembered with an older generation may be gone

    def get(self, key: tuple[int, ...], types: tuple[int, ...], binds: list[tuple[int, Buffer, int]]) -> DescriptorSet:
        """The set for ``binds`` ((binding number, buffer, range) in layout order, descriptor ``types``);
        ``key`` is (set layout, then buffer uid and range of each bind)."""
        ds = self._sets.get(key)
        if ds is not None:
            self._sets.move_to_end(key)
            return ds
        ds = self._allocate(key[0], tuple(b.uid for _, b, _ in binds))
        self._write(ds, types, binds)
        self._sets[key] = ds
        for uid in ds.uids:
            self._by_buffer.setdefault(uid, set()).add(key)
        return ds

    def forget(self, uid: int) -> None:
        """Free every set that names buffer ``uid`` (the buffer is being destroyed)."""
        for key in self._by_buffer.pop(uid, ()):
            ds = self._sets.pop(key, None)
            if ds is not None:
                self._free(key, ds, skip=uid)

    def trim(self) -> None:
        """Free the least recently used sets beyond ``limit`` (call when no batch is recording)."""
        while len(self._sets) > self.limit:
            key, ds = self._sets.popitem(last=False)
            self._free(key, ds)

    def __len__(self) -> int:
        return len(self._sets)

    # -- internals ----------------------------------------------------------------------------
    def _allocate(self, set_layout: int, uids: tuple[int, ...]) -> DescriptorSet:
        v, d = self.dev.vk, self.dev.handle
        layouts = (vk.VkNonDispatchable * 1)(set_layout)
        handle = vk.VkNonDispatchable()
        for fresh in (False, True):
            if fresh or not self._pools:
                self._pools.append(self._new_pool())
            alloc = vk.DescriptorSetAllocateInfo(sType=vk.ST_DESCRIPTOR_SET_ALLOCATE_INFO,
                                                 descriptorPool=self._pools[-1], descriptorSetCount=1,
                                                 pSetLayouts=layouts)
            r = v.vkAllocateDescriptorSets(d, ctypes.byref(alloc), ctypes.byref(handle))
            if r == 0:
                return DescriptorSet(handle.value, self._pools[-1], uids)
            if r not in (vk.ERROR_OUT_OF_POOL_MEMORY, vk.ERROR_FRAGMENTED_POOL) or fresh:
                raise vk.VulkanError("vkAllocateDescriptorSets", r)
        raise AssertionError("unreachable")

    def _new_pool(self) -> int:
        sizes = (vk.DescriptorPoolSize * 2)(
            vk.DescriptorPoolSize(vk.DESCRIPTOR_TYPE_STORAGE_BUFFER, POOL_DESCRIPTORS),
            vk.DescriptorPoolSize(vk.DESCRIPTOR_TYPE_UNIFORM_BUFFER, POOL_DESCRIPTORS))
        info = vk.DescriptorPoolCreateInfo(sType=vk.ST_DESCRIPTOR_POOL_CREATE_INFO,
                                           flags=vk.DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET, maxSets=POOL_SETS,
                                           poolSizeCount=2, pPoolSizes=sizes)
        pool = vk.VkNonDispatchable()
        self.dev.vk.call("vkCreateDescriptorPool", self.dev.handle, ctypes.byref(info), None, ctypes.byref(pool))
        return pool.value

    def _write(self, ds: DescriptorSet, types: tuple[int, ...], binds: list[tuple[int, Buffer, int]]) -> None:
        if not binds:
            return
        infos = (vk.DescriptorBufferInfo * len(binds))(
            *[vk.DescriptorBufferInfo(buf.handle, 0, rng) for _, buf, rng in binds])
        writes = (vk.WriteDescriptorSet * len(binds))()
        for i, ((binding, _, _), dtype) in enumerate(zip(binds, types)):
            w = writes[i]
            w.sType, w.dstSet, w.dstBinding, w.descriptorCount = vk.ST_WRITE_DESCRIPTOR_SET, ds.handle, binding, 1
            w.descriptorType = dtype
            w.pBufferInfo = ctypes.pointer(infos[i])
        self.dev.vk.vkUpdateDescriptorSets(self.dev.handle, len(binds), writes, 0, None)

    def _free(self, key: tuple[int, ...], ds: DescriptorSet, skip: int | None = None) -> None:
        self.generation += 1
        for uid in ds.uids:
            if uid != skip and uid in self._by_buffer:
                self._by_buffer[uid].discard(key)
                if not self._by_buffer[uid]:
                    del self._by_buffer[uid]
        self.dev.vk.call("vkFreeDescriptorSets", self.dev.handle, ds.pool, 1, ctypes.byref(
            vk.VkNonDispatchable(ds.handle)))
