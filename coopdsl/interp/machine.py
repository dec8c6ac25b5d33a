"""The interpreter's state for one batch of workgroups: values, the active mask, memory.

:class:`Machine` evaluates operands, executes one op for the active
invocation slots (merging its result with the value inactive slots keep),
checks that cooperative-matrix instructions and barriers are reached by
their whole scope, and turns memory faults into located
:class:`~coopdsl.interp.errors.InterpreterError`.  Block scheduling is in
:mod:`coopdsl.interp.control`; op meanings are in :mod:`coopdsl.interp.ops`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InternalCompilerError
from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.core import Const, FuncRef, Function, GlobalVar, Module, Op, SpecConst, SpecOp, Value
from .errors import InterpreterError
from .lanes import Lanes
from .layout import Layout
from .memory import Fault, Ptr, Region
from .races import RaceTracker
from .spec import SpecValues
from .values import constant, matrix_splat, where

if TYPE_CHECKING:
    from .plans import Plan

FunctionRunner = Callable[["Machine", Function, list[Any], np.ndarray], Any]
"""The scheduler's ``run_function(machine, func, args, mask)``: a function's return value, run by the slots of
``mask`` (see :mod:`coopdsl.interp.control`)."""


@dataclass
class InputVar:
    """A built-in input variable (``WorkgroupId`` ...): loading it gives ``value``."""

    name: str
    value: np.ndarray


class Machine:
    """Runs a module's entry point for one batch of workgroups (see :mod:`coopdsl.interp.lanes`)."""

    def __init__(self, module: Module, spec: SpecValues, lanes: Lanes, device: Region,
                 device_globals: dict[int, Ptr], check_races: bool = True):
        self.module = module
        self.spec = spec
        self.lanes = lanes
        self.layout = Layout(spec, lanes)
        self.device = device
        self.check_races = check_races
        self.env: dict[int, Any] = {}
        self._globals: dict[int, Any] = dict(device_globals)
        self._consts: dict[int, Any] = {}
        self._regions: dict[int, Region] = {}
        self.shared: list[Region] = []
        self.plans: dict[int, Plan] = {}  # id(op) -> Plan (see coopdsl.interp.plans)
        self.mask: np.ndarray = lanes.valid.copy()
        self.full = True
        self._active: np.ndarray | None = None
        # the scheduler's run_function(machine, func, args, mask), set at launch: ops that call a function
        # operand (reductions, per-element operations) run it through this
        self.call_function: FunctionRunner | None = None
        # set while a callback of a workgroup-scope matrix runs (a per-element or combine function): its
        # shared-memory accesses count as the workgroup's for race tracking (see coopdsl.interp.callbacks)
        self.workgroup_callback = False
        # loop back edges taken so far in this batch (one cell, shared with the callbacks' machines): see
        # coopdsl.interp.control.max_iterations
        self.back_edges = [0]
        self.calls: list[Op] = []   # the device-function calls being run, outermost first (errors name them)

    # -- masks ----------------------------------------------------------------------------------
    def set_mask(self, mask: np.ndarray) -> None:
        """Make ``mask`` (over slots) the active invocations."""
        self.mask = mask
        self.full = np.count_nonzero(mask) == self.lanes.n_valid
        self._active = None

    @property
    def active(self) -> np.ndarray:
        """Indices of the active slots."""
        if self._active is None:
            self._active = np.nonzero(self.mask)[0]
        return self._active

    # -- values ---------------------------------------------------------------------------------
    def value(self, v: Value) -> Any:
        """The current value of ``v`` (per slot, or uniform)."""
        key = id(v)
        got = self.env.get(key)
        if got is not None:
            return got
        if isinstance(v, Const):
            return self._const(v)
        if isinstance(v, (SpecConst, SpecOp)):
            return self.spec.value(v)
        if isinstance(v, GlobalVar):
            return self._global(v)
        if isinstance(v, FuncRef):
            return v.func
        raise InternalCompilerError(f"interpreter: value {v!r} used before it is defined")

    def _const(self, c: Const) -> Any:
        got = self._consts.get(id(c))
        if got is None:
            if isinstance(c.type, T.CoopMatType):
                rows, cols = self.layout.shape(c.type)
                got = matrix_splat(c.type, constant(c.type.elem, c.value), rows, cols)
            elif isinstance(c.type, T.ArrayType):  # every element the constant (cd.array's zeros and fills)
                got = self._array_constant(c.type, c.value)
            else:
                got = constant(c.type, c.value)
            self._consts[id(c)] = got
        return got

    def _array_constant(self, t: T.ArrayType, value: Any) -> list[Any]:
        """An array value whose every scalar is ``value``."""
        part = self._array_constant(t.elem, value) if isinstance(t.elem, T.ArrayType) else constant(t.elem, value)
        return [part] * self.layout.length(t)

    def _global(self, g: GlobalVar) -> Any:
        got = self._globals.get(id(g))
        if got is not None:
            return got
        if g.role == "builtin":
            got = InputVar(g.info["builtin"], self.lanes.builtins[g.info["builtin"]])
        elif g.role == "shared":
            size = self.layout.size(g.type.pointee)
            t = g.type.pointee
            element = self.layout.stride(t) if isinstance(t, T.ArrayType) else 0
            region = Region("shared", f"shared array '{g.name}'", np.zeros(self.lanes.W * size + 16, np.uint8), size,
                            element=element, written=np.zeros(self.lanes.W * size + 16, bool))
            if self.check_races:
                region.tracker = RaceTracker(region, self.lanes)
            self.shared.append(region)
            base = (self.lanes.wg * size).astype(np.int64)
            got = Ptr(region, base, base, base + size, region.label)
        elif g.role == "private":  # one array per invocation, like a local variable
            size = self.layout.size(g.type.pointee)
            region = Region("function", f"private array '{g.name}'", np.zeros(self.lanes.N * size + 16, np.uint8),
                            size, written=np.zeros(self.lanes.N * size + 16, bool))
            base = np.arange(self.lanes.N, dtype=np.int64) * size
            got = Ptr(region, base, base, base + size, region.label)
        else:
            raise InternalCompilerError(f"interpreter: global '{g.name}' ({g.role}) has no value")
        self._globals[id(g)] = got
        return got

    def device_pointers(self) -> dict[int, Ptr]:
        """The globals that point into device memory (buffers, uniform and push-constant blocks), by id."""
        return {k: v for k, v in self._globals.items() if isinstance(v, Ptr) and v.region is self.device}

    def local_variable(self, op: Op) -> Ptr:
        """The pointers (one per slot) to the local variable ``op`` declares."""
        region = self._regions.get(id(op))
        assert isinstance(op.type, T.PointerType)  # a 'variable' op gives a pointer
        size = self.layout.size(op.type.pointee)
        if region is None:
            name = op.attrs.get("array_name")
            region = Region("function", f"local array '{name}'" if name else f"local variable (line {op.loc.line})",
                            np.zeros(self.lanes.N * size + 16, np.uint8), size,
                            written=np.zeros(self.lanes.N * size + 16, bool))
            self._regions[id(op)] = region
        base = np.arange(self.lanes.N, dtype=np.int64) * size
        return Ptr(region, base, base, base + size, region.label)

    def define(self, v: Value, result: Any) -> None:
        """Set ``v``'s value in the active slots (other slots keep theirs)."""
        key = id(v)
        if self.full or key not in self.env:
            self.env[key] = result
        else:
            self.env[key] = self.merge(v.type, self.mask, result, self.env[key])

    def merge(self, t: T.Type, mask: np.ndarray, new: Any, old: Any) -> Any:
        """``new`` in the slots of ``mask``, ``old`` elsewhere (matrices: per scope instance)."""
        if isinstance(t, T.CoopMatType):
            return where(self.lanes.group_mask(self.layout.scope(t), mask), new, old)
        if isinstance(t, T.StructType):
            return tuple(self.merge(m, mask, a, b) for (_, m), a, b in zip(t.members, new, old))
        if isinstance(t, T.ArrayType):
            return [self.merge(t.elem, mask, a, b) for a, b in zip(new, old)]
        if isinstance(t, T.VectorType):   # a value the same in every slot (a constant vector) has no slot axis
            new, old = (np.broadcast_to(v, mask.shape + np.shape(v)) if np.ndim(v) == 1 else v for v in (new, old))
        return where(mask, new, old)

    # -- checks -----------------------------------------------------------------------------------
    def check_whole_scope(self, op: Op, scope: Scope, what: str) -> None:
        """Raise unless every instance of ``scope`` is either wholly active or wholly inactive."""
        if self.full:
            return
        bad = self.lanes.partial_groups(scope, self.mask)
        if len(bad):
            g = int(bad[0])
            size = self.lanes.group_size(scope)
            members = self.mask[g * size:(g + 1) * size]
            real = self.lanes.valid[g * size:(g + 1) * size]
            first = g * size + int(np.argmax(members))   # (an invocation that reached it: the first of them)
            raise self.error(op, f"{what} reached by {int(members.sum())} of the {int(real.sum())} invocations of "
                                 f"its {scope.name.lower()} (non-uniform control flow: the whole "
                                 f"{scope.name.lower()} must execute it together)", first)

    def error(self, op: Op, message: str, slot: int | None = None) -> InterpreterError:
        """An InterpreterError at ``op``'s line, naming the invocation in ``slot``."""
        if self.calls:
            call = self.calls[-1]
            at = call.loc
            site = "" if at is None else f", called at line {at.line}" if op.loc is not None and \
                at.file == op.loc.file else f", called at {at.file}:{at.line}"
            message += f" (in {call.attrs['func'].name}(){site})"
        if slot is not None:
            message += f"; in {self.lanes.describe(slot)}"
        return InterpreterError(message, op.loc)

    def fault(self, op: Op, f: Fault) -> InterpreterError:
        """A memory fault as a located error."""
        return self.error(op, f.message, f.slot)

    def group_uniform(self, op: Op, scope: Scope, v: np.ndarray, what: str) -> np.ndarray:
        """Per instance of ``scope``: the value of scalar ``v`` there, which must be the same in all its
        active invocations (the spec's dynamically-uniform operands)."""
        a = np.asarray(v)
        if a.ndim == 0:
            return a.reshape(1)
        g = a.reshape(self.lanes.groups(scope), -1)
        m = self.mask.reshape(g.shape)
        first = np.argmax(m, axis=1)
        pick: np.ndarray = g[np.arange(len(g)), first]
        differs = m & (g != pick[:, None])
        if g.dtype.kind == "f":  # NaN equals NaN here: the same value in every invocation
            differs &= ~(np.isnan(g) & np.isnan(pick[:, None]))
        if differs.any():
            slot = int(np.argmax(differs.reshape(-1)))
            raise self.error(op, f"{what} must be the same in every invocation of the {scope.name.lower()} "
                                 f"(dynamically uniform), but it differs", slot)
        return pick
