"""Shared (workgroup) arrays, local arrays, dynamic element access, barriers."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, TypeMismatchError, f16, f32, u32, vec4

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(64, 1, 1))
def staged(a: cd.Buffer[vec4[u32]], c: cd.Buffer[f32], N: cd.Spec[u32] = 64):
    tile = cd.shared(vec4[u32], N * 2)
    i = cd.local_invocation_index
    tile[i] = a[i]
    cd.barrier()
    # f16 matrices read from uvec4 storage: stride and offset count uvec4s (2 per 16-wide f16 row)
    ta = MatA[f16, 16, 16].load(tile, 0, stride=2)
    tb = MatB[f16, 16, 16].load(tile, 32, stride=2, layout=cd.ColumnMajor)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))
    cd.control_barrier(cd.Workgroup, cd.Workgroup, ("AcquireRelease", "WorkgroupMemory"))
    cd.memory_barrier(cd.Device, ("AcquireRelease", "UniformMemory"))
    acc.store(c, 0, stride=16)


def test_shared_memory_staging_for_cooperative_matrices():
    compile_checked(staged, r"%tile = OpVariable %_ptr_Workgroup_\w+ Workgroup",
                    r"OpSpecConstantOp %uint IMul %N %uint_2", r"OpTypeArray %v4uint %\w+",
                    r"OpAccessChain %_ptr_Workgroup_v4uint %tile",
                    r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_0 %uint_2",
                    r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_1 %uint_2",
                    r"OpControlBarrier %uint_2 %uint_2 %uint_264", r"OpMemoryBarrier %uint_1 %uint_72",
                    r"OpCapability VulkanMemoryModelDeviceScope")


@cd.kernel(workgroup_size=(32, 1, 1))
def locals_and_elements(c: cd.Buffer[f32], n: u32):
    arr = cd.local_array(f32, 8)
    for j in range(8):
        arr[j] = f32(j)
    acc = Acc[f32, 16, 16].splat(1.0)
    for j in range(acc.length()):
        acc[j] = acc[j] * arr[j % 8]
    v = cd.vec4[f32](1.0, 2.0, 3.0, 4.0)
    v[n % 4] = 0.0
    c[0] = acc[n] + v.x
    acc.store(c, 16, stride=16)


def test_local_arrays_and_runtime_element_indices():
    text = compile_checked(locals_and_elements, r"OpVariable %_ptr_Function__arr_float_uint_8 Function",
                           r"OpAccessChain %_ptr_Function_float", r"OpVectorInsertDynamic",
                           r"OpCooperativeMatrixLengthKHR")
    first_label = text.index("OpLabel")
    assert text.index("Function\n", first_label) < text.index("OpAccessChain", first_label)


@cd.kernel
def k_shared_matrix(c: cd.Buffer[f32]):
    t = cd.shared(Acc[f32, 16, 16], 4)  # E:sharedmat


def test_no_matrices_in_shared_memory():
    expect_error(k_shared_matrix, TypeMismatchError, "cooperative matrices may only live in Function or Private",
                 "# E:sharedmat", 9)


@cd.kernel
def k_shared_float_index(c: cd.Buffer[f32]):
    t = cd.shared(f32, 64)
    t[1.5] = 0.0  # E:sharedidx


def test_shared_index_must_be_integer():
    expect_error(k_shared_float_index, TypeMismatchError, "a shared array index must be an integer", "# E:sharedidx",
                 5)


@cd.kernel
def k_shared_store_type(c: cd.Buffer[f32]):
    t = cd.shared(f16, 64)
    t[0] = c[0]  # E:sharedstore


def test_shared_store_type():
    expect_error(k_shared_store_type, TypeMismatchError, "cannot store a runtime f32 into shared array 't' of f16",
                 "# E:sharedstore", 5)


@cd.kernel
def k_bad_semantics(c: cd.Buffer[f32]):
    cd.memory_barrier(cd.Workgroup, ("Acquire", "Release"))  # E:sem


def test_barrier_semantics_are_checked():
    expect_error(k_bad_semantics, cd.ArgumentError, "at most one ordering", "# E:sem", 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def memory_ops(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16, aligned=16, nontemporal=True)
    tb = MatB[f16, 16, 16].load(a, 256, stride=16, visible=cd.Workgroup)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16, available=cd.Device, volatile=True)
    x = cd.load_element(c, 5, aligned=4, visible=cd.Subgroup)
    cd.store_element(c, 6, x, nontemporal=True, available=cd.Workgroup)


def test_memory_operands():
    compile_checked(memory_ops,
                    r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_0 %uint_16 Aligned\|Nontemporal 16",
                    r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_0 %uint_16 MakePointerVisible\|NonPrivatePointer "
                    r"%uint_2",
                    r"OpCooperativeMatrixStoreKHR %\w+ %\w+ %uint_0 %uint_16 Volatile\|MakePointerAvailable\|"
                    r"NonPrivatePointer %uint_1",
                    r"OpLoad %float %\w+ Aligned\|MakePointerVisible\|NonPrivatePointer 4 %uint_3",
                    r"OpStore %\w+ %\w+ Nontemporal\|MakePointerAvailable\|NonPrivatePointer %uint_2")


@cd.kernel(workgroup_size=(32, 1, 1))
def k_visible_store(c: cd.Buffer[f32]):
    Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16, visible=cd.Device)  # E:visstore


def test_visible_on_a_store_is_rejected():
    expect_error(k_visible_store, cd.ArgumentError, "visible= applies to loads; a store takes available=",
                 "# E:visstore", 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bad_align(a: cd.Buffer[f16]):
    t = MatA[f16, 16, 16].load(a, 0, stride=16, aligned=12)  # E:align


def test_alignment_must_be_a_power_of_two():
    expect_error(k_bad_align, cd.ArgumentError, "aligned must be a power-of-two", "# E:align", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_huge_align(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    cd.store_element(c, 0, 1.0, aligned=2**31)  # a 32-bit literal: fine
    Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16, aligned=2**40)  # E:hugealign


def test_an_alignment_beyond_32_bits_is_refused_not_wrapped():
    # the Aligned memory operand is one 32-bit word: 2**40 once reached spirv-val as "Aligned 0"
    expect_error(k_huge_align, cd.ArgumentError, "aligned=1099511627776: the literal 1099511627776 does not fit "
                 "in u32 (0..4294967295)", "# E:hugealign", 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_huge_local(c: cd.Buffer[f32]):
    p = cd.local_array(f32, 2**32)  # E:hugelocal
    p[0] = 1.0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_huge_shared(c: cd.Buffer[f32]):
    p = cd.shared(f32, 2**40)  # E:hugeshared
    p[0] = 1.0


@pytest.mark.parametrize("k, name, n, marker", [(k_huge_local, "local_array", 2**32, "# E:hugelocal"),
                                                 (k_huge_shared, "shared", 2**40, "# E:hugeshared")])
def test_an_array_length_beyond_32_bits_is_refused_not_wrapped(k, name, n, marker):
    # OpTypeArray's length is a 32-bit constant: these once reached spirv-val as a length of 0
    expect_error(k, cd.ArgumentError, f"{name}: the length {n} does not fit an array type: the literal {n} does "
                 "not fit in u32 (0..4294967295)", marker, 9)


@cd.kernel(workgroup_size=(16, 16, 1))
def padded_transpose(src: cd.Buffer[f32], dst: cd.Buffer[f32], rows: cd.Buffer[f32], n: u32):
    tile = cd.shared(cd.array[f32, 17], 16)       # GLSL: shared float tile[16][17];
    x = cd.local_invocation_id.x
    y = cd.local_invocation_id.y
    tile[y][x] = src[y * n + x]
    cd.barrier()
    dst[y * n + x] = tile[x][y]
    loc = cd.local_array(cd.array[f32, 2], 3)      # float loc[3][2];
    loc[y % 3][x % 2] = f32(x + y)
    rows[y * n + x] = loc[y % 3][x % 2]


def _run_padded_transpose(device):
    a = np.arange(256, dtype=np.float32)
    out, rows = np.zeros(256, np.float32), np.zeros(256, np.float32)
    padded_transpose.launch((1,), a, out, rows, 16, device=device)
    assert np.array_equal(out.reshape(16, 16), a.reshape(16, 16).T)
    y, x = np.mgrid[0:16, 0:16]
    assert rows.reshape(16, 16).tolist() == (x + y).astype(np.float32).tolist()


def test_arrays_of_arrays_in_shared_and_local_memory():
    """``shared float tile[16][17];`` (a padded transpose tile) and ``float loc[3][2];``: refused before ("the
    element type must be a numeric scalar or vector type"; found by porting HLSL kernels from the docs alone).
    ``tile[y]`` is the row in memory, so ``tile[y][x]`` is one access chain, as in GLSL."""
    text = compile_checked(padded_transpose, r"OpTypeArray %_arr_float_uint_17 %uint_16",
                           r"%tile = OpVariable %_ptr_Workgroup__arr__arr_float_uint_17_uint_16 Workgroup",
                           r"(%\w+) = OpAccessChain %_ptr_Workgroup__arr_float_uint_17 %tile %\w+",
                           r"OpAccessChain %_ptr_Workgroup_float %\w+ %\w+",
                           r"OpAccessChain %_ptr_Function_float %\w+ %\w+")
    assert "OpDecorate %_arr_float_uint_17 ArrayStride" not in text   # (no layout in Workgroup memory)
    _run_padded_transpose("cpu")
    shared = padded_transpose.reflect()["shared_memory"]
    assert shared["bytes"] == 16 * 17 * 4 and shared["arrays"][0]["components"] == 68


def test_arrays_of_arrays_in_shared_memory_on_the_device(device):
    _run_padded_transpose(device)


@cd.kernel(workgroup_size=(4, 1, 1))
def shared_flags(b: cd.Buffer[u32]):
    s = cd.shared(cd.boolean, 4)                   # shared bool s[4];
    v = cd.local_array(cd.vec2[cd.boolean], 2)     # bvec2 v[2];
    p = cd.private_array(cd.boolean, 1)
    i = cd.local_invocation_index
    s[i] = i % 2 == 0
    v[1] = cd.vec2[cd.boolean](b[4 + i] > 2, s[i])
    p[0] = v[1].x
    cd.barrier()
    b[i] = u32(s[(i + 1) % 4]) + 2 * u32(p[0]) + 4 * u32(v[1].y)


def _run_shared_flags(device):
    b = np.array([0, 0, 0, 0, 1, 5, 2, 9], np.uint32)
    shared_flags.launch((1, 1, 1), b, device=device)
    assert b[:4].tolist() == [0 + 0 + 4, 1 + 2 + 0, 0 + 0 + 4, 1 + 2 + 0]


def test_shared_local_and_private_arrays_of_bools():
    """GLSL's ``shared bool s[4];``: OpTypeBool in Workgroup (and Function, Private) memory, as glslang emits it;
    the interpreter's answer; lavapipe's in test_shared_arrays_of_bools_on_a_device."""
    compile_checked(shared_flags, r"%_ptr_Workgroup_bool = OpTypePointer Workgroup %bool",
                    r"OpVariable %_ptr_Workgroup__arr_bool_uint_4 Workgroup",
                    r"OpTypePointer Function %_arr_v2bool_uint_2", r"OpTypePointer Private %_arr_bool_uint_1")
    _run_shared_flags("cpu")


def test_shared_arrays_of_bools_on_a_device(device):
    _run_shared_flags(device)


@cd.kernel(workgroup_size=(8, 1, 1))
def k_spec_rows(y: cd.Buffer[f32], T: cd.Spec[u32] = 8):
    tile = cd.shared(cd.array[f32, T + 1], T)  # E:specrows
    y[0] = tile[0][0]


def test_a_shared_array_of_spec_sized_rows_is_refused_at_its_line():
    """The host reads a shared array's bytes (reflection, launches) before running it: an inner length that is a
    specialization constant gave no size, and reflect() and every launch failed with a bare TypeError."""
    expect_error(k_spec_rows, TypeMismatchError, "shared: an element of the type f32[(T + 1)] has no fixed size (an "
                 "inner length is a specialization constant)", "# E:specrows", 12)


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
def k_matrix_rows(out: cd.Buffer[f32]):
    accs = cd.local_array(cd.array[Acc[f32, 16, 16], 2], 2)  # E:matrows
    out[0] = 1.0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bool_rows(out: cd.Buffer[f32]):
    t = cd.shared(cd.array[cd.boolean, 4], 4)  # E:boolrows
    out[0] = 1.0


def test_arrays_of_arrays_refuse_matrices_and_bools():
    # (the row's array type refuses them, at its spelling)
    expect_error(k_matrix_rows, TypeMismatchError, "array elements are numeric scalars or vectors, not "
                 "Acc[f32, 16, 16]", "# E:matrows", 27)
    expect_error(k_bool_rows, TypeMismatchError, "array elements are numeric scalars or vectors, not bool",
                 "# E:boolrows", 19)


@cd.kernel(workgroup_size=(64, 1, 1))
def lengths(x: cd.Buffer[f32], v: cd.Buffer[cd.vec3[f32]], h: cd.Buffer[cd.f16], o: cd.Buffer[u32],
            N: cd.Spec[u32] = 5):
    sh = cd.shared(f32, 64)
    lo = cd.local_array(f32, N)
    pa = cd.private_array(u32, 3)
    i = cd.local_invocation_index
    sh[i] = x[min(i, len(x) - 1)]      # a runtime u32: the bytes the launch binds over the element's stride
    cd.barrier()
    if i == 0:
        o[0] = len(x)
        o[1] = len(v)                  # (vec3: 16-byte elements)
        o[2] = len(h)
        o[3] = len(sh) + len(pa)       # compile-time ints
        o[4] = len(lo)                 # the specialization constant
        o[5] = len(o)
        o[6] = u32(sh[len(sh) - 1])


@pytest.mark.parametrize("n", [1, 2, 3, 10, 100])
def test_len_of_a_buffer_is_its_bound_element_count_and_of_an_array_its_length(n):
    """GLSL's buf.length() (OpArrayLength): the elements of the array a launch binds; shared, local and private
    arrays give their declared length, an int or the specialization constant."""
    compile_checked(lengths, r"OpArrayLength %uint %\w+ 0", r"OpSpecConstant %uint 5")
    o = np.zeros(8, np.uint32)
    x = np.arange(n, dtype=np.float32)
    lengths.launch((1, 1, 1), x, np.zeros((n + 1, 4), np.float32), np.zeros(n, np.float16), o, device="cpu", N=7)
    assert o.tolist() == [n, n + 1, n, 67, 7, 8, min(n, 64) - 1, 0]


@cd.kernel(workgroup_size=(1, 1, 1))
def length_of_a_value(x: cd.Buffer[f32], o: cd.Buffer[u32]):
    o[0] = len(x[0])  # E:len-value


def test_len_of_a_runtime_value_says_what_len_takes():
    expect_error(length_of_a_value, TypeMismatchError, "len() takes a compile-time list or tuple, an array "
                 "(cd.array, shared, local or private) or a storage buffer; got a runtime f32", "# E:len-value", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def length_of_two(x: cd.Buffer[f32], o: cd.Buffer[u32]):
    o[0] = len(x, x)  # E:len-two


def test_len_of_two_arguments_says_it_takes_one():
    expect_error(length_of_two, TypeMismatchError, "len() takes exactly one argument (2 given)", "# E:len-two", 12)
