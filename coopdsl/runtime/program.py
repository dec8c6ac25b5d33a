"""A compiled module made ready to dispatch on one device: its layouts, its pipelines (one per set of
specialization values) and what launches need to know about its arguments."""

from __future__ import annotations

import ctypes
import math
import struct
from typing import TYPE_CHECKING, Any

import numpy as np

from .._grid import INTERPRETER_WORKGROUP
from .._packing import FLOAT_ELEMENTS
from ..devices.check import DeviceMismatchError, verify, workgroup_size
from . import vk
from .errors import LaunchError
from .features import DeviceFeatureError, hinted
from .packing import DTYPES, STRUCT_CODE, element_bytes, pack_spec, value_key

if TYPE_CHECKING:
    import weakref

    from .array import Array
    from .descriptors import DescriptorSet
    from .device import Device

    # Program.bound: (argument names, argument objects (arrays held weakly), arrays (weakly), (set, push bytes),
    # descriptor-cache generation, the contents of the dict arguments)
    Bound = tuple[tuple[str, ...], tuple[Any, ...], tuple[weakref.ref[Array], ...], tuple[DescriptorSet, bytes],
                  int, tuple[Any, ...]]


def check_launch(reflection: dict[str, Any], device: Any, spec: dict[str, Any] | None = None) -> None:
    """The device check before pipeline creation, reported as :class:`DeviceFeatureError`.

    A kernel whose cooperative matrices the device does not offer never
    reaches the driver; the error keeps the compile-time message (kernel line,
    need, nearest offers) and carries ``mismatches`` and ``loc``.
    """
    try:
        verify(reflection, device, spec)
    except DeviceMismatchError as e:
        wg = workgroup_size(reflection, spec)   # (a size under 1, or past its limit: the interpreter refuses it too)
        runs = min(wg) >= 1 and math.prod(wg) <= INTERPRETER_WORKGROUP
        raise DeviceFeatureError(hinted(str(e)) if runs else str(e), e.mismatches, e.loc) from None


SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")
OP_ENTRY_POINT = 15   # OpEntryPoint's opcode (the runtime reads no grammar: a test checks it against the grammar's)


def entry_point_names(spirv: bytes) -> list[str] | None:
    """The names of a SPIR-V module's OpEntryPoints, in order; None where the bytes are not whole instructions
    after a module's header (then the driver is left to say what is wrong)."""
    if len(spirv) < 20 or len(spirv) % 4 or spirv[:4] != SPIRV_MAGIC:
        return None
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    names, i = [], 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            return None
        if op == OP_ENTRY_POINT and count > 3:
            names.append(bytes(spirv[4 * (i + 3):4 * (i + count)]).split(b"\0", 1)[0].decode("utf-8", "replace"))
        i += count
    return names


def _fast_dtype(binding: dict[str, Any]) -> np.dtype | None:
    """The dtype of a resident array that needs no more than a size check for ``binding``: a uniform block's
    bytes, a scalar's or a float vector's components; None (any dtype, bits) for integer vectors and structs."""
    if binding["kind"] == "uniform_buffer":
        return np.dtype(np.uint8)
    if binding.get("components", 1) == 1 or binding["element_type"] in FLOAT_ELEMENTS:
        return np.dtype(DTYPES[binding["element_type"]])
    return None


# what a launch reads of a module's reflection (coopdsl.reflect.reflect's keys)
REFLECTION_KEYS = ("entry_point", "bindings", "push_constants", "spec_constants")


class Program:
    """Pipelines of one module on one device, cached by specialization data (see ``Device.program``)."""

    def __init__(self, dev: Device, spirv: bytes, reflection: dict[str, Any]):
        missing = [key for key in REFLECTION_KEYS if key not in reflection] if isinstance(reflection, dict) \
            else list(REFLECTION_KEYS)
        if missing:
            raise LaunchError(f"the reflection given for the module lacks {', '.join(repr(k) for k in missing)}: "
                              f"pass the kernel's own (Kernel.reflect() of the kernel that compiled it)")
        entries = entry_point_names(bytes(spirv)) if isinstance(spirv, (bytes, bytearray)) else None
        if entries is not None and reflection["entry_point"] not in entries:
            # (the driver's answer was VK_ERROR_UNKNOWN from vkCreateComputePipelines)
            raise LaunchError(f"the reflection given is of entry point {reflection['entry_point']!r}, which the "
                              f"module does not have (its entry points: {', '.join(entries) or 'none'}): pass the "
                              f"reflection of the kernel that compiled it")
        dev.check(reflection)
        self.dev, self.spirv, self.reflection = dev, spirv, reflection
        self.bindings: list[dict[str, Any]] = reflection["bindings"]
        self.descriptor_types = tuple(descriptor_type(b) for b in self.bindings)
        self.push_block: dict[str, Any] = reflection["push_constants"]
        self.push_size = (self.push_block["size"] + 3) // 4 * 4
        self.pointer_members = [m for m in self.push_block["members"] if m["type"] == "ptr"]
        self.names = {b["name"] for b in self.bindings} | {m["name"].split(".")[0] for m in self.push_block["members"]}
        # per binding: (reflection entry, the numpy dtype that passes without the full check else None, element
        # bytes, minimum bytes): what a resident array is checked against on the fast path; another dtype goes
        # through _packing's rule (check_resident), which takes some (ml_dtypes' bf16, a uniform block's words)
        self.slots = [(b, _fast_dtype(b), element_bytes(b), b.get("size", 0) if b["kind"] == "uniform_buffer" else 0)
                      for b in self.bindings]
        self.push_struct, names = flat_struct(self.push_block, self.push_size)
        # each member as (argument, member of its struct or None); struct arguments with their member counts
        self.push_names = tuple((n.partition(".")[0], n.partition(".")[2] or None) for n in names)
        heads = [n for n, m in self.push_names if m is not None]
        self.push_structs = tuple((n, heads.count(n)) for n in dict.fromkeys(heads))
        self.set_layout, self.layout = dev.layouts(reflection)
        self._pipelines: dict[bytes, int] = {}
        self._by_spec: dict[tuple[Any, ...], int] = {}   # typed specialization items as given -> pipeline
        self._default: int | None = None
        # the last all-resident binding: (argument names, argument objects, arrays, (set, push bytes),
        # descriptor-cache generation); see launch._bind_resident
        self.bound: Bound | None = None

    def pipeline(self, spec: dict[str, Any] | None) -> int:
        """The compute pipeline for these specialization values (left-out constants keep their defaults).

        Before a pipeline is created, the module's cooperative matrices are checked against what the
        device offers (``check_launch``), so an unsupported kernel never reaches the driver.
        """
        if not spec:
            if self._default is None:
                check_launch(self.reflection, self.dev.info, None)
                self._default = self._pipeline(*pack_spec(self.reflection, None))
            return self._default
        try:   # the same values (by value_key: True is not 1, -0.0 is not 0.0) as before: the same pipeline
            key: tuple[Any, ...] | None = tuple((k, value_key(v)) for k, v in spec.items())
            pipe = self._by_spec.get(key)  # type: ignore[arg-type]
        except TypeError:  # an unhashable value: packing names it
            key, pipe = None, None
        if pipe is not None:
            return pipe
        data, entries = pack_spec(self.reflection, spec)
        if data not in self._pipelines:
            check_launch(self.reflection, self.dev.info, spec)
        pipe = self._pipeline(data, entries)
        if key is not None and len(self._by_spec) < 1024:
            self._by_spec[key] = pipe
        return pipe

    def _pipeline(self, spec_data: bytes, spec_entries: list[tuple[int, int, int]]) -> int:
        pipe = self._pipelines.get(spec_data)
        if pipe is None:
            pipe = self._pipelines[spec_data] = self._create(spec_data, spec_entries)
        return pipe

    def statistics(self, spec: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """What the driver reports about the compiled pipeline for these specialization values
        (VK_KHR_pipeline_executable_properties): one dict per executable, with its ``name``,
        ``description``, ``subgroup_size`` and ``statistics`` ({name: value}, e.g. the register count).

        A separate pipeline is made with statistics capture (launches keep theirs); raises
        DeviceFeatureError when the device does not offer the extension's ``pipelineExecutableInfo``.
        """
        dev = self.dev
        if not dev.info.features.get("pipelineExecutableInfo"):
            raise DeviceFeatureError(f"{dev.info.name} does not report pipeline statistics "
                                     f"(VK_KHR_pipeline_executable_properties, pipelineExecutableInfo)")
        get_props = vk.device_function(dev.vk, dev.handle, "vkGetPipelineExecutablePropertiesKHR")
        get_stats = vk.device_function(dev.vk, dev.handle, "vkGetPipelineExecutableStatisticsKHR")
        data, entries = pack_spec(self.reflection, spec)
        check_launch(self.reflection, dev.info, spec)
        pipe = self._create(data, entries, flags=vk.PIPELINE_CREATE_CAPTURE_STATISTICS)
        try:
            info = vk.PipelineInfoKHR(sType=vk.ST_PIPELINE_INFO_KHR, pipeline=pipe)
            props = _listed("vkGetPipelineExecutablePropertiesKHR", get_props, dev.handle, info,
                            vk.PipelineExecutablePropertiesKHR, vk.ST_PIPELINE_EXECUTABLE_PROPERTIES_KHR)
            out = []
            for index, p in enumerate(props):
                exe = vk.PipelineExecutableInfoKHR(sType=vk.ST_PIPELINE_EXECUTABLE_INFO_KHR, pipeline=pipe,
                                                   executableIndex=index)
                stats = _listed("vkGetPipelineExecutableStatisticsKHR", get_stats, dev.handle, exe,
                                vk.PipelineExecutableStatisticKHR, vk.ST_PIPELINE_EXECUTABLE_STATISTIC_KHR)
                values = {st.name.decode(): _statistic(st) for st in stats}
                out.append({"name": p.name.decode(), "description": p.description.decode(),
                            "subgroup_size": p.subgroupSize, "statistics": values})
            return out
        finally:
            dev.vk.vkDestroyPipeline(dev.handle, pipe, None)

    def _create(self, spec_data: bytes, spec_entries: list[tuple[int, int, int]], flags: int = 0) -> int:
        v, d, spirv = self.dev.vk, self.dev.handle, self.spirv
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
        required = self.reflection.get("subgroup_size")
        size_info = None
        if required and self.dev.info.features.get("subgroupSizeControl"):  # else the device's only size
            size_info = vk.RequiredSubgroupSizeCreateInfo(
                sType=vk.ST_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO, requiredSubgroupSize=required)
        stage = vk.PipelineShaderStageCreateInfo(
            sType=vk.ST_PIPELINE_SHADER_STAGE_CREATE_INFO, stage=vk.SHADER_STAGE_COMPUTE_BIT, module=module,
            pName=self.reflection["entry_point"].encode(),
            pNext=ctypes.cast(ctypes.pointer(size_info), ctypes.c_void_p) if size_info is not None else None,
            pSpecializationInfo=ctypes.pointer(spec) if spec_entries else None)
        info = vk.ComputePipelineCreateInfo(sType=vk.ST_COMPUTE_PIPELINE_CREATE_INFO, flags=flags, stage=stage,
                                            layout=self.layout, basePipelineIndex=-1)
        pipe = vk.VkNonDispatchable()
        try:
            v.call("vkCreateComputePipelines", d, 0, 1, ctypes.byref(info), None, ctypes.byref(pipe))
        finally:
            v.vkDestroyShaderModule(d, module, None)
        return pipe.value


def _statistic(st: Any) -> bool | int | float:
    """The value of a VkPipelineExecutableStatisticKHR in its format."""
    value = getattr(st.value, vk.STATISTIC_FORMATS.get(st.format, "u64"))
    return bool(value) if st.format == 0 else value


def _listed(fname: str, fn: Any, device: Any, info: Any, cls: Any, stype: int) -> Any:
    """The array a Vulkan "count, then fill" query returns for ``info`` (elements of ``cls`` with ``stype``)."""
    count = ctypes.c_uint32()
    _check(fname, fn(device, ctypes.byref(info), ctypes.byref(count), None))
    items = (cls * count.value)()
    for item in items:
        item.sType = stype
    _check(fname, fn(device, ctypes.byref(info), ctypes.byref(count), items))
    return items


def _check(fname: str, result: int) -> None:
    if result not in (0, 5):  # VK_SUCCESS, VK_INCOMPLETE
        raise vk.VulkanError(fname, result)


def descriptor_type(binding: dict[str, Any]) -> int:
    """The VkDescriptorType of a reflection binding."""
    return vk.DESCRIPTOR_TYPE_UNIFORM_BUFFER if binding["kind"] == "uniform_buffer" \
        else vk.DESCRIPTOR_TYPE_STORAGE_BUFFER


def flat_struct(block: dict[str, Any], size: int) -> tuple[struct.Struct | None, tuple[str, ...]]:
    """A precompiled ``struct.Struct`` packing a block of plain scalar members (or members of struct members of
    plain scalars, named ``p.M``; no vector, pointer or deeper struct members) to ``size`` bytes, with the
    member names in order; (None, ()) for other blocks."""
    members = sorted(block["members"], key=lambda m: m["offset"])
    if not members or any(m["name"].count(".") > 1 or m["type"] not in STRUCT_CODE or m["type"] == "ptr"
                          for m in members):
        return None, ()
    fmt, pos = "<", 0
    for m in members:
        fmt += "x" * (m["offset"] - pos) + STRUCT_CODE[m["type"]]
        pos = m["offset"] + struct.calcsize("<" + STRUCT_CODE[m["type"]])
    fmt += "x" * (size - pos)
    return struct.Struct(fmt), tuple(m["name"] for m in members)
