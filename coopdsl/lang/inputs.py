"""The built-in inputs kernels read: workgroup and invocation ids, subgroup facts."""

from __future__ import annotations

from ..ir import types as T
from .values import BuiltinVar

_UVEC3 = T.VectorType(T.u32, 3)
_UVEC4 = T.VectorType(T.u32, 4)
BUILTIN_VARS = {v.name: v for v in (
    BuiltinVar("workgroup_id", "WorkgroupId", _UVEC3, "Index of this workgroup in the dispatch (gl_WorkGroupID)."),
    BuiltinVar("local_invocation_id", "LocalInvocationId", _UVEC3,
               "Index within the workgroup (gl_LocalInvocationID)."),
    BuiltinVar("global_invocation_id", "GlobalInvocationId", _UVEC3, "gl_GlobalInvocationID."),
    BuiltinVar("num_workgroups", "NumWorkgroups", _UVEC3, "Workgroups in the dispatch (gl_NumWorkGroups)."),
    BuiltinVar("local_invocation_index", "LocalInvocationIndex", T.u32, "Flattened local index."),
    BuiltinVar("subgroup_id", "SubgroupId", T.u32, "Index of this subgroup in the workgroup (gl_SubgroupID)."),
    BuiltinVar("subgroup_size", "SubgroupSize", T.u32, "Invocations per subgroup (gl_SubgroupSize)."),
    BuiltinVar("subgroup_invocation_id", "SubgroupLocalInvocationId", T.u32,
               "Index within the subgroup (gl_SubgroupInvocationID)."),
    BuiltinVar("num_subgroups", "NumSubgroups", T.u32, "Subgroups in the workgroup (gl_NumSubgroups)."),
    BuiltinVar("subgroup_eq_mask", "SubgroupEqMask", _UVEC4,
               "Ballot of this invocation alone: bit subgroup_invocation_id (gl_SubgroupEqMask)."),
    BuiltinVar("subgroup_ge_mask", "SubgroupGeMask", _UVEC4,
               "Ballot of the invocations at or above this one in the subgroup (gl_SubgroupGeMask)."),
    BuiltinVar("subgroup_gt_mask", "SubgroupGtMask", _UVEC4,
               "Ballot of the invocations above this one in the subgroup (gl_SubgroupGtMask)."),
    BuiltinVar("subgroup_le_mask", "SubgroupLeMask", _UVEC4,
               "Ballot of the invocations at or below this one (gl_SubgroupLeMask)."),
    BuiltinVar("subgroup_lt_mask", "SubgroupLtMask", _UVEC4,
               "Ballot of the invocations below this one (gl_SubgroupLtMask)."),
)}

