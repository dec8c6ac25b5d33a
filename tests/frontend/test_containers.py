"""Compile-time lists of runtime values: accumulator arrays that cost nothing (one phi each)."""

import coopdsl as cd
from coopdsl import Acc, CompileError, MatA, MatB, TypeMismatchError, f16, f32, u32

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


@cd.func
def _add3(a, b, c):
    return a + b + c


@cd.kernel(workgroup_size=(1, 1, 1))
def star_unpacking(x: cd.Buffer[f32], o: cd.Buffer[f32]):
    t = [x[0], x[1]]
    u = [*t, x[2], *(x[3],)]            # a display splices compile-time lists and tuples
    v = cd.vec4[f32](*u)                # so does a call: a constructor, a device function, a builtin
    first, *rest = u                    # and an assignment's starred name takes a list of the rest
    *init, last = u
    a, *mid, z = u
    mid[0] = mid[0] * 10.0              # (a list: its items may be assigned)
    o[0] = _add3(*t, x[2])
    o[1] = v.w + max(*t)
    o[2] = first + last
    o[3] = rest[0] + init[2]
    o[4] = mid[0] + mid[1] + a + z
    o[5] = f32(len(rest) + len([*t, *t]) + len(mid))
    e, *none = (x[0],)
    o[6] = f32(len(none)) + e


def test_star_unpacks_compile_time_lists_in_displays_calls_and_assignments():
    import numpy as np

    compile_checked(star_unpacking, r"OpFAdd %float")
    o = np.zeros(7, np.float32)
    star_unpacking.launch((1, 1, 1), np.arange(1, 5, dtype=np.float32), o, device="cpu")
    assert o.tolist() == [6.0, 6.0, 5.0, 5.0, 28.0, 9.0, 1.0]


@cd.kernel(workgroup_size=(1, 1, 1))
def star_of_a_runtime_value(x: cd.Buffer[f32], o: cd.Buffer[f32]):
    t = [*x[0], x[1]]  # E:star-runtime
    o[0] = t[0]


@cd.kernel(workgroup_size=(1, 1, 1))
def star_of_a_vector_in_a_call(x: cd.Buffer[cd.vec4[f32]], o: cd.Buffer[f32]):
    o[0] = max(*x[0])  # E:star-vector


@cd.kernel(workgroup_size=(1, 1, 1))
def starred_names_past_the_items(x: cd.Buffer[f32]):
    a, b, *c = (x[0],)  # E:star-few
    x[1] = a


def test_star_of_what_is_not_a_compile_time_list_is_located():
    expect_error(star_of_a_runtime_value, TypeMismatchError, "'*' unpacks a list or tuple known at compile time, "
                 "got a runtime f32", "# E:star-runtime", 10)
    expect_error(star_of_a_vector_in_a_call, TypeMismatchError, "'*' unpacks a list or tuple known at compile "
                 "time, got a runtime vec4[f32] (a vector's components are v.x, v.y, ...)", "# E:star-vector", 16)
    expect_error(starred_names_past_the_items, TypeMismatchError, "cannot unpack a compile-time tuple of 1 into 2 "
                 "or more names", "# E:star-few", 5)


@cd.kernel(workgroup_size=(8, 1, 1))
def list_grown_in_a_loop(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    acc = [x[i]]
    for _j in range(n):  # E:grow
        acc = [*acc, 1.0]
    y[i] = acc[0] + f32(len(acc))


@cd.kernel(workgroup_size=(8, 1, 1))
def nested_list_reshaped_in_a_loop(x: cd.Buffer[f32], n: u32):
    t = [[x[0], x[1]], x[2]]
    while n > 0:  # E:reshape
        t = [t[0] + [x[3]], t[1]]
        n -= 1
    x[0] = t[1]


def test_a_runtime_loop_that_changes_a_lists_length_is_located():
    """It compiled, and the items added in the loop were dropped (len(acc) stayed 1 on the interpreter and on
    lavapipe); a shorter list was already refused."""
    expect_error(list_grown_in_a_loop, CompileError, "'acc' changes its shape (a compile-time list) inside the "
                 "loop: [_] when the loop starts, [_, _] after an iteration (_ an item)", "# E:grow", 5)
    expect_error(nested_list_reshaped_in_a_loop, CompileError, "'t' changes its shape (a compile-time list) inside "
                 "the loop: [[_, _], _] when the loop starts, [[_, _, _], _] after an iteration", "# E:reshape",
                 5)
