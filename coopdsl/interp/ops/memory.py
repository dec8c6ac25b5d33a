"""Memory ops: access chains, loads and stores, local variables, device addresses, barriers."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...ir import types as T
from ...ir.attrs import Scope
from ...ir.core import Module, Op
from ..machine import InputVar, Machine
from ..mapping import lanes_to_matrix, matrix_to_lanes
from ..memory import Fault, Ptr, Region, check_alignment, check_range, check_written, device_pointer, read, write
from ..values import scatter, take_lanes
from .registry import semantics


@semantics("access")
def _access(m: Machine, op: Op, args: list[Any]) -> Any:
    p, *indices = args
    ptr = op.operands[0].type
    assert isinstance(ptr, T.PointerType)  # (an access chain's base)
    t = ptr.pointee
    delta: Any = np.int64(0)
    for i in indices:
        if isinstance(t, T.StructType):
            k = int(i)
            delta = delta + m.layout.member_offset(t, k)
            t = t.members[k][1]
            continue
        if isinstance(t, (T.ArrayType, T.RuntimeArrayType)):
            step, t = m.layout.stride(t), t.elem
        else:  # vector component, or a component of a matrix held in local memory
            assert isinstance(t, (T.VectorType, T.CoopMatType))
            t = t.elem
            step = t.nbytes
        delta = delta + _scaled(m, p, np.asarray(i), step)
    if isinstance(p, InputVar):  # a component of a built-in vector
        return InputVar(p.name, np.asarray(p.value)[..., int(indices[-1])])
    return p.offset(delta)


_OFFSET_LIMIT = 1 << 62  # bytes: an index whose offset is further is past every allocation (and int64's sums)


def _scaled(m: Machine, p: Any, index: np.ndarray, step: int) -> np.ndarray:
    """``index * step`` bytes as int64.  A 64-bit index (or a huge step) can make the product wrap around int64,
    back into the bounds of the buffer; such an index is past the end of anything, reported here (a Fault)."""
    if index.dtype.itemsize * 8 + step.bit_length() > 62:
        bound = _OFFSET_LIMIT // step
        big = index > bound if index.dtype.kind == "u" else (index > bound) | (index < -bound)
        hit = big & m.mask if big.ndim else np.broadcast_to(big, m.mask.shape) & m.mask
        if hit.any():
            slot = int(np.argmax(hit))
            v = int(index[slot] if index.ndim else index)
            label = p.label if isinstance(p, Ptr) else "the variable"
            raise Fault(f"index {v} of {label} out of bounds: element {v} of {step} bytes is {v * step:,} bytes from "
                        f"its start, outside any buffer", slot)
    return index.astype(np.int64) * step


@semantics("load")
def _load(m: Machine, op: Op, args: list[Any]) -> Any:
    (p,) = args
    if isinstance(p, InputVar):
        return p.value
    if isinstance(op.type, T.CoopMatType):
        _same_matrix(m, op, p, op.type)
    return load_value(m, p, op.type, _aligned(op), _components_used(m.module, op))


# per module: for each vector load whose every use takes one component (OpCompositeExtract), those components
_PARTS: dict[int, tuple[Module, dict[int, tuple[int, ...]]]] = {}


def _components_used(module: Module, op: Op) -> tuple[int, ...] | None:
    """The components of the vector ``op`` loads that its uses read, when each use extracts one (``la[1].w``
    loads the vec4 and extracts w); None when a use takes the whole vector. Only those components must have
    been stored: the others are undefined and never used, which SPIR-V allows."""
    if not isinstance(op.type, T.VectorType):
        return None
    got = _PARTS.get(id(module))
    if got is None or got[0] is not module:
        users: dict[int, list[Op]] = {}
        ops = [o for f in module.functions for o in f.ops()]
        for o in ops:
            for v in o.operands:
                if isinstance(v, Op):
                    users.setdefault(id(v), []).append(o)
        parts: dict[int, tuple[int, ...]] = {}
        for o in ops:
            if o.kind == "load" and isinstance(o.type, T.VectorType):
                uses = users.get(id(o), [])
                if uses and all(u.kind == "extract" and u.operands[0] is o and isinstance(u.attrs.get("index"), int)
                                for u in uses):
                    parts[id(o)] = tuple(sorted({u.attrs["index"] for u in uses}))
        got = _PARTS[id(module)] = (module, parts)
    return got[1].get(id(op))


@semantics("store")
def _store(m: Machine, op: Op, args: list[Any]) -> None:
    p, value = args
    t = op.operands[1].type
    if isinstance(t, T.CoopMatType):
        _same_matrix(m, op, p, t)
    store_value(m, p, t, value, _aligned(op))


def _same_matrix(m: Machine, op: Op, p: Ptr, t: T.CoopMatType) -> None:
    """A whole matrix read from or written to a local or private array must be the same element of it in
    every invocation of the matrix's scope (the compiler checks this unless cd.assume_uniform promised it)."""
    if p.lo is not None and np.ndim(p.addr):  # per-invocation memory: the offset within each one's array
        m.group_uniform(op, m.layout.scope(t), p.addr - p.lo, "the index into the array of matrices")


def _aligned(op: Op) -> int | None:
    mem = op.attrs.get("memory")
    return None if mem is None else mem.aligned


def load_value(m: Machine, p: Ptr, t: T.Type, aligned: int | None = None,
               used: tuple[int, ...] | None = None) -> Any:
    """The value of type ``t`` each active invocation reads through ``p`` (``used``: for a vector, the components
    whose bytes must have been stored; default all)."""
    layout = m.layout
    size = layout.size(t)
    uniform = np.ndim(p.addr) == 0 and p.region.kind == "device"  # the same address everywhere: read once
    idx = m.active[:1] if uniform else m.active
    cp = p.taken(np.zeros(1, np.int64) if uniform else idx)
    check_range(cp, cp.addr, cp.addr + size, "read", idx)
    check_alignment(cp, cp.addr, aligned, "read", idx)
    if used is not None and isinstance(t, T.VectorType):
        step = layout.size(t.elem)
        for c in used:
            check_written(cp, cp.addr + c * step, t.elem, layout, "read", idx)
    else:
        check_written(cp, cp.addr, t, layout, "read", idx)
    if uniform:
        return _first(t, read(p.region, cp.addr, t, layout))
    if p.region.tracker is not None:
        tr = p.region.tracker
        tr.read(cp.addr[:, None] + np.arange(size), tr.agents(idx, m.workgroup_callback), idx)
    values = read(p.region, cp.addr, t, layout)
    if isinstance(t, T.CoopMatType):
        comps = np.zeros((m.lanes.N,) + values.shape[1:], values.dtype)
        comps[idx] = values
        return lanes_to_matrix(m, t, comps)
    return scatter(t, m.lanes.N, idx, values)


def store_value(m: Machine, p: Ptr, t: T.Type, value: Any, aligned: int | None = None) -> None:
    """Each active invocation writes its ``value`` of type ``t`` through ``p``."""
    layout = m.layout
    size = layout.size(t)
    idx = m.active
    cp = p.taken(idx)
    check_range(cp, cp.addr, cp.addr + size, "write", idx)
    check_alignment(cp, cp.addr, aligned, "write", idx)
    values = matrix_to_lanes(m, t, value)[idx] if isinstance(t, T.CoopMatType) else take_lanes(t, value, idx)
    tr = p.region.tracker
    if tr is None:
        write(p.region, cp.addr, t, values, layout)
        return
    byte_addr = cp.addr[:, None] + np.arange(size)
    staging = _staging(p.region, byte_addr)
    write(staging, np.arange(len(idx), dtype=np.int64) * size, t, values, layout)
    new = staging.data[:len(idx) * size].reshape(len(idx), size)
    tr.write(byte_addr, new, tr.agents(idx, m.workgroup_callback), idx)
    p.region.data[byte_addr] = new
    if p.region.written is not None:
        p.region.written[byte_addr] = True  # (shared memory: the race tracker's path writes the bytes itself)


def _staging(region: Region, byte_addr: np.ndarray) -> Region:
    """A scratch region holding the current bytes at ``byte_addr`` (so padding keeps its value)."""
    data = np.zeros(byte_addr.size + 16, np.uint8)
    data[:byte_addr.size] = region.data[byte_addr].reshape(-1)
    return Region("function", region.label, data)


def _first(t: T.Type, v: Any) -> Any:
    if isinstance(t, T.StructType):
        return tuple(_first(mt, x) for (_, mt), x in zip(t.members, v))
    if isinstance(t, T.ArrayType):
        return [_first(t.elem, x) for x in v]
    if isinstance(v, Ptr):
        return Ptr(v.region, v.addr[0], None, None, v.label)
    return np.asarray(v)[0]


@semantics("variable")
def _variable(m: Machine, op: Op, args: list[Any]) -> Any:
    return m.local_variable(op)


@semantics("array_length")
def _array_length(m: Machine, op: Op, args: list[Any]) -> Any:
    """The whole elements of the runtime array in the buffer bound (its bytes past the member's offset)."""
    p = args[0]
    block = T.pointee_struct(op.operands[0].type)
    member = op.attrs["member"]
    start = p.addr + m.layout.member_offset(block, member)
    return ((p.hi - start) // m.layout.stride(block.members[member][1])).astype(np.uint32)


_CONVERSION = re.compile(r"%%|%v([234])([fdu])|%l?([fdu])")


def printf_line(fmt: str, values: list[Any]) -> str:
    """One invocation's line of a debug_printf ``fmt`` (the conversions coopdsl.lang.debug writes: ``%f``, ``%d``,
    ``%u``, ``%ld``, ``%lu``, ``%vNf`` / ``d`` / ``u``, ``%%``) of its ``values``, as C's printf and the
    validation layer's DebugPrintf print them (a vector's components joined by ", ")."""
    it = iter(values)

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        v = next(it)
        conv = match.group(2) or match.group(3)
        item = "%f" if conv == "f" else "%d"
        if match.group(1):
            return ", ".join(item % (float(c) if conv == "f" else int(c)) for c in np.asarray(v).reshape(-1))
        return item % (float(v) if conv == "f" else int(v))

    return _CONVERSION.sub(one, fmt)


@semantics("debug_printf")
def _debug_printf(m: Machine, op: Op, args: list[Any]) -> None:
    """A line per active invocation, in invocation order (print's, to stdout)."""
    n = m.lanes.N
    per_slot = [np.broadcast_to(np.asarray(a), (n, *np.shape(a)[1:]) if np.ndim(a) and np.shape(a)[0] == n
                                else (n, *np.shape(a))) for a in args]
    for slot in np.flatnonzero(m.mask):
        print(printf_line(op.attrs["format"], [a[slot] for a in per_slot]))


@semantics("ptr_to_u64")
def _ptr_to_u64(m: Machine, op: Op, args: list[Any]) -> Any:
    return args[0].device_address


@semantics("u64_to_ptr")
def _u64_to_ptr(m: Machine, op: Op, args: list[Any]) -> Any:
    return device_pointer(m.device, args[0])


@semantics("control_barrier")
def _control_barrier(m: Machine, op: Op, args: list[Any]) -> None:
    if op.attrs["exec_scope"] is Scope.Workgroup:
        arrived = m.lanes.group_mask(Scope.Workgroup, m.mask)
        for region in m.shared:
            if region.tracker is not None:
                region.tracker.barrier(arrived)


@semantics("memory_barrier")
def _memory_barrier(m: Machine, op: Op, args: list[Any]) -> None:
    """Memory is coherent in the interpreter: ordering needs no action."""
