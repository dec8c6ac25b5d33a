"""The built-in inputs kernels read: workgroup and invocation ids, subgroup facts."""

from __future__ import annotations

from ..ir import types as T
from .values import BuiltinVar

_UVEC3 = T.VectorType(T.u32, 3)
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
)}

