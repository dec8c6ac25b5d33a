"""``cd.private_array``: a per-invocation array at module scope (OpVariable Private), as a GLSL global array."""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, TypeMismatchError, f16, f32, u32

from ..conftest import compile_checked, expect_error, marker_line


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
def privates(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32], out: cd.Buffer[u32],
             N: cd.Spec[u32] = 4):
    acc = cd.private_array(Acc[f32, 16, 16], 2)
    vals = cd.private_array(u32, N)
    i = cd.local_invocation_id.x
    for t in range(N):
        vals[t] = i * 10 + t
    out[i] = vals[i % N]                      # a runtime index
    acc[0] = Acc[f32, 16, 16].splat(0.0)
    acc[1] = Acc[f32, 16, 16].splat(1.0)
    for kk in range(2):
        ta = MatA[f16, 16, 16].load(a, kk * 16, stride=32, layout=RowMajor)
        tb = MatB[f16, 16, 16].load(b, kk * 256, stride=16, layout=RowMajor)
        acc[kk] = cd.muladd(ta, tb, acc[kk])
    (acc[0] + acc[1]).store(c, 0, stride=16, layout=RowMajor)


def test_private_arrays_are_module_scope_private_variables_in_the_interface():
    text = compile_checked(privates, r"%acc = OpVariable %_ptr_Private__arr_\w+_uint_2 Private",
                           r"%vals = OpVariable %_ptr_Private__arr_uint_N Private",
                           r"OpAccessChain %_ptr_Private_uint %vals", r"OpEntryPoint GLCompute %privates .* %vals",
                           r"OpEntryPoint GLCompute %privates .* %acc")
    first_label = text.index("OpLabel")  # no Private variable inside the function
    assert not any("OpVariable" in line and "Private" in line for line in text[first_label:].splitlines())


def test_each_invocation_has_its_own_private_array():
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (16, 32)).astype(np.float16)
    b = rng.integers(-2, 3, (32, 16)).astype(np.float16)
    c, out = np.zeros((16, 16), np.float32), np.zeros(32, np.uint32)
    privates.launch((1,), a, b, c, out, device="cpu")
    f = np.float32
    ref = a[:, :16].astype(f) @ b[:16].astype(f) + a[:, 16:].astype(f) @ b[16:].astype(f) + 1
    np.testing.assert_array_equal(c, ref)
    np.testing.assert_array_equal(out, [i * 10 + i % 4 for i in range(32)])


@cd.kernel(workgroup_size=(32, 1, 1))
def k_private_matrix_load(c: cd.Buffer[f32]):
    p = cd.private_array(f32, 256)
    m = Acc[f32, 16, 16].load(p, 0, stride=16)  # E:privload


def test_no_matrix_loads_from_private_arrays():
    expect_error(k_private_matrix_load, TypeMismatchError,
                 "cannot load a cooperative matrix from private array 'p': Vulkan allows matrix loads and stores "
                 "only on buffers, shared arrays and Ptr[...]", "# E:privload", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_private_buffer_elem(c: cd.Buffer[f32]):
    p = cd.private_array(cd.Buffer[f32], 4)  # E:privbuf


def test_private_array_elements_are_data_types():
    """Scalars (bools too: GLSL's ``bool p[4];``, test_memory.py), vectors, structs and arrays; not a buffer."""
    expect_error(k_private_buffer_elem, TypeMismatchError, "private_array: the element type must be a scalar, "
                 "vector, struct or array type", "# E:privbuf", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_private_zero(c: cd.Buffer[f32]):
    p = cd.private_array(f32, 0)  # E:privzero


def test_private_array_length_is_positive():
    expect_error(k_private_zero, cd.ArgumentError, "private_array: the length must be positive, got 0",
                 "# E:privzero", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_private_huge(c: cd.Buffer[f32]):
    p = cd.private_array(f32, 2**40)  # E:privhuge
    p[0] = 1.0


def test_private_array_length_fits_32_bits():
    expect_error(k_private_huge, cd.ArgumentError, "private_array: the length 1099511627776 does not fit an array "
                 "type: the literal 1099511627776 does not fit in u32", "# E:privhuge", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_private_branch(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    p = cd.private_array(u32, 2)
    q = cd.private_array(u32, 2)
    p[0] = u32(1)
    q[0] = cd.local_invocation_id.x  # L:privdiv
    if p[0] == 1:  # uniform: what was stored is
        Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=16)
    if q[0] == 1:
        m = Acc[f32, 16, 16].splat(0.0)
        m.store(c, 0, stride=16)  # E:privstore


def test_a_private_array_is_as_uniform_as_what_was_stored_into_it():
    # each invocation has its own array, which only the kernel uses: the analysis follows what was stored
    # into it, as for a local array
    err = expect_error(k_private_branch, cd.UniformityError, "it depends on cd.local_invocation_id",
                       "# E:privstore", 9)
    assert f"(line {marker_line('# L:privdiv')})" in err.message


