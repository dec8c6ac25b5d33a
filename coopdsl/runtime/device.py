"""A logical Vulkan device: queue, memory, cached programs and layouts, command buffers, submission."""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

from .._counts import count
from . import vk
from .descriptors import DescriptorCache
from .errors import VulkanUnavailableError, no_vulkan_message
from .features import DeviceFeatureError, check_supported
from .instance import EXTENSION_FEATURES, DeviceInfo, instance
from .memory import AddressRanges, Buffer, BufferPool
from .program import Program, descriptor_type

OPTIONAL_EXTENSIONS = tuple(EXTENSION_FEATURES)
# how long submit_and_wait polls its fence before it blocks (see Device.spin_ns): on a GPU 5 ms, so that a wait
# for a call of a few milliseconds does not pay a blocking wait's wake-up (H100: 80-120 us at 1 ms; torch's
# synchronize spins too); on a CPU device (lavapipe) 200 us, leaving its worker threads the CPU
SPIN_NS = 5_000_000
SPIN_NS_CPU = 200_000
MAX_SPIN_NS = 10_000_000_000   # what Device.spin_ns takes at most (10 s)
NO_ENABLE = {"robustBufferAccess", "cooperativeMatrixRobustBufferAccess", "robustImageAccess"}  # cost speed


class Device:
    """A logical device on physical device ``index`` (default: the first with cooperative matrices).

    It caches what launches reuse: programs (pipelines per specialization values), descriptor set and
    pipeline layouts, descriptor sets (``descriptors``), idle buffers (``pool``) and command buffers.
    Use it from one thread at a time.
    """

    def __init__(self, index: int | None = None):
        inst = instance()
        self.instance, self.vk = inst, inst.vk
        if not inst.physical:
            raise VulkanUnavailableError(no_vulkan_message("the Vulkan loader found no devices"))
        if index is None:
            infos = [inst.info(i) for i in range(len(inst.physical))]
            with_coop = [i for i in infos if i.has_coopmat]
            index = (with_coop or infos)[0].index
        if not isinstance(index, int) or not 0 <= index < len(inst.physical):
            raise ValueError(f"device index must be an int from 0 to {len(inst.physical) - 1} "
                             f"(see `coopdsl devices`), got {index!r}")
        self.index = index
        self.info: DeviceInfo = inst.info(index)
        self.physical = inst.physical[index]
        self._create()
        self.has_device_address = bool(self.info.features.get("bufferDeviceAddress"))
        self._programs: dict[bytes, Program] = {}
        self._layouts: dict[tuple[tuple[tuple[int, str], ...], int], tuple[int, int]] = {}
        self._free_cbs: list[int] = []
        self.recording = 0  # batches with a command buffer being recorded (descriptor sets must stay alive)
        # submit_and_wait polls the fence this long before blocking in vkWaitForFences
        self._spin_ns = SPIN_NS_CPU if self.info.device_type == "CPU" else SPIN_NS
        self.pool = BufferPool(self)
        self.addresses = AddressRanges()   # (the live buffers' device addresses handed out)
        self.descriptors = DescriptorCache(self)

    def _create(self) -> None:
        v, pd = self.vk, self.physical
        exts = [e for e in OPTIONAL_EXTENSIONS if e in self.info.extensions]
        structs = self.instance.feature_structs(pd, exts)
        for s in structs:
            for b in s.BOOLS:
                if b in NO_ENABLE:
                    setattr(s, b, 0)
        self._feature_chain = structs
        count = ctypes.c_uint32()
        v.vkGetPhysicalDeviceQueueFamilyProperties(pd, ctypes.byref(count), None)
        fams = (vk.QueueFamilyProperties * count.value)()
        v.vkGetPhysicalDeviceQueueFamilyProperties(pd, ctypes.byref(count), fams)
        self.queue_family = next(i for i in range(count.value) if fams[i].queueFlags & vk.QUEUE_COMPUTE_BIT)
        self.timestamp_bits = fams[self.queue_family].timestampValidBits
        prio = ctypes.c_float(1.0)
        qinfo = vk.DeviceQueueCreateInfo(sType=vk.ST_DEVICE_QUEUE_CREATE_INFO, queueFamilyIndex=self.queue_family,
                                         queueCount=1, pQueuePriorities=ctypes.pointer(prio))
        names = (ctypes.c_char_p * len(exts))(*[e.encode() for e in exts])
        info = vk.DeviceCreateInfo(sType=vk.ST_DEVICE_CREATE_INFO, pNext=vk.chain(*structs),
                                   queueCreateInfoCount=1, pQueueCreateInfos=ctypes.pointer(qinfo),
                                   enabledExtensionCount=len(exts), ppEnabledExtensionNames=names)
        self.handle = vk.VkHandle()
        v.call("vkCreateDevice", pd, ctypes.byref(info), None, ctypes.byref(self.handle))
        self.queue = vk.VkHandle()
        v.vkGetDeviceQueue(self.handle, self.queue_family, 0, ctypes.byref(self.queue))
        self.memory_props = vk.PhysicalDeviceMemoryProperties()
        v.vkGetPhysicalDeviceMemoryProperties(pd, ctypes.byref(self.memory_props))
        pool = vk.CommandPoolCreateInfo(sType=vk.ST_COMMAND_POOL_CREATE_INFO,
                                        flags=vk.COMMAND_POOL_RESET_COMMAND_BUFFER,
                                        queueFamilyIndex=self.queue_family)
        self.command_pool = vk.VkNonDispatchable()
        v.call("vkCreateCommandPool", self.handle, ctypes.byref(pool), None, ctypes.byref(self.command_pool))
        fence = vk.FenceCreateInfo(sType=vk.ST_FENCE_CREATE_INFO)
        self.fence = vk.VkNonDispatchable()
        v.call("vkCreateFence", self.handle, ctypes.byref(fence), None, ctypes.byref(self.fence))
        self._fence_ref = ctypes.byref(self.fence)
        self._submit_cbs = (vk.VkHandle * 1)()
        self._submit = vk.SubmitInfo(sType=vk.ST_SUBMIT_INFO, commandBufferCount=1, pCommandBuffers=self._submit_cbs)
        self._submit_ref = ctypes.byref(self._submit)

    def __repr__(self) -> str:
        return f"<coopdsl.runtime.Device {self.index}: {self.info.name}>"

    # -- support checks -------------------------------------------------------------
    def check(self, reflection: dict[str, Any]) -> None:
        """Raise DeviceFeatureError if the module needs something this device lacks."""
        check_supported(self.info.name, self.info.extensions, self.info.features, self.info.subgroup_operations,
                        reflection.get("capabilities", []), reflection.get("extensions", []),
                        reflection.get("cooperative_matrices", []), bool(reflection.get("scalar_block_layout")))

    # -- memory -----------------------------------------------------------------------
    def memory_type(self, type_bits: int, want: int) -> int:
        """Index of a memory type allowed by ``type_bits`` with the property flags ``want``."""
        mp = self.memory_props
        for i in range(mp.memoryTypeCount):
            if type_bits & (1 << i) and (mp.memoryTypes[i].propertyFlags & want) == want:
                return i
        if want & vk.MEMORY_PROPERTY_DEVICE_LOCAL:  # e.g. a CPU device: any type will do
            return self.memory_type(type_bits, 0)
        raise DeviceFeatureError(f"no memory type with flags 0x{want:x}")

    def largest_heap(self) -> int:
        """The bytes of the device's largest memory heap: no one buffer can be larger."""
        mp = self.memory_props
        return max((int(mp.memoryHeaps[i].size) for i in range(mp.memoryHeapCount)), default=0)

    def buffer(self, size: int, usage: int, host_visible: bool, device_address: bool = False) -> Buffer:
        """A new buffer with its own memory (launches take theirs from ``pool`` instead)."""
        return Buffer(self, size, usage, host_visible, device_address)

    # -- programs and layouts --------------------------------------------------------------
    def program(self, spirv: bytes, reflection: dict[str, Any]) -> Program:
        """The cached :class:`Program` for a module (feature support is checked when it is first made)."""
        prog = self._programs.get(spirv)
        if prog is None or (prog.reflection is not reflection and prog.reflection != reflection):
            prog = self._programs[spirv] = Program(self, spirv, reflection)
        elif prog.reflection is not reflection:
            prog.reflection = reflection  # an equal copy: keep the caller's, which launches compare by identity
        return prog

    def layouts(self, reflection: dict[str, Any]) -> tuple[int, int]:
        """(descriptor set layout, pipeline layout) for the module's bindings and push block, cached."""
        sig = (tuple((b["binding"], b["kind"]) for b in reflection["bindings"]),
               reflection["push_constants"]["size"])
        if sig in self._layouts:
            return self._layouts[sig]
        v, d = self.vk, self.handle
        binds = reflection["bindings"]
        arr = (vk.DescriptorSetLayoutBinding * max(len(binds), 1))(*[
            vk.DescriptorSetLayoutBinding(b["binding"], descriptor_type(b), 1, vk.SHADER_STAGE_COMPUTE_BIT, None)
            for b in binds])
        dsl_info = vk.DescriptorSetLayoutCreateInfo(sType=vk.ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                                    bindingCount=len(binds), pBindings=arr)
        set_layout = vk.VkNonDispatchable()
        v.call("vkCreateDescriptorSetLayout", d, ctypes.byref(dsl_info), None, ctypes.byref(set_layout))
        size = reflection["push_constants"]["size"]
        rng = vk.PushConstantRange(vk.SHADER_STAGE_COMPUTE_BIT, 0, (size + 3) // 4 * 4)
        pl_info = vk.PipelineLayoutCreateInfo(sType=vk.ST_PIPELINE_LAYOUT_CREATE_INFO, setLayoutCount=1,
                                              pSetLayouts=ctypes.pointer(set_layout),
                                              pushConstantRangeCount=1 if size else 0,
                                              pPushConstantRanges=ctypes.pointer(rng) if size else None)
        layout = vk.VkNonDispatchable()
        v.call("vkCreatePipelineLayout", d, ctypes.byref(pl_info), None, ctypes.byref(layout))
        self._layouts[sig] = (set_layout.value, layout.value)
        return self._layouts[sig]

    # -- command buffers and submission ------------------------------------------------------------
    def acquire_command_buffer(self) -> int:
        """A primary command buffer in the initial or executable state (reused; begin resets it)."""
        if self._free_cbs:
            return self._free_cbs.pop()
        alloc = vk.CommandBufferAllocateInfo(sType=vk.ST_COMMAND_BUFFER_ALLOCATE_INFO, commandPool=self.command_pool,
                                             level=vk.COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1)
        cb = vk.VkHandle()
        self.vk.call("vkAllocateCommandBuffers", self.handle, ctypes.byref(alloc), ctypes.byref(cb))
        assert cb.value is not None  # the call succeeded
        return cb.value

    def release_command_buffer(self, cb: int) -> None:
        """Give back a command buffer that is not pending (ended, or finished executing)."""
        self._free_cbs.append(cb)

    def submit(self, cb: int) -> None:
        """Submit an ended command buffer without waiting (a later ``submit_and_wait`` waits for it too)."""
        self._submit_cbs[0] = cb
        self.vk.call("vkQueueSubmit", self.queue, 1, self._submit_ref, 0)

    @property
    def spin_ns(self) -> int:
        """How long (ns) :meth:`submit_and_wait` polls its fence before blocking: 5 ms on a GPU, 200 us on a CPU
        device; 0 blocks at once.  Set it to an int from 0 to 10 s (a number of another type or out of that
        range is a ValueError)."""
        return self._spin_ns

    @spin_ns.setter
    def spin_ns(self, ns: int) -> None:
        n = count(ns)   # (an int, a numpy one too; not a bool: the one rule of coopdsl/_counts.py)
        if n is None or not 0 <= n <= MAX_SPIN_NS:
            raise ValueError(f"Device.spin_ns must be an int from 0 to {MAX_SPIN_NS:,} (ns), got {ns!r}")
        self._spin_ns = n

    def submit_and_wait(self, cb: int, timeout_ns: int = 600 * 10 ** 9) -> None:
        """Submit an ended command buffer and wait for it (one fence, reused).

        The wait first polls the fence for up to ``spin_ns`` (default 5 ms on a GPU, 200 us on a CPU device),
        as CUDA's default synchronisation does, so that a kernel's completion is seen without the wake-up
        latency of a blocking wait; longer work is then waited for in ``vkWaitForFences``.
        """
        v = self.vk
        self._submit_cbs[0] = cb
        v.call("vkResetFences", self.handle, 1, self._fence_ref)
        v.call("vkQueueSubmit", self.queue, 1, self._submit_ref, self.fence)
        if self._spin_ns > 0:
            status, handle, fence = v.vkGetFenceStatus, self.handle, self.fence
            deadline = time.perf_counter_ns() + self._spin_ns
            while True:
                r = status(handle, fence)
                if r == 0:  # VK_SUCCESS: signalled
                    return
                if r != 1:  # not VK_NOT_READY: an error (device lost)
                    raise vk.VulkanError("vkGetFenceStatus", r)
                if time.perf_counter_ns() > deadline:
                    break
        v.call("vkWaitForFences", self.handle, 1, self._fence_ref, 1, timeout_ns)

    def barrier(self, cb: int, src_stage: int, dst_stage: int, src_access: int, dst_access: int) -> None:
        """Record a global memory barrier."""
        mb = vk.MemoryBarrier(sType=vk.ST_MEMORY_BARRIER, srcAccessMask=src_access, dstAccessMask=dst_access)
        self.vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, ctypes.byref(mb), 0, None, 0, None)



_default: Device | None = None


def default_device() -> Device:
    """A process-wide Device: the first GPU with cooperative matrices, else the first device; or, with
    ``COOPDSL_DEVICE=<index>`` in the environment when it is first asked for, that device (numbered as `coopdsl
    devices` lists them, as the C++ host example takes the variable)."""
    global _default
    if _default is None:
        env = os.environ.get("COOPDSL_DEVICE", "").strip()
        _default = Device(int(env)) if env.isdigit() else Device()
    return _default
