"""A logical Vulkan device: queue, memory, buffers, pipelines (cached), submission."""

from __future__ import annotations

import ctypes
import hashlib

from . import vk
from .features import DeviceFeatureError, check_supported
from .instance import DeviceInfo, instance

OPTIONAL_EXTENSIONS = ("VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2", "VK_KHR_shader_bfloat16",
                       "VK_EXT_shader_atomic_float")
NO_ENABLE = {"robustBufferAccess", "cooperativeMatrixRobustBufferAccess", "robustImageAccess"}  # cost speed


class Buffer:
    """A VkBuffer with its own memory; host-visible ones stay mapped."""

    def __init__(self, dev: Device, size: int, usage: int, host_visible: bool, device_address: bool = False):
        self.dev, self.size = dev, max(int(size), 4)
        v, d = dev.vk, dev.handle
        if device_address:
            usage |= vk.BUFFER_USAGE_SHADER_DEVICE_ADDRESS
        info = vk.BufferCreateInfo(sType=vk.ST_BUFFER_CREATE_INFO, size=self.size, usage=usage,
                                   sharingMode=vk.SHARING_MODE_EXCLUSIVE)
        self.handle = vk.VkNonDispatchable()
        v.call("vkCreateBuffer", d, ctypes.byref(info), None, ctypes.byref(self.handle))
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
        v.call("vkAllocateMemory", d, ctypes.byref(alloc), None, ctypes.byref(self.memory))
        v.call("vkBindBufferMemory", d, self.handle, self.memory, 0)
        self.ptr = None
        if host_visible:
            p = ctypes.c_void_p()
            v.call("vkMapMemory", d, self.memory, 0, self.size, 0, ctypes.byref(p))
            self.ptr = p.value

    def address(self) -> int:
        info = vk.BufferDeviceAddressInfo(sType=vk.ST_BUFFER_DEVICE_ADDRESS_INFO, buffer=self.handle)
        return int(self.dev.vk.vkGetBufferDeviceAddress(self.dev.handle, ctypes.byref(info)))

    def write(self, data: bytes | memoryview) -> None:
        ctypes.memmove(self.ptr, bytes(data), len(data))

    def read(self, nbytes: int) -> bytes:
        return ctypes.string_at(self.ptr, nbytes)

    def destroy(self) -> None:
        v, d = self.dev.vk, self.dev.handle
        if self.ptr is not None:
            v.vkUnmapMemory(d, self.memory)
        v.vkDestroyBuffer(d, self.handle, None)
        v.vkFreeMemory(d, self.memory, None)


class Device:
    """A logical device on physical device ``index`` (default: the first with cooperative matrices)."""

    def __init__(self, index: int | None = None):
        inst = instance()
        self.instance, self.vk = inst, inst.vk
        if not inst.physical:
            raise DeviceFeatureError("no Vulkan physical devices")
        if index is None:
            infos = [inst.info(i) for i in range(len(inst.physical))]
            with_coop = [i for i in infos if i.has_coopmat]
            index = (with_coop or infos)[0].index
        self.index = index
        self.info: DeviceInfo = inst.info(index)
        self.physical = inst.physical[index]
        self._create()
        self._pipelines: dict = {}
        self._layouts: dict = {}

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

    def __repr__(self) -> str:
        return f"<coopdsl.runtime.Device {self.info.name}>"

    # -- support checks -------------------------------------------------------------
    def check(self, reflection: dict) -> None:
        """Raise DeviceFeatureError if the module needs something this device lacks."""
        check_supported(self.info.name, self.info.extensions, self.info.features, self.info.subgroup_operations,
                        reflection.get("capabilities", []), reflection.get("extensions", []))

    # -- memory -----------------------------------------------------------------------
    def memory_type(self, type_bits: int, want: int) -> int:
        mp = self.memory_props
        for i in range(mp.memoryTypeCount):
            if type_bits & (1 << i) and (mp.memoryTypes[i].propertyFlags & want) == want:
                return i
        if want & vk.MEMORY_PROPERTY_DEVICE_LOCAL:  # e.g. a CPU device: any type will do
            return self.memory_type(type_bits, 0)
        raise DeviceFeatureError(f"no memory type with flags 0x{want:x}")

    def buffer(self, size: int, usage: int, host_visible: bool, device_address: bool = False) -> Buffer:
        return Buffer(self, size, usage, host_visible, device_address)

    # -- pipelines -------------------------------------------------------------------------
    def pipeline(self, spirv: bytes, reflection: dict, spec_data: bytes, spec_entries: list) -> tuple:
        """(pipeline, pipeline layout, descriptor set layout), cached per module and spec values."""
        key = (hashlib.sha256(spirv).hexdigest(), spec_data)
        if key in self._pipelines:
            return self._pipelines[key]
        v, d = self.vk, self.handle
        set_layout, layout = self._layout(reflection)
        code = (ctypes.c_uint32 * (len(spirv) // 4)).from_buffer_copy(spirv)
        sm_info = vk.ShaderModuleCreateInfo(sType=vk.ST_SHADER_MODULE_CREATE_INFO, codeSize=len(spirv),
                                            pCode=ctypes.cast(code, ctypes.c_void_p))
        module = vk.VkNonDispatchable()
        v.call("vkCreateShaderModule", d, ctypes.byref(sm_info), None, ctypes.byref(module))
        entries = (vk.SpecializationMapEntry * max(len(spec_entries), 1))(
            *[vk.SpecializationMapEntry(i, o, s) for i, o, s in spec_entries])
        data = ctypes.create_string_buffer(spec_data, max(len(spec_data), 1))
        spec = vk.SpecializationInfo(mapEntryCount=len(spec_entries), pMapEntries=entries,
                                     dataSize=len(spec_data), pData=ctypes.cast(data, ctypes.c_void_p))
        stage = vk.PipelineShaderStageCreateInfo(
            sType=vk.ST_PIPELINE_SHADER_STAGE_CREATE_INFO, stage=vk.SHADER_STAGE_COMPUTE_BIT, module=module,
            pName=reflection["entry_point"].encode(),
            pSpecializationInfo=ctypes.pointer(spec) if spec_entries else None)
        info = vk.ComputePipelineCreateInfo(sType=vk.ST_COMPUTE_PIPELINE_CREATE_INFO, stage=stage, layout=layout,
                                            basePipelineIndex=-1)
        pipe = vk.VkNonDispatchable()
        try:
            v.call("vkCreateComputePipelines", d, 0, 1, ctypes.byref(info), None, ctypes.byref(pipe))
        finally:
            v.vkDestroyShaderModule(d, module, None)
        self._pipelines[key] = (pipe, layout, set_layout)
        return self._pipelines[key]

    def _layout(self, reflection: dict):
        sig = (tuple((b["binding"], b["kind"]) for b in reflection["bindings"]),
               reflection["push_constants"]["size"])
        if sig in self._layouts:
            return self._layouts[sig]
        v, d = self.vk, self.handle
        binds = reflection["bindings"]
        arr = (vk.DescriptorSetLayoutBinding * max(len(binds), 1))(*[
            vk.DescriptorSetLayoutBinding(b["binding"], _descriptor_type(b), 1, vk.SHADER_STAGE_COMPUTE_BIT, None)
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
        self._layouts[sig] = (set_layout, layout)
        return self._layouts[sig]

    # -- submission ----------------------------------------------------------------------
    def begin(self):
        v = self.vk
        alloc = vk.CommandBufferAllocateInfo(sType=vk.ST_COMMAND_BUFFER_ALLOCATE_INFO, commandPool=self.command_pool,
                                             level=vk.COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1)
        cb = vk.VkHandle()
        v.call("vkAllocateCommandBuffers", self.handle, ctypes.byref(alloc), ctypes.byref(cb))
        begin = vk.CommandBufferBeginInfo(sType=vk.ST_COMMAND_BUFFER_BEGIN_INFO,
                                          flags=vk.COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT)
        v.call("vkBeginCommandBuffer", cb, ctypes.byref(begin))
        return cb

    def submit_and_wait(self, cb, timeout_ns: int = 600 * 10 ** 9) -> None:
        v = self.vk
        v.call("vkEndCommandBuffer", cb)
        cbs = (vk.VkHandle * 1)(cb)
        submit = vk.SubmitInfo(sType=vk.ST_SUBMIT_INFO, commandBufferCount=1, pCommandBuffers=cbs)
        v.call("vkResetFences", self.handle, 1, ctypes.byref(self.fence))
        v.call("vkQueueSubmit", self.queue, 1, ctypes.byref(submit), self.fence)
        v.call("vkWaitForFences", self.handle, 1, ctypes.byref(self.fence), 1, timeout_ns)
        v.vkFreeCommandBuffers(self.handle, self.command_pool, 1, cbs)

    def barrier(self, cb, src_stage: int, dst_stage: int, src_access: int, dst_access: int) -> None:
        mb = vk.MemoryBarrier(sType=vk.ST_MEMORY_BARRIER, srcAccessMask=src_access, dstAccessMask=dst_access)
        self.vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, ctypes.byref(mb), 0, None, 0, None)


def _descriptor_type(binding: dict) -> int:
    return vk.DESCRIPTOR_TYPE_UNIFORM_BUFFER if binding["kind"] == "uniform_buffer" \
        else vk.DESCRIPTOR_TYPE_STORAGE_BUFFER
