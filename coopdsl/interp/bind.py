"""Kernel arguments -> device memory: buffers, uniform blocks, push constants, device addresses.

Follows the GPU launch (docs/runtime.md): numpy arrays for buffers (written
back unless read-only), numbers for push constants, dicts for struct push
constants and uniform blocks (or raw bytes as a uint8 array), and numpy
arrays (uploaded, written back) or int addresses for ``Ptr`` members.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _packing as packing
from ..ir import types as T
from ..ir.core import GlobalVar, Module
from ..ir.layout import flat_members, size_of
from .environ import DEVICE_ENV, device_env
from .errors import LaunchArgumentError
from .layout import Layout
from .memory import DEVICE_BASE, Allocation, DeviceMemory, Ptr, Region


def allocate_arguments(module: Module, layout: Layout, values: dict[str, Any],
                       device: DeviceMemory) -> dict[int, Any]:
    """Place every argument in ``device``; the base pointer of each global, by id (before ``finish``).

    The pointers are completed by :func:`pointers_of` once the device region exists.
    """
    names = {g.name for g in module.globals if g.role in ("buffer", "uniform")}
    push = next((g for g in module.globals if g.role == "push"), None)
    if push is not None:
        names |= {n for n, _ in T.pointee_struct(push.type).members}
    unknown = sorted(set(values) - names)
    if unknown:
        raise LaunchArgumentError(f"unknown argument(s) {unknown}; the kernel takes {sorted(names)}")
    placed: dict[int, Any] = {}
    for g in module.globals:
        if g.role == "buffer":
            placed[id(g)] = _buffer(g, values, device)
        elif g.role == "uniform":
            placed[id(g)] = _uniform(g, values, layout, device)
        elif g.role == "push":
            st = T.pointee_struct(g.type)
            block: dict[str, Any] = {"size": layout.size(st), "members": flat_members(st, layouter=layout)}
            placed[id(g)] = device.allocate("push constants", _pack(block, values, "push constant", device))
    return placed


def pointers_of(placed: dict[int, Any], region: Region) -> dict[int, Ptr]:
    """Base pointers of the allocated globals in the finished device region."""
    out = {}
    for key, a in placed.items():
        lo = np.asarray(a.start, np.int64)
        out[key] = Ptr(region, lo, lo, np.asarray(a.start + a.size, np.int64), a.label)
    return out


def _buffer(g: GlobalVar, values: dict[str, Any], device: DeviceMemory) -> Allocation:
    if g.name not in values:
        raise LaunchArgumentError(f"missing buffer '{g.name}'")
    arr = values[g.name]
    elem = T.block_array(g.type).elem
    if not isinstance(arr, np.ndarray):
        hint = ""
        if type(arr).__module__.startswith("coopdsl.runtime"):  # (the interpreter does not import the runtime)
            hint = (" (a resident array lives on its GPU: pass its contents, arr.numpy(), to the interpreter, or "
                    f"launch on the array's device {_off_the_interpreter()})")
        raise LaunchArgumentError(f"buffer '{g.name}' needs a numpy array, got {type(arr).__name__}{hint}")
    components = elem.count if isinstance(elem, T.VectorType) else \
        size_of(elem) if isinstance(elem, T.StructType) else 1   # (as the reflection gives them)
    element = "u8" if isinstance(elem, T.StructType) else T.scalar_of(elem).name
    problem = packing.buffer_problem(g.name, element, components, T.block_array(g.type).stride, arr,
                                     written=not g.info.get("readonly"))
    if problem:   # (the GPU runtime's rule: one owner, coopdsl/_packing.py)
        raise LaunchArgumentError(problem)
    return device.allocate(f"buffer '{g.name}'", arr, arr, writable=not g.info.get("readonly"))


def _uniform(g: GlobalVar, values: dict[str, Any], layout: Layout, device: DeviceMemory) -> Allocation:
    if g.name not in values:
        raise LaunchArgumentError(f"missing uniform block '{g.name}'")
    v = values[g.name]
    st = T.pointee_struct(g.type)
    size = layout.size(st)
    members = flat_members(st, layouter=layout)
    widest = packing.widest_scalar(members)
    if isinstance(v, dict):
        block: dict[str, Any] = {"size": size, "members": members}
        packing.check_struct_keys(block["members"], v, f"uniform block '{g.name}'", True, LaunchArgumentError)
        data = _pack(block, v, f"uniform block '{g.name}' member", device)
    elif isinstance(v, np.ndarray) and not packing.uniform_block_problem(g.name, size, v.nbytes, v.dtype, widest):
        if v.flags.c_contiguous:  # (the array itself: one given for another parameter too is placed once)
            return device.allocate(f"uniform block '{g.name}'", v, v)
        data = np.ascontiguousarray(v).reshape(-1).view(np.uint8).tobytes()
    else:
        raise LaunchArgumentError(str(packing.uniform_block_problem(g.name, size, getattr(v, "nbytes", None),
                                                                    getattr(v, "dtype", None), widest)))
    return device.allocate(f"uniform block '{g.name}'", data)


def _pack(block: dict[str, Any], values: dict[str, Any], what: str, device: DeviceMemory) -> bytes:
    """The bytes of a push-constant or uniform block: the runtime's packer (coopdsl/_packing.py), with an
    array given for a pointer placed in the interpreter's device memory (and written back after the run)."""
    def address(m: Mapping[str, Any], v: Any) -> Any:
        if isinstance(v, np.ndarray):
            if not v.flags.c_contiguous:  # (a copy would be placed, and the kernel's stores lost with it)
                raise LaunchArgumentError(f"pointer '{m['name']}' must be C-contiguous (use np.ascontiguousarray)")
            # a read-only array is placed but not written back (the kernel's stores to it are lost), as on a GPU
            a = device.allocate(f"the array passed for '{m['name']}'", v, v, writable=v.flags.writeable,
                                pointer=True)
            return DEVICE_BASE + a.start
        return v
    return packing.pack_members(block, values, what, error=LaunchArgumentError, address=address)


def _off_the_interpreter() -> str:
    """How a launch gets off the interpreter: without device='cpu', or with COOPDSL_DEVICE unset when the
    environment sends launches here."""
    env = device_env()
    if env.strip().lower() == "cpu":
        return (f"instead: {DEVICE_ENV}={env.strip()} in the environment sends launches that name no device to the "
                f"interpreter; unset it, or pass device=arr.device")
    return "without device='cpu'"
