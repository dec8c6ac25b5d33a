"""Atomic memory ops on buffer and shared-array elements."""

from __future__ import annotations

from .. import types as T
from ..attrs import Scope, Semantics
from ..core import Op
from .base import define, fail, pointer, result_is

RMW = ("add", "sub", "min", "max", "and", "or", "xor", "exchange")


def _target(op: Op) -> T.Type:
    p = pointer(op, 0)
    if not isinstance(p.pointee, T.ScalarType) or p.pointee.width not in (32, 64):
        fail(op, f"needs a pointer to a 32- or 64-bit scalar, got {p}")
    for v in op.operands[1:]:
        if v.type != p.pointee:
            fail(op, f"value must be {p.pointee}, got {v.type}")
    return p.pointee


def _rmw(op: Op) -> None:
    result_is(op, _target(op))
    if op.attrs["op"] not in RMW:
        fail(op, f"unknown atomic {op.attrs['op']}")


def _load(op: Op) -> None:
    result_is(op, _target(op))


def _store(op: Op) -> None:
    _target(op)


_ATTRS = {"scope": (Scope, True), "semantics": (Semantics, True)}
define("atomic_rmw", 2, attrs={"op": (str, True), **_ATTRS}, verify=_rmw, pure=False, writes=True, atomic=True,
       doc="(pointer, value): atomically apply ``op``; the old value")
define("atomic_cmpxchg", 3, attrs=_ATTRS, verify=_load, pure=False, writes=True, atomic=True,
       doc="(pointer, value, comparator): store value if the old value equals comparator; the old value")
define("atomic_load", 1, attrs=_ATTRS, verify=_load, pure=False, atomic=True, doc="atomic read")
define("atomic_store", 2, attrs=_ATTRS, verify=_store, pure=False, writes=True, atomic=True,
       doc="(pointer, value): atomic write")
