"""An array laid out for memory (an array member of a push-constant or buffer struct, held as a value) indexed at
run time: the value is spilled to a Function variable to be indexed, and Vulkan allows no layout decorations
there (VUID-StandaloneSpirv-None-10684), so it is rebuilt without its ArrayStride (and its structs without their
Offsets) first. Before, ``q.arr[i % 4]`` on a push-constant struct was an InternalCompilerError (spirv-val
refused the module; found by a check written from the docs alone)."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32

from ..conftest import compile_checked


@cd.struct
class Table:
    arr: cd.array[u32, 4]
    his: cd.array[f32, 3]
    scale: f32


@cd.kernel(workgroup_size=(8, 1, 1))
def k_reads(out: cd.Buffer[u32], outf: cd.Buffer[f32], q: Table):
    i = cd.global_invocation_id.x
    out[i] = q.arr[i % 4] + u32(10) * (i % 3)
    outf[i] = q.his[i % 3] * q.scale


@cd.kernel(workgroup_size=(8, 1, 1))
def k_writes(out: cd.Buffer[u32], q: Table):
    i = cd.global_invocation_id.x
    a = q.arr
    a[i % 4] = u32(100) + i                  # a value copy of the member, updated at a run-time index
    out[i] = a[(i + 1) % 4] + a[i % 4]


@cd.kernel(workgroup_size=(8, 1, 1))
def k_buffer_value(tables: cd.Buffer[Table], out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    t = tables[i % 2]                        # a buffer element held as a value
    out[i] = t.arr[i % 4] + u32(t.his[(i + 2) % 3])


TABLE = np.dtype({"names": ["arr", "his", "scale"], "formats": [(np.uint32, 4), (np.float32, 3), np.float32],
                  "offsets": [0, 16, 28], "itemsize": 32})
Q = {"arr": [5, 6, 7, 8], "his": [0.5, 1.5, 2.5], "scale": 2.0}


def _want_reads() -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(8)
    arr, his = np.array(Q["arr"]), np.array(Q["his"])
    return (arr[i % 4] + 10 * (i % 3)).astype(np.uint32), (his[i % 3] * 2.0).astype(np.float32)


def _want_writes() -> np.ndarray:
    out = []
    for i in range(8):
        a = list(Q["arr"])
        a[i % 4] = 100 + i
        out.append(a[(i + 1) % 4] + a[i % 4])
    return np.array(out, np.uint32)


def _tables() -> np.ndarray:
    t = np.zeros(2, TABLE)
    t["arr"] = [[1, 2, 3, 4], [50, 60, 70, 80]]
    t["his"] = [[7, 8, 9], [700, 800, 900]]
    return t


def _want_buffer(t: np.ndarray) -> np.ndarray:
    i = np.arange(8)
    return (t["arr"][i % 2, i % 4] + t["his"][i % 2, (i + 2) % 3]).astype(np.uint32)


def test_run_time_indices_into_laid_out_arrays_validate_without_layout_in_function_storage():
    for k in (k_reads, k_writes, k_buffer_value):
        text = compile_checked(k, r"OpCompositeConstruct %_arr_(uint_uint_4|float_uint_3)_0 ",
                               r"OpVariable %_ptr_Function__arr_")
        function_types = {line.split()[-1] for line in text.splitlines()
                          if "OpTypePointer Function %_arr_" in line}
        strided = {line.split()[0] for line in text.splitlines() if "OpDecorate" in line and "ArrayStride" in line}
        assert function_types and not function_types & strided, k.name


@pytest.mark.parametrize("target_env", ["vulkan1.1", "vulkan1.2", "vulkan1.4"])
def test_older_targets_take_it_too(target_env):
    compile_checked(k_writes, target_env=target_env)


def test_on_the_interpreter():
    out, outf = np.zeros(8, np.uint32), np.zeros(8, np.float32)
    k_reads.launch((1,), out, outf, Q, device="cpu")
    want, wantf = _want_reads()
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(outf, wantf)
    k_writes.launch((1,), out, Q, device="cpu")
    np.testing.assert_array_equal(out, _want_writes())
    t = _tables()
    k_buffer_value.launch((1,), t, out, device="cpu")
    np.testing.assert_array_equal(out, _want_buffer(t))


@pytest.mark.vulkan
def test_on_a_vulkan_device(device):
    out, outf = np.zeros(8, np.uint32), np.zeros(8, np.float32)
    k_reads.launch((1,), out, outf, Q, device=device)
    want, wantf = _want_reads()
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(outf, wantf)
    k_writes.launch((1,), out, Q, device=device)
    np.testing.assert_array_equal(out, _want_writes())
    t = _tables()
    k_buffer_value.launch((1,), t, out, device=device)
    np.testing.assert_array_equal(out, _want_buffer(t))


@cd.kernel(workgroup_size=(2, 1, 1))
def k_store_array_values(tables: cd.Buffer[Table]):
    i = cd.global_invocation_id.x
    a = cd.array[u32, 4](1, 2, 3, 4)         # an array value, with no layout
    a[i % 4] = u32(10) * (i + 1)
    tables[i].arr = a                         # into a member laid out for memory
    t = tables[i]
    t.his = cd.array[f32, 3](0.5, 1.5, 2.5)   # into the member of a struct value held by a name
    tables[i].his = t.his


def _want_store(t: np.ndarray) -> np.ndarray:
    want = t.copy()
    for i in range(2):
        want["arr"][i] = [1, 2, 3, 4]
        want["arr"][i][i % 4] = 10 * (i + 1)
        want["his"][i] = [0.5, 1.5, 2.5]
    return want


def test_an_array_value_is_stored_into_a_laid_out_member():
    # before: "cannot store a runtime u32[4] into member 'arr' of type u32[4]" (the types differed by layout)
    compile_checked(k_store_array_values, r"OpCompositeConstruct %_arr_uint_uint_4 ")
    t = _tables()
    want = _want_store(t)
    k_store_array_values.launch((1,), t, device="cpu")
    np.testing.assert_array_equal(t["arr"], want["arr"])
    np.testing.assert_array_equal(t["his"], want["his"])


@pytest.mark.vulkan
def test_an_array_value_is_stored_into_a_laid_out_member_on_a_vulkan_device(device):
    t = _tables()
    want = _want_store(t)
    k_store_array_values.launch((1,), t, device=device)
    np.testing.assert_array_equal(t["arr"], want["arr"])
    np.testing.assert_array_equal(t["his"], want["his"])


@cd.kernel(workgroup_size=(2, 1, 1))
def k_compare_member_array(tables: cd.Buffer[Table], out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    out[i] = u32(tables[i].arr == tables[0].arr)  # E:cmp


@cd.kernel(workgroup_size=(2, 1, 1))
def k_convert_member_array(tables: cd.Buffer[Table], out: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    out[i] = f32(tables[i].his)  # E:conv


def test_an_array_member_in_memory_is_named_in_words_not_as_an_internal_object():
    from ..conftest import expect_error

    expect_error(k_compare_member_array, cd.TypeMismatchError,
                 "unsupported operand for ==: an array in the memory of buffer 'tables' (index it)", "# E:cmp", 18)
    expect_error(k_convert_member_array, cd.TypeMismatchError,
                 "got an array in the memory of buffer 'tables' (index it)", "# E:conv", 14)


@cd.kernel(workgroup_size=(2, 1, 1))
def k_member_index_out_of_range(tables: cd.Buffer[Table], out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    out[i] = tables[i].arr[4]  # E:range


def test_a_constant_index_past_an_array_member_names_the_member():
    from ..conftest import expect_error

    expect_error(k_member_index_out_of_range, cd.TypeMismatchError,
                 "index 4 is out of bounds for an array member in buffer 'tables' of 4 elements", "# E:range", 14)
