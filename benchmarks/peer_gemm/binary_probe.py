"""What the driver keeps of a compiled pipeline: the pipeline cache data of the shmem port and of the peer's module.

    python benchmarks/peer_gemm/binary_probe.py OUTDIR [--peer shmemfp16_fp32.spv]

Creates the compute pipeline of ``benchmarks/peer_gemm/shmem.py`` (f16 -> f32) and, with ``--peer``, of the
peer's module, each through its own VkPipelineCache, with the specialization values the harness gives the
128x256x16 configuration with 16x16x16 tiles and B row-major at 8192^3, and writes each cache's data
(``vkGetPipelineCacheData``) to OUTDIR. For each it prints the size, the first four bytes of the driver's
payload, its entropy in bits per byte and where an ELF image (a cubin, which ``nvdisasm`` could read)
starts in it, if anywhere. On the H100 (driver 580.159.04) the data is a "CPKV" container at 7.97 bits per
byte with no ELF in it: the machine code is not readable this way (docs/benchmarks.md). The peer's module
uses the port's reflection: the interface is the same.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import math
import sys
from ctypes import POINTER, c_size_t, c_uint32, c_void_p
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# the spec values the harness sets for this configuration (its specData order, by the port's names)
SPEC = dict(lM=16, lN=16, lK=16, TILE_M=128, TILE_N=256, TILE_K=16, K=8192, strideA=8192, strideB=8192,
            strideC=8192, strideD=8192, alpha=2.0, beta=3.0, BColMajor=False, A_ROW_LEN=16, A_NUM_ROWS=128,
            B_ROW_LEN=256, B_NUM_ROWS=16, WG=256, M=8192, N=8192, SUBGROUP_SIZE=32)
ST_PIPELINE_CACHE_CREATE_INFO = 17  # VkStructureType


class CacheCreateInfo(ctypes.Structure):
    _fields_ = [("sType", c_uint32), ("pNext", c_void_p), ("flags", c_uint32), ("initialDataSize", c_size_t),
                ("pInitialData", c_void_p)]


def cache_data(dev, spirv: bytes, reflection: dict) -> bytes:
    """The pipeline cache data after creating the pipeline of ``spirv`` with :data:`SPEC` in a new cache."""
    from coopdsl.runtime import vk
    from coopdsl.runtime.packing import pack_spec

    def device_fn(name: str, *args):
        return ctypes.CFUNCTYPE(ctypes.c_int32, *args)(dev.vk.lib.vkGetDeviceProcAddr(dev.handle, name.encode()))

    create_cache = device_fn("vkCreatePipelineCache", vk.VkHandle, POINTER(CacheCreateInfo), c_void_p,
                             POINTER(vk.VkNonDispatchable))
    get_data = device_fn("vkGetPipelineCacheData", vk.VkHandle, vk.VkNonDispatchable, POINTER(c_size_t), c_void_p)
    prog = dev.program(spirv, reflection)
    data, entries = pack_spec(reflection, SPEC)
    cache = vk.VkNonDispatchable()
    if create_cache(dev.handle, ctypes.byref(CacheCreateInfo(sType=ST_PIPELINE_CACHE_CREATE_INFO)), None,
                    ctypes.byref(cache)) != 0:
        raise SystemExit("vkCreatePipelineCache failed")
    code = (ctypes.c_uint32 * (len(spirv) // 4)).from_buffer_copy(spirv)
    info = vk.ShaderModuleCreateInfo(sType=vk.ST_SHADER_MODULE_CREATE_INFO, codeSize=len(spirv),
                                     pCode=ctypes.cast(code, c_void_p))
    module = vk.VkNonDispatchable()
    dev.vk.call("vkCreateShaderModule", dev.handle, ctypes.byref(info), None, ctypes.byref(module))
    map_entries = (vk.SpecializationMapEntry * len(entries))(*[vk.SpecializationMapEntry(*e) for e in entries])
    block = ctypes.create_string_buffer(data, len(data))
    spec = vk.SpecializationInfo(mapEntryCount=len(entries), pMapEntries=map_entries, dataSize=len(data),
                                 pData=ctypes.cast(block, c_void_p))
    stage = vk.PipelineShaderStageCreateInfo(sType=vk.ST_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                             stage=vk.SHADER_STAGE_COMPUTE_BIT, module=module, pName=b"main",
                                             pSpecializationInfo=ctypes.pointer(spec))
    pipe_info = vk.ComputePipelineCreateInfo(sType=vk.ST_COMPUTE_PIPELINE_CREATE_INFO, stage=stage,
                                             layout=prog.layout, basePipelineIndex=-1)
    pipe = vk.VkNonDispatchable()
    dev.vk.call("vkCreateComputePipelines", dev.handle, cache, 1, ctypes.byref(pipe_info), None, ctypes.byref(pipe))
    size = c_size_t()
    get_data(dev.handle, cache, ctypes.byref(size), None)
    raw = ctypes.create_string_buffer(size.value)
    get_data(dev.handle, cache, ctypes.byref(size), raw)
    dev.vk.vkDestroyPipeline(dev.handle, pipe, None)
    dev.vk.vkDestroyShaderModule(dev.handle, module, None)
    return raw.raw[:size.value]


def describe(blob: bytes) -> str:
    """Size, where the driver's "CPKV" tag sits (after the 32-byte VkPipelineCacheHeaderVersionOne), the
    entropy of the whole, and where ELF images start."""
    counts = collections.Counter(blob)
    entropy = sum(c / len(blob) * math.log2(len(blob) / c) for c in counts.values())
    elf = [i for i in range(len(blob)) if blob.startswith(b"\x7fELF", i)]
    tag = blob.find(b"CPKV")
    return (f"{len(blob)} bytes, 'CPKV' tag at {tag if tag >= 0 else 'none'}, {entropy:.2f} bits/byte, "
            f"ELF images at {elf if elf else 'none'}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--peer", type=Path, help="the peer's shmemfp16_fp32.spv")
    args = p.parse_args(argv)
    from benchmarks._gpu import require_gpu
    from benchmarks.peer_gemm import shmem
    from coopdsl import f16, f32

    dev = require_gpu("peer_gemm/binary_probe.py")
    ours = shmem.variant(f16, f32)
    modules = {"ours": ours.compile()}
    if args.peer:
        modules["theirs"] = args.peer.read_bytes()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, spirv in modules.items():
        blob = cache_data(dev, spirv, ours.reflect())
        (args.out / f"{name}.cache").write_bytes(blob)
        print(f"{name}: {describe(blob)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
