"""Where each invocation of a batch of workgroups lives: slots, subgroups, built-in inputs.

The interpreter runs a batch of W workgroups at once.  Each workgroup gets
``slots_per_wg = num_subgroups * subgroup_size`` consecutive *slots*; slot
``s`` of a workgroup is local invocation index ``s`` when ``s`` is below the
workgroup size, and a padding slot (never active) otherwise, so every
subgroup is ``subgroup_size`` consecutive slots.  Subgroups hold consecutive
local invocation indices: invocation ``i`` is lane ``i % subgroup_size`` of
subgroup ``i // subgroup_size``.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..ir.attrs import Scope

SUBGROUP_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)


class Lanes:
    """The invocation slots of a batch of workgroups."""

    def __init__(self, wg_size: tuple[int, int, int], subgroup_size: int, wg_ids: np.ndarray,
                 num_workgroups: tuple[int, int, int]):
        self.wg_size = wg_size
        self.wgn = wg_size[0] * wg_size[1] * wg_size[2]
        self.sgs = subgroup_size
        self.nsg = -(-self.wgn // subgroup_size)
        self.slots_per_wg = self.nsg * subgroup_size
        self.wg_ids = wg_ids  # (W, 3) workgroup ids of the batch
        self.W = len(wg_ids)
        self.N = self.W * self.slots_per_wg
        self.num_workgroups = num_workgroups
        slot = np.arange(self.N)
        self.wg = slot // self.slots_per_wg
        self.local = slot % self.slots_per_wg
        self.valid = self.local < self.wgn
        self.n_valid = int(self.valid.sum())

    # -- scopes ---------------------------------------------------------------------------------
    def group_size(self, scope: Scope) -> int:
        """Slots per instance of ``scope`` (Subgroup or Workgroup)."""
        return self.sgs if scope is Scope.Subgroup else self.slots_per_wg

    def members(self, scope: Scope) -> int:
        """Invocations (not padding slots) per instance of ``scope``: what a matrix is spread over."""
        return self.sgs if scope is Scope.Subgroup else self.wgn

    def groups(self, scope: Scope) -> int:
        """Instances of ``scope`` in the batch."""
        return self.N // self.group_size(scope)

    @cached_property
    def _real_per_group(self) -> dict[Scope, np.ndarray]:
        return {s: self.valid.reshape(self.groups(s), -1).sum(axis=1) for s in (Scope.Subgroup, Scope.Workgroup)}

    def partial_groups(self, scope: Scope, mask: np.ndarray) -> np.ndarray:
        """Indices of the instances of ``scope`` that ``mask`` covers only in part."""
        active = mask.reshape(self.groups(scope), -1).sum(axis=1)
        return np.nonzero((active != 0) & (active != self._real_per_group[scope]))[0]

    def group_mask(self, scope: Scope, mask: np.ndarray) -> np.ndarray:
        """Per instance of ``scope``: whether any of its invocations is in ``mask``."""
        return np.asarray(mask.reshape(self.groups(scope), -1).any(axis=1))

    # -- built-in inputs --------------------------------------------------------------------------
    @cached_property
    def builtins(self) -> dict[str, np.ndarray]:
        """Per-slot values of the built-in input variables, by SPIR-V BuiltIn name."""
        x, y, _ = self.wg_size
        local = self.local.astype(np.uint32)
        lid = np.stack([local % x, local // x % y, local // (x * y)], axis=1).astype(np.uint32)
        wid = self.wg_ids[self.wg].astype(np.uint32)
        return {
            "LocalInvocationIndex": local,
            "LocalInvocationId": lid,
            "WorkgroupId": wid,
            "GlobalInvocationId": (wid * np.array(self.wg_size, np.uint32) + lid).astype(np.uint32),
            "NumWorkgroups": np.array(self.num_workgroups, np.uint32),
            "WorkgroupSize": np.array(self.wg_size, np.uint32),
            "SubgroupId": (local // self.sgs).astype(np.uint32),
            "SubgroupSize": np.array(self.sgs, np.uint32),
            "SubgroupLocalInvocationId": (local % self.sgs).astype(np.uint32),
            "NumSubgroups": np.array(self.nsg, np.uint32),
            **self._lane_masks(local % self.sgs),
        }

    def _lane_masks(self, lane: np.ndarray) -> dict[str, np.ndarray]:
        """SubgroupEq/Ge/Gt/Le/LtMask per slot: the bits of the subgroup's lanes against this one's, as a vec4 of
        u32 (bits past the subgroup size are 0)."""
        bit = np.arange(128)
        inside = bit < self.sgs
        masks = {"Eq": bit == lane[:, None], "Ge": bit >= lane[:, None], "Gt": bit > lane[:, None],
                 "Le": bit <= lane[:, None], "Lt": bit < lane[:, None]}
        return {f"Subgroup{k}Mask": np.packbits(v & inside, axis=1, bitorder="little").view("<u4").astype(np.uint32)
                for k, v in masks.items()}

    def describe(self, slot: int) -> str:
        """Which invocation slot ``slot`` is, in the user's terms."""
        wid = tuple(int(v) for v in self.wg_ids[self.wg[slot]])
        local = int(self.local[slot])
        return f"workgroup {wid}, local invocation {local} (subgroup {local // self.sgs}, lane {local % self.sgs})"
