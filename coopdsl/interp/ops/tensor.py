"""Tensor layouts and views, and tensor-addressed matrix loads and stores (SPV_NV_tensor_addressing,
SPV_NV_cooperative_matrix2), as the specs' pseudo-code says.

A layout or view is a :class:`TensorState`: its state fields as per-invocation
int64 arrays.  A load or store takes them per scope instance (they must be
dynamically uniform there), maps every (row, col) of the matrix to a tensor
element (clip, view permutation, span coordinates, offsets, clamp mode,
blocks, strides) and reads or writes it, or, with a decode function, runs that
function once per element on a machine of its own (one slot per element,
each run by the invocation holding the element: see
:mod:`coopdsl.interp.callbacks`).  Two readings of the spec: RepeatMirrored
compares against the layout's dimension (the pseudo-code's ``dim`` is the
loop index); an access outside the tensor with ClampUndefined, or through a
span of 0, is reported as the undefined behaviour it is.  The spec's one
alignment rule is on the Pointer (a multiple of 16 bytes; the region a
layout's slice selects need not be aligned): a Pointer not even aligned to
what it reads is an error, one short of 16 bytes only a
:class:`TensorPointerWarning` (NVIDIA's implementation accepts it, and ggml's
flash attention starts its mask loads at ``row * KV`` f16 elements).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...ir import types as T
from ...ir.core import Function, Op
from ...ir.layout import access_alignment
from ...ir.ops.tensor import decode_ref, view_of
from ..callbacks import CallbackLanes, CallbackMachine
from ..memory import DEVICE_BASE, Ptr, check_alignment, check_range, first_unwritten, read_scalars, write_scalars
from ..races import WORKGROUP, Tracker
from ..values import PerLane, decode, encode, storage_dtype, unsigned_of, value_dtype
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine

LAYOUT_FIELDS = ("block", "dims", "stride", "offset", "span", "clamp")
VIEW_FIELDS = ("dims", "stride", "clip")
CLIP_ALL = (0, 0xFFFFFFFF, 0, 0xFFFFFFFF)
UNDEFINED, CONSTANT, CLAMP_TO_EDGE, REPEAT, REPEAT_MIRRORED = range(5)
POINTER_ALIGNMENT = 16  # bytes: "The Pointer must be a multiple of 16B" (SPV_NV_cooperative_matrix2)
_WARNED: set[tuple[str, int, int]] = set()  # the lines already warned about a Pointer short of 16 bytes


class TensorPointerWarning(UserWarning):
    """A tensor load or store whose Pointer is aligned to what it reads but not to the 16 bytes the spec requires
    (what ggml's flash-attention mask loads do, and NVIDIA's implementation accepts)."""


@dataclass
class TensorState(PerLane):
    """A layout's or view's state: ``fields`` maps each name to an (N, k) int64 array (one row per slot)."""

    fields: dict[str, np.ndarray]

    def replaced(self, **changes: np.ndarray) -> TensorState:
        return TensorState({**self.fields, **changes})

    def merged(self, mask: np.ndarray, old: TensorState) -> TensorState:
        return TensorState({k: np.where(mask[:, None], v, old.fields[k]) for k, v in self.fields.items()})

    def taken(self, idx: np.ndarray) -> TensorState:
        return TensorState({k: v[idx] for k, v in self.fields.items()})

    def scattered(self, n: int, idx: np.ndarray) -> TensorState:
        out = {}
        for k, v in self.fields.items():
            out[k] = np.zeros((n,) + v.shape[1:], np.int64)
            out[k][idx] = v
        return TensorState(out)


def _per_slot(m: Machine, values: list[Any], signed: bool = False) -> np.ndarray:
    """Setter operands as an (N, len(values)) int64 array (u32 values, or i32 ones when ``signed``)."""
    cols = []
    for v in values:
        a = np.broadcast_to(np.asarray(v), (m.lanes.N,))
        a = a.astype(np.uint32, copy=False) if not signed else a.astype(np.uint32, copy=False).view(np.int32)
        cols.append(a.astype(np.int64))
    return np.stack(cols, axis=1)


def _packed(dims: np.ndarray, block: np.ndarray | None = None) -> np.ndarray:
    """Strides of a packed tensor: stride[i] = product over j > i of ceil(dims[j] / block[j])."""
    extent = dims if block is None else -(-dims // np.maximum(block, 1))
    out = np.ones_like(dims)
    for i in range(dims.shape[1] - 2, -1, -1):
        out[:, i] = out[:, i + 1] * extent[:, i + 1]
    return out


@semantics("tensor_layout")
def _create_layout(m: Machine, op: Op, args: list[Any]) -> Any:
    assert isinstance(op.type, T.TensorLayoutType)
    n, d = m.lanes.N, op.type.dim
    zeros = np.zeros((n, d), np.int64)
    return TensorState({"block": np.ones((n, d), np.int64), "dims": zeros, "stride": zeros, "offset": zeros,
                        "span": zeros, "clamp": np.zeros((n, 1), np.int64)})


@semantics("tensor_view")
def _create_view(m: Machine, op: Op, args: list[Any]) -> Any:
    assert isinstance(op.type, T.TensorViewType)
    n, d = m.lanes.N, op.type.dim
    zeros = np.zeros((n, d), np.int64)
    return TensorState({"dims": zeros, "stride": zeros, "clip": np.tile(np.array(CLIP_ALL, np.int64), (n, 1))})


@semantics("tensor_layout_dimension")
def _dimension(m: Machine, op: Op, args: list[Any]) -> Any:
    s, dims = args[0], _per_slot(m, args[1:])
    return s.replaced(dims=dims, span=dims, offset=np.zeros_like(dims), stride=_packed(dims, s.fields["block"]))


@semantics("tensor_layout_stride", "tensor_view_stride")
def _stride(m: Machine, op: Op, args: list[Any]) -> Any:
    return args[0].replaced(stride=_per_slot(m, args[1:]))


@semantics("tensor_layout_block_size")
def _block_size(m: Machine, op: Op, args: list[Any]) -> Any:
    return args[0].replaced(block=_per_slot(m, args[1:]))


@semantics("tensor_layout_slice")
def _slice(m: Machine, op: Op, args: list[Any]) -> Any:
    s = args[0]
    offsets, spans = _per_slot(m, args[1::2], signed=True), _per_slot(m, args[2::2])
    return s.replaced(offset=s.fields["offset"] + offsets, span=spans)


@semantics("tensor_layout_clamp_value")
def _clamp_value(m: Machine, op: Op, args: list[Any]) -> Any:
    return args[0].replaced(clamp=_per_slot(m, args[1:]))


@semantics("tensor_view_dimension")
def _view_dimension(m: Machine, op: Op, args: list[Any]) -> Any:
    dims = _per_slot(m, args[1:])
    return args[0].replaced(dims=dims, stride=_packed(dims))


@semantics("tensor_view_clip")
def _clip(m: Machine, op: Op, args: list[Any]) -> Any:
    return args[0].replaced(clip=_per_slot(m, args[1:]))


# -- addressing -------------------------------------------------------------------------------------------
class _Tensor:
    """Where each element of the matrices of the active scope instances lies: the tensor element index (or
    a load's clamp value, or nothing: clipped / dropped), per the addressing pseudo-code."""

    def __init__(self, m: Machine, op: Op, t: T.CoopMatType, pointer: Ptr, store: bool):
        lay = m.layout
        self.m, self.op, self.t = m, op, t
        self.scope = lay.scope(t)
        rows, cols = lay.shape(t)
        self.groups = m.lanes.groups(self.scope)
        self.active = np.nonzero(m.lanes.group_mask(self.scope, m.mask))[0]
        size = m.lanes.group_size(self.scope)
        self.slots = self.active * size + np.argmax(m.mask.reshape(self.groups, size)[self.active], axis=1)
        layout_op, view_op = op.operands[2], view_of(op)
        L = self._uniform(m.value(layout_op), "the tensor layout")
        r = np.arange(rows)[None, :, None]
        c = np.arange(cols)[None, None, :]
        shape = (len(self.active), rows, cols)
        self.inside = np.ones(shape, bool)  # not clipped by the view
        if view_op is None:
            index = np.broadcast_to(r * cols + c, shape).astype(np.int64)
        else:
            assert isinstance(view_op.type, T.TensorViewType)  # view_of() finds the operand of this type
            index = self._view_index(m.value(view_op), view_op.type, L, r, c, cols, shape)
        assert isinstance(layout_op.type, T.TensorLayoutType)
        self.index, outside = self._layout_index(L, layout_op.type, index, store, shape)
        self.clamped = self.inside & outside  # loads read the clamp value there
        self.accessed = self.inside & ~outside  # elements read from or written to memory
        self.clamp_bits = L["clamp"][:, 0][:, None, None]
        self.pointer = pointer.taken(self.slots)
        self.base = np.broadcast_to(self.pointer.addr, (len(self.active),))[:, None, None]
        mem = op.attrs.get("memory")
        what = "tensor " + ("store" if store else "load")
        check_alignment(self.pointer, self.pointer.addr, None if mem is None else mem.aligned, what, self.slots)
        self._check_pointer(what, t)

    def _check_pointer(self, what: str, t: T.CoopMatType) -> None:
        """The spec's rule on the Pointer: a multiple of 16 bytes (a device address; in shared memory, its offset
        from the start of the array).  One not aligned to what it reads (a component; a decode function's
        block) is an error; one aligned to that but not to 16 bytes is a warning (:class:`TensorPointerWarning`):
        NVIDIA's implementation accepts it and ggml's flash attention relies on that for its mask loads."""
        p = self.pointer
        addr = np.broadcast_to(p.addr, self.slots.shape).astype(np.int64)
        device = p.region.kind == "device"
        where = addr + DEVICE_BASE if device or p.lo is None else addr - np.broadcast_to(p.lo, self.slots.shape)
        bad = where % POINTER_ALIGNMENT != 0
        if not bad.any():
            return
        ref = decode_ref(self.op)
        block = ref.func.params[0].type if ref is not None else None
        unit = access_alignment(block.pointee) if isinstance(block, T.PointerType) else t.elem.nbytes
        unit_name = "its decode function's block" if ref is not None else f"a {t.elem} component"
        broken = where % unit != 0
        k = int(np.argmax(broken if broken.any() else bad))
        at = f"device address 0x{int(where[k]):x}" if device else f"byte {int(where[k])} of {p.label}"
        rule = (f"SPV_NV_cooperative_matrix2 requires the Pointer of a tensor load or store to be a multiple of "
                f"{POINTER_ALIGNMENT}B (the region the layout's slice selects need not be: give an aligned offset and "
                f"move the start with .slice)")
        if broken.any():
            raise self.m.error(self.op, f"{what}: its Pointer, at {at}, is not a multiple of {POINTER_ALIGNMENT} "
                                        f"bytes, nor even of the {unit} bytes of {unit_name}; {rule}",
                               int(self.slots[k]))
        loc = self.op.loc
        if (loc.file, loc.line, loc.col) not in _WARNED:
            _WARNED.add((loc.file, loc.line, loc.col))
            warnings.warn_explicit(f"{what}: its Pointer, at {at}, is not a multiple of {POINTER_ALIGNMENT} bytes; "
                                   f"{rule}. The interpreter reads from it as NVIDIA's implementation does "
                                   f"({self.m.lanes.describe(int(self.slots[k]))}; reported once per line)",
                                   TensorPointerWarning, loc.file, loc.line)

    def _uniform(self, state: TensorState, what: str) -> dict[str, np.ndarray]:
        """The state's fields per active scope instance (a located error unless uniform there)."""
        out = {}
        for name, a in state.fields.items():
            cols = [self.m.group_uniform(self.op, self.scope, a[:, k], what) for k in range(a.shape[1])]
            out[name] = np.stack([np.broadcast_to(x, (self.groups,))[self.active] for x in cols], axis=1)
        return out

    def _view_index(self, view: TensorState, vt: T.TensorViewType, L: dict[str, np.ndarray], r: np.ndarray,
                    c: np.ndarray, cols: int, shape: tuple[int, int, int]) -> np.ndarray:
        V = self._uniform(view, "the tensor view")
        # field k as (G, 1, 1)
        x: Callable[[np.ndarray, int], np.ndarray] = lambda a, k: a[:, k][:, None, None]  # noqa: E731
        r0, rn, c0, cn = (x(V["clip"], k) for k in range(4))
        self.inside = np.broadcast_to((r >= r0) & (r < r0 + rn) & (c >= c0) & (c < c0 + cn), shape)
        width = np.minimum(cols, cn)
        index = np.broadcast_to((r - r0) * width + (c - c0), shape).astype(np.int64)
        dims = V["dims"] if vt.has_dims else L["span"]
        strides = V["stride"] if vt.has_dims else _packed(L["span"])
        coord = [None] * vt.dim
        for d in range(vt.dim - 1, -1, -1):
            i = vt.perm[d]
            extent = self._nonzero(x(dims, i), "a view dimension")
            coord[i], index = index % extent, index // extent
        # an array: a view has 1 to 5 dimensions, so sum() never gives back its start, the int 0
        return cast(np.ndarray, sum(coord[d] * x(strides, d) for d in range(vt.dim)))

    def _layout_index(self, L: dict[str, np.ndarray], lt: T.TensorLayoutType, index: np.ndarray, store: bool,
                      shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        """(tensor element index, outside the tensor with a discarding clamp mode) of each matrix element."""
        mode = self.m.spec.dim(lt.clamp)
        if store and mode != UNDEFINED:
            mode = CONSTANT  # stores outside the tensor are dropped with every mode but Undefined
        x: Callable[[str, int], np.ndarray] = lambda name, k: L[name][:, k][:, None, None]  # noqa: E731
        span_coord = [None] * lt.dim
        for d in range(lt.dim - 1, -1, -1):
            extent = self._nonzero(x("span", d), "a layout span (set the dimensions or slice first)")
            span_coord[d], index = index % extent, index // extent
        outside = np.zeros(shape, bool)
        element = np.zeros(shape, np.int64)
        self.block_coord, self.coord_in_block = [], []
        for d in range(lt.dim):
            dim = x("dims", d)
            coord = span_coord[d] + x("offset", d)
            out = (coord < 0) | (coord >= dim)
            if mode == UNDEFINED and (out & self.inside).any():
                g = int(np.argmax((out & self.inside).any(axis=(1, 2))))
                raise self.m.error(self.op, f"tensor coordinate outside dimension {d} of a ClampUndefined layout "
                                            f"(undefined behavior); use another clamp mode", int(self.slots[g]))
            if mode in (CLAMP_TO_EDGE, REPEAT, REPEAT_MIRRORED) and (out & self.inside & (dim == 0)).any():
                g = int(np.argmax((out & self.inside & (dim == 0)).any(axis=(1, 2))))
                name = {CLAMP_TO_EDGE: "ClampToEdge", REPEAT: "ClampRepeat", REPEAT_MIRRORED: "ClampRepeatMirrored"}
                raise self.m.error(self.op, f"tensor dimension {d} is 0 in a {name[mode]} layout: there is no element "
                                            f"to clamp its coordinates to (undefined behavior); use ClampConstant, or "
                                            f"a dimension of at least 1", int(self.slots[g]))
            if mode == CONSTANT:
                outside |= out
            elif mode == CLAMP_TO_EDGE:
                coord = np.clip(coord, 0, np.maximum(dim - 1, 0))
            elif mode == REPEAT:
                coord = np.mod(coord, np.maximum(dim, 1))
            elif mode == REPEAT_MIRRORED:
                coord = np.mod(coord, np.maximum(2 * dim - 2, 1))
                coord = np.where(coord >= dim, 2 * dim - 2 - coord, coord)
            block = self._nonzero(x("block", d), "a block size")
            self.block_coord.append(coord // block)
            self.coord_in_block.append(coord % block)
            element = element + (coord // block) * x("stride", d)
        return element, outside

    def _nonzero(self, a: np.ndarray, what: str) -> np.ndarray:
        if np.any(a == 0):
            raise self.m.error(self.op, f"{what} is 0 in this tensor access (a division by zero in its addressing)",
                               int(self.slots[int(np.argmax(np.any(a == 0, axis=(1, 2))))]))
        return a

    def addresses(self, element_size: int) -> np.ndarray:
        """Byte offsets of the accessed elements, (M,), checked against the memory's bounds."""
        addr: np.ndarray = (self.base + self.index * element_size)[self.accessed]
        slots = np.broadcast_to(self.slots[:, None, None], self.index.shape)[self.accessed]
        if len(addr):
            what = "tensor " + ("store" if self.op.kind == "coop_store_tensor" else "load")
            check_range(self.element_pointers(), addr, addr + element_size, what, slots)
        return addr

    def element_pointers(self) -> Ptr:
        """The pointer of each accessed element's scope instance (its bounds, for checks)."""
        return self.pointer.taken(np.nonzero(self.accessed)[0])


def _constant(t: T.ScalarType, bits: np.ndarray) -> np.ndarray:
    """A clamp value's low bits as values of ``t``."""
    sd = storage_dtype(t)
    raw = (np.asarray(bits) & ((1 << (8 * sd.itemsize)) - 1)).astype(unsigned_of(sd)).view(sd)
    return decode(t, raw)


@semantics("coop_load_tensor")
def _load(m: Machine, op: Op, args: list[Any]) -> Any:
    pointer, fill = args[0], args[1]
    t = op.type
    assert isinstance(t, T.CoopMatType)
    acc = _Tensor(m, op, t, pointer, store=False)
    rows, cols = m.layout.shape(t)
    out = np.array(np.broadcast_to(fill, (acc.groups, rows, cols))[acc.active])
    out[acc.clamped] = np.broadcast_to(_constant(t.elem, acc.clamp_bits), out.shape)[acc.clamped]
    ref = decode_ref(op)
    if ref is None:
        addr = acc.addresses(t.elem.nbytes)
        region = pointer.region
        if region.tracker is not None:
            region.tracker.read(*_tracked(region.tracker, acc, addr, t.elem.nbytes))
        bad = first_unwritten(region, addr, t.elem.nbytes)
        if bad is not None:
            slot = np.broadcast_to(acc.slots[:, None, None], acc.index.shape)[acc.accessed][bad]
            raise m.error(op, f"tensor load of {pointer.label} reads an element before anything was stored "
                              f"there: the value is undefined", int(slot))
        out[acc.accessed] = read_scalars(region, addr, t.elem)
    else:
        out[acc.accessed] = _decode(m, op, ref.func, acc)
    if len(acc.active) == acc.groups:
        return out
    full = np.zeros((acc.groups, rows, cols), out.dtype)
    full[acc.active] = out
    return full


@semantics("coop_store_tensor")
def _store(m: Machine, op: Op, args: list[Any]) -> None:
    pointer, mat = args[0], args[1]
    t = op.operands[1].type
    assert isinstance(t, T.CoopMatType)
    acc = _Tensor(m, op, t, pointer, store=True)
    rows, cols = m.layout.shape(t)
    values = np.broadcast_to(mat, (acc.groups, rows, cols))[acc.active][acc.accessed]
    addr = acc.addresses(t.elem.nbytes)
    region = pointer.region
    if region.tracker is not None:
        raw = np.ascontiguousarray(encode(t.elem, values)).reshape(-1, 1).view(np.uint8)
        byte_addr, agents, slots = _tracked(region.tracker, acc, addr, t.elem.nbytes)
        region.tracker.write(byte_addr, raw.reshape(byte_addr.shape), agents, slots)
    write_scalars(region, addr, t.elem, values)


def _tracked(tracker: Tracker, acc: _Tensor, addr: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(byte addresses, agents, slots) of the accessed elements, for shared-memory race tracking."""
    slots = np.broadcast_to(acc.slots[:, None, None], acc.index.shape)[acc.accessed]
    agents = np.full(len(slots), WORKGROUP, np.int16) if acc.scope.is_workgroup else tracker.agents(slots)
    return addr[:, None] + np.arange(size), agents, slots


def _decode(m: Machine, op: Op, func: Function, acc: _Tensor) -> np.ndarray:
    """The decode function's value for each accessed element: it runs once per element, on a machine whose
    slots are those elements, each run by the invocation holding it in the loaded matrix (its built-ins,
    its workgroup's shared memory: see coopdsl.interp.callbacks)."""
    block = func.params[0].type
    t = op.type
    assert isinstance(block, T.PointerType) and isinstance(t, T.CoopMatType) and m.call_function is not None
    addr = acc.addresses(m.layout.size(block.pointee))
    n = len(addr)
    if n == 0:
        return np.zeros(0, value_dtype(t.elem))
    cols, per = m.layout.shape(t)[1], m.layout.coop_length(t)
    g, r, c = np.nonzero(acc.accessed)  # the order of boolean indexing
    owners = acc.active[g] * m.lanes.group_size(acc.scope) + (r * cols + c) // per
    lanes = CallbackLanes(m.lanes, owners, r, c, "decode function")
    sub = CallbackMachine(m, lanes, acc.scope)
    bounds = acc.element_pointers()
    lo = None if bounds.lo is None else np.broadcast_to(bounds.lo, (n,))
    hi = None if bounds.hi is None else np.broadcast_to(bounds.hi, (n,))
    ptr = Ptr(sub.view(bounds.region), addr, lo, hi, "the decode function's block")
    coords = [np.asarray(x[acc.accessed], np.uint32) for x in acc.block_coord]
    within = [np.asarray(x[acc.accessed], np.uint32) for x in acc.coord_in_block]
    result = m.call_function(sub, func, [ptr, coords, within], lanes.valid.copy())
    return np.broadcast_to(result, (n,))
