"""Cheap data-race detection on shared memory between workgroup barriers.

For every byte of a shared array and every workgroup, the tracker remembers
which subgroup last wrote it and which subgroup(s) read it since the last
control barrier of that workgroup.  An access is a race when, within one
barrier interval,

* two invocations of one store instruction write different values to one byte;
* a subgroup writes a byte another subgroup wrote, and the value changes;
* a subgroup reads a byte another subgroup wrote;
* a subgroup changes a byte another subgroup read.

Invocations of one subgroup are not checked against each other across
instructions (subgroups execute in lockstep on the GPUs coopdsl targets).
A workgroup-scope cooperative-matrix access counts as every subgroup's.
Atomic accesses are not tracked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

if TYPE_CHECKING:
    from .lanes import Lanes
    from .memory import Region

NOBODY = -1
MANY = -2      # read by several subgroups
WORKGROUP = -3  # a workgroup-scope matrix access


class Race(Exception):
    """A data race: ``message`` and an offending invocation slot."""

    def __init__(self, message: str, slot: int):
        super().__init__(message)
        self.message = message
        self.slot = slot


class Tracker(Protocol):
    """What accesses ask of a shared region's tracker (a :class:`RaceTracker`, or a callback's view of one)."""

    def agents(self, slots: np.ndarray, workgroup_scope: bool = False) -> np.ndarray: ...

    def read(self, byte_addr: np.ndarray, agents: np.ndarray, slots: np.ndarray) -> None: ...

    def write(self, byte_addr: np.ndarray, new: np.ndarray, agents: np.ndarray, slots: np.ndarray) -> None: ...


class RaceTracker:
    """Writer/reader subgroups of each byte of one shared region."""

    def __init__(self, region: Region, lanes: Lanes):
        self.region = region
        self.lanes = lanes
        self.writer = np.full(region.data.size, NOBODY, np.int16)
        self.reader = np.full(region.data.size, NOBODY, np.int16)

    def agents(self, slots: np.ndarray, workgroup_scope: bool = False) -> np.ndarray:
        """The subgroup (within its workgroup) of each slot, or WORKGROUP."""
        if workgroup_scope:
            return np.full(len(slots), WORKGROUP, np.int16)
        return cast(np.ndarray, (self.lanes.local[slots] // self.lanes.sgs).astype(np.int16))

    def read(self, byte_addr: np.ndarray, agents: np.ndarray, slots: np.ndarray) -> None:
        """Record reads of ``byte_addr`` (M, k) by ``agents`` (M,) of ``slots``; raise Race on a conflict."""
        a = np.broadcast_to(agents[:, None], byte_addr.shape)
        w = self.writer[byte_addr]
        bad = (w != NOBODY) & _conflict(w, a)
        if bad.any():
            i = np.argwhere(bad)[0]
            raise Race(self._message("reads", byte_addr[tuple(i)], "written by", w[tuple(i)]), int(slots[i[0]]))
        r = self.reader[byte_addr]
        self.reader[byte_addr] = np.where((r == NOBODY) | (r == a), a, MANY)

    def write(self, byte_addr: np.ndarray, new: np.ndarray, agents: np.ndarray, slots: np.ndarray) -> None:
        """Check writes of bytes ``new`` (M, k) at ``byte_addr`` by ``agents``; record them."""
        self._same_instruction(byte_addr, new, slots)
        a = np.broadcast_to(agents[:, None], byte_addr.shape)
        changes = self.region.data[byte_addr] != new
        w = self.writer[byte_addr]
        bad = changes & (w != NOBODY) & _conflict(w, a)
        if bad.any():
            i = np.argwhere(bad)[0]
            raise Race(self._message("overwrites", byte_addr[tuple(i)], "written by", w[tuple(i)]),
                       int(slots[i[0]]))
        r = self.reader[byte_addr]
        bad = changes & (r != NOBODY) & ((r == MANY) | _conflict(r, a))
        if bad.any():
            i = np.argwhere(bad)[0]
            raise Race(self._message("overwrites", byte_addr[tuple(i)], "read by", r[tuple(i)]), int(slots[i[0]]))
        self.writer[byte_addr] = a

    def barrier(self, workgroups: np.ndarray) -> None:
        """Forget the accesses of ``workgroups`` (a control barrier synchronised them)."""
        n = len(workgroups) * self.region.instance_size
        sel = np.repeat(workgroups, self.region.instance_size)
        self.writer[:n][sel] = NOBODY
        self.reader[:n][sel] = NOBODY

    def _same_instruction(self, byte_addr: np.ndarray, new: np.ndarray, slots: np.ndarray) -> None:
        flat = byte_addr.reshape(-1)
        if len(flat) < 2:
            return
        order = np.argsort(flat, kind="stable")
        sa, sv = flat[order], new.reshape(-1)[order]
        dup = (sa[1:] == sa[:-1]) & (sv[1:] != sv[:-1])
        if dup.any():
            k = int(np.argmax(dup))
            writer_row = order[k + 1] // byte_addr.shape[1]
            raise Race(f"data race on {self.region.label}: two invocations write different values to "
                       f"{self._where(sa[k])} in one instruction", int(slots[writer_row]))

    def _where(self, byte: int) -> str:
        offset = int(byte) % self.region.instance_size
        size = self.region.element
        return f"element {offset // size} (byte {offset - offset % size})" if size else f"byte {offset}"  # its start

    def _message(self, verb: str, byte: int, how: str, other: int) -> str:
        who = "a workgroup-scope matrix operation" if other == WORKGROUP else \
            "several subgroups" if other == MANY else f"subgroup {other}"
        return (f"data race on {self.region.label}: this access {verb} {self._where(byte)}, {how} {who} "
                f"since the last barrier (add cd.barrier() between them)")


def _conflict(other: np.ndarray, me: np.ndarray) -> np.ndarray:
    """Whether accesses by ``other`` and ``me`` are unordered without a barrier."""
    return cast(np.ndarray, other != me)
