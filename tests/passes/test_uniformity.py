"""Uniformity errors: each rule rejects a kernel at the instruction's line:column and names the condition's."""

import re
import runpy
from pathlib import Path

import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, UniformityError, f16, f32, u32

from ..conftest import expect_error, marker_line
from . import uniformity_helpers

T16 = (f16, 16, 16)


def expect_divergent(k, message: str, marker: str, col: int, cond_marker: str, cond_col: int):
    """``k`` fails with a UniformityError containing ``message`` at ``marker``:``col``, naming the condition at
    ``cond_marker``:``cond_col`` (markers are comments ending lines of this file)."""
    err = expect_error(k, UniformityError, message, marker, col)
    line = marker_line(cond_marker, fn=True)
    assert f"condition at line {line}, column {cond_col}" in err.message, err.message
    assert "cd.assume_uniform(...)" in err.message and "Move the operation out of the branch" in err.message
    return err


# -- subgroup-scope matrix operations under subgroup-divergent control ---------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def muladd_in_branch(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 256, stride=16)
    acc = Acc[f32, 16, 16].splat(0.0)
    if cd.local_invocation_id.x < 16:  # C:muladd
        acc = cd.muladd(ta, tb, acc)  # E:muladd
    acc.store(c, 0, stride=16)


def test_muladd_in_a_divergent_branch():
    err = expect_divergent(muladd_in_branch, "cd.muladd must be executed by every invocation of the subgroup",
                           "# E:muladd", 15, "# C:muladd", 8)
    assert "it is inside the branch on the condition" in err.message
    assert "`if cd.local_invocation_id.x < 16:`" in err.message
    assert "it depends on cd.local_invocation_id" in err.message
    assert "cd.subgroup_all(...)" in err.message  # a subgroup vote is a fix for subgroup scope


@cd.kernel(workgroup_size=(32, 1, 1))
def load_in_else(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    v = a[cd.local_invocation_index]
    if v > f16(0.0):  # C:else
        c[0] = 1.0
    else:
        m = MatA[f16, 16, 16].load(a, 0, stride=16)  # E:else


def test_matrix_load_in_the_else_of_a_data_dependent_branch():
    expect_divergent(load_in_else, "the matrix load (.load) must be executed", "# E:else", 13, "# C:else", 8)


@cd.kernel(workgroup_size=(32, 1, 1))
def store_after_return(c: cd.Buffer[f32], n: u32):
    acc = Acc[f32, 16, 16].splat(1.0)
    if cd.global_invocation_id.x >= n:  # C:ret
        return
    acc.store(c, 0, stride=16)  # E:ret


def test_matrix_store_after_a_divergent_early_return():
    err = expect_divergent(store_after_return, "the matrix store (.store)", "# E:ret", 5, "# C:ret", 8)
    assert "some invocations left early (`return`)" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def scale_in_branch(c: cd.Buffer[f32], s: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].splat(1.0)
    if s[cd.subgroup_invocation_id] > 0.0:  # C:scale
        acc = acc * 2.0  # E:scale
    acc.store(c, 0, stride=16)


def test_matrix_arithmetic_in_a_divergent_branch():
    expect_divergent(scale_in_branch, "matrix * scalar must be executed", "# E:scale", 15, "# C:scale", 8)


# -- loops: trip counts, break, continue, return ---------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_trip_count(a: cd.Buffer[f16], c: cd.Buffer[f32], counts: cd.Buffer[u32]):
    acc = Acc[f32, 16, 16].splat(0.0)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    for i in range(counts[cd.local_invocation_index]):  # C:trip
        acc = cd.muladd(MatA[f16, 16, 16].load(a, i * 256, stride=16), tb, acc)  # E:trip
    acc.store(c, 0, stride=16)


def test_matrix_load_in_a_loop_with_a_divergent_trip_count():
    err = expect_divergent(divergent_trip_count, "the matrix load (.load)", "# E:trip", 25, "# C:trip", 5)
    assert "inside a loop whose condition" in err.message and "different iterations" in err.message
    assert "it depends on cd.local_invocation_index" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_while(c: cd.Buffer[f32], n: u32):
    i = cd.local_invocation_index
    while i < n:  # C:while
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:while
        i += 32


def test_matrix_store_in_a_while_loop_with_a_divergent_condition():
    expect_divergent(divergent_while, "the matrix store (.store)", "# E:while", 9, "# C:while", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def before_break(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):
    acc = Acc[f32, 16, 16].splat(0.0)
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    for i in range(n):
        acc = cd.muladd(ta, tb, acc)  # E:break
        if a[i * 32 + cd.local_invocation_index] > f16(0.0):  # C:break
            break
    acc.store(c, 0, stride=16)


def test_muladd_in_a_loop_with_a_divergent_break():
    err = expect_divergent(before_break, "cd.muladd", "# E:break", 15, "# C:break", 12)
    assert "inside a loop that invocations leave at different iterations (`break`" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def after_continue(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):
    acc = Acc[f32, 16, 16].splat(0.0)
    for i in range(n):
        if a[i * 32 + cd.local_invocation_index] > f16(0.0):  # C:continue
            continue
        acc = acc + acc  # E:continue
    acc.store(c, 0, stride=16)


def test_matrix_arithmetic_after_a_divergent_continue():
    err = expect_divergent(after_continue, "matrix arithmetic (+)", "# E:continue", 15, "# C:continue", 12)
    assert "some invocations left early (`continue`)" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def after_loop_return(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):
    for i in range(n):
        if a[i + cd.local_invocation_index] > f16(0.0):  # C:loopret
            return
    cd.barrier()  # E:loopret


def test_barrier_after_a_return_inside_a_loop():
    err = expect_divergent(after_loop_return, "cd.barrier() must be executed by every invocation of the workgroup",
                           "# E:loopret", 5, "# C:loopret", 12)
    assert "some invocations left early (`return`)" in err.message


# -- values: phis, loop exits, memory ------------------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def merged_value(c: cd.Buffer[f32]):
    flag = 0
    if cd.local_invocation_index < 3:
        flag = 1
    if flag == 1:  # C:phi
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:phi


def test_value_merged_from_a_divergent_branch():
    err = expect_divergent(merged_value, "the matrix store (.store)", "# E:phi", 9, "# C:phi", 8)
    assert "a value that depends on which way the branch at line" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def found_in_loop(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):
    found = 0
    for i in range(n):
        if a[i * 32 + cd.local_invocation_index] > f16(0.0):
            found = 1
            break
    if found == 1:  # C:found
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:found


def test_value_from_a_loop_left_at_different_iterations():
    err = expect_divergent(found_in_loop, "the matrix store (.store)", "# E:found", 9, "# C:found", 8)
    assert "when invocations left the loop" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def written_shared(c: cd.Buffer[f32], n: u32):
    flag = cd.shared(u32, 1)
    if cd.local_invocation_index == 0:
        flag[0] = n
    cd.barrier()
    if flag[0] > 2:  # C:shared
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:shared


def test_load_from_written_shared_memory():
    err = expect_divergent(written_shared, "the matrix store (.store)", "# E:shared", 9, "# C:shared", 8)
    assert "a load from shared array 'flag', which the kernel also writes" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def written_buffer(c: cd.Buffer[f32], flags: cd.Buffer[u32]):
    flags[cd.local_invocation_index] = cd.local_invocation_index
    if flags[0] > 2:  # C:buffer
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:buffer


def test_load_at_a_uniform_address_of_a_written_buffer():
    err = expect_divergent(written_buffer, "the matrix store (.store)", "# E:buffer", 9, "# C:buffer", 8)
    assert "a load from buffer 'flags', which the kernel also writes" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def local_array_stored_divergently(c: cd.Buffer[f32], n: u32):
    arr = cd.local_array(u32, 2)
    arr[0] = n
    if cd.local_invocation_index < 3:
        arr[0] = u32(5)
    if arr[0] > 2:  # C:local
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:local


def test_local_array_stored_under_divergent_control():
    err = expect_divergent(local_array_stored_divergently, "the matrix store", "# E:local", 9, "# C:local", 8)
    assert "a value stored under non-uniform control flow" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_on_the_next_iteration(c: cd.Buffer[f32], n: u32):
    x = u32(0)
    for _i in range(n):
        if x == 0:  # C:carried
            Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:carried
        x = cd.local_invocation_index


@cd.kernel(workgroup_size=(32, 1, 1))
def stored_divergently_on_the_next_iteration(c: cd.Buffer[f32], n: u32):
    arr = cd.local_array(u32, 1)
    arr[0] = n
    for _i in range(n):
        y = arr[0] + 1
        z = y * 2
        if z > 2:  # C:stored
            Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:stored
        arr[0] = cd.local_invocation_index


def test_values_that_become_divergent_only_around_a_loop():
    """The analysis sweeps the ops in order until a sweep changes nothing an earlier op reads: here the
    condition depends on what the end of the loop body makes divergent, through a phi and through a local
    array, so it is found divergent only on a later sweep."""
    expect_divergent(divergent_on_the_next_iteration, "the matrix store", "# E:carried", 13, "# C:carried", 12)
    err = expect_divergent(stored_divergently_on_the_next_iteration, "the matrix store", "# E:stored", 13,
                           "# C:stored", 12)
    assert "cd.local_invocation_index" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def atomic_condition(c: cd.Buffer[f32], counter: cd.Buffer[u32]):
    if cd.atomic_add(counter, 0, u32(1)) == 0:  # C:atomic
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)  # E:atomic


def test_atomic_result_is_divergent():
    err = expect_divergent(atomic_condition, "the matrix store", "# E:atomic", 9, "# C:atomic", 8)
    assert "the result of an atomic operation" in err.message


@cd.kernel(workgroup_size=(64, 1, 1))
def condition_in_a_variable(c: cd.Buffer[f32]):
    late = cd.local_invocation_index > 3  # V:late
    if late:  # C:late
        cd.barrier()  # E:late


def test_a_condition_held_in_a_variable_is_named_at_its_if():
    """``if late:`` branches on a value computed on an earlier line: the message names the ``if`` and, after
    it, the line the value comes from."""
    err = expect_divergent(condition_in_a_variable, "cd.barrier() must be executed by every invocation of the "
                           "workgroup", "# E:late", 9, "# C:late", 5)
    assert "(`if late:`)" in err.message
    assert f"(line {marker_line('# V:late')})" in err.message, err.message


@pytest.mark.parametrize("expr", ["cd.subgroup_elect()", "cd.subgroup_inclusive_add(v) > 0.0",
                                  "cd.subgroup_shuffle_xor(v, 1) > 0.0",
                                  "cd.subgroup_ballot_inclusive_bit_count(cd.subgroup_ballot(v > 0.0)) > 2",
                                  "cd.subgroup_ballot_exclusive_bit_count(cd.subgroup_ballot(v > 0.0)) == 0",
                                  "cd.subgroup_inverse_ballot(cd.subgroup_ballot(v > 0.0))"])
def test_per_invocation_subgroup_results_are_divergent(expr, tmp_path):
    src = tmp_path / "k.py"
    src.write_text(f"""import coopdsl as cd
from coopdsl import Acc, f32

@cd.kernel(workgroup_size=(32, 1, 1))
def k(c: cd.Buffer[f32], x: cd.Buffer[f32]):
    v = x[0]
    if {expr}:
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)
""")
    k = runpy.run_path(str(src))["k"]
    with pytest.raises(UniformityError) as info:
        k.compile()
    assert (info.value.loc.line, info.value.loc.col) == (8, 9)
    assert "condition at line 7, column 8" in info.value.message
    assert "which differs between invocations" in info.value.message


# -- barriers and workgroup-scope matrices need workgroup uniformity -----------------------------------
@cd.kernel(workgroup_size=(64, 1, 1))
def barrier_per_subgroup(c: cd.Buffer[f32]):
    if cd.subgroup_id == 0:  # C:sgid
        cd.barrier()  # E:sgid


def test_barrier_under_a_subgroup_uniform_condition():
    err = expect_divergent(barrier_per_subgroup, "cd.barrier() must be executed by every invocation of the workgroup",
                           "# E:sgid", 9, "# C:sgid", 8)
    assert "uniform within each subgroup only: not enough for an operation of workgroup scope" in err.message
    assert "subgroup votes such as cd.subgroup_all(...) are not enough" in err.message


@cd.kernel(workgroup_size=(64, 1, 1))
def workgroup_matrix_under_vote(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16, cd.Workgroup].splat(0.0)
    if cd.subgroup_all(a[cd.local_invocation_index] > f16(0.0)):  # C:wgvote
        acc.store(c, 0, stride=16)  # E:wgvote


def test_workgroup_scope_matrix_under_a_subgroup_vote():
    err = expect_divergent(workgroup_matrix_under_vote, "the matrix store (.store) must be executed by every "
                           "invocation of the workgroup", "# E:wgvote", 9, "# C:wgvote", 8)
    assert "cd.subgroup_all()" in err.message


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_barrier_divergent(c: cd.Buffer[f32]):
    if cd.subgroup_invocation_id < 4:  # C:sgbar
        cd.control_barrier(cd.Subgroup, cd.Subgroup, ("AcquireRelease", "WorkgroupMemory"))  # E:sgbar


def test_subgroup_control_barrier_under_divergent_control():
    expect_divergent(subgroup_barrier_divergent, "cd.control_barrier(cd.Subgroup, ...) must be executed by every "
                     "invocation of the subgroup", "# E:sgbar", 9, "# C:sgbar", 8)


@cd.kernel(workgroup_size=(64, 1, 1))
def spec_scope(c: cd.Buffer[f32], S: cd.Spec[u32] = 3):
    acc = Acc[f32, 16, 16, S].splat(0.0)
    if cd.subgroup_id == 0:  # C:specscope
        acc.store(c, 0, stride=16)  # E:specscope


def test_matrix_of_specialization_constant_scope_needs_workgroup_uniformity():
    expect_divergent(spec_scope, "invocation of the workgroup together (its scope is a specialization "
                           "constant, which may be Workgroup)", "# E:specscope", 9, "# C:specscope", 8)


# -- device functions ----------------------------------------------------------------------------------
@cd.func
def mma(a, acc):
    return cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16), MatB[f16, 16, 16].load(a, 0, stride=16), acc)  # L:mma


@cd.func
def mma_if(a, acc, n):
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    if n > 3:  # C:param
        acc = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16), tb, acc)  # E:param
    return acc


@cd.kernel(workgroup_size=(32, 1, 1))
def call_in_branch(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].splat(0.0)
    if cd.local_invocation_id.x < 16:  # C:call
        acc = mma(a, acc)  # E:call
    acc.store(c, 0, stride=16)


def test_call_of_a_function_running_matrix_ops_under_divergent_control():
    expect_divergent(call_in_branch, f"this call of mma() runs the matrix load (.load) (line "
                           f"{marker_line('# L:mma')}), which must be executed by every invocation of the subgroup",
                           "# E:call", 15, "# C:call", 8)


@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_argument(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].splat(0.0)
    acc = mma_if(a, acc, cd.local_invocation_index)  # L:arg
    acc.store(c, 0, stride=16)


def test_divergent_argument_of_a_function_branching_on_it():
    err = expect_divergent(divergent_argument, "the matrix load (.load)", "# E:param", 25, "# C:param", 8)
    assert f"(in mma_if(), called at line {marker_line('# L:arg')})" in err.message
    assert "it depends on the argument 'n' of mma_if()" in err.message


# -- the documentation's examples of mistakes ------------------------------------------------------------
DOC = Path(__file__).resolve().parents[2] / "docs" / "uniformity.md"


@pytest.mark.parametrize("code", re.findall(r"```py\n(.*?)```", DOC.read_text(), re.S))
def test_documented_mistakes_are_rejected(code, tmp_path):
    path = tmp_path / "doc_mistake.py"
    path.write_text(code)
    kernels = [v for v in runpy.run_path(str(path)).values() if isinstance(v, cd.Kernel)]
    assert kernels
    for k in kernels:
        with pytest.raises(UniformityError, match="not uniform across the|must be the same in every invocation "
                                                  "of the (sub|work)group .*, but it is not"):
            k.compile()


# -- matrix elements: m[i] with a runtime index goes through a Function variable holding the whole matrix ----
@cd.kernel(workgroup_size=(32, 1, 1))
def element_write_under_element_condition(c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].splat(1.0)
    for i in range(acc.length()):
        if acc[i] < 0.0:  # C:relu
            acc[i] = 0.0  # E:relu
    acc.store(c, 0, stride=16)


def test_an_element_decides_a_branch_and_a_runtime_element_write_is_a_whole_matrix_store():
    # SPV_KHR_cooperative_matrix: every instruction with a matrix operand or result runs in the whole scope
    # (OpStore/OpLoad of the matrix around the element write); only the access through a pointer to an
    # element may diverge. An element of a matrix differs per invocation, so the branch is divergent.
    err = expect_divergent(element_write_under_element_condition, "storing a whole matrix into a local variable",
                           "# E:relu", 13, "# C:relu", 12)
    assert "it depends on an element of a cooperative matrix" in err.message
    assert "m[i] = cd.select(condition, x, m[i])" in err.message


@cd.struct
class Pointers:
    src: cd.Ptr[u32]
    dst: cd.Ptr[u32]


@cd.kernel(workgroup_size=(64, 1, 1))
def k_pointer_load_after_buffer_write(x: cd.Buffer[u32], p: Pointers):
    x[cd.local_invocation_index] = 9
    if p.src[0] > 3:
        cd.barrier()  # E:ptrload


@cd.kernel(workgroup_size=(64, 1, 1))
def k_buffer_load_after_pointer_write(y: cd.Buffer[u32], p: Pointers):
    p.dst[cd.local_invocation_index] = 9
    if y[0] > 3:
        cd.barrier()  # E:bufload


@cd.kernel(workgroup_size=(64, 1, 1))
def k_pointer_load_with_only_shared_writes(p: Pointers):
    tile = cd.shared(u32, 64)
    tile[cd.local_invocation_index] = p.src[cd.local_invocation_index]
    if p.src[0] > 3:
        cd.barrier()


def test_a_pointer_may_point_into_any_buffer():
    """A device-pointer load was uniform when the kernel wrote a storage buffer (which the pointer may point
    into), and a buffer load uniform when the kernel wrote through a pointer (which may point into the buffer):
    both barriers could be reached by part of the workgroup on a GPU, and the interpreter, whose invocations run in
    lockstep, did not see it. Writes to shared memory, which no device pointer reaches, leave the load uniform."""
    expect_error(k_pointer_load_after_buffer_write, UniformityError,
                 "it depends on a load from device memory through a pointer, which may point into buffer 'x', which "
                 "the kernel writes", "# E:ptrload", 9)
    expect_error(k_buffer_load_after_pointer_write, UniformityError,
                 "it depends on a load from buffer 'y', which the kernel may write through a device pointer (a "
                 "pointer may point into any buffer)", "# E:bufload", 9)
    assert "OpControlBarrier" in k_pointer_load_with_only_shared_writes.disassemble()


@cd.kernel(workgroup_size=(32, 1, 1))
def k_barrier_in_a_helper_of_another_module(x: cd.Buffer[u32]):
    uniformity_helpers.sync_if(cd.local_invocation_index)  # E:elsewhere
    x[cd.local_invocation_index] = 1


def test_a_call_site_in_another_file_is_named_with_its_file():
    """The error is located in the helper's file; 'called at line 7' named a line of the kernel's file."""
    with pytest.raises(UniformityError) as e:
        k_barrier_in_a_helper_of_another_module.compile()
    assert e.value.loc.file.endswith("uniformity_helpers.py")
    assert f"(in sync_if(), called at {__file__}:{marker_line('# E:elsewhere')})" in e.value.message


@cd.func
def private_flag(n):
    arr = cd.private_array(u32, 2)
    arr[0] = n
    if arr[0] > 3:
        cd.barrier()  # E:private


@cd.kernel(workgroup_size=(32, 1, 1))
def k_private_array_of_a_helper(x: cd.Buffer[u32], n: u32):
    private_flag(n)
    x[cd.local_invocation_index] = 1


def test_a_private_array_of_a_device_function_says_why_it_is_not_followed():
    """Only a uniform push constant was stored; 'which the kernel also writes' did not say why that counted."""
    expect_error(k_private_array_of_a_helper, UniformityError, "it depends on a load from private array 'arr', which "
                 "the kernel writes and a @cd.func uses (such an array is not followed store by store, as one only "
                 "the kernel uses is; a cd.local_array in the function is)", "# E:private", 9)
