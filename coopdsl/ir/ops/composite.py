"""Composite ops: build, read and update vectors, structs, arrays and matrix elements."""

from __future__ import annotations

from .. import types as T
from ..core import Op
from .base import define, fail, integer, result_is


def element_type(t: T.Type, index: int) -> T.Type | None:
    """The type of component ``index`` of composite ``t`` (None when ``t`` has no such component)."""
    if isinstance(t, T.StructType):
        return t.members[index][1] if 0 <= index < len(t.members) else None
    if isinstance(t, T.VectorType):
        return t.elem if 0 <= index < t.count else None
    if isinstance(t, T.ArrayType):
        return t.elem if index >= 0 and (not isinstance(t.length, int) or index < t.length) else None
    if isinstance(t, T.CoopMatType):
        return t.elem if index >= 0 else None
    return None


def _extract(op: Op) -> None:
    want = element_type(op.operands[0].type, op.attrs["index"])
    if want is None:
        fail(op, f"{op.operands[0].type} has no component {op.attrs['index']}")
    result_is(op, want)


def _insert(op: Op) -> None:
    obj, comp = op.operands
    if element_type(comp.type, op.attrs["index"]) != obj.type:
        fail(op, f"cannot insert {obj.type} at {op.attrs['index']} of {comp.type}")
    result_is(op, comp.type)


def _dynamic(op: Op) -> None:
    v = op.operands[0].type
    if not isinstance(v, (T.VectorType, T.ArrayType)):
        fail(op, f"needs a vector or array, got {v}")
    integer(op, len(op.operands) - 1)
    if op.kind == "extract_dyn":
        result_is(op, v.elem)
    else:
        if op.operands[1].type != v.elem:
            fail(op, f"component must be {v.elem}, got {op.operands[1].type}")
        result_is(op, v)


def _construct(op: Op) -> None:
    t = op.type
    got = [v.type for v in op.operands]
    if isinstance(t, T.VectorType):
        if got != [t.elem] * t.count:
            fail(op, f"{t} needs {t.count} components of {t.elem}, got {', '.join(map(str, got))}")
    elif isinstance(t, T.StructType):
        if got != [m for _, m in t.members]:
            fail(op, f"{t} members do not match {', '.join(map(str, got))}")
    elif isinstance(t, T.ArrayType):
        if not isinstance(t.length, int) or got != [t.elem] * t.length:
            fail(op, f"{t} needs {t.length} elements of {t.elem}")
    else:
        fail(op, f"cannot construct {t}")


def _shuffle(op: Op) -> None:
    a, b = (v.type for v in op.operands)
    comps = op.attrs["components"]
    if not (isinstance(a, T.VectorType) and a == b) or any(not 0 <= c < 2 * a.count for c in comps):
        fail(op, f"shuffles two vectors of one type, got {a}, {b} and {comps}")
    result_is(op, T.VectorType(a.elem, len(comps)))


def _splat(op: Op) -> None:
    if not isinstance(op.type, (T.VectorType, T.CoopMatType)) or op.operands[0].type != op.type.elem:
        fail(op, f"splats a component into a vector or matrix, got {op.operands[0].type} -> {op.type}")


define("extract", 1, attrs={"index": (int, True)}, verify=_extract, element_access=True,
       doc="component ``index`` of a composite (struct member, vector/array/matrix element)")
define("insert", 2, attrs={"index": (int, True)}, verify=_insert, element_access=True,
       doc="(object, composite): the composite with component ``index`` replaced")
define("extract_dyn", 2, verify=_dynamic, element_access=True,
       doc="(vector or array, index): the component at a runtime index")
define("insert_dyn", 3, verify=_dynamic, element_access=True,
       doc="(vector or array, value, index): the composite with the component at a runtime index replaced")
define("construct", (1, None), verify=_construct, doc="a vector, struct or array from its components")
define("shuffle", 2, attrs={"components": (tuple, True)}, verify=_shuffle,
       doc="a vector of components picked from two vectors (swizzles)")
define("splat", 1, verify=_splat, tangled="matrix",
       doc="a vector or cooperative matrix with every component equal to the operand")
