"""What one workgroup holds while the interpreter runs it, at one launch's specialization constants.

A workgroup holds its shared arrays, the local variables and private arrays of each of its invocations, and
the cooperative matrices its instructions compute (each matrix-typed result is kept for the whole run, one
whole matrix per subgroup, or per workgroup at workgroup scope).  Their sizes can depend on specialization
constants, so only a launch knows them: a length of 2**31 for a shared array, or a matrix of 2**16 x 2**16,
would have the interpreter allocate gigabytes (a ``MemoryError``, or the system killing the process), and a
matrix of 0 rows has no elements for numpy to reduce.  :func:`check` reports such sizes before anything runs,
at the line that declares the local variable, first uses the shared or private array or first computes the
matrix, and gives the bytes a workgroup takes, from which the launch sizes its batches (so a workgroup holding
megabytes runs in small batches).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SourceLoc
from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.core import Const, GlobalVar, Module, Op, SpecConst, SpecOp
from .errors import InterpreterError
from .lanes import Lanes
from .layout import Layout
from .values import value_dtype

WORKGROUP_BYTES = 64 << 20  # the most one workgroup may hold (GPUs: 48 to 64 KiB of shared memory per workgroup)
BATCH_BYTES = 512 << 20  # what the workgroups of one batch hold together, at most (when one holds less)
SHARED_COST = 6  # bytes the interpreter keeps per byte of shared memory (the bytes, written or not, race tracking)
FUNCTION_COST = 2  # ... per byte of local or private memory (the bytes, written or not)


@dataclass
class _Uses:
    """A module's memory declarations and matrix types, with the line of each (found once per module)."""

    shared: list[tuple[GlobalVar, SourceLoc | None]] = field(default_factory=list)
    private: list[tuple[GlobalVar, SourceLoc | None]] = field(default_factory=list)
    variables: list[Op] = field(default_factory=list)
    matrices: dict[int, tuple[T.CoopMatType, int, SourceLoc | None]] = field(default_factory=dict)


_USES: dict[int, tuple[Module, _Uses]] = {}


def _uses(module: Module) -> _Uses:
    got = _USES.get(id(module))
    if got is not None and got[0] is module:
        return got[1]
    uses = _Uses()
    first: dict[int, SourceLoc | None] = {}
    for f in module.functions:
        for op in f.ops():
            if op.kind == "variable":
                uses.variables.append(op)
            values = [op, *op.operands]
            for v in values:
                if isinstance(v, GlobalVar):
                    first.setdefault(id(v), op.loc)
                t = v.type
                if isinstance(t, T.CoopMatType) and (v is op or isinstance(v, (Const, SpecConst, SpecOp))):
                    _, count, loc = uses.matrices.get(id(t), (t, 0, op.loc))
                    uses.matrices[id(t)] = (t, count + 1, loc)
    for g in module.globals:
        if g.role in ("shared", "private") and id(g) in first:  # (an unused one is never allocated)
            (uses.shared if g.role == "shared" else uses.private).append((g, first[id(g)]))
    _USES[id(module)] = (module, uses)
    return uses


def check(module: Module, layout: Layout, lanes: Lanes) -> int:
    """The bytes the interpreter keeps for one workgroup of ``module`` (``lanes``: one workgroup's slots);
    an :class:`InterpreterError` at the declaring line for a matrix without rows or columns, or a workgroup
    holding more than :data:`WORKGROUP_BYTES`."""
    uses = _uses(module)
    parts: list[tuple[int, str, str, SourceLoc | None]] = []  # (bytes per workgroup, what, a GPU's, where)
    on_gpu = {"shared": "a GPU gives a workgroup 48 to 64 KiB of shared memory",
              "function": "a GPU gives an invocation some KiB of private memory (NVIDIA's, at most 512 KiB)",
              "matrix": "a GPU's cooperative matrices have some tens of rows and columns"}
    for g, loc in uses.shared:
        _check_length(layout, g.type.pointee, f"shared array '{g.name}'", loc)
        parts.append((layout.size(g.type.pointee), f"shared array '{g.name}'", on_gpu["shared"], loc))
    invocations = lanes.slots_per_wg
    for g, loc in uses.private:
        _check_length(layout, g.type.pointee, f"private array '{g.name}'", loc)
        parts.append((invocations * layout.size(g.type.pointee), f"private array '{g.name}' (each of "
                      f"{invocations} invocations has one)", on_gpu["function"], loc))
    for op in uses.variables:
        assert isinstance(op.type, T.PointerType)  # (a variable op gives a pointer)
        _check_length(layout, op.type.pointee, "the local array", op.loc)
        parts.append((invocations * layout.size(op.type.pointee), f"the local variable of line {op.loc.line} "
                      f"(each of {invocations} invocations has one)", on_gpu["function"], op.loc))
    for t, count, loc in uses.matrices.values():
        rows, cols = layout.shape(t)
        if rows < 1 or cols < 1:
            raise InterpreterError(f"{t} is {rows} x {cols} at this launch (its dimensions are specialization "
                                   f"constants): a cooperative matrix has at least one row and one column", loc)
        scope = layout.scope(t)
        instances = lanes.nsg if scope is Scope.Subgroup else 1
        each = rows * cols * value_dtype(t.elem).itemsize
        parts.append((count * instances * each, f"{count} {'matrix' if count == 1 else 'matrices'} {t} of "
                      f"{rows} x {cols} (one per {scope.name.lower()})", on_gpu["matrix"], loc))
    total = sum(p[0] for p in parts)
    if total > WORKGROUP_BYTES:
        size, what, gpu, loc = max(parts, key=lambda p: p[0])
        raise InterpreterError(f"a workgroup would hold {_bytes(total)} at this launch, {_bytes(size)} of it for "
                               f"{what}: more than the interpreter holds for one workgroup ({_bytes(WORKGROUP_BYTES)}"
                               f"; {gpu}); check the specialization constants that size it", loc)
    shared = sum(layout.size(g.type.pointee) for g, _ in uses.shared)
    return total + (SHARED_COST - 1) * shared + (FUNCTION_COST - 1) * (total - shared)


def _check_length(layout: Layout, t: T.Type, what: str, loc: SourceLoc | None) -> None:
    """An :class:`InterpreterError` at ``loc`` when an array's length (a specialization constant: its default,
    which compiling does not check, or the launch's value) is below 1 at this launch."""
    while isinstance(t, T.ArrayType):
        if not isinstance(t.length, int):
            n = layout.length(t)
            if n < 1:
                raise InterpreterError(f"{what} has {t.length} = {n} elements at this launch (its length is a "
                                       f"specialization constant): an array has at least one element", loc)
        t = t.elem


def workgroups_per_batch(workgroup_bytes: int, slots_per_wg: int, max_slots: int) -> int:
    """How many workgroups a batch runs: up to ``max_slots`` invocation slots, and within :data:`BATCH_BYTES`."""
    return max(1, min(max_slots // slots_per_wg, BATCH_BYTES // max(workgroup_bytes, 1)))


def _bytes(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):,.1f} {unit}"
    return f"{n} bytes"
