"""Turning launch arguments into bytes: specialization data, push-constant and uniform blocks, and the checks
a numpy array must pass for a buffer binding. Pure functions, unit-tested without a device."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .errors import LaunchError

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": np.uint16, "e4m3": np.uint8,
          "e5m2": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "bool": np.uint32}
SCALAR_SIZE = {k: np.dtype(v).itemsize for k, v in DTYPES.items()}
STRUCT_CODE = {"f16": "e", "f32": "f", "f64": "d", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B",
               "u16": "H", "u32": "I", "u64": "Q", "bool": "I", "ptr": "Q"}
BIT_PATTERNS = ("bf16", "e4m3", "e5m2")  # no numpy dtype: data travels as unsigned integer bit patterns


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
        if t not in BIT_PATTERNS:
            value = fitted(value, t, f"specialization constant {s['name']}")
        try:
            raw = struct.pack("<" + code, bool(value) if t == "bool" else value)
        except (struct.error, OverflowError, TypeError) as e:
            raise LaunchError(f"specialization constant {s['name']} ({t}) cannot be {value!r}: {e}") from None
        entries.append((s["id"], len(data), size))
        data += raw
    return data, entries


def member_value(values: dict, name: str) -> Any:
    """``values[name]``; a dotted name ``p.M`` reads ``values['p']['M']`` (struct members)."""
    if name in values:
        return values[name]
    head, dot, rest = name.partition(".")
    if dot and isinstance(values.get(head), dict):
        return member_value(values[head], rest)
    raise KeyError(name)


def set_member(values: dict, name: str, value: Any) -> None:
    """Set ``values[name]`` in place; a dotted name writes into a copy of the nested dict."""
    head, dot, rest = name.partition(".")
    if dot and isinstance(values.get(head), dict):
        values[head] = dict(values[head])
        set_member(values[head], rest, value)
    else:
        values[name] = value


def pack_push(reflection: dict, values: dict) -> bytes:
    """The push-constant block from ``values`` (pointer members: the int device address)."""
    return pack_members(reflection["push_constants"], values, "push constant")


def pack_members(block: dict, values: dict, what: str) -> bytes:
    """Bytes of a block described by reflection ``{"size", "members"}`` (dotted names for nested structs)."""
    check_struct_keys(block["members"], values, what)
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
        if t != "ptr":
            value = fitted(value, t, f"{what} '{m['name']}'")
        try:
            raw = struct.pack("<" + STRUCT_CODE[t], value)
        except (struct.error, KeyError, OverflowError, TypeError) as e:
            raise LaunchError(f"{what} '{m['name']}' ({t}) cannot be {value!r}: {e}") from None
        out[m["offset"]:m["offset"] + len(raw)] = raw
    return bytes(out)


def fitted(value: Any, t: str, what: str) -> Any:
    """``value`` as a Python number of scalar type ``t`` (a reflection type name), checked by the one place
    that decides whether a number fits a type (coopdsl._numbers, which the compiler asks too): never
    wrapped, overflowed or truncated."""
    from .._numbers import LiteralError, fit_named

    if isinstance(value, np.generic):
        value = value.item()  # numpy scalars: their Python value
    if t == "bool":
        if isinstance(value, (bool, int)) and value in (0, 1):
            return int(value)
        raise LaunchError(f"{what} (bool) cannot be {value!r}: give True or False")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LaunchError(f"{what} ({t}) cannot be {value!r}: give a number")
    try:
        return fit_named(value, t)
    except LiteralError as e:
        raise LaunchError(f"{what} ({t}) cannot be {value!r}: {e}") from None


def check_struct_keys(members: list[dict], values: dict, what: str, whole: bool = False) -> None:
    """LaunchError for a key of a struct's dict that names no member (a misspelt member would otherwise be
    ignored and the member reported missing, or left at an old value)."""
    children: dict[str, list[str]] = {"": []} if whole else {}
    for m in members:
        parts = m["name"].split(".")
        for i in range(0 if whole else 1, len(parts)):
            kids = children.setdefault(".".join(parts[:i]), [])
            if parts[i] not in kids:
                kids.append(parts[i])
    for prefix, kids in children.items():
        try:
            v = values if prefix == "" else member_value(values, prefix)
        except KeyError:
            continue
        if isinstance(v, dict):
            extra = [k for k in v if k not in kids]
            if extra:
                where = f" '{prefix}'" if prefix else ""
                raise LaunchError(f"{what}{where} has no member {', '.join(map(repr, extra))}; its members are "
                                  f"{', '.join(kids)}")


def pointer_problem(member: dict, dtype: np.dtype) -> str | None:
    """Why an array of ``dtype`` cannot be passed for pointer ``member`` (it addresses another type)."""
    pointee = member.get("pointee")
    if not pointee:
        return None
    elem = pointee.split("<")[-1].rstrip(">")  # vec4<u32> -> u32
    if elem not in DTYPES or dtype == np.dtype(DTYPES[elem]) or (elem == "bf16" and dtype.name == "bfloat16"):
        return None
    return (f"pointer '{member['name']}' points to {pointee}; got a {dtype} array "
            f"(pass {np.dtype(DTYPES[elem]).name}{' bits' if elem in BIT_PATTERNS else ''})")


def element_bytes(binding: dict) -> int:
    """Bytes per element of a buffer binding (std430: a vec3 element takes the room of a vec4)."""
    n = binding.get("components", 1)
    return SCALAR_SIZE[binding["element_type"]] * (4 if n == 3 else n)


def dtype_problem(binding: dict, dtype: np.dtype) -> str | None:
    """Why an array of ``dtype`` cannot back ``binding`` (scalar elements must match exactly), else None."""
    t = binding["element_type"]
    if binding.get("components", 1) != 1:
        return None
    if dtype == np.dtype(DTYPES[t]) or (t == "bf16" and dtype.name == "bfloat16"):
        return None
    return (f"buffer '{binding['name']}' holds {t}; got a {dtype} array "
            f"(pass {np.dtype(DTYPES[t]).name}{' bits' if t in BIT_PATTERNS else ''})")


def size_problem(binding: dict, nbytes: int) -> str | None:
    """Why ``nbytes`` cannot back ``binding`` (whole elements; a uniform block's full size), else None."""
    name = binding["name"]
    if binding.get("kind") == "uniform_buffer" and nbytes < binding.get("size", 0):
        return f"buffer '{name}' is a uniform block of {binding['size']} bytes; only {nbytes} bytes given"
    elem = element_bytes(binding)
    if nbytes % elem:
        return f"buffer '{name}' has {elem}-byte elements; {nbytes} bytes given"
    return None


def check_array(binding: dict, value: Any) -> np.ndarray:
    """The contiguous numpy array for ``binding``: dtype and size checked, and writable when the kernel writes it."""
    if not isinstance(value, np.ndarray):
        raise LaunchError(f"buffer '{binding['name']}' needs a numpy array or a coopdsl.runtime.Array, "
                          f"got {type(value).__name__}")
    problem = dtype_problem(binding, value.dtype) or size_problem(binding, value.nbytes)
    if problem:
        raise LaunchError(problem)
    if not value.flags.c_contiguous:
        raise LaunchError(f"buffer '{binding['name']}' must be C-contiguous (use np.ascontiguousarray)")
    if not binding.get("readonly", True) and not value.flags.writeable:
        raise LaunchError(f"buffer '{binding['name']}' is written by the kernel, but the numpy array given for it "
                          f"is read-only (pass a writable copy, e.g. np.array(x), or declare the parameter "
                          f"read-only by never storing to it)")
    return value
