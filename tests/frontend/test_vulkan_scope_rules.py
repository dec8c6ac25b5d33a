"""Vulkan's rules on scopes and subgroup ids that spirv-val checks, as located errors at the user's line (each
was an InternalCompilerError, spirv-val refusing the module; found by a check written from the docs alone):
a control barrier's execution scope is Workgroup or Subgroup (VUID-StandaloneSpirv-None-04636); memory scope
Invocation takes relaxed semantics only (VUID-StandaloneSpirv-None-04641); a subgroup broadcast from a runtime
lane takes an unsigned id, as the shuffles do."""

import coopdsl as cd
from coopdsl import ArgumentError, TypeMismatchError, f32, i32, u32

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def k_device_execution(x: cd.Buffer[f32]):
    cd.control_barrier(cd.Device, cd.Workgroup, ("AcquireRelease", "WorkgroupMemory"))  # E:exec
    x[0] = 1.0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_invocation_barrier(x: cd.Buffer[f32]):
    cd.memory_barrier(cd.Invocation, ("AcquireRelease", "WorkgroupMemory"))  # E:membar
    x[0] = 1.0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_invocation_atomic(d: cd.Buffer[u32]):
    cd.atomic_add(d, 0, 1, scope=cd.Invocation, semantics="AcquireRelease")  # E:atomic


@cd.kernel(workgroup_size=(32, 1, 1))
def k_signed_lane(x: cd.Buffer[f32], lanes: cd.Buffer[i32]):
    x[cd.local_invocation_index] = cd.subgroup_broadcast(x[0], lanes[0])  # E:lane


@cd.kernel(workgroup_size=(32, 1, 1))
def k_allowed(x: cd.Buffer[f32], d: cd.Buffer[u32], lanes: cd.Buffer[u32]):
    cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))
    cd.atomic_add(d, 0, 1, scope=cd.Invocation)        # relaxed: Invocation is allowed
    x[cd.local_invocation_index] = cd.subgroup_broadcast(x[0], lanes[0]) + cd.subgroup_broadcast(x[1], 3)


def test_a_control_barrier_runs_at_workgroup_or_subgroup_scope():
    expect_error(k_device_execution, ArgumentError,
                 "control_barrier(): the execution scope of a control barrier is Workgroup or Subgroup in a compute "
                 "shader, not Device", "# E:exec", 5)


def test_memory_scope_invocation_takes_relaxed_semantics_only():
    expect_error(k_invocation_barrier, ArgumentError,
                 "memory_barrier(): memory scope Invocation takes relaxed semantics only", "# E:membar", 5)
    expect_error(k_invocation_atomic, ArgumentError,
                 "atomic_add(): memory scope Invocation takes relaxed semantics only", "# E:atomic", 5)


def test_a_runtime_broadcast_lane_is_unsigned():
    expect_error(k_signed_lane, TypeMismatchError, "subgroup_broadcast() lane must be u32 or a Python int, got i32",
                 "# E:lane", 36)


def test_what_the_rules_allow_still_compiles():
    compile_checked(k_allowed, r"OpControlBarrier %uint_3 %uint_3", r"OpAtomicIAdd %uint %\w+ %uint_4 %uint_0",
                    r"OpGroupNonUniformShuffle %float", r"OpGroupNonUniformBroadcast %float")
