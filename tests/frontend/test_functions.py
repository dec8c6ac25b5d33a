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


@cd.func
def is_even(n):
    return n == 0 or is_odd(n - 1)


@cd.func
def is_odd(n):
    return n != 0 and is_even(n - 1)  # E:mutual


@cd.kernel
def k_mutual_recursion(c: cd.Buffer[u32]):
    c[0] = u32(is_even(c[1]))


def test_recursion_is_an_error():
    expect_error(k_recursion, cd.UnsupportedSyntaxError, "recurse calls itself (recursion", "# E:recurse", 12)
    # mutual recursion names the functions in between ('is_even calls itself' did not say how)
    expect_error(k_mutual_recursion, cd.UnsupportedSyntaxError, "is_even calls itself through is_odd (recursion is "
                 "not supported on GPUs)", "# E:mutual", 23)


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
    with pytest.raises(ValueError, match="tiled: Const parameter 'TILES' takes an int, got 2.5"):
        tiled.specialize(TILES=2.5)   # (at the call that gives it, as coopdsl emit --const reports it)
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


# -- several values returned: a tuple ------------------------------------------------------------------------


@cd.func
def ordered(a, b):
    if a < b:
        return a, b
    return b, a


@cd.func
def scaled(m, s):
    return m * 2.0, s + 1.0, 3


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
def k_tuples(x: cd.Buffer[f32], o: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    lo, hi = ordered(x[i], x[i + 32])
    pair = ordered(hi, lo)
    m, s, three = scaled(Acc[f32, 16, 16](x[0]), hi)
    m.store(o, 64, stride=16)
    o[i] = lo + 10.0 * pair[1] + f32(three) * 100.0
    o[i + 32] = s


def test_a_device_function_returns_a_tuple_of_values():
    """As in Python (and Slang's tuples): the values travel as one struct (OpTypeStruct, OpCompositeConstruct
    before each OpReturnValue) and the call unpacks it (OpCompositeExtract); a number takes its default type."""
    import numpy as np

    text = compile_checked(k_tuples)
    assert "%ordered_values = OpTypeStruct %float %float" in text
    assert any(ln.startswith("%scaled_values = OpTypeStruct %") and ln.endswith(" %float %int")
               for ln in map(str.strip, text.splitlines()))
    assert text.count("OpCompositeConstruct %ordered_values") == 2 and "OpCompositeExtract %float" in text
    x = np.arange(64, dtype=np.float32)[::-1].copy()
    o = np.zeros(64 + 256, np.float32)
    k_tuples.launch((1, 1, 1), x, o, device="cpu")
    lo, hi = np.minimum(x[:32], x[32:]), np.maximum(x[:32], x[32:])
    assert np.array_equal(o[:32], lo + 10.0 * hi + 300.0)     # pair = ordered(hi, lo) = (lo, hi)
    assert np.array_equal(o[32:64], hi + 1.0)
    assert np.array_equal(o[64:], np.full(256, 2.0 * x[0], np.float32))


@cd.func
def uneven(a):
    if a < 0.0:
        return a, a
    return a  # E:uneven


@cd.kernel(workgroup_size=(1, 1, 1))
def k_uneven(o: cd.Buffer[f32]):
    o[0] = uneven(o[1])


@cd.func
def clash(a, n):
    if a < 0.0:
        return a, a
    return a, n  # E:clash


@cd.kernel(workgroup_size=(1, 1, 1))
def k_clash(o: cd.Buffer[f32], n: cd.Buffer[u32]):
    x, y = clash(o[1], n[0])
    o[0] = x


@cd.func
def with_a_type(a):
    return a, f32  # E:withtype


@cd.kernel(workgroup_size=(1, 1, 1))
def k_with_a_type(o: cd.Buffer[f32]):
    x, t = with_a_type(o[1])
    o[0] = x


@cd.func
def scalar_first(a, b):
    if a > b:
        return a  # E:scalar_first
    return a, b


@cd.kernel(workgroup_size=(1, 1, 1))
def k_scalar_first(o: cd.Buffer[f32]):
    x, y = scalar_first(o[1], o[2])
    o[0] = x + y


@cd.func
def three_then_two(a, b):
    if a > b:
        return a, b, a
    return a, b  # E:three_then_two


@cd.kernel(workgroup_size=(1, 1, 1))
def k_three_then_two(o: cd.Buffer[f32]):
    x, y = three_then_two(o[1], o[2])
    o[0] = x + y


def test_tuple_returns_that_do_not_agree_are_located():
    expect_error(k_uneven, TypeMismatchError, "uneven returns a tuple of 2 values on one path and", "# E:uneven", 5)
    expect_error(k_clash, TypeMismatchError, "clash returns f32 as value 1 of its tuple on one path and u32 on "
                 "another", "# E:clash", 5)
    expect_error(k_with_a_type, TypeMismatchError, "a device function returns a tuple of runtime values or numbers",
                 "# E:withtype", 5)
    # the one value comes first: located at it, not an internal error
    expect_error(k_scalar_first, TypeMismatchError, "scalar_first returns a tuple of 2 values on one path and a "
                 "runtime f32 on another", "# E:scalar_first", 9)
    expect_error(k_three_then_two, TypeMismatchError, "three_then_two returns a tuple of 3 values on one path and "
                 "a tuple of 2 values on another", "# E:three_then_two", 5)


@cd.func
def uniform_and_not(u, d):
    return u + 1.0, d + 1.0


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
def k_member_uniformity(x: cd.Buffer[f32], o: cd.Buffer[f32]):
    u, d = uniform_and_not(x[0], x[cd.global_invocation_id.x])
    Acc[f32, 16, 16](u).store(o, 0, stride=16)
    Acc[f32, 16, 16](d).store(o, 256, stride=16)  # E:divergent


def test_each_member_of_a_returned_tuple_is_as_uniform_as_its_value():
    """The uniform member may splat a matrix; the one made from a per-invocation load may not (it is named)."""
    from coopdsl.errors import UniformityError

    expect_error(k_member_uniformity, UniformityError, "depends on the argument 'd' of uniform_and_not()",
                 "# E:divergent", 5)


def test_the_docs_tuple_example_runs_against_numpy(tmp_path):
    """docs/lang/functions.md's sort_pairs, run as written on the interpreter."""
    import re
    from pathlib import Path

    import numpy as np

    text = (Path(__file__).resolve().parents[2] / "docs" / "lang" / "functions.md").read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "sort_pairs" in b)
    path = tmp_path / "sort_pairs.py"
    path.write_text(code)
    ns: dict = {"__name__": "sort_pairs", "__file__": str(path)}
    exec(compile(code, str(path), "exec"), ns)
    x = np.random.default_rng(0).standard_normal(128).astype(np.float32)
    lo, hi = np.zeros(64, np.float32), np.zeros(64, np.float32)
    ns["sort_pairs"].launch((1, 1, 1), x, lo, hi, device="cpu")
    assert np.array_equal(lo, np.minimum(x[0::2], x[1::2])) and np.array_equal(hi, np.maximum(x[0::2], x[1::2]))


@cd.struct
class Row:
    arr: cd.array[f32, 4]


@cd.func
def first_of(a):
    return a[0]


@cd.kernel(workgroup_size=(4, 1, 1))
def k_member_array_argument(rows: cd.Buffer[Row], c: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    c[i] = first_of(rows[i].arr)  # E:member_arg


@cd.kernel(workgroup_size=(4, 1, 1))
def k_local_array_argument(c: cd.Buffer[f32]):
    la = cd.local_array(f32, 4)
    la[0] = 1.0
    c[0] = first_of(la)  # E:local_arg


@cd.func
def first_row(rows, i):
    return rows[i].arr[0]


@cd.kernel(workgroup_size=(4, 1, 1))
def k_buffer_and_index(rows: cd.Buffer[Row], c: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    c[i] = first_row(rows, i)


def test_memory_of_the_calling_function_is_a_located_error_not_an_internal_one():
    # a device function binds memory into its specialisation: buffers and shared arrays are module-level, but a
    # local array or the array member of one struct in a buffer is reached through the caller's values (these
    # were InternalCompilerErrors: "access uses a value not defined in its function")
    expect_error(k_member_array_argument, cd.UnsupportedSyntaxError,
                 "first_of(): argument 'a' is an array inside one struct in memory ('rows'", "# E:member_arg", 12)
    expect_error(k_local_array_argument, cd.UnsupportedSyntaxError,
                 "first_of(): argument 'a' is the local array 'la', which belongs to the function that declares it",
                 "# E:local_arg", 12)
    compile_checked(k_buffer_and_index, r"OpFunctionCall %float %first_row")   # what the message suggests
