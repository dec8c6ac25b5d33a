"""Turning launch arguments into bytes: specialization data, push-constant and uniform blocks, and the checks
a numpy array must pass for a buffer binding. Pure functions, unit-tested without a device."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .. import _packing as packing
from .._numbers import float_pattern_named
from .._packing import (
    BIT_PATTERNS,
    DTYPES,
    SCALAR_SIZE,
    STRUCT_CODE,
    Address,
    dict_contents,
    member_value,
    value_key,
)
from .errors import LaunchError

__all__ = ["BIT_PATTERNS", "DTYPES", "SCALAR_SIZE", "STRUCT_CODE", "array_problem", "check_array",
           "check_struct_keys", "dict_contents", "element_bytes", "fitted", "member_value", "pack_members",
           "pack_push", "pack_spec", "value_key"]


def pack_spec(reflection: dict[str, Any], spec: dict[str, Any] | None) -> tuple[bytes, list[tuple[int, int, int]]]:
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
        value = fitted(value, t, f"specialization constant {s['name']}")
        if t in BIT_PATTERNS:   # bf16, fp8: the number (as the kernel's default is one) as the format's bits
            value, code = float_pattern_named(value, t), "H" if size == 2 else "B"
        else:
            code = STRUCT_CODE[t]
        try:
            raw = struct.pack("<" + code, bool(value) if t == "bool" else value)
        except (struct.error, OverflowError, TypeError) as e:
            raise LaunchError(f"specialization constant {s['name']} ({t}) cannot be {value!r}: {e}") from None
        entries.append((s["id"], len(data), size))
        data += raw
    return data, entries


def pack_push(reflection: dict[str, Any], values: dict[str, Any]) -> bytes:
    """The push-constant block from ``values`` (pointer members: the int device address)."""
    return pack_members(reflection["push_constants"], values, "push constant")


def pack_members(block: dict[str, Any], values: dict[str, Any], what: str, address: Address | None = None) -> bytes:
    """Bytes of a block described by reflection ``{"size", "members"}`` (dotted names for nested structs):
    the packer the interpreter uses too (coopdsl/_packing.py); ``address`` gives the device address of an
    array passed for a pointer member."""
    return packing.pack_members(block, values, what, error=LaunchError, address=address)


def fitted(value: Any, t: str, what: str) -> Any:
    """``value`` as a Python number of scalar type ``t`` (a reflection type name), checked by the one place
    that decides whether a number fits a type (coopdsl._numbers, which the compiler asks too): never
    wrapped, overflowed or truncated."""
    return packing.fitted(value, t, what, LaunchError)


def check_struct_keys(members: list[dict[str, Any]], values: dict[str, Any], what: str, whole: bool = False) -> None:
    """LaunchError for a key of a struct's dict that names no member (see coopdsl/_packing.py)."""
    packing.check_struct_keys(members, values, what, whole, LaunchError)


def element_bytes(binding: dict[str, Any]) -> int:
    """Bytes per element of a buffer binding: its ``stride`` (coopdsl/ir/layout.py's; a vec3 element takes
    the room of a vec4), or for a hand-written binding without one, its components' (vec3 as vec4)."""
    if "stride" in binding:
        return int(binding["stride"])
    n = binding.get("components", 1)
    return SCALAR_SIZE[binding["element_type"]] * (4 if n == 3 else n)


def array_problem(binding: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` (a numpy or resident array) cannot back ``binding``, else None: a uniform block's whole
    size, or a storage buffer's rule (coopdsl/_packing.py's ``buffer_problem``, which the interpreter applies
    too)."""
    name = binding["name"]
    if binding.get("kind") == "uniform_buffer":
        return packing.uniform_block_problem(name, binding.get("size", 0), value.nbytes, value.dtype,
                                             packing.widest_scalar(binding.get("members", ())))
    return packing.buffer_problem(name, binding["element_type"], binding.get("components", 1),
                                  element_bytes(binding), value, written=not binding.get("readonly", True))


def check_array(binding: dict[str, Any], value: Any) -> np.ndarray:
    """The contiguous numpy array for ``binding``: dtype and size checked, and writable when the kernel writes it."""
    if not isinstance(value, np.ndarray):
        if binding.get("kind") == "uniform_buffer":   # (the interpreter's words: one rule, _packing's)
            raise LaunchError(str(packing.uniform_block_problem(binding["name"], binding.get("size", 0), None)))
        raise LaunchError(f"buffer '{binding['name']}' needs a numpy array or a coopdsl.runtime.Array, "
                          f"got {type(value).__name__}")
    arr: np.ndarray = value
    if not arr.flags.c_contiguous and binding.get("kind") == "uniform_buffer":
        arr = np.ascontiguousarray(arr)   # read only: its bytes copied, as the interpreter does
    problem = array_problem(binding, arr)
    if problem:
        raise LaunchError(problem)
    return arr
