"""Tensor layouts and views, and tensor-addressed matrix loads and stores (SPV_NV_tensor_addressing,
SPV_NV_cooperative_matrix2).

A layout or view is a value: every setter op takes one and returns a new one
with part of the state replaced (the instructions copy state), so layouts flow
through phis like any other value.  :func:`layout_state` follows a layout back
through its setters to the parts of its state that are compile-time constants,
which is how the front end checks the rules spirv-val does not (block size on a
store, the SetStride minimum).
"""

from __future__ import annotations

from collections.abc import Callable

from ..._records import record
from .. import types as T
from ..attrs import MemoryAccess
from ..core import Const, FuncRef, Op, Value
from .base import define, fail, matrix, pointer, result_is

TENSOR_STORAGE = ("StorageBuffer", "Workgroup", "PhysicalStorageBuffer")


@record(frozen=True)
class Setter:
    """A layout/view setter: the type it works on, how many values it takes for ``dim`` dimensions,
    and what the values are (for messages)."""

    on: type[T.TensorLayoutType] | type[T.TensorViewType]
    count: Callable[[int], int]
    values: str


SETTERS: dict[str, Setter] = {
    "tensor_layout_dimension": Setter(T.TensorLayoutType, lambda d: d, "one dimension per tensor dimension"),
    "tensor_layout_stride": Setter(T.TensorLayoutType, lambda d: d, "one stride per tensor dimension"),
    "tensor_layout_block_size": Setter(T.TensorLayoutType, lambda d: d, "one block size per tensor dimension"),
    "tensor_layout_slice": Setter(T.TensorLayoutType, lambda d: 2 * d,
                                  "an (offset, span) pair per tensor dimension"),
    "tensor_layout_clamp_value": Setter(T.TensorLayoutType, lambda d: 1, "one 32-bit value"),
    "tensor_view_dimension": Setter(T.TensorViewType, lambda d: d, "one dimension per view dimension"),
    "tensor_view_stride": Setter(T.TensorViewType, lambda d: d, "one stride per view dimension"),
    "tensor_view_clip": Setter(T.TensorViewType, lambda d: 4, "row offset, row span, column offset, column span"),
}


def is_int32(t: T.Type) -> bool:
    return isinstance(t, T.ScalarType) and t.kind == "int" and t.width == 32


def _create(op: Op) -> None:
    if not isinstance(op.type, (T.TensorLayoutType, T.TensorViewType)):
        fail(op, f"creates a tensor layout or view, result is {op.type}")
    if not 1 <= op.type.dim <= 5:
        fail(op, f"tensors have 1 to 5 dimensions, got {op.type.dim}")


def _set(op: Op) -> None:
    s = SETTERS[op.kind]
    base = op.operands[0].type
    if not isinstance(base, s.on):
        fail(op, f"operand 0 must be a {s.on.__name__}, got {base}")
    result_is(op, base)
    want = s.count(base.dim)
    if len(op.operands) - 1 != want:
        fail(op, f"takes {want} values for {base}, got {len(op.operands) - 1}")
    for i, v in enumerate(op.operands[1:], 1):
        if not is_int32(v.type):
            fail(op, f"operand {i} must be a 32-bit integer, got {v.type}")


def _addressing(op: Op, first: int) -> None:
    """Operands from ``first`` on: the layout, then an optional view, then (loads) an optional decoder."""
    rest = op.operands[first:]
    if not isinstance(rest[0].type, T.TensorLayoutType):
        fail(op, f"operand {first} must be a tensor layout, got {rest[0].type}")
    kinds = [type(v.type) for v in rest[1:]]
    if kinds not in ([], [T.TensorViewType], [T.FunctionType], [T.TensorViewType, T.FunctionType]):
        fail(op, f"after the layout come an optional view and an optional decode function, got {kinds}")
    if any(isinstance(v.type, T.FunctionType) and not isinstance(v, FuncRef) for v in rest[1:]):
        fail(op, "the decode function must be a function reference")


def _memory(op: Op) -> None:
    p = pointer(op, 0)
    if p.storage not in TENSOR_STORAGE:
        fail(op, f"cannot address a matrix in {p.storage} memory")


def _load(op: Op) -> None:
    _memory(op)
    if not isinstance(op.type, T.CoopMatType):
        fail(op, f"loads a cooperative matrix, result is {op.type}")
    if op.operands[1].type != op.type:
        fail(op, f"the fill matrix is {op.operands[1].type}, the result {op.type}")
    _addressing(op, 2)


def _store(op: Op) -> None:
    _memory(op)
    matrix(op, 1)
    _addressing(op, 2)
    if isinstance(op.operands[-1], FuncRef):
        fail(op, "a store takes no decode function")


def decode_ref(op: Op) -> FuncRef | None:
    """The decode function of a tensor load (None without one)."""
    last = op.operands[-1]
    return last if isinstance(last, FuncRef) else None


def view_of(op: Op) -> Value | None:
    """The tensor view of a tensor load/store (None without one)."""
    return next((v for v in op.operands[3:] if isinstance(v.type, T.TensorViewType)), None)


define("tensor_layout", 0, verify=_create,
       doc="a new tensor layout: dimensions, strides, offsets and spans 0, block size 1, clamp value 0")
define("tensor_view", 0, verify=_create,
       doc="a new tensor view: dimensions and strides 0, clip region everything")
for _kind in SETTERS:
    define(_kind, (2, None), verify=_set,
           doc=f"(layout or view, {SETTERS[_kind].values}): a copy with that state replaced")
_MEMORY = {"memory": (MemoryAccess, False)}
define("coop_load_tensor", (3, 5), attrs=_MEMORY, verify=_load, pure=False, tangled="matrix",
       doc="(pointer, fill matrix, layout[, view][, decode function]): load a matrix through a tensor layout; "
           "elements the view clips keep the fill matrix's")
define("coop_store_tensor", (3, 4), attrs=_MEMORY, verify=_store, pure=False, tangled="matrix",
       doc="(pointer, matrix, layout[, view]): store a matrix through a tensor layout")


# -- what is known of a layout at compile time ----------------------------------------------------
@record(frozen=True)
class LayoutState:
    """The parts of a layout's state known at compile time (None: not known)."""

    block: tuple
    dims: tuple
    stride: tuple

    @classmethod
    def unknown(cls, dim: int) -> LayoutState:
        return cls((None,) * dim, (None,) * dim, (None,) * dim)


_PENDING = LayoutState((), (), ())  # a loop phi being evaluated (compared by identity): nothing on its back edge


def _known(v: Value) -> int | None:
    return v.value if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool) else None


def _packed_strides(dims: tuple, block: tuple) -> tuple:
    """SetDimension's implicit strides: stride[i] = product over j > i of ceil(dim[j] / block[j])."""
    out: list[int | None] = []
    acc: int | None = 1
    for d, b in zip(reversed(dims), reversed(block)):
        out.append(acc)
        acc = None if acc is None or d is None or not b else acc * -(-d // b)
    return tuple(reversed(out))


def _meet(a: LayoutState, b: LayoutState) -> LayoutState:
    def pick(x: tuple, y: tuple) -> tuple:
        return tuple(p if p == q else None for p, q in zip(x, y))
    return LayoutState(pick(a.block, b.block), pick(a.dims, b.dims), pick(a.stride, b.stride))


def layout_state(v: Value, _active: frozenset = frozenset()) -> LayoutState:
    """What is known at compile time of the state of layout ``v`` (on every path reaching it)."""
    if not isinstance(v.type, T.TensorLayoutType):
        raise TypeError(f"{v} is not a tensor layout")
    dim = v.type.dim
    if not isinstance(v, Op):
        return LayoutState.unknown(dim)
    if v.kind == "phi":
        if id(v) in _active:
            return _PENDING
        states = [s for s in (layout_state(o, _active | {id(v)}) for o in v.operands) if s is not _PENDING]
        if not states:
            return LayoutState.unknown(dim)
        out = states[0]
        for s in states[1:]:
            out = _meet(out, s)
        return out
    if v.kind == "tensor_layout":
        return LayoutState((1,) * dim, (0,) * dim, (0,) * dim)
    if v.kind not in SETTERS:
        return LayoutState.unknown(dim)
    prev = layout_state(v.operands[0], _active)
    if prev is _PENDING:
        return _PENDING
    values = tuple(_known(x) for x in v.operands[1:])
    if v.kind == "tensor_layout_block_size":
        return LayoutState(values, prev.dims, prev.stride)
    if v.kind == "tensor_layout_dimension":
        return LayoutState(prev.block, values, _packed_strides(values, prev.block))
    if v.kind == "tensor_layout_stride":
        return LayoutState(prev.block, prev.dims, values)
    return prev  # slices and clamp values change neither block sizes, dimensions nor strides
