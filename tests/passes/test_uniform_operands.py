"""Operands of cooperative-matrix operations must be uniform in the matrix's scope (SPV_KHR_cooperative_matrix:
"All the operands to this instruction must be dynamically uniform within every instance of the Scope"): each
rule rejects a kernel at the operation's line:column, names the operand and says what it depends on."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, UniformityError, f16, f32, u32

from ..conftest import expect_error, marker_line

RULE = "must be the same in every invocation of the subgroup (dynamically uniform, as SPIR-V requires of every " \
       "operand of a cooperative-matrix operation), but it is not"


@cd.kernel(workgroup_size=(32, 1, 1))
def load_at_lane_offset(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    m = MatA[f16, 16, 16].load(a, cd.subgroup_invocation_id * 16, stride=16)  # E:ptr
    cd.muladd(m, MatB[f16, 16, 16].load(a, 0, stride=16), Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)


def test_a_matrix_load_at_a_per_invocation_offset():
    err = expect_error(load_at_lane_offset, UniformityError, f"the pointer (buffer and offset) of the matrix load "
                       f"(.load) {RULE}: it depends on cd.subgroup_invocation_id", "# E:ptr", 9)
    assert "cd.assume_uniform(...)" in err.message and "cd.subgroup_id" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def store_with_lane_stride(c: cd.Buffer[f32]):
    Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16 + cd.local_invocation_id.x % 2)  # E:stride


def test_a_matrix_store_with_a_per_invocation_stride():
    expect_error(store_with_lane_stride, UniformityError, f"the stride of the matrix store (.store) {RULE}: it "
                 "depends on cd.local_invocation_id", "# E:stride", 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def pick_by_lane(c: cd.Buffer[f32]):
    mats = cd.local_array(Acc[f32, 16, 16], 2)
    mats[0] = Acc[f32, 16, 16].splat(0.0)
    mats[1] = Acc[f32, 16, 16].splat(1.0)
    i = cd.local_invocation_id.x % 2  # L:pick
    m = mats[i]  # E:pick
    m.store(c, 0, stride=16)


def test_an_array_of_matrices_indexed_per_invocation():
    # each invocation would hold a different matrix: no cooperative matrix at all
    err = expect_error(pick_by_lane, UniformityError, f"the index into the array of matrices {RULE}: it depends on "
                       f"cd.local_invocation_id (line {marker_line('# L:pick')})", "# E:pick", 9)
    assert "Index arrays of matrices with values uniform across the subgroup" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def splat_of_an_element(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    Acc[f32, 16, 16](a[cd.local_invocation_index]).store(c, 0, stride=16)  # E:splat


def test_a_splat_of_a_per_invocation_value():
    expect_error(splat_of_an_element, UniformityError, f"the value of the matrix .splat {RULE}: it depends on "
                 "cd.local_invocation_index", "# E:splat", 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def scaled_per_lane(c: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].splat(1.0) * f32(cd.subgroup_invocation_id)  # E:scale
    m.store(c, 0, stride=16)


def test_a_matrix_times_a_per_invocation_scalar():
    expect_error(scaled_per_lane, UniformityError, f"the scalar of matrix * scalar {RULE}", "# E:scale", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def select_by_lane(c: cd.Buffer[f32]):
    zero, one = Acc[f32, 16, 16].splat(0.0), Acc[f32, 16, 16].splat(1.0)
    m = cd.select(cd.local_invocation_id.x < 16, zero, one)  # L:select
    m.store(c, 0, stride=16)  # E:select


def test_a_choice_between_matrices_on_a_per_invocation_condition():
    # (cd.select of matrices is a branch whose two sides meet: the chosen matrix differs per invocation)
    expect_error(select_by_lane, UniformityError, f"the matrix of the matrix store (.store) {RULE}: it depends on a "
                 f"value that depends on which way the branch at line {marker_line('# L:select')} went.",
                 "# E:select", 5)


@cd.kernel(workgroup_size=(64, 1, 1))
def workgroup_matrix_at_subgroup_offset(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    m = Acc[f32, 32, 32, cd.Workgroup].load(c, cd.subgroup_id * 1024, stride=32)  # E:wg
    m.store(c, 0, stride=32)


def test_a_workgroup_matrix_needs_workgroup_uniform_operands():
    expect_error(workgroup_matrix_at_subgroup_offset, UniformityError,
                 "the pointer (buffer and offset) of the matrix load (.load) must be the same in every invocation "
                 "of the workgroup (dynamically uniform, as SPIR-V requires of every operand of a "
                 "cooperative-matrix operation), but it is not: it depends on cd.subgroup_id, which is uniform "
                 "within each subgroup only: not enough for an operation of workgroup scope", "# E:wg", 9)


@cd.func
def tile_at(a: cd.Buffer[f16], row: u32):
    return MatA[f16, 16, 16].load(a, row * 16, stride=16)  # E:callee


@cd.kernel(workgroup_size=(32, 1, 1))
def call_with_lane(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    m = tile_at(a, cd.subgroup_invocation_id)  # L:call
    cd.muladd(m, MatB[f16, 16, 16].load(a, 0, stride=16), Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)


def test_an_operand_made_from_a_device_function_argument():
    rule = RULE.replace(", but it is not", "")
    err = expect_error(call_with_lane, UniformityError, f"the pointer (buffer and offset) of the matrix load (.load) "
                       f"{rule} (in tile_at(), called at line {marker_line('# L:call')}), but it is not",
                       "# E:callee", 12)
    assert "it depends on the argument 'row' of tile_at()" in err.message


# -- what stays accepted ------------------------------------------------------------------------------------
@cd.kernel(workgroup_size=(64, 1, 1))
def uniform_operands(a: cd.Buffer[f16], c: cd.Buffer[f32], k: u32, ROWS: cd.Spec[u32] = 2):
    acc = cd.local_array(Acc[f32, 16, 16], 2)
    for i in cd.range(ROWS, unroll=True):  # a loop counter: uniform
        acc[i] = Acc[f32, 16, 16].splat(0.0)
    for i in cd.range(ROWS, unroll=True):
        ta = MatA[f16, 16, 16].load(a, (cd.subgroup_id * ROWS + i) * 256 + k, stride=16)  # subgroup-uniform
        acc[i] = cd.muladd(ta, MatB[f16, 16, 16].load(a, 0, stride=16), acc[i])
    for i in cd.range(ROWS, unroll=True):
        m = acc[i]
        for e in range(m.length()):  # each invocation's own elements: per invocation by nature
            m[e] = cd.select(m[e] > 0.0, m[e], f32(cd.local_invocation_index) * 0.0)
        m.store(c, (cd.subgroup_id * ROWS + i) * 256, stride=16)
    mine = Acc[f32, 16, 16].splat(cd.assume_uniform(c[cd.local_invocation_index % 32 * 0]))  # promised
    mine.store(c, 4096, stride=16)


def test_uniform_and_subgroup_uniform_operands_and_per_invocation_elements_compile_and_run():
    uniform_operands.compile()
    a = np.random.default_rng(0).integers(-2, 3, 4096).astype(np.float16)
    c = np.zeros(4096 + 256, np.float32)
    uniform_operands.launch((1,), a, c, 3, device="cpu")
    b = a[:256].reshape(16, 16).astype(np.float32)
    for s in range(2):
        for i in range(2):
            t = a[(s * 2 + i) * 256 + 3:(s * 2 + i) * 256 + 3 + 256].reshape(16, 16).astype(np.float32)
            np.testing.assert_array_equal(c[(s * 2 + i) * 256:(s * 2 + i + 1) * 256].reshape(16, 16),
                                          np.maximum(t @ b, 0.0))


@pytest.mark.parametrize("scope", ["subgroup", "workgroup"])
def test_the_rule_is_documented(scope):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "uniformity.md").read_text()
    assert "Operands of cooperative-matrix operations" in text and f"the {scope}" in text


@cd.kernel(workgroup_size=(64, 1, 1))
def scale_from_shared(c: cd.Buffer[f32], s: cd.Buffer[f32]):
    sh = cd.shared(f32, 1)
    if cd.local_invocation_index == 0:
        sh[0] = s[0] * 2.0
    cd.barrier()
    scale = sh[0]  # one value for all, after the barrier: only possibly not uniform to the analysis
    m = Acc[f32, 16, 16].load(c, cd.subgroup_id * 256, stride=16)
    (m * scale).store(c, cd.subgroup_id * 256, stride=16)
    Acc[f32, 16, 16](scale).store(c, 512 + cd.subgroup_id * 256, stride=16)


@cd.kernel(workgroup_size=(64, 1, 1))
def scale_from_shared_and_lane(c: cd.Buffer[f32], s: cd.Buffer[f32]):
    sh = cd.shared(f32, 1)
    if cd.local_invocation_index == 0:
        sh[0] = s[0]
    cd.barrier()
    scale = sh[0] + f32(cd.subgroup_invocation_id)  # a value that certainly differs dominates
    (Acc[f32, 16, 16].splat(1.0) * scale).store(c, 0, stride=16)  # E:mixed


def test_an_operand_read_from_memory_the_kernel_writes_is_accepted_and_checked_at_run_time():
    # a scale broadcast through shared memory (GLSL and HLSL kernels do this) compiles and runs; only an
    # operand that certainly differs per invocation is a compile error
    scale_from_shared.compile()
    c = np.ones(1024, np.float32)
    scale_from_shared.launch((1,), c, np.array([1.5], np.float32), device="cpu")
    np.testing.assert_array_equal(c, np.full(1024, 3.0, np.float32))
    expect_error(scale_from_shared_and_lane, UniformityError, f"the scalar of matrix * scalar {RULE}: it depends on "
                 "cd.subgroup_invocation_id", "# E:mixed", 6)


@cd.kernel(workgroup_size=(32, 1, 1))
def splat_of_written_buffer_per_lane(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    v = a[cd.local_invocation_index]
    a[40] = 1.0
    Acc[f32, 16, 16].splat(v).store(o, 0, stride=16)  # E:writtenlane


def test_a_load_of_written_memory_at_a_per_invocation_address_certainly_differs():
    """As a load of a read-only buffer at that address does: it was accepted as only possibly different because
    the kernel writes the buffer elsewhere (found by a check written from the docs alone)."""
    expect_error(splat_of_written_buffer_per_lane, UniformityError, f"the value of the matrix .splat {RULE}: it "
                 "depends on cd.local_invocation_index", "# E:writtenlane", 5)


@cd.kernel(workgroup_size=(64, 1, 1))
def lane_by_the_back_edge(c: cd.Buffer[f32], s: cd.Buffer[f32], n: u32):
    sh = cd.shared(f32, 1)
    if cd.local_invocation_index == 0:
        sh[0] = s[0]
    cd.barrier()
    scale = sh[0]  # possibly different, at first sight
    for _ in range(n):
        (Acc[f32, 16, 16].splat(1.0) * scale).store(c, 0, stride=16)  # E:backedge
        scale = scale + f32(cd.subgroup_invocation_id)  # certainly different, from the second iteration on


def test_a_certain_divergence_that_arrives_by_a_loops_back_edge_is_found():
    expect_error(lane_by_the_back_edge, UniformityError, f"the scalar of matrix * scalar {RULE}: it depends on "
                 "cd.subgroup_invocation_id", "# E:backedge", 10)
