"""Tensor layouts and views, and tensor-addressed matrix loads and stores (SPV_NV_tensor_addressing,
SPV_NV_cooperative_matrix2).

A layout or view is a value: every setter op takes one and returns a new one
with part of the state replaced (the instructions copy state), so layouts flow
through phis like any other value.  :func:`layout_state` follows a layout back
through its setters to the parts of its state that are compile-time constants,
which is how the rules spirv-val does not check (block size on a store, the
SetStride minimum) are checked.  The rules are pure functions returning ``None``
or a :class:`~coopdsl.ir.ops.base.Problem`: the builtins of
``coopdsl.lang.tensor`` apply them at the user's line, the verifier to every op.
Every op needs SPIR-V 1.6 (:data:`NV2_TENSORS`): each declares it, and the IR
builder checks it at the user's line.
"""

from __future__ import annotations

from collections.abc import Callable

from ..._records import record
from .. import types as T
from ..attrs import MemoryAccess
from ..core import Const, FuncRef, Op, Value
from ..layout import array_stride, size_of
from ..targets import Availability
from ..vocab import StorageClass
from .base import Problem, check, define, fail, matrix, pointer, result_is

NV2_TENSORS = Availability((1, 6), "SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing")
TENSOR_STORAGE = (StorageClass.StorageBuffer, StorageClass.Workgroup, StorageClass.PhysicalStorageBuffer)


@record(frozen=True)
class Setter:
    """A layout/view setter: the type it works on, how many values it takes for ``dim`` dimensions,
    and what the values are (for messages)."""

    on: type[T.TensorLayoutType] | type[T.TensorViewType]
    count: Callable[[int], int]
    values: str
    method: str  # the method of layouts or views kernels call


SETTERS: dict[str, Setter] = {
    "tensor_layout_dimension": Setter(T.TensorLayoutType, lambda d: d, "one dimension per tensor dimension",
                                      "dimension"),
    "tensor_layout_stride": Setter(T.TensorLayoutType, lambda d: d, "one stride per tensor dimension", "stride"),
    "tensor_layout_block_size": Setter(T.TensorLayoutType, lambda d: d, "one block size per tensor dimension",
                                       "block_size"),
    "tensor_layout_slice": Setter(T.TensorLayoutType, lambda d: 2 * d,
                                  "an (offset, span) pair per tensor dimension", "slice"),
    "tensor_layout_clamp_value": Setter(T.TensorLayoutType, lambda d: 1, "one 32-bit value", "clamp_value"),
    "tensor_view_dimension": Setter(T.TensorViewType, lambda d: d, "one dimension per view dimension", "dimension"),
    "tensor_view_stride": Setter(T.TensorViewType, lambda d: d, "one stride per view dimension", "stride"),
    "tensor_view_clip": Setter(T.TensorViewType, lambda d: 4, "row offset, row span, column offset, column span",
                               "clip"),
}


def is_int32(t: T.Type) -> bool:
    return isinstance(t, T.ScalarType) and t.is_int and t.width == 32


# -- the rules ---------------------------------------------------------------------------------------
def setter_value_problem(kind: str, i: int, known: object) -> Problem | None:
    """Value ``i`` of setter ``kind`` when it is a compile-time int: negative only as a slice's offset, and
    no block size of 0 (the clamp value is a bit pattern: anything goes)."""
    if kind == "tensor_layout_clamp_value" or isinstance(known, bool) or not isinstance(known, int):
        return None
    offset = kind == "tensor_layout_slice" and i % 2 == 0
    if known < 0 and not offset:
        return Problem("argument", f"{SETTERS[kind].method}'s value {i} must not be negative, got {known} (only "
                                   f"slice offsets may be)")
    if known == 0 and kind == "tensor_layout_block_size":
        return Problem("argument", f"block sizes are at least 1, got 0 for dimension {i}")
    return None


def _set_earlier(layout: Value, kind: str) -> bool:
    """Whether the chain of setters that made ``layout`` (back to its creation, its last dimension() or a
    merge of control flow) contains a ``kind`` op."""
    v = layout
    while isinstance(v, Op) and v.kind.startswith("tensor_layout_") and v.kind != "tensor_layout_dimension":
        if v.kind == kind:
            return True
        v = v.operands[0]
    return False


def setter_problem(kind: str, base: Value, values: list[Value]) -> Problem | None:
    """Setter ``kind`` applied to layout or view ``base``: the SetStride minimum (where it is known at compile
    time), no dimension() after stride() (it resets the strides), no dimensions or strides on a view that takes
    the layout's span."""
    if kind == "tensor_layout_stride":
        p = stride_problem(base, values)
        if p is not None:
            return p
    if kind == "tensor_layout_dimension" and _set_earlier(base, "tensor_layout_stride"):
        return Problem("argument", "dimension() resets the strides that stride() set earlier on this layout "
                                   "(OpTensorLayoutSetDimensionNV makes them those of a packed tensor): call stride() "
                                   "after dimension()")
    t = base.type
    if kind in ("tensor_view_dimension", "tensor_view_stride") and isinstance(t, T.TensorViewType) \
            and not t.has_dims:
        return Problem("argument", f"{SETTERS[kind].method}() on a view made with has_dims=False would be ignored "
                                   f"(such a view takes the layout's span as its dimensions): create it with "
                                   f"cd.tensor_view({t.dim}, has_dims=True, ...)")
    return None


def stride_problem(layout: Value, strides: list[Value]) -> Problem | None:
    """SetStride's rule (spirv-val does not check it), where it is known at compile time:
    stride[i] >= stride[i+1] * ceil(dimension[i+1] / block_size[i+1])."""
    state = layout_state(layout)
    known = [s.value if isinstance(s, Const) else None for s in strides]
    for i in range(len(known) - 1):
        outer, inner, d, b = known[i], known[i + 1], state.dims[i + 1], state.block[i + 1]
        if outer is None or inner is None or d is None or b is None or b == 0:
            continue
        least = inner * -(-d // b)
        if outer < least:
            return Problem("argument", f"stride {i} of this layout must be at least stride {i + 1} x ceil(dimension "
                                       f"{i + 1} / block size {i + 1}) = {inner} x ceil({d} / {b}) = {least}, got "
                                       f"{outer} (SPV_NV_tensor_addressing); a transposed read takes a view with "
                                       f"perm=(1, 0)")
    return None


def view_problem(layout: T.TensorLayoutType, view: T.TensorViewType) -> Problem | None:
    """A view without its own dimensions reads the layout's span for each of its dimensions
    (SPV_NV_cooperative_matrix2's addressing), so it needs as many."""
    if not view.has_dims and view.dim != layout.dim:
        return Problem("shape", f"a view without its own dimensions (has_dims=False) takes the layout's span as its "
                                f"dimensions, so it needs as many: the view has {view.dim}, the layout {layout.dim} "
                                f"(give the view has_dims=True and .dimension(...), or "
                                f"cd.tensor_view({layout.dim}, ...))")
    return None


def view_dims_problem(view: Value) -> Problem | None:
    """A view created with ``has_dims=True`` addresses the tensor by its own dimensions and strides, which start
    at 0 (SPV_NV_cooperative_matrix2): one that reaches a load or store with no ``.dimension(...)`` set on its
    way from ``cd.tensor_view`` (through ``.stride``/``.clip`` copies only) addresses nothing meaningful; a view
    that comes through control flow is not followed."""
    v = view
    while isinstance(v, Op) and v.kind in ("tensor_view_stride", "tensor_view_clip"):
        v = v.operands[0]
    if isinstance(v, Op) and v.kind == "tensor_view" and isinstance(v.type, T.TensorViewType) and v.type.has_dims:
        return Problem("argument", f"the view was created with has_dims=True but its dimensions are never set: "
                                   f"give it .dimension(...) ({v.type.dim} values), or create it without has_dims "
                                   f"to use the layout's span")
    return None


def memory_problem(elem: T.Type, block: T.Type | None) -> Problem | None:
    """The elements of the memory a tensor load or store addresses; ``block`` is what a decode function reads
    one of (the pointee of its first parameter), None without one.  Without a decode function: numeric
    scalars or vectors.  With one: the function reads block structs, which SPIR-V finds by stepping from the
    instruction's Pointer by the block's size, whatever the memory's element type (SPV_NV_cooperative_matrix2,
    "the size of the pointee type"); the memory's elements may be another type (ggml's decode functions read
    ``block_q4_0_packed16`` from a buffer of ``block_q4_0``, a ``vec4`` from one of ``float``, raw bytes as any
    block) as long as blocks and elements tile each other: one size divides the other, or blocks would start
    inside elements (the load's offset counts elements)."""
    if block is None:
        if not isinstance(elem, (T.ScalarType, T.VectorType)) or T.scalar_of(elem).is_bool:
            return Problem("type", f"the memory must hold numeric scalars or vectors, not {elem} (memory of "
                                   f"structs needs a decode function)")
        return None
    if not isinstance(block, T.StructType):
        return Problem("type", f"a decode function reads one block at a time, so the memory must hold block "
                               f"structs (Buffer[Block] or Ptr[Block] of a @cd.struct), not {block}, or the "
                               f"function's first parameter must name the block struct it reads "
                               f"(def fn(block: Block, block_coords, coord_in_block))")
    if block == elem:
        return None
    if isinstance(elem, T.ScalarType) and elem.is_bool:
        return Problem("type", f"the memory holds {elem}; a decode function's blocks lie in memory of numbers "
                               f"or structs")
    bs, es = size_of(block), array_stride(elem)
    if bs % es and es % bs:
        return Problem("shape", f"the decode function reads {block} blocks of {bs} bytes from memory of {elem} "
                                f"({es} bytes each): SPIR-V finds block k {bs} x k bytes after the element the "
                                f"offset names, so blocks would start inside elements; one size must divide the "
                                f"other (declare the memory as {block}, or as bytes: u8)")
    return None


def store_layout_problem(layout: Value) -> Problem | None:
    """A store's layout has block size 1 (larger blocks would race)."""
    blocks = [b for b in layout_state(layout).block if b is not None and b > 1]
    if blocks:
        return Problem("argument", f"this layout has block size {blocks[0]}; stores take layouts with block size 1 "
                                   f"(larger blocks would race, SPV_NV_cooperative_matrix2)")
    return None


# -- the ops -----------------------------------------------------------------------------------------
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
        if isinstance(v, Const):
            check(op, setter_value_problem(op.kind, i - 1, v.value))
    check(op, setter_problem(op.kind, op.operands[0], op.operands[1:]))


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
    if len(rest) > 1 and isinstance(rest[1].type, T.TensorViewType):
        check(op, view_problem(rest[0].type, rest[1].type))


def _memory(op: Op, block: T.Type | None) -> None:
    p = pointer(op, 0)
    if p.storage not in TENSOR_STORAGE:
        fail(op, f"cannot address a matrix in {p.storage} memory")
    check(op, memory_problem(p.pointee, block))
    known = _constant_offset(op.operands[0])
    if known is not None:
        check(op, offset_problem(*known))


TENSOR_ALIGNMENT = 16  # bytes: the Pointer of a tensor load or store (SPV_NV_cooperative_matrix2)


def offset_problem(index: object, elem: T.Type) -> Problem | None:
    """A constant element offset of a tensor load or store: its Pointer must be 16-byte aligned
    (SPV_NV_cooperative_matrix2); a runtime offset is the interpreter's to check."""
    if isinstance(index, int) and not isinstance(index, bool) and index * size_of(elem) % TENSOR_ALIGNMENT:
        return Problem("argument", f"element {index} of {elem} lies {index * size_of(elem)} bytes from the start; a "
                                   f"tensor load or store must start {TENSOR_ALIGNMENT}-byte aligned (move the region "
                                   f"with the layout's slice instead)")
    return None


def _constant_offset(ptr: Value) -> tuple[int, T.Type] | None:
    """(the constant element index, the element type) when ``ptr`` is an access chain ending in a constant."""
    if isinstance(ptr, Op) and ptr.kind == "access" and isinstance(ptr.operands[-1], Const) \
            and isinstance(ptr.type, T.PointerType):
        value = ptr.operands[-1].value
        return (value, ptr.type.pointee) if isinstance(value, int) else None
    return None


def decode_signature_problem(fn: T.FunctionType, dim: int, component: T.Type) -> Problem | None:
    """A decode function's signature (SPV_NV_cooperative_matrix2): a device pointer to one block, then the
    block's coordinates and the element's coordinates in the block, two arrays of ``dim`` u32 (the layout's
    dimensions), returning the matrix's component type."""
    want = T.ArrayType(T.u32, dim)
    first = fn.params[0] if fn.params else None
    if len(fn.params) != 3 or not (isinstance(first, T.PointerType) and first.storage.is_physical) \
            or fn.params[1] != want or fn.params[2] != want:
        return Problem("type", f"a decode function takes (a device pointer to one block, {want} block_coords, {want} "
                               f"coord_in_block), got {fn}")
    if fn.ret != component:
        return Problem("type", f"a decode function returns the matrix's component type {component}, got {fn.ret}")
    return None


def decode_block(ref: FuncRef) -> T.Type:
    """What the decode function ``ref`` reads one of: the pointee of its first parameter (the block pointer
    is checked as a parameter by SPIR-V validation; a function without one reads nothing of a type)."""
    first = ref.func.params[0].type if ref.func.params else None
    return first.pointee if isinstance(first, T.PointerType) else T.void


def _load(op: Op) -> None:
    ref = decode_ref(op)
    _memory(op, None if ref is None else decode_block(ref))
    if not isinstance(op.type, T.CoopMatType):
        fail(op, f"loads a cooperative matrix, result is {op.type}")
    if op.operands[1].type != op.type:
        fail(op, f"the fill matrix is {op.operands[1].type}, the result {op.type}")
    _addressing(op, 2)
    layout = op.operands[2].type
    if ref is not None and isinstance(layout, T.TensorLayoutType):
        check(op, decode_signature_problem(ref.type, layout.dim, op.type.elem))


def _store(op: Op) -> None:
    _memory(op, None)
    matrix(op, 1)
    _addressing(op, 2)
    if isinstance(op.operands[-1], FuncRef):
        fail(op, "a store takes no decode function")
    check(op, store_layout_problem(op.operands[2]))


def decode_ref(op: Op) -> FuncRef | None:
    """The decode function of a tensor load (None without one)."""
    last = op.operands[-1]
    return last if isinstance(last, FuncRef) else None


def view_of(op: Op) -> Value | None:
    """The tensor view of a tensor load/store (None without one)."""
    return next((v for v in op.operands[3:] if isinstance(v.type, T.TensorViewType)), None)


define("tensor_layout", 0, verify=_create, availability=NV2_TENSORS.needed_by("a tensor layout"),
       doc="a new tensor layout: dimensions, strides, offsets and spans 0, block size 1, clamp value 0")
define("tensor_view", 0, verify=_create, availability=NV2_TENSORS.needed_by("a tensor view"),
       doc="a new tensor view: dimensions and strides 0, clip region everything")
for _kind in SETTERS:
    define(_kind, (2, None), verify=_set,
           availability=NV2_TENSORS.needed_by(f"{'layout' if SETTERS[_kind].on is T.TensorLayoutType else 'view'}"
                                              f".{SETTERS[_kind].method}"),
           doc=f"(layout or view, {SETTERS[_kind].values}): a copy with that state replaced")
_MEMORY = {"memory": (MemoryAccess, False)}
define("coop_load_tensor", (3, 5), attrs=_MEMORY, verify=_load, pure=False, tangled="matrix",
       availability=NV2_TENSORS.needed_by("load_tensor"),
       doc="(pointer, fill matrix, layout[, view][, decode function]): load a matrix through a tensor layout; "
           "elements the view clips keep the fill matrix's")
define("coop_store_tensor", (3, 4), attrs=_MEMORY, verify=_store, pure=False, tangled="matrix", writes=True,
       availability=NV2_TENSORS.needed_by("store_tensor"),
       doc="(pointer, matrix, layout[, view]): store a matrix through a tensor layout")


# -- what is known of a layout at compile time ----------------------------------------------------
@record(frozen=True)
class LayoutState:
    """The parts of a layout's state known at compile time (None: not known)."""

    block: tuple[int | None, ...]
    dims: tuple[int | None, ...]
    stride: tuple[int | None, ...]

    @classmethod
    def unknown(cls, dim: int) -> LayoutState:
        return cls((None,) * dim, (None,) * dim, (None,) * dim)


_PENDING = LayoutState((), (), ())  # a loop phi being evaluated (compared by identity): nothing on its back edge


def _known(v: Value) -> int | None:
    return v.value if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool) else None


def _packed_strides(dims: tuple[int | None, ...], block: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """SetDimension's implicit strides: stride[i] = product over j > i of ceil(dim[j] / block[j])."""
    out: list[int | None] = []
    acc: int | None = 1
    for d, b in zip(reversed(dims), reversed(block)):
        out.append(acc)
        acc = None if acc is None or d is None or not b else acc * -(-d // b)
    return tuple(reversed(out))


def _meet(a: LayoutState, b: LayoutState) -> LayoutState:
    def pick(x: tuple[int | None, ...], y: tuple[int | None, ...]) -> tuple[int | None, ...]:
        return tuple(p if p == q else None for p, q in zip(x, y))
    return LayoutState(pick(a.block, b.block), pick(a.dims, b.dims), pick(a.stride, b.stride))


def layout_state(v: Value, _active: frozenset[int] = frozenset()) -> LayoutState:
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
