"""Where the callbacks of SPV_NV_cooperative_matrix2 instructions run: which invocation, which memory.

A decode function (``load_tensor(..., decode=fn)``), a per-element function
(``m.map``) and a combine function (``m.reduce``) are called by the
instruction, per element, in the invocations of the matrix's scope.  SPIR-V
does not say which invocation calls it for which element; the interpreter's
rule is *the invocation that holds the element* (the element mapping of
:mod:`coopdsl.interp.mapping`; for a combine function, the invocations of the
scope instance in turn).  So a callback sees:

* the built-in inputs of that invocation: the workgroup-uniform ones
  (``workgroup_id``, ``num_workgroups``, ``workgroup_size``, ``num_subgroups``,
  ``subgroup_size``) are the calling workgroup's, and at subgroup scope
  ``subgroup_id`` is the matrix's subgroup; the per-invocation ones
  (``local_invocation_index``/``_id``, ``global_invocation_id``,
  ``subgroup_invocation_id``, and ``subgroup_id`` at workgroup scope) follow the
  rule, which a GPU need not share;
* the shared memory of that workgroup, as it is now (what the workgroup
  stored before a barrier), with the race and uninitialized-read checks of any
  other access.  Because the calling invocation is unspecified, accesses of a
  callback of a workgroup-scope matrix count for race tracking as the whole
  workgroup's (like the workgroup-scope matrix load itself): reading a byte
  any subgroup wrote since the last barrier is a race.

A per-element function (one component index at a time) or a combine function
(one step of its tree at a time) runs on the kernel's own machine, so all of
this holds there directly; the machine's ``workgroup_callback`` flag makes its
shared accesses count as the workgroup's.  (So, as between workgroup-scope
matrix loads and stores, writes by a callback of a workgroup-scope matrix are
not checked against each other across calls: only within one call, where two
elements writing different values to one byte is a race.)  A decode function runs
once for all the accessed elements of the matrices of the batch, on a
:class:`CallbackMachine` whose slots are the elements: each slot takes its
built-ins, shared and private memory from the invocation holding the element,
and errors name that invocation and the element.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..ir.attrs import Scope
from ..ir.core import GlobalVar
from .lanes import Lanes
from .machine import Machine
from .memory import Ptr, Region
from .races import WORKGROUP, Tracker

# built-ins with one value for a whole launch (the others are per invocation slot)
UNIFORM_BUILTINS = frozenset({"NumWorkgroups", "WorkgroupSize", "SubgroupSize", "NumSubgroups"})


class CallbackLanes(Lanes):
    """The slots of a callback machine: slot ``e`` is element ``(rows[e], cols[e])``, run by parent slot
    ``owners[e]``."""

    def __init__(self, parent: Lanes, owners: np.ndarray, rows: np.ndarray, cols: np.ndarray, what: str):
        super().__init__((len(owners), 1, 1), 1, np.zeros((1, 3), np.int64), (1, 1, 1))
        self.parent = parent
        self.owners = owners
        self.rows, self.cols = rows, cols
        self.what = what
        # the owners' built-in inputs (launch-wide ones unchanged), in place of the cached property's value
        self.__dict__["builtins"] = {name: v if name in UNIFORM_BUILTINS else np.asarray(v)[owners]
                                     for name, v in parent.builtins.items()}

    def describe(self, slot: int) -> str:
        return (f"{self.parent.describe(int(self.owners[slot]))}, running the {self.what} for element "
                f"({int(self.rows[slot])}, {int(self.cols[slot])}) of the matrix")


class _OwnedTracker:
    """A shared region's race tracker seen from a callback machine: its slots' agents are those of the
    owning invocations (or the workgroup, at workgroup scope)."""

    def __init__(self, tracker: Tracker, agents: np.ndarray):
        self.tracker = tracker
        self._agents = agents

    def agents(self, slots: np.ndarray, workgroup_scope: bool = False) -> np.ndarray:
        if workgroup_scope:
            return np.full(len(slots), WORKGROUP, np.int16)
        return cast(np.ndarray, self._agents[slots])

    def read(self, byte_addr: np.ndarray, agents: np.ndarray, slots: np.ndarray) -> None:
        self.tracker.read(byte_addr, agents, slots)

    def write(self, byte_addr: np.ndarray, new: np.ndarray, agents: np.ndarray, slots: np.ndarray) -> None:
        self.tracker.write(byte_addr, new, agents, slots)


class CallbackMachine(Machine):
    """A machine whose slots are matrix elements, each run by an invocation of ``parent`` (see the module
    docstring): globals resolve to that invocation's."""

    def __init__(self, parent: Machine, lanes: CallbackLanes, scope: Scope):
        super().__init__(parent.module, parent.spec, lanes, parent.device, parent.device_pointers(),
                         check_races=False)
        self.parent = parent
        self.owners = lanes.owners
        self.call_function = parent.call_function
        self.back_edges = parent.back_edges  # (the callback's loops count toward the batch's)
        if scope is Scope.Workgroup:
            self._agents = np.full(len(lanes.owners), WORKGROUP, np.int16)
        else:
            self._agents = (parent.lanes.local[lanes.owners] // parent.lanes.sgs).astype(np.int16)
        self._views: dict[int, Region] = {}

    def view(self, region: Region) -> Region:
        """``region`` as this machine accesses it: the same bytes, shared memory tracked for the owners."""
        if region.tracker is None:
            return region
        got = self._views.get(id(region))
        if got is None:
            got = Region(region.kind, region.label, region.data, region.instance_size,
                         tracker=_OwnedTracker(region.tracker, self._agents), element=region.element,
                         written=region.written)
            self._views[id(region)] = got
        return got

    def _global(self, g: GlobalVar) -> Any:
        got = self._globals.get(id(g))
        if got is not None:
            return got
        if g.role in ("shared", "private"):  # the owning invocation's (its workgroup's) instance
            p = self.parent._global(g)
            owned = p.taken(self.owners)
            got = Ptr(self.view(p.region), owned.addr, owned.lo, owned.hi, p.label)
            self._globals[id(g)] = got
            return got
        return super()._global(g)
