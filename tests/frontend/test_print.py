"""print() in a kernel: NonSemantic.DebugPrintf (GLSL's debugPrintfEXT) in the SPIR-V, one line per active
invocation on the interpreter."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import ArgumentError, TypeMismatchError, f16, f32, i32, u32, vec4

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(4, 1, 1))
def printing(x: cd.Buffer[f32], h: cd.Buffer[f16], v: cd.Buffer[vec4[f32]], w: cd.Buffer[cd.u64]):
    i = cd.global_invocation_id.x
    if i != 2:                         # invocation 2 is inactive here: no line
        print("i =", i, "x:", x[i], "h", h[i], 100, "%", v[0], i32(i) - 5, i < 2)
    print(i, w[i], sep=", ")


def test_print_is_debug_printf_and_a_line_per_active_invocation_on_the_interpreter(capsys):
    compile_checked(printing, r'OpExtension "SPV_KHR_non_semantic_info"',
                    r'OpExtInstImport "NonSemantic.DebugPrintf"',
                    r'OpString "i = %u x: %f h %f 100 %% %v4f %d %u"', r'OpString "%u, %lu"',
                    r"OpExtInst %void %\w+ 1 %\w+ %\w+ %\w+ %\w+ %\w+ %\w+ %\w+", r"OpFConvert %float")
    printing.launch((1, 1, 1), np.arange(4, dtype=np.float32) / 4, np.ones(4, np.float16),
                    np.array([[1, 2, 3, 4]], np.float32), np.arange(4, dtype=np.uint64) * 2**40, device="cpu")
    assert capsys.readouterr().out.splitlines() == [
        "i = 0 x: 0.000000 h 1.000000 100 % 1.000000, 2.000000, 3.000000, 4.000000 -5 1",
        "i = 1 x: 0.250000 h 1.000000 100 % 1.000000, 2.000000, 3.000000, 4.000000 -4 1",
        "i = 3 x: 0.750000 h 1.000000 100 % 1.000000, 2.000000, 3.000000, 4.000000 -2 0",
        "0, 0", "1, 1099511627776", "2, 2199023255552", "3, 3298534883328"]


@pytest.mark.vulkan
def test_a_device_runs_a_printing_kernel(device):
    """Without a layer that collects DebugPrintf the driver ignores it: the kernel runs."""
    x = np.arange(4, dtype=np.float32)
    printing.launch((1, 1, 1), x, np.ones(4, np.float16), np.zeros((1, 4), np.float32), np.zeros(4, np.uint64),
                    device=device)


@cd.kernel(workgroup_size=(1, 1, 1))
def print_with_end(x: cd.Buffer[f32]):
    print(x[0], end="")  # E:print-end


@cd.kernel(workgroup_size=(1, 1, 1))
def print_a_bool_vector(x: cd.Buffer[f32]):
    print(vec4[f32](x[0], x[1], x[2], x[3]) > 0.0)  # E:print-bvec


@cd.kernel(workgroup_size=(1, 1, 1))
def print_a_buffer(x: cd.Buffer[u32]):
    print(x)  # E:print-buffer


def test_what_print_cannot_print_is_located():
    expect_error(print_with_end, ArgumentError, "print() in a kernel takes sep= only, not end=", "# E:print-end", 5)
    expect_error(print_a_bool_vector, TypeMismatchError, "print() takes a bool scalar (printed 1 or 0), not a bool "
                 "vector", "# E:print-bvec", 5)
    expect_error(print_a_buffer, TypeMismatchError, "print() takes strings, numbers and runtime scalars or vectors, "
                 "got", "# E:print-buffer", 5)
