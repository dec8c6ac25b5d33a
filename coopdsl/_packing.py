"""Kernel arguments to bytes: the one packer of push-constant and uniform blocks, which the Vulkan runtime and
the interpreter both use (numpy and the stdlib only).

A block is described as reflection describes it: ``{"size", "members"}``, the members a flat table with
absolute offsets and dotted names for nested structs (``coopdsl.ir.layout.flat_members``, which owns the
layout).  The runtime packs from a kernel's reflection dict, the interpreter from the same table made from
the IR types, so both lay out, check and refuse arguments alike (the same words too).  How an array given for
a pointer becomes a device address is the caller's (``address``): the runtime stages or binds it on the
device, the interpreter places it in its own device memory.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

import numpy as np

from ._numbers import LiteralError, fit_named, float_key, host_bool, python_value
from ._words import with_article

DTYPES: dict[str, type[np.generic]] = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": np.uint16, "e4m3": np.uint8, "e5m2": np.uint8,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
    "u32": np.uint32, "u64": np.uint64, "bool": np.uint32}
SCALAR_SIZE = {k: np.dtype(v).itemsize for k, v in DTYPES.items()}
STRUCT_CODE = {"f16": "e", "f32": "f", "f64": "d", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B",
               "u16": "H", "u32": "I", "u64": "Q", "bool": "I", "ptr": "Q"}
BIT_PATTERNS = ("bf16", "e4m3", "e5m2")  # no numpy dtype: data travels as unsigned integer bit patterns
ML_DTYPES = {"bfloat16": "bf16"}  # ml_dtypes' names accepted for the bit-pattern types

Address = Callable[[Mapping[str, Any], Any], Any]  # (pointer member, value given) -> its int device address


def value_key(value: Any) -> Any:
    """What decides the bytes a launch argument packs to, as a hashable key that compares equal only for the
    same bytes: a float by its bits (0.0 and -0.0 differ, and NaNs of other payloads), anything else by type and value
    (``True`` is not ``1``). Memos of launches (the kept launch, the binding, the pipeline of a specialization)
    compare arguments through it."""
    if type(value) is float:
        return float_key(value)
    if isinstance(value, np.floating):
        return (type(value), value.tobytes())
    return (type(value), value)


def dict_contents(values: Iterable[Any]) -> tuple[Any, ...]:
    """What the dicts (struct push constants, uniform blocks) among launch arguments ``values`` hold, each value
    as :func:`value_key` tells them apart: a dict is mutable, so the same object may pack to other bytes at the
    next launch. Two results are equal only if every dict holds the same keys and values by that rule."""
    return tuple(_contents(a) for a in values if type(a) is dict)


_PLAIN = frozenset((int, float, bool))


def _contents(d: dict[str, Any]) -> tuple[Any, ...]:
    """:func:`dict_contents` of one dict: for plain numbers (the common case, packed at C speed) its keys, values,
    their types and the bits of its floats (0.0 and -0.0 differ); else each value's :func:`value_key`."""
    vals = tuple(d.values())
    types = tuple(map(type, vals))
    if _PLAIN.issuperset(types):
        return (tuple(d), vals, types, tuple([float_key(v) for v in vals if type(v) is float]))
    return tuple((k, value_key(v)) for k, v in d.items())


def member_value(values: Mapping[str, Any], name: str) -> Any:
    """``values[name]``; a dotted name ``p.M`` reads ``values['p']['M']`` (struct members)."""
    if name in values:
        return values[name]
    head, dot, rest = name.partition(".")
    if dot and isinstance(values.get(head), dict):
        return member_value(values[head], rest)
    raise KeyError(name)


def element_of(type_name: str) -> str:
    """The scalar type a member type is made of: ``vec4<u32>`` -> ``u32``, ``u8[16]`` -> ``u8``."""
    return type_name.split("[")[0].split("<")[-1].rstrip(">")


FLOAT_ELEMENTS = ("f16", "f32", "f64", "bf16", "e4m3", "e5m2")   # the float scalar types of DTYPES


def dtype_matches(type_name: str, dtype: np.dtype) -> bool:
    """Whether an array of ``dtype`` holds scalars of ``type_name`` (bit-pattern types: their unsigned ints or
    ml_dtypes' type)."""
    return dtype == np.dtype(DTYPES[type_name]) or ML_DTYPES.get(dtype.name) == type_name


def wanted_dtype(type_name: str) -> str:
    """The numpy dtype to pass for scalars of ``type_name``, as messages name it."""
    return f"{np.dtype(DTYPES[type_name]).name}{' bits' if type_name in BIT_PATTERNS else ''}"


def none_buffer(binding: Mapping[str, Any], who: str, error: type[Exception] = ValueError) -> np.ndarray:
    """What a launch binds where ``None`` is given for storage buffer ``binding``: its :func:`placeholder` when no
    instruction of the kernel uses it (reflection's ``"used": False``; a reflection without the key counts as
    used); else ``error`` (the callers' LaunchError), ``who`` (the kernel's name, or "launch") first, that says
    so.  The one rule of ``Kernel.launch`` and the lower-level ``runtime.launch``."""
    if binding.get("used", True):
        raise error(f"{who}: buffer '{binding['name']}' is read or written by this kernel; None stands only "
                          f"for a buffer no instruction uses (e.g. one a Const branch this variant does not take "
                          f"reads)")
    return placeholder(binding)


def placeholder(binding: Mapping[str, Any]) -> np.ndarray:
    """One zeroed element for a storage buffer no instruction of the kernel uses (reflection's ``"used": False``),
    bound where a launch gives ``None`` for it: Vulkan needs no valid descriptor for a binding the pipeline does
    not use, and the interpreter reads none."""
    element = binding["element_type"]
    return np.zeros(binding["stride"], np.uint8).view(np.dtype(DTYPES[element]) if element in DTYPES else np.uint8)


def pointer_problem(member: Mapping[str, Any], dtype: np.dtype, what: str) -> str | None:
    """Why an array of ``dtype`` cannot be passed for pointer ``member`` (it addresses another type), else None."""
    pointee = member.get("pointee")
    if not pointee:
        return None
    elem = element_of(pointee)
    if elem not in DTYPES or dtype_matches(elem, dtype):
        return None
    return f"{what} '{member['name']}' points to {pointee}; got {with_article(dtype)} array (pass {wanted_dtype(elem)})"


def padded_vec3_problem(name: str, element: str, components: int, stride: int, arr: Any) -> str | None:
    """Why ``arr`` (numpy) cannot back buffer ``name`` of 3-component vectors of ``element`` padded to
    ``stride`` bytes (std430: a vec3 takes a vec4's room): an array (numpy or resident: its shape and dtype)
    whose last dimension is 3 holds them packed tightly, and would be read at the wrong offsets from the second
    element on; None otherwise."""
    scalar = SCALAR_SIZE[element]
    shape = tuple(arr.shape)
    if components != 3 or stride == 3 * scalar or len(shape) < 2 or shape[-1] != 3 or \
            np.dtype(arr.dtype).itemsize != scalar:
        return None
    return (f"buffer '{name}' holds vec3[{element}] elements padded to {stride} bytes (a vec3 takes a vec4's "
            f"room), but the array given has 3 values a row, packed tightly: pass shape {(*shape[:-1], 4)} "
            f"(e.g. np.pad(x, ((0, 0), (0, 1)))), or declare the buffer vec4")


def spec_values(spec: Any, who: str) -> dict[str, Any]:
    """``spec`` (specialization-constant values by name; None: none) as a dict, or the TypeError every entry
    that takes one raises (``Kernel.compile``/``reflect``/``print_ir``, ``runtime.launch``/``bench``,
    ``devices.mismatches``/``verify``), naming ``who``: a float was iterated, a numpy array asked for its truth
    value, a string reached ``.items()``."""
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise TypeError(f"{who}: spec must be a dict of specialization-constant values by name, got "
                        f"{type(spec).__name__}")
    return dict(spec)


def buffer_problem(name: str, element: str, components: int, stride: int, arr: Any,
                   written: bool = False) -> str | None:
    """Why ``arr`` cannot back storage buffer ``name``, else None: the one rule of the GPU runtime (numpy and
    resident arrays) and of the interpreter.  The buffer's elements are ``stride`` bytes of ``components``
    values of scalar ``element`` (a struct element: ``u8`` and its size, as the reflection gives it).

    A buffer of scalars takes exactly their dtype (:func:`dtype_matches`); a ``vec3`` buffer refuses rows of
    three values packed tightly (:func:`padded_vec3_problem`); the array's bytes must be whole elements; and a
    numpy array (a resident one is always both) must be C-contiguous, and writable when the kernel writes the
    buffer (``written``)."""
    dtype = np.dtype(arr.dtype)
    if components == 1 and not dtype_matches(element, dtype):
        return f"buffer '{name}' holds {element}; got {with_article(dtype)} array (pass {wanted_dtype(element)})"
    if components > 1 and element in FLOAT_ELEMENTS and not dtype_matches(element, dtype):
        # a vector of floats takes its components' dtype (a float64 array for vec4[f32] was read as its bytes); a
        # vector of integers (uvec4 words) also takes other data as its bits, the GLSL idiom of loading f16 data
        # as uvec4, and a struct (u8 here) takes a structured array or the same bytes
        return (f"buffer '{name}' holds vec{components}[{element}]; got {with_article(dtype)} array (pass "
                f"{wanted_dtype(element)}, {components} values an element)")
    vec3 = padded_vec3_problem(name, element, components, stride, arr)
    if vec3:
        return vec3
    if arr.nbytes % stride:
        return f"buffer '{name}' has {stride}-byte elements; {arr.nbytes} bytes given"
    if isinstance(arr, np.ndarray):
        if not arr.flags.c_contiguous:
            return f"buffer '{name}' must be C-contiguous (use np.ascontiguousarray)"
        if written and not arr.flags.writeable:
            return (f"buffer '{name}' is written by the kernel, but the numpy array given for it is read-only "
                    f"(pass a writable copy, e.g. np.array(x), or declare the parameter read-only by never "
                    f"storing to it)")
    return None


def check_struct_keys(members: Sequence[Mapping[str, Any]], values: Mapping[str, Any], what: str,
                      whole: bool = False, error: type[Exception] = ValueError) -> None:
    """``error`` for a key of a struct's dict that names no member (a misspelt member would otherwise be
    ignored and the member reported missing, or left at an old value); ``whole``: ``values`` is the struct
    itself (a uniform block's dict), else a struct's dict is one of its values (push constants)."""
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
                raise error(f"{what}{where} has no member {', '.join(map(repr, extra))}; its members are "
                            f"{', '.join(kids)}")


def widest_scalar(members: Sequence[Mapping[str, Any]]) -> int:
    """The bytes of the widest scalar among a block's members (``flat_members``' or the reflection's)."""
    return max((SCALAR_SIZE.get(element_of(str(m["type"])), int(m["size"])) for m in members), default=0)


def uniform_block_problem(name: str, size: int, nbytes: int | None, dtype: Any = None,
                          widest: int = 0) -> str | None:
    """Why an array of ``nbytes`` bytes and ``dtype`` (None: not an array) cannot back uniform block ``name`` of
    ``size`` bytes whose widest member scalar has ``widest`` bytes, else None: the one rule of the GPU path and
    the interpreter.  A block takes a dict of its members, or its raw bytes: an array of at least its size (more
    bytes are not read) of uint8, a structured dtype, or numbers no wider than its widest scalar (its words);
    wider items, such as numpy's default float64 for a block of f32 and u32 members, are a mistake (float64
    [1.0, 2.5] was read as the bytes of a u32 and an f32)."""
    if nbytes is not None and dtype is not None:
        dt = np.dtype(dtype)
        if dt.names is None and (dt.kind not in "iuf" or widest and dt.itemsize > widest):
            return (f"uniform block '{name}' takes a dict of its members or its raw bytes (a uint8 array, or "
                    f"items of at most its widest member's {widest} bytes); got {with_article(dt)} array")
    if nbytes is not None and nbytes >= size:
        return None
    got = "" if nbytes is None else f"; {nbytes} bytes given"
    return f"uniform block '{name}' needs a dict of its members or an array of at least {size} bytes{got}"


def fitted(value: Any, t: str, what: str, error: type[Exception] = ValueError) -> Any:
    """``value`` as a Python number of scalar type ``t`` (a reflection type name), checked by the one place
    that decides whether a number fits a type (coopdsl._numbers, which the compiler asks too): never
    wrapped, overflowed or truncated."""
    value = python_value(value)   # numpy scalars: their Python value
    if isinstance(value, np.generic):   # (np.longdouble keeps its type: no Python number holds it)
        raise error(f"{what} ({t}) cannot be {value!r}: give a Python number or a numpy scalar of at most 64 "
                    f"bits")
    if t == "bool":
        flag = host_bool(value)
        if flag is not None:
            return int(flag)
        raise error(f"{what} (bool) cannot be {value!r}: give True or False (or 1 or 0)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{what} ({t}) cannot be {value!r}: give a number")
    try:
        return fit_named(value, t)
    except LiteralError as e:
        raise error(f"{what} ({t}) cannot be {value!r}: {e}") from None


def pack_members(block: Mapping[str, Any], values: Mapping[str, Any], what: str, *,
                 error: type[Exception] = ValueError, address: Address | None = None) -> bytes:
    """The bytes of a block described by ``{"size", "members"}`` (dotted names for nested structs) holding
    ``values``; ``what`` names a member in messages ("push constant"), ``error`` is the exception raised
    for a value that does not fit, and ``address`` turns what was given for a pointer member (an array)
    into its device address."""
    members = block["members"]
    check_struct_keys(members, values, what, error=error)
    out = bytearray(block["size"])
    for m in members:
        name, t = m["name"], m["type"]
        try:
            value = member_value(values, name)
        except KeyError:
            _missing(values, name, t, what, error)
        label = f"{what} '{name}'"
        if t == "ptr":
            raw = _pointer(m, value, what, error, address)
        elif "[" in t:
            elem, n = t[:t.rindex("[")], m["length"]
            items = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
            if items.size != n * _count(elem) or items.size == 0:
                raise error(f"{label} is {t}: give {n} {elem} values")
            for i, row in enumerate(items.reshape(n, -1)):
                item = row.tolist() if _count(elem) > 1 else row[0]
                raw = _numbers(elem, item, f"{what} '{name}[{i}]'", item, error)
                at = m["offset"] + i * m["stride"]
                out[at:at + len(raw)] = raw
            continue
        else:
            raw = _numbers(t, value, label, value, error)
        out[m["offset"]:m["offset"] + len(raw)] = raw
    return bytes(out)


def _missing(values: Mapping[str, Any], name: str, t: str, what: str, error: type[Exception]) -> NoReturn:
    """The error for a member ``values`` does not give: missing, or inside a struct not given as a dict."""
    parts = name.split(".")
    v: Any = values
    for i, part in enumerate(parts[:-1]):
        if not isinstance(v, dict) or part not in v:
            break
        v = v[part]
        if not isinstance(v, dict):
            raise error(f"{what} '{'.'.join(parts[:i + 1])}' is a struct: give a dict of its members")
    raise error(f"missing {what} '{name}' ({t})")


def _count(t: str) -> int:
    return int(t[3]) if t.startswith("vec") else 1


def _numbers(t: str, value: Any, label: str, given: Any, error: type[Exception]) -> bytes:
    """The bytes of a scalar or vector member ``t`` holding ``value``."""
    if not t.startswith("vec"):
        if t not in STRUCT_CODE:
            raise error(f"{label} ({t}) cannot be {given!r}: no host type holds {t}")
        return struct.pack("<" + STRUCT_CODE[t], fitted(value, t, label, error))
    n, elem = _count(t), element_of(t)
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if arr.shape != (n,):   # (a nested [[1, 2]] was flattened into the vector)
        raise error(f"{label} ({t}) cannot be {given!r}: give {n} numbers")
    flat = arr
    if elem in BIT_PATTERNS or elem not in STRUCT_CODE:   # (as for a scalar: int(x) took 1.5 as the pattern 1)
        raise error(f"{label} ({t}) cannot be {given!r}: no host type holds {elem}")
    return np.asarray([fitted(x, elem, label, error) for x in flat], DTYPES[elem]).tobytes()


def _pointer(m: Mapping[str, Any], value: Any, what: str, error: type[Exception],
             address: Address | None) -> bytes:
    """The 8 bytes of pointer member ``m``: an int address, or the address of the array given for it."""
    label = f"{what} '{m['name']}'"
    dtype = getattr(value, "dtype", None)
    array = isinstance(dtype, np.dtype) and not isinstance(value, np.generic)
    if array and dtype is not None:
        problem = pointer_problem(m, dtype, what)
        if problem:
            raise error(problem)
        if address is not None:
            value = address(m, value)
    if isinstance(value, np.generic) and value.dtype.kind in "iu":
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise error(f"{label} is a pointer: give a numpy array or an int address")
    if not 0 <= value < 1 << 64:
        raise error(f"{label} is a pointer: the address {value} is not a 64-bit unsigned int")
    if not array and address is not None:   # (a number: the GPU runtime checks it lies in a live array)
        value = address(m, value)
    return struct.pack("<Q", value)
