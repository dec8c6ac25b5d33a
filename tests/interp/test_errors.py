"""Behaviour the hardware leaves undefined is reported at the user's line."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, f16, f32, u32
from coopdsl.interp import InterpreterError, LaunchArgumentError

from .conftest import expect_interp_error


@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_matrix(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].splat(0.0)
    if cd.assume_uniform(cd.subgroup_invocation_id < 16):  # a false assumption the compiler must trust
        acc = Acc[f32, 16, 16].load(c, 0, stride=16)  # E:divergent
    acc.store(c, 0, stride=16)


def test_matrix_op_reached_by_part_of_its_subgroup():
    err = expect_interp_error(
        lambda: divergent_matrix.launch((1,), np.zeros(256, np.float16), np.zeros(256, np.float32), device="cpu"),
        "cooperative-matrix operation 'coop_load' reached by 16 of the 32 invocations of its subgroup", "# E:divergent")
    assert "non-uniform control flow" in err.message


@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_element(c: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].splat(1.0)
    if cd.local_invocation_index < 3:
        c[cd.local_invocation_index] = m[0]  # E:element
    m2 = Acc[f32, 16, 16].splat(0.0)
    m2[0] = cd.select(cd.local_invocation_index < 3, 5.0, m2[0])
    m2.store(c, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def divergent_insert(c: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].splat(0.0)
    if cd.local_invocation_index < 3:
        m[0] = 5.0
    m.store(c, 0, stride=16)  # E:insertstore


def test_a_constant_index_element_under_a_divergent_branch_is_reported():
    # SPV_KHR_cooperative_matrix (issue 11): instructions with a matrix operand, OpCompositeInsert/Extract too, need
    # the matrix's uniform control flow. The compiler does not check the element access itself (docs/uniformity.md):
    # the interpreter does, at the element's line; a matrix changed under a divergent branch is a compile error where
    # it is used next; the cd.select form the page gives compiles and runs
    from coopdsl.errors import UniformityError

    expect_interp_error(lambda: divergent_element.launch((1,), np.zeros(256, np.float32), device="cpu"),
                        "cooperative-matrix operation 'extract' reached by 3 of the 32 invocations of its subgroup",
                        "# E:element")
    with pytest.raises(UniformityError, match="depends on which way the branch at line") as e:
        divergent_insert.compile()
    assert e.value.loc.line == divergent_insert.fn.__code__.co_firstlineno + 5


@cd.kernel(workgroup_size=(64, 1, 1))
def divergent_barrier(out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    if cd.assume_uniform(i < 40):
        cd.barrier()  # E:barrier
    out[i] = i


def test_barrier_reached_by_part_of_its_workgroup():
    expect_interp_error(lambda: divergent_barrier.launch((1,), np.zeros(64, np.uint32), device="cpu"),
                        "control barrier reached by 40 of the 64 invocations of its workgroup", "# E:barrier")


@cd.kernel(workgroup_size=(64, 1, 1))
def barrier_of_one(out: cd.Buffer[u32]):
    i = cd.local_invocation_index
    if cd.assume_uniform(i == 37):
        cd.barrier()  # E:barrier-one
    out[i] = i


def test_a_divergent_barrier_names_an_invocation_that_reached_it():
    """It named the first invocation of the workgroup (0), which never got there."""
    err = expect_interp_error(lambda: barrier_of_one.launch((1,), np.zeros(64, np.uint32), device="cpu"),
                              "control barrier reached by 1 of the 64 invocations of its workgroup", "# E:barrier-one")
    assert err.message.endswith("in workgroup (0, 0, 0), local invocation 37 (subgroup 1, lane 5)")


@cd.kernel(workgroup_size=(64, 1, 1))
def uniform_per_workgroup(out: cd.Buffer[u32]):
    if cd.workgroup_id.x == 1:
        cd.barrier()  # uniform within each workgroup: fine
    out[cd.global_invocation_id.x] = 1


def test_barrier_taken_by_whole_workgroups_only_is_fine():
    out = np.zeros(128, np.uint32)
    uniform_per_workgroup.launch((2,), out, device="cpu")
    assert (out == 1).all()


@cd.kernel(workgroup_size=(64, 1, 1))
def oob(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    y[i] = x[i + n]  # E:read
    y[i + n] = 0.0  # E:write


def test_out_of_bounds_buffer_read_and_write():
    x, y = np.zeros(64, np.float32), np.zeros(64, np.float32)
    err = expect_interp_error(lambda: oob.launch((1,), x, y, 1, device="cpu"),
                              "read of buffer 'x' out of bounds: bytes [256, 260) but it holds 256 bytes", "# E:read")
    assert "local invocation 63" in err.message
    x = np.zeros(128, np.float32)
    expect_interp_error(lambda: oob.launch((1,), x, y, 1, device="cpu"),
                        "write of buffer 'y' out of bounds", "# E:write")


@cd.kernel(workgroup_size=(32, 1, 1))
def oob_shared(out: cd.Buffer[f32]):
    tile = cd.shared(f32, 32)
    i = cd.local_invocation_index
    tile[i + 1] = 1.0  # E:shared
    out[i] = tile[i]


def test_out_of_bounds_shared_array():
    expect_interp_error(lambda: oob_shared.launch((1,), np.zeros(32, np.float32), device="cpu"),
                        "write of shared array 'tile' out of bounds: bytes [128, 132) but it holds 128 bytes",
                        "# E:shared")


@cd.kernel(workgroup_size=(32, 1, 1))
def oob_matrix(a: cd.Buffer[f16], off: u32):
    m = MatA[f16, 16, 16].load(a, off, stride=16)  # E:matrix
    m.store(a, 0, stride=16)


def test_out_of_bounds_matrix_load():
    expect_interp_error(lambda: oob_matrix.launch((1,), np.zeros(256, np.float16), 1, device="cpu"),
                        "cooperative-matrix load of buffer 'a' out of bounds: bytes [2, 514) but it holds 512 bytes",
                        "# E:matrix")


@cd.kernel(workgroup_size=(32, 1, 1))
def nonuniform_pointer(a: cd.Buffer[f16]):
    # the compiler rejects a pointer it sees is not uniform; one promised uniform (wrongly) reaches the
    # interpreter, which checks the promise
    m = MatA[f16, 16, 16].load(a, cd.assume_uniform(cd.subgroup_invocation_id % 2), stride=16)  # E:pointer
    m.store(a, 0, stride=16)


def test_matrix_pointer_must_be_uniform():
    expect_interp_error(lambda: nonuniform_pointer.launch((1,), np.zeros(512, np.float16), device="cpu"),
                        "the pointer of a cooperative-matrix load must be the same in every invocation of the "
                        "subgroup", "# E:pointer")


@cd.kernel(workgroup_size=(32, 1, 1))
def nonuniform_splat(c: cd.Buffer[f32]):
    Acc[f32, 16, 16](cd.assume_uniform(f32(cd.subgroup_invocation_id))).store(c, 0, stride=16)  # E:splat


def test_splat_value_must_be_uniform():
    expect_interp_error(lambda: nonuniform_splat.launch((1,), np.zeros(256, np.float32), device="cpu"),
                        "the value splat into a cooperative matrix must be the same", "# E:splat")


@cd.kernel(workgroup_size=(32, 1, 1))
def nonuniform_matrix_index(c: cd.Buffer[f32]):
    mats = cd.local_array(Acc[f32, 16, 16], 2)
    mats[0] = Acc[f32, 16, 16].splat(0.0)
    mats[1] = Acc[f32, 16, 16].splat(1.0)
    m = mats[cd.assume_uniform(cd.subgroup_invocation_id % 2)]  # E:pick
    m.store(c, 0, stride=16)


def test_an_array_of_matrices_must_be_indexed_uniformly():
    # each invocation would read its part of a different matrix
    expect_interp_error(lambda: nonuniform_matrix_index.launch((1,), np.zeros(256, np.float32), device="cpu"),
                        "the index into the array of matrices must be the same in every invocation of the "
                        "subgroup (dynamically uniform), but it differs; in workgroup (0, 0, 0), local invocation 1",
                        "# E:pick")


@cd.kernel(workgroup_size=(64, 1, 1))
def write_write(out: cd.Buffer[u32]):
    tile = cd.shared(u32, 4)
    i = cd.local_invocation_index
    tile[i % 4] = i  # E:waw
    cd.barrier()
    out[i] = tile[i % 4]


def test_two_invocations_writing_different_values_to_one_shared_element():
    expect_interp_error(lambda: write_write.launch((1,), np.zeros(64, np.uint32), device="cpu"),
                        "data race on shared array 'tile': two invocations write different values", "# E:waw")


@cd.kernel(workgroup_size=(32, 1, 1))
def floats_differing_in_high_bytes(out: cd.Buffer[f32]):
    tile = cd.shared(f32, 4)
    i = cd.local_invocation_index
    tile[1] = 1.0 + f32(i % 2)  # E:hibytes
    cd.barrier()
    out[i] = tile[1]


def test_a_race_is_named_at_the_element_s_first_byte():
    """1.0 and 2.0 (0x3F800000, 0x40000000) first differ in byte 2 of the element: the message names the element
    and where it starts, not that byte."""
    expect_interp_error(lambda: floats_differing_in_high_bytes.launch((1,), np.zeros(32, np.float32), device="cpu"),
                        "data race on shared array 'tile': two invocations write different values to element 1 "
                        "(byte 4) in one instruction", "# E:hibytes")


@cd.kernel(workgroup_size=(64, 1, 1))
def same_value(out: cd.Buffer[u32]):
    tile = cd.shared(u32, 4)
    i = cd.local_invocation_index
    tile[i % 4] = 7
    cd.barrier()
    out[i] = tile[i % 4]


def test_writing_the_same_value_is_not_a_race():
    out = np.zeros(64, np.uint32)
    same_value.launch((1,), out, device="cpu")
    assert (out == 7).all()


@cd.kernel(workgroup_size=(64, 1, 1))
def missing_barrier(out: cd.Buffer[u32]):
    tile = cd.shared(u32, 64)
    i = cd.local_invocation_index
    tile[i] = i
    out[i] = tile[63 - i]  # E:raw


def test_reading_another_subgroups_write_without_a_barrier():
    expect_interp_error(lambda: missing_barrier.launch((1,), np.zeros(64, np.uint32), device="cpu"),
                        "data race on shared array 'tile': this access reads element 63 (byte 252), written by "
                        "subgroup 1 since the last barrier", "# E:raw")


@cd.kernel(workgroup_size=(64, 1, 1))
def overwrite_read(out: cd.Buffer[u32]):
    tile = cd.shared(u32, 64)
    i = cd.local_invocation_index
    tile[i] = i
    cd.barrier()
    out[i] = tile[63 - i]
    tile[i] = 0  # E:war


def test_overwriting_what_another_subgroup_read_without_a_barrier():
    expect_interp_error(lambda: overwrite_read.launch((1,), np.zeros(64, np.uint32), device="cpu"),
                        "this access overwrites element 1 (byte 4), read by subgroup 1 since the last barrier",
                        "# E:war")


def test_race_checks_can_be_turned_off():
    from coopdsl.interp import run

    out = np.zeros(64, np.uint32)
    run(missing_barrier.ir(), (1, 1, 1), {"out": out}, check_races=False)
    np.testing.assert_array_equal(out, 63 - np.arange(64))


@cd.kernel(workgroup_size=(32, 1, 1))
def saxpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32, BIAS: cd.Spec[u32] = 0):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i]


def test_bad_launch_arguments_are_reported_before_running():
    x = np.zeros(32, np.float32)
    with pytest.raises(LaunchArgumentError, match="buffer 'x' holds f32; got a float64 array"):
        saxpy.launch((1,), np.zeros(32), x, 4, 1.0, device="cpu")
    with pytest.raises(LaunchArgumentError, match="missing push constant 'alpha'"):
        saxpy.launch((1,), x, x, n=4, device="cpu")
    with pytest.raises(LaunchArgumentError, match="missing buffer 'y'"):
        saxpy.launch((1,), x, n=4, alpha=1.0, device="cpu")
    with pytest.raises(LaunchArgumentError, match=r"push constant 'n' \(u32\) cannot be -1"):
        saxpy.launch((1,), x, x, -1, 1.0, device="cpu")
    with pytest.raises(LaunchArgumentError, match="specialization constant BIAS .* cannot be 1.5"):
        saxpy.launch((1,), x, x, 4, 1.0, BIAS=1.5, device="cpu")
    with pytest.raises(LaunchArgumentError, match="must be C-contiguous"):
        saxpy.launch((1,), np.zeros(64, np.float32)[::2], x, 4, 1.0, device="cpu")
    with pytest.raises(ValueError, match="subgroup size must be one of"):
        saxpy.launch((1,), x, x, 4, 1.0, device="cpu", subgroup_size=12)
    with pytest.raises(ValueError, match="device must be 'cpu'"):
        saxpy.launch((1,), x, x, 4, 1.0, device="tpu")


def test_the_interpreters_launch_errors_are_the_runtimes_too():
    """Code that catches a GPU launch's ``runtime.LaunchError`` catches the interpreter's the same way."""
    from coopdsl import runtime
    from coopdsl.errors import CoopDSLError

    with pytest.raises(runtime.LaunchError, match="missing push constant 'alpha'") as e:
        saxpy.launch((1,), np.zeros(32, np.float32), np.zeros(32, np.float32), n=4, device="cpu")
    assert isinstance(e.value, LaunchArgumentError) and isinstance(e.value, CoopDSLError)


def test_errors_render_like_compile_errors():
    try:
        divergent_barrier.launch((1,), np.zeros(64, np.uint32), device="cpu")
    except InterpreterError as e:
        assert isinstance(e, cd.CompileError)
        text = str(e)
        assert "error: control barrier reached by 40" in text and "cd.barrier()  # E:barrier" in text
    else:
        raise AssertionError("no error")


@cd.kernel(workgroup_size=(32, 1, 1))
def misaligned(x: cd.Buffer[f32], a: cd.Buffer[f16], off: u32):
    i = cd.local_invocation_index
    v = cd.load_element(x, i * 4 + off, aligned=16)  # E:aligned
    m = MatA[f16, 16, 16].load(a, off * 8, stride=16, aligned=16)
    m.store(a, 0, stride=16)
    x[i * 4] = v


def test_accesses_breaking_their_aligned_operand():
    x, a = np.zeros(128, np.float32), np.zeros(512, np.float16)
    misaligned.launch((1,), x, a, 0, device="cpu")
    expect_interp_error(lambda: misaligned.launch((1,), x, a, 1, device="cpu"),
                        "read at device address 0x100004 is not 16-byte aligned", "# E:aligned")

    @cd.kernel(workgroup_size=(32, 1, 1))
    def matrix_only(a: cd.Buffer[f16], off: u32):
        m = MatA[f16, 16, 16].load(a, off, stride=16, aligned=16)  # E:only
        m.store(a, 0, stride=16)

    expect_interp_error(lambda: matrix_only.launch((1,), a, 4, device="cpu"),
                        "cooperative-matrix load at device address", "# E:only")


@cd.kernel(workgroup_size=(4, 1, 1))
def spec_array_read_past_end(s: cd.Buffer[f16], S: cd.Spec[u32] = 8):
    r = cd.array(f16, S)
    s[0] = r[20]  # E:specread


@cd.kernel(workgroup_size=(4, 1, 1))
def spec_array_write_past_end(s: cd.Buffer[f16], S: cd.Spec[u32] = 8):
    r = cd.array(f16, S)
    r[20] = f16(1.0)  # E:specwrite
    s[0] = r[0]


def test_a_constant_index_past_a_spec_sized_array_value_is_reported_as_out_of_bounds():
    """At its defaults a spec-sized array's constant index is not checked by the compiler (a port's defaults may be
    placeholders): past the end at the launch's length it is the interpreter's out-of-bounds report, naming the
    invocation, not a bare IndexError from the interpreter's list."""
    err = expect_interp_error(lambda: spec_array_read_past_end.launch((1,), np.zeros(4, np.float16), device="cpu"),
                              "read of element 20 of an array value f16[S] out of bounds: it holds 8 elements",
                              "# E:specread")
    assert "local invocation 0" in err.message
    expect_interp_error(lambda: spec_array_write_past_end.launch((1,), np.zeros(4, np.float16), device="cpu"),
                        "write of element 20 of an array value f16[S] out of bounds: it holds 8 elements",
                        "# E:specwrite")
