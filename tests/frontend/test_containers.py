"""Compile-time lists of runtime values: accumulator arrays that cost nothing (one phi each)."""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, TypeMismatchError, f16, f32, u32

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def tiles_2x2(a: cd.Buffer[f16], c: cd.Buffer[f32], K: cd.Spec[u32] = 64):
    acc = [[Acc[f32, 16, 16].splat(0.0) for j in cd.static_range(2)] for i in cd.static_range(2)]
    for kk in range(0, K, 16):
        ta = [MatA[f16, 16, 16].load(a, kk + i * 16, stride=K) for i in cd.static_range(2)]
        tb = [MatB[f16, 16, 16].load(a, kk + j * 16, stride=K) for j in cd.static_range(2)]
        for i in cd.static_range(2):
            for j in cd.static_range(2):
                acc[i][j] = cd.muladd(ta[i], tb[j], acc[i][j])
    for i in cd.static_range(2):
        for j in cd.static_range(2):
            acc[i][j].store(c, (i * 2 + j) * 256, stride=16)


def test_accumulator_list_is_carried_by_one_phi_per_tile():
    text = compile_checked(tiles_2x2, r"OpCooperativeMatrixMulAddKHR")
    assert text.count("OpCooperativeMatrixMulAddKHR") == 4
    assert text.count("OpPhi") == 5  # 4 accumulators + the loop counter
    assert "Function" not in text.split("OpFunction ", 1)[1].split("OpFunctionEnd")[0].replace(
        "OpFunction", "")  # no memory variables: the list exists only at compile time


@cd.kernel(workgroup_size=(32, 1, 1))
def list_merge(c: cd.Buffer[f32], n: u32):
    vals = [f32(0.0), f32(1.0)] * 2
    if n > 3:
        vals[1] = c[0]
    total = vals[0] + vals[1] + vals[2] + vals[3]
    c[1] = total


def test_list_elements_merge_after_an_if():
    compile_checked(list_merge, r"OpPhi %float %float_1 %\w+ %\w+ %\w+")


@cd.kernel
def k_runtime_index(c: cd.Buffer[f32], n: u32):
    vals = [f32(0.0), f32(1.0)]
    vals[n] = 2.0  # E:listidx


def test_list_index_must_be_compile_time():
    expect_error(k_runtime_index, TypeMismatchError, "elements of a compile-time list are chosen with compile-time "
                 "integers", "# E:listidx", 10)


@cd.kernel
def k_store_past_end(c: cd.Buffer[f32]):
    vals = [c[0], c[1]]
    vals[2] = c[0]  # E:past_end
    c[0] = vals[0]


@cd.kernel
def k_store_before_start(c: cd.Buffer[f32]):
    vals = [c[0], c[1]]
    vals[-3] = c[0]  # E:before_start
    c[0] = vals[0]


@cd.kernel
def k_store_huge_index(c: cd.Buffer[f32]):
    vals = [c[0], c[1]]
    vals[2**70] = c[0]  # E:huge_index
    c[0] = vals[0]


@cd.kernel
def k_store_nested_past_end(c: cd.Buffer[f32]):
    rows = [[c[0], c[1]], [c[1], c[0]]]
    rows[0][-3] = c[0]  # E:nested_past_end
    c[0] = rows[0][0]


def test_storing_past_either_end_of_a_list_is_the_error_reading_there_gives():
    """``t[2] = v`` on a list of 2 was an internal error (an IndexError); ``t[2] += v`` already said this."""
    expect_error(k_store_past_end, TypeMismatchError, "index 2 out of range for a tuple of 2", "# E:past_end", 5)
    expect_error(k_store_before_start, TypeMismatchError, "index -3 out of range for a tuple of 2",
                 "# E:before_start", 5)
    expect_error(k_store_huge_index, TypeMismatchError, f"index {2**70} out of range for a tuple of 2",
                 "# E:huge_index", 5)
    expect_error(k_store_nested_past_end, TypeMismatchError, "index -3 out of range for a tuple of 2",
                 "# E:nested_past_end", 5)
