"""Kernel arguments -> device memory: buffers, uniform blocks, push constants, device addresses.

Follows the GPU launch (docs/runtime.md): numpy arrays for buffers (written
back unless read-only), numbers for push constants, dicts for struct push
constants and uniform blocks (or raw bytes as a uint8 array), and numpy
arrays (uploaded, written back) or int addresses for ``Ptr`` members.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import types as T
from ..ir.core import GlobalVar, Module
from ..ir.literals import int_range
from .errors import LaunchArgumentError
from .layout import Layout
from .memory import DEVICE_BASE, DeviceMemory, Ptr, Region
from .values import storage_dtype

_NAMES = {"bfloat16": "bf16"}


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
            data = _pack(T.pointee_struct(g.type), values, layout, device, "push constant", "")
            placed[id(g)] = device.allocate("push constants", data)
    return placed


def pointers_of(placed: dict[int, Any], region: Region) -> dict[int, Ptr]:
    """Base pointers of the allocated globals in the finished device region."""
    out = {}
    for key, a in placed.items():
        lo = np.asarray(a.start, np.int64)
        out[key] = Ptr(region, lo, lo, np.asarray(a.start + a.size, np.int64), a.label)
    return out


def _buffer(g: GlobalVar, values: dict, device: DeviceMemory):
    if g.name not in values:
        raise LaunchArgumentError(f"missing buffer '{g.name}'")
    arr = values[g.name]
    elem = T.block_array(g.type).elem
    if not isinstance(arr, np.ndarray):
        raise LaunchArgumentError(f"buffer '{g.name}' needs a numpy array, got {type(arr).__name__}")
    if isinstance(elem, T.ScalarType):
        want = storage_dtype(elem)
        if arr.dtype != want and _NAMES.get(arr.dtype.name) != elem.name:
            bits = " bits" if elem.kind == "float" and elem.encoding else ""
            raise LaunchArgumentError(f"buffer '{g.name}' holds {elem}; got a {arr.dtype} array "
                                      f"(pass {want.name}{bits})")
    size = T.block_array(g.type).stride
    if arr.nbytes % size:
        raise LaunchArgumentError(f"buffer '{g.name}' has {size}-byte elements; {arr.nbytes} bytes given")
    if not arr.flags.c_contiguous:
        raise LaunchArgumentError(f"buffer '{g.name}' must be C-contiguous (use np.ascontiguousarray)")
    if not g.info.get("readonly") and not arr.flags.writeable:  # (as the GPU runtime says it)
        raise LaunchArgumentError(f"buffer '{g.name}' is written by the kernel, but the numpy array given for it "
                                  f"is read-only (pass a writable copy, e.g. np.array(x), or declare the "
                                  f"parameter read-only by never storing to it)")
    return device.allocate(f"buffer '{g.name}'", arr, arr, writable=not g.info.get("readonly"))


def _uniform(g: GlobalVar, values: dict, layout: Layout, device: DeviceMemory):
    if g.name not in values:
        raise LaunchArgumentError(f"missing uniform block '{g.name}'")
    v = values[g.name]
    size = layout.size(g.type.pointee)
    if isinstance(v, dict):
        st = T.pointee_struct(g.type)
        unknown = [k for k in v if k not in {name for name, _ in st.members}]
        if unknown:  # (as the GPU runtime says it)
            raise LaunchArgumentError(f"uniform block '{g.name}' has no member {', '.join(map(repr, unknown))}; its "
                                      f"members are {', '.join(name for name, _ in st.members)}")
        data = _pack(st, v, layout, device, "uniform member", f"{g.name}.", check_keys=False)
    elif isinstance(v, np.ndarray) and v.nbytes >= size:
        data = np.ascontiguousarray(v).reshape(-1).view(np.uint8).tobytes()
    else:
        raise LaunchArgumentError(f"uniform block '{g.name}' needs a dict of its members or a {size}-byte array")
    return device.allocate(f"uniform block '{g.name}'", data)


def _pack(st: T.StructType, values: dict, layout: Layout, device: DeviceMemory, what: str, prefix: str,
          check_keys: bool = True) -> bytes:
    unknown = [k for k in values if k not in {name for name, _ in st.members}]
    if unknown and prefix and check_keys:  # (the top level: the kernel's arguments; a uniform block's own keys:
        # checked by _uniform)
        raise LaunchArgumentError(f"{what} '{prefix[:-1]}' has no member {', '.join(map(repr, unknown))}; "
                                  f"its members are {', '.join(name for name, _ in st.members)}")
    out = bytearray(layout.size(st))
    for i, (name, t) in enumerate(st.members):
        if name not in values:
            raise LaunchArgumentError(f"missing {what} '{prefix}{name}' ({t})")
        raw = _encode(t, values[name], layout, device, what, prefix + name)
        at = layout.member_offset(st, i)
        out[at:at + len(raw)] = raw
    return bytes(out)


def _encode(t: T.Type, v: Any, layout: Layout, device: DeviceMemory, what: str, name: str) -> bytes:
    if isinstance(t, T.StructType):
        if not isinstance(v, dict):
            raise LaunchArgumentError(f"{what} '{name}' is a struct {t}: give a dict of its members")
        return _pack(t, v, layout, device, what, name + ".")
    if isinstance(t, T.PointerType):
        if isinstance(v, np.ndarray):
            pointee = T.data_elem(t)
            if pointee is not None:
                elem = T.scalar_of(pointee)
                want = storage_dtype(elem)
                if v.dtype != want and _NAMES.get(v.dtype.name) != elem.name:
                    raise LaunchArgumentError(f"{what} '{name}' points to {pointee}; got a {v.dtype} array "
                                              f"(pass {np.dtype(want).name})")
            a = device.allocate(f"the array passed for '{name}'", np.ascontiguousarray(v), v,
                                writable=v.flags.c_contiguous)
            v = DEVICE_BASE + a.start
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and not 0 <= int(v) < 1 << 64:
            raise LaunchArgumentError(f"{what} '{name}' is a pointer: the address {int(v)} is not a 64-bit "
                                      f"unsigned int")
        if not isinstance(v, (int, np.integer)):
            raise LaunchArgumentError(f"{what} '{name}' is a pointer: give a numpy array or an int address")
        return np.array(v, np.uint64).tobytes()
    elem = T.scalar_of(t)
    count = t.count if isinstance(t, T.VectorType) else 1
    arr = np.asarray(v)
    if arr.size != count or arr.dtype.kind not in "biuf":
        raise LaunchArgumentError(f"{what} '{name}' ({t}) cannot be {v!r}: give {count} number"
                                  f"{'s' if count > 1 else ''}")
    flat = arr.reshape(-1)
    if elem.kind == "int":
        lo, hi = int_range(elem)
        if arr.dtype.kind == "f" and np.any(flat != np.trunc(flat)) or np.any((flat < lo) | (flat > hi)):
            raise LaunchArgumentError(f"{what} '{name}' ({t}) cannot be {v!r}: not an integer in {lo}..{hi}")
        return np.array([int(x) for x in flat], storage_dtype(elem)).tobytes()
    if elem.is_ieee:  # a float beyond the type's range is refused, not rounded to infinity (literals.fit)
        from ..ir.literals import LiteralError, fit

        for x in flat:
            try:
                fit(float(x), elem)
            except LiteralError as e:
                raise LaunchArgumentError(f"{what} '{name}' ({t}) cannot be {v!r}: {e}") from None
    return flat.astype(storage_dtype(elem)).tobytes()
