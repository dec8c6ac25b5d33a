"""Launching a compiled module on numpy data, and timing it with GPU timestamps."""

from __future__ import annotations

import ctypes
import statistics
import struct
from dataclasses import dataclass, field

import numpy as np

from ..devices import DeviceMismatchError, verify
from . import vk
from .device import Buffer, Device
from .features import DeviceFeatureError

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": np.uint16, "e4m3": np.uint8,
          "e5m2": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "bool": np.uint32}
SCALAR_SIZE = {k: np.dtype(v).itemsize for k, v in DTYPES.items()}
STRUCT_CODE = {"f16": "e", "f32": "f", "f64": "d", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B",
               "u16": "H", "u32": "I", "u64": "Q", "bool": "I", "ptr": "Q"}


class LaunchError(ValueError):
    """The arguments do not fit the kernel's reflection (missing, wrong dtype or size)."""


@dataclass
class BenchResult:
    """GPU-timestamp timing of repeated dispatches (milliseconds)."""

    median_ms: float
    min_ms: float
    max_ms: float
    stdev_ms: float
    times_ms: list = field(repr=False, default_factory=list)
    flops: float | None = None

    @property
    def tflops(self) -> float | None:
        """TFLOP/s at the median time, when the flop count was given."""
        return None if self.flops is None else self.flops / (self.median_ms * 1e-3) / 1e12


# -- packing (pure functions, unit-tested without a device) --------------------------------------
def pack_spec(reflection: dict, spec: dict | None) -> tuple[bytes, list[tuple[int, int, int]]]:
    """Specialization data and (id, offset, size) map entries; unset constants keep their defaults."""
    spec = dict(spec or {})
    known = {s["name"] for s in reflection["spec_constants"]}
    unknown = set(spec) - known
    if unknown:
        raise LaunchError(f"unknown specialization constant(s) {sorted(unknown)}; the kernel has {sorted(known)}")
    data, entries = b"", []
    for s in reflection["spec_constants"]:
        t = s["type"]
        value = spec.get(s["name"], s["default"])
        size = 4 if t == "bool" else SCALAR_SIZE[t]
        code = STRUCT_CODE[t]
        try:
            raw = struct.pack("<" + code, bool(value) if t == "bool" else value)
        except struct.error as e:
            raise LaunchError(f"specialization constant {s['name']} ({t}) cannot be {value!r}: {e}") from None
        entries.append((s["id"], len(data), size))
        data += raw
    return data, entries


def member_value(values: dict, name: str):
    """``values[name]``; a dotted name ``p.M`` reads ``values['p']['M']`` (struct members)."""
    if name in values:
        return values[name]
    head, dot, rest = name.partition(".")
    if dot and isinstance(values.get(head), dict):
        return member_value(values[head], rest)
    raise KeyError(name)


def pack_push(reflection: dict, values: dict) -> bytes:
    """The push-constant block from ``values`` (pointer members: the int device address)."""
    return pack_members(reflection["push_constants"], values, "push constant")


def pack_members(block: dict, values: dict, what: str) -> bytes:
    """Bytes of a block described by reflection ``{"size", "members"}`` (dotted names for nested structs)."""
    out = bytearray(block["size"])
    for m in block["members"]:
        try:
            value = member_value(values, m["name"])
        except KeyError:
            raise LaunchError(f"missing {what} '{m['name']}' ({m['type']})") from None
        t = m["type"]
        if t.startswith("vec"):
            n, elem = int(t[3]), t[5:-1]
            arr = np.asarray(value, dtype=DTYPES[elem]).reshape(-1)
            if arr.size != n:
                raise LaunchError(f"{what} '{m['name']}' is {t}: give {n} values")
            out[m["offset"]:m["offset"] + arr.nbytes] = arr.tobytes()
            continue
        try:
            raw = struct.pack("<" + STRUCT_CODE[t], value)
        except (struct.error, KeyError) as e:
            raise LaunchError(f"{what} '{m['name']}' ({t}) cannot be {value!r}: {e}") from None
        out[m["offset"]:m["offset"] + len(raw)] = raw
    return bytes(out)


def check_array(binding: dict, value) -> np.ndarray:
    """The contiguous array for ``binding`` (dtype checked for scalar elements)."""
    if not isinstance(value, np.ndarray):
        raise LaunchError(f"buffer '{binding['name']}' needs a numpy array, got {type(value).__name__}")
    t = binding["element_type"]
    n = binding.get("components", 1)
    elem_bytes = SCALAR_SIZE[t] * (4 if n == 3 else n)  # std430: a vec3 element takes the room of a vec4
    if binding.get("components", 1) == 1:
        ok = value.dtype == np.dtype(DTYPES[t]) or (t == "bf16" and value.dtype.name == "bfloat16")
        if not ok:
            raise LaunchError(f"buffer '{binding['name']}' holds {t}; got a {value.dtype} array "
                              f"(pass {np.dtype(DTYPES[t]).name}{' bits' if t in ('bf16', 'e4m3', 'e5m2') else ''})")
    if value.nbytes % elem_bytes:
        raise LaunchError(f"buffer '{binding['name']}' has {elem_bytes}-byte elements; {value.nbytes} bytes given")
    if not value.flags.c_contiguous:
        raise LaunchError(f"buffer '{binding['name']}' must be C-contiguous (use np.ascontiguousarray)")
    return value


# -- running ----------------------------------------------------------------------------------------
def _set_member(values: dict, name: str, value) -> None:
    head, dot, rest = name.partition(".")
    if dot and isinstance(values.get(head), dict):
        values[head] = dict(values[head])
        _set_member(values[head], rest, value)
    else:
        values[name] = value


class _Prepared:
    """Device buffers, staging copies, descriptor set and push data of one launch."""

    def __init__(self, dev: Device, spirv: bytes, reflection: dict, args: dict, spec: dict | None):
        dev.check(reflection)
        self.dev = dev
        names = {b["name"] for b in reflection["bindings"]} | \
            {m["name"].split(".")[0] for m in reflection["push_constants"]["members"]}
        unknown = set(args) - names
        if unknown:
            raise LaunchError(f"unknown argument(s) {sorted(unknown)}; the kernel takes {sorted(names)}")
        spec_data, entries = pack_spec(reflection, spec)
        check_launch(reflection, dev.info, spec)  # cooperative matrices the device lacks: before the driver sees them
        self.pipeline, self.layout, set_layout = dev.pipeline(spirv, reflection, spec_data, entries)
        self.buffers: list[tuple[np.ndarray, Buffer, Buffer, bool]] = []  # array, device, staging, copy back
        self.infos = []
        self.push = pack_push(reflection, self._addresses(reflection["push_constants"]["members"], args))
        for b in reflection["bindings"]:
            if b["name"] not in args:
                raise LaunchError(f"missing buffer '{b['name']}'")
            value = args[b["name"]]
            if b["kind"] == "uniform_buffer" and isinstance(value, dict):
                block = {"size": b["size"], "members": b["members"]}
                value = np.frombuffer(pack_members(block, self._addresses(b["members"], value), "uniform member"),
                                      np.uint8).copy()
            arr = check_array(b, value)
            usage = vk.BUFFER_USAGE_UNIFORM_BUFFER if b["kind"] == "uniform_buffer" else vk.BUFFER_USAGE_STORAGE_BUFFER
            buf = self._upload(arr, usage, not b["readonly"])
            self.infos.append((b, buf))
        self._descriptors(set_layout)

    def _addresses(self, members: list[dict], values: dict) -> dict:
        """``values`` with numpy arrays given for pointer members replaced by device addresses."""
        out = dict(values)
        for m in members:
            if m["type"] != "ptr":
                continue
            try:
                v = member_value(values, m["name"])
            except KeyError:
                continue
            if isinstance(v, np.ndarray):
                buf = self._upload(np.ascontiguousarray(v), vk.BUFFER_USAGE_STORAGE_BUFFER, True, device_address=True)
                _set_member(out, m["name"], buf.address())
        return out

    def _upload(self, arr: np.ndarray, usage: int, copy_back: bool, device_address: bool = False) -> Buffer:
        d = self.dev
        size = max(arr.nbytes, 4)
        staging = d.buffer(size, vk.BUFFER_USAGE_TRANSFER_SRC | vk.BUFFER_USAGE_TRANSFER_DST, host_visible=True)
        staging.write(arr.tobytes())
        dev_buf = d.buffer(size, usage | vk.BUFFER_USAGE_TRANSFER_SRC | vk.BUFFER_USAGE_TRANSFER_DST,
                           host_visible=False, device_address=device_address)
        self.buffers.append((arr, dev_buf, staging, copy_back))
        return dev_buf

    def _descriptors(self, set_layout) -> None:
        v, d = self.dev.vk, self.dev.handle
        n = max(len(self.infos), 1)
        sizes = (vk.DescriptorPoolSize * 2)(vk.DescriptorPoolSize(vk.DESCRIPTOR_TYPE_STORAGE_BUFFER, n),
                                            vk.DescriptorPoolSize(vk.DESCRIPTOR_TYPE_UNIFORM_BUFFER, n))
        info = vk.DescriptorPoolCreateInfo(sType=vk.ST_DESCRIPTOR_POOL_CREATE_INFO, maxSets=1, poolSizeCount=2,
                                           pPoolSizes=sizes)
        self.pool = vk.VkNonDispatchable()
        v.call("vkCreateDescriptorPool", d, ctypes.byref(info), None, ctypes.byref(self.pool))
        layouts = (vk.VkNonDispatchable * 1)(set_layout)
        alloc = vk.DescriptorSetAllocateInfo(sType=vk.ST_DESCRIPTOR_SET_ALLOCATE_INFO, descriptorPool=self.pool,
                                             descriptorSetCount=1, pSetLayouts=layouts)
        self.set = vk.VkNonDispatchable()
        v.call("vkAllocateDescriptorSets", d, ctypes.byref(alloc), ctypes.byref(self.set))
        if not self.infos:
            return
        buf_infos = (vk.DescriptorBufferInfo * len(self.infos))(
            *[vk.DescriptorBufferInfo(buf.handle, 0, buf.size) for _, buf in self.infos])
        writes = (vk.WriteDescriptorSet * len(self.infos))()
        for i, (b, _) in enumerate(self.infos):
            w = writes[i]
            w.sType, w.dstSet, w.dstBinding, w.descriptorCount = vk.ST_WRITE_DESCRIPTOR_SET, self.set, b["binding"], 1
            w.descriptorType = vk.DESCRIPTOR_TYPE_UNIFORM_BUFFER if b["kind"] == "uniform_buffer" \
                else vk.DESCRIPTOR_TYPE_STORAGE_BUFFER
            w.pBufferInfo = ctypes.pointer(buf_infos[i])
        v.vkUpdateDescriptorSets(d, len(self.infos), writes, 0, None)

    def record_upload(self, cb) -> None:
        d = self.dev
        for arr, dev_buf, staging, _ in self.buffers:
            region = vk.BufferCopy(0, 0, staging.size)
            d.vk.vkCmdCopyBuffer(cb, staging.handle, dev_buf.handle, 1, ctypes.byref(region))
        d.barrier(cb, vk.PIPELINE_STAGE_TRANSFER, vk.PIPELINE_STAGE_COMPUTE_SHADER, vk.ACCESS_TRANSFER_WRITE,
                  vk.ACCESS_SHADER_READ | vk.ACCESS_SHADER_WRITE)

    def record_dispatch(self, cb, grid) -> None:
        v = self.dev.vk
        v.vkCmdBindPipeline(cb, vk.PIPELINE_BIND_POINT_COMPUTE, self.pipeline)
        sets = (vk.VkNonDispatchable * 1)(self.set)
        v.vkCmdBindDescriptorSets(cb, vk.PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, sets, 0, None)
        if self.push:
            data = ctypes.create_string_buffer(self.push, len(self.push))
            v.vkCmdPushConstants(cb, self.layout, vk.SHADER_STAGE_COMPUTE_BIT, 0, (len(self.push) + 3) // 4 * 4,
                                 ctypes.cast(data, ctypes.c_void_p))
        v.vkCmdDispatch(cb, *grid)

    def record_download(self, cb) -> None:
        d = self.dev
        d.barrier(cb, vk.PIPELINE_STAGE_COMPUTE_SHADER, vk.PIPELINE_STAGE_TRANSFER, vk.ACCESS_SHADER_WRITE,
                  vk.ACCESS_TRANSFER_READ)
        for arr, dev_buf, staging, copy_back in self.buffers:
            if copy_back:
                region = vk.BufferCopy(0, 0, staging.size)
                d.vk.vkCmdCopyBuffer(cb, dev_buf.handle, staging.handle, 1, ctypes.byref(region))
        d.barrier(cb, vk.PIPELINE_STAGE_TRANSFER, vk.PIPELINE_STAGE_HOST, vk.ACCESS_TRANSFER_WRITE,
                  vk.ACCESS_HOST_READ)

    def read_back(self) -> None:
        for arr, _, staging, copy_back in self.buffers:
            if copy_back:
                flat = arr.reshape(-1).view(np.uint8)
                flat[:] = np.frombuffer(staging.read(arr.nbytes), dtype=np.uint8)

    def release(self) -> None:
        self.dev.vk.vkDestroyDescriptorPool(self.dev.handle, self.pool, None)
        for _, dev_buf, staging, _ in self.buffers:
            dev_buf.destroy()
            staging.destroy()


_default: Device | None = None


def check_launch(reflection: dict, device, spec: dict | None = None) -> None:
    """The device check before pipeline creation, reported as :class:`DeviceFeatureError`.

    A kernel whose cooperative matrices the device does not offer never
    reaches the driver; the error keeps the compile-time message (kernel line,
    need, nearest offers) and carries ``mismatches`` and ``loc``.
    """
    try:
        verify(reflection, device, spec)
    except DeviceMismatchError as e:
        err = DeviceFeatureError(str(e))
        err.mismatches, err.loc = e.mismatches, e.loc
        raise err from None


def default_device() -> Device:
    """A process-wide Device (the first GPU with cooperative matrices, else the first device)."""
    global _default
    if _default is None:
        _default = Device()
    return _default


def launch(spirv: bytes, reflection: dict, grid: tuple[int, int, int], args: dict,
           spec: dict | None = None, device: Device | None = None) -> None:
    """Run one dispatch of ``grid`` workgroups; writable buffers are copied back into ``args``' arrays."""
    dev = device or default_device()
    p = _Prepared(dev, spirv, reflection, args, spec)
    try:
        cb = dev.begin()
        p.record_upload(cb)
        p.record_dispatch(cb, grid)
        p.record_download(cb)
        dev.submit_and_wait(cb)
        p.read_back()
    finally:
        p.release()


def bench(spirv: bytes, reflection: dict, grid: tuple[int, int, int], args: dict, spec: dict | None = None,
          warmup: int = 5, repeat: int = 20, flops: float | None = None, device: Device | None = None) -> BenchResult:
    """Time ``repeat`` dispatches (after ``warmup`` untimed ones) with GPU timestamps around each.

    Dispatches are serialised by barriers, so each timing covers one whole
    kernel.  Results are written back into ``args`` as by :func:`launch`.
    """
    if repeat < 1 or warmup < 0:
        raise ValueError("repeat must be >= 1 and warmup >= 0")
    dev = device or default_device()
    v, d = dev.vk, dev.handle
    p = _Prepared(dev, spirv, reflection, args, spec)
    qinfo = vk.QueryPoolCreateInfo(sType=vk.ST_QUERY_POOL_CREATE_INFO, queryType=vk.QUERY_TYPE_TIMESTAMP,
                                   queryCount=2 * repeat)
    pool = vk.VkNonDispatchable()
    v.call("vkCreateQueryPool", d, ctypes.byref(qinfo), None, ctypes.byref(pool))
    try:
        cb = dev.begin()
        v.vkCmdResetQueryPool(cb, pool, 0, 2 * repeat)
        p.record_upload(cb)
        rw = vk.ACCESS_SHADER_READ | vk.ACCESS_SHADER_WRITE
        for i in range(warmup + repeat):
            if i:
                dev.barrier(cb, vk.PIPELINE_STAGE_COMPUTE_SHADER, vk.PIPELINE_STAGE_COMPUTE_SHADER, rw, rw)
            timed = i >= warmup
            if timed:
                v.vkCmdWriteTimestamp(cb, vk.PIPELINE_STAGE_TOP_OF_PIPE, pool, 2 * (i - warmup))
            p.record_dispatch(cb, grid)
            if timed:
                v.vkCmdWriteTimestamp(cb, vk.PIPELINE_STAGE_BOTTOM_OF_PIPE, pool, 2 * (i - warmup) + 1)
        p.record_download(cb)
        dev.submit_and_wait(cb)
        p.read_back()
        stamps = (ctypes.c_uint64 * (2 * repeat))()
        v.call("vkGetQueryPoolResults", d, pool, 0, 2 * repeat, ctypes.sizeof(stamps), stamps, 8,
               vk.QUERY_RESULT_64 | vk.QUERY_RESULT_WAIT)
    finally:
        v.vkDestroyQueryPool(d, pool, None)
        p.release()
    mask = (1 << dev.timestamp_bits) - 1 if 0 < dev.timestamp_bits < 64 else (1 << 64) - 1
    period = dev.info.timestamp_period_ns
    times = [(((stamps[2 * i + 1] - stamps[2 * i]) & mask) * period) / 1e6 for i in range(repeat)]
    return BenchResult(median_ms=statistics.median(times), min_ms=min(times), max_ms=max(times),
                       stdev_ms=statistics.pstdev(times), times_ms=times, flops=flops)
