"""The shape of a kernel's reflection as :mod:`coopdsl.devices.check` reads it: each field it uses, of the type
``Kernel.reflect()`` and ``coopdsl emit --reflect`` write.  A reflection read from an edited JSON file with a field
of another type is a TypeError naming the field, not a KeyError or a comparison error inside a rule."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_LOC = re.compile(r".+:\d+:\d+")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _dim(v: Any) -> bool:
    """A size: an int, a specialization constant ``{"spec_id", "name", "value"}``, or an expression of them
    ``{"op", "args"}``."""
    if _int(v):
        return True
    if not isinstance(v, Mapping):
        return False
    if "spec_id" in v:
        return isinstance(v.get("name"), str) and _int(v.get("value"))
    return isinstance(v.get("op"), str) and isinstance(v.get("args"), list) and all(_dim(a) for a in v["args"])


def _loc(v: Any) -> bool:
    return v is None or (isinstance(v, str) and (not v or _LOC.fullmatch(v) is not None))


def _name_or_dim(v: Any) -> bool:
    return isinstance(v, str) or _dim(v)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float))


_MATRIX: dict[str, tuple[Callable[[Any], bool], str]] = {
    "component": (lambda v: isinstance(v, str), "a type name"),
    "rows": (_dim, "a size"), "cols": (_dim, "a size"),
    "use": (_name_or_dim, "a use name or number"), "scope": (_name_or_dim, "a scope name or number"),
}
_MULADD: dict[str, tuple[Callable[[Any], bool], str]] = {
    "M": (_dim, "a size"), "N": (_dim, "a size"), "K": (_dim, "a size"),
    "A": (lambda v: isinstance(v, str), "a type name"), "B": (lambda v: isinstance(v, str), "a type name"),
    "C": (lambda v: isinstance(v, str), "a type name"), "Result": (lambda v: isinstance(v, str), "a type name"),
    "scope": (_name_or_dim, "a scope name or number"), "saturating": (lambda v: isinstance(v, (bool, int)), "a bool"),
}
_SPEC: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (_int, "an int"), "name": (lambda v: isinstance(v, str), "a name"),
    "type": (lambda v: isinstance(v, str), "a type name"), "default": (_number, "a number"),
}
_ARRAY: dict[str, tuple[Callable[[Any], bool], str]] = {
    "bytes": (_dim, "a size"), "name": (lambda v: isinstance(v, str), "a name"),
}


def _entries(r: Mapping[str, Any], key: str, fields: dict[str, tuple[Callable[[Any], bool], str]]) -> str | None:
    items = r.get(key, [])
    if not isinstance(items, list):
        return f"'{key}' is {type(items).__name__}, not a list"
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            return f"'{key}[{i}]' is {type(item).__name__}, not a mapping"
        for name, (ok, what) in fields.items():
            if name not in item:
                return f"'{key}[{i}]' has no '{name}'"
            if not ok(item[name]):
                return f"'{key}[{i}].{name}' is {item[name]!r}, not {what}"
        if not _loc(item.get("loc")):
            return f"'{key}[{i}].loc' is {item['loc']!r}, not 'file:line:col'"
    return None


def problem(r: Mapping[str, Any]) -> str | None:
    """What in reflection ``r`` (a mapping with ``entry_point`` and ``workgroup_size``) is not of the type
    the device checks read, or None."""
    wg = r["workgroup_size"]
    if not isinstance(wg, list) or not 1 <= len(wg) <= 3 or not all(_int(n) for n in wg):
        return f"'workgroup_size' is {wg!r}, not a list of 1 to 3 ints"
    ids = r.get("workgroup_size_spec_ids")
    if ids is not None and (not isinstance(ids, list) or len(ids) != len(wg) or
                            not all(i is None or _int(i) for i in ids)):
        return f"'workgroup_size_spec_ids' is {ids!r}, not a list of {len(wg)} ints or nulls"
    size = r.get("subgroup_size")
    if size is not None and not _int(size):
        return f"'subgroup_size' is {size!r}, not an int or null"
    for key in ("subgroup_size_loc", "workgroup_size_loc"):
        if not _loc(r.get(key)):
            return f"'{key}' is {r[key]!r}, not 'file:line:col'"
    found = _entries(r, "spec_constants", _SPEC) or _entries(r, "cooperative_matrices", _MATRIX) or \
        _entries(r, "muladds", _MULADD)
    if found:
        return found
    shared = r.get("shared_memory")
    if shared is None:
        return None
    if not isinstance(shared, Mapping) or not _dim(shared.get("bytes", 0)):
        return f"'shared_memory' is {shared!r}, not a mapping with 'bytes' (a size) and 'arrays'"
    return _entries({"shared_memory.arrays": shared.get("arrays", [])}, "shared_memory.arrays", _ARRAY)
