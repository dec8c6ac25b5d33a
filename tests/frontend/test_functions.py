"""Helper (device) functions: OpFunction / OpFunctionParameter / OpFunctionCall / OpReturnValue."""

import coopdsl as cd
from coopdsl import Acc, CompileError, MatA, MatB, TypeMismatchError, f16, f32, u32

from ..conftest import compile_checked, expect_error


@cd.func
def relu(x):
    if x < 0.0:
        return 0.0
    return x


@cd.func
def tile_product(a, b, acc):
    return cd.muladd(a, b, acc)


@cd.func
def scaled_store(m, buf, offset, s: f32):
    (m * s).store(buf, offset, stride=16)


@cd.func
def clamp_index(i, n):
    return min(i, n - 1)


@cd.kernel(workgroup_size=(32, 1, 1))
def uses_helpers(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    c[clamp_index(i, n)] = relu(c[i]) + relu(c[i + 1])
    acc = tile_product(MatA[f16, 16, 16].load(a, 0, stride=16), MatB[f16, 16, 16].load(a, 256, stride=16),
                       Acc[f32, 16, 16].splat(0.0))
    scaled_store(acc, c, 512, 2.0)
    scaled_store(acc, c, 768, 0.5)


def test_helpers_become_spirv_functions():
    text = compile_checked(uses_helpers, r"%relu = OpFunction %float None", r"OpFunctionParameter %float",
                           r"OpReturnValue", r"OpFunctionCall %float %relu", r"%tile_product = OpFunction",
                           r"OpFunctionCall %\w+ %tile_product", r"%scaled_store = OpFunction %void",
                           r"%clamp_index = OpFunction %uint")
    # one specialisation per signature: relu is called twice but defined once; 'c' and 512 are baked in
    assert text.count("%relu = OpFunction") == 1
    assert text.count("OpFunctionCall %float %relu") == 2
    assert "%scaled_store_1 = OpFunction" in text


@cd.func
def recurse(x):
    return recurse(x)  # E:recurse


@cd.kernel
def k_recursion(c: cd.Buffer[f32]):
    c[0] = recurse(c[1])


def test_recursion_is_an_error():
    expect_error(k_recursion, cd.UnsupportedSyntaxError, "recurse calls itself", "# E:recurse", 12)


@cd.func
def two_types(x, flag):
    if flag:
        return x
    return u32(1)  # E:tworet


@cd.kernel
def k_two_types(c: cd.Buffer[f32], n: u32):
    c[0] = two_types(c[1], n > 1)


def test_returns_must_agree():
    expect_error(k_two_types, TypeMismatchError, "two_types returns f32 on one path and u32 on another",
                 "# E:tworet", 5)


@cd.kernel
def k_bad_call(c: cd.Buffer[f32]):
    c[0] = relu(c[1], c[2])  # E:badcall


def test_wrong_argument_count():
    expect_error(k_bad_call, cd.ArgumentError, "relu(): too many positional arguments", "# E:badcall", 12)


def test_calling_a_helper_from_python():
    import pytest

    with pytest.raises(TypeError, match="device function"):
        relu(1.0)
    assert issubclass(cd.UnsupportedSyntaxError, CompileError)


@cd.kernel(workgroup_size=(32, 1, 1))
def tiled(a: cd.Buffer[f16], c: cd.Buffer[f32], TILES: cd.Const[int] = 1, SCALE: cd.Const[float] = 1.0):
    acc = [Acc[f32, 16, 16].splat(0.0) for t in cd.static_range(TILES)]
    for t in cd.static_range(TILES):
        acc[t] = cd.muladd(MatA[f16, 16, 16].load(a, t * 256, stride=16), MatB[f16, 16, 16].load(a, 0, stride=16),
                           acc[t])
        (acc[t] * SCALE).store(c, t * 256, stride=16)


def test_compile_time_parameters_specialise():
    four = tiled.specialize(TILES=4, SCALE=0.5)
    assert four is tiled.specialize(TILES=4, SCALE=0.5)  # cached
    text = compile_checked(four, r"OpCooperativeMatrixMulAddKHR", r"%float_0_5")
    assert text.count("OpCooperativeMatrixMulAddKHR") == 4
    assert compile_checked(tiled).count("OpCooperativeMatrixMulAddKHR") == 1
    assert [p["name"] for p in four.reflect()["spec_constants"]] == []


def test_const_parameter_errors():
    import pytest

    with pytest.raises(ValueError, match="no Const parameter 'X'"):
        tiled.specialize(X=1)
    with pytest.raises(CompileError, match="'TILES' must be an int"):
        tiled.specialize(TILES=2.5).compile()
    with pytest.raises(TypeError, match="compile-time parameter"):
        tiled.launch((1,), None, None, TILES=2)


CONST_KERNEL = """
import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32

@cd.kernel(workgroup_size=(32, 1, 1))
def tiled(a: cd.Buffer[f16], c: cd.Buffer[f32], TILES: cd.Const[int] = 1):
    for t in cd.static_range(TILES):
        acc = cd.muladd(MatA[f16, 16, 16].load(a, t * 256, stride=16), MatB[f16, 16, 16].load(a, 0, stride=16),
                        Acc[f32, 16, 16].splat(0.0))
        acc.store(c, t * 256, stride=16)
"""


def test_emit_const_from_the_command_line(tmp_path):
    from coopdsl.cli import main

    src = tmp_path / "k.py"
    src.write_text(CONST_KERNEL)
    assert main(["emit", str(src), "--kernel", "tiled", "--const", "TILES=3", "-o", str(tmp_path / "t.spv"),
                 "--dis", str(tmp_path / "t.spvasm")]) == 0
    assert (tmp_path / "t.spvasm").read_text().count("OpCooperativeMatrixMulAddKHR") == 3
