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
