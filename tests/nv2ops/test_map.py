"""OpCooperativeMatrixPerElementOpNV: callbacks with extra operands and closures, and each rule's error."""

import re

import pytest

import coopdsl as cd
from coopdsl import (
    Acc,
    ArgumentError,
    MatA,
    MatB,
    TypeMismatchError,
    UniformityError,
    UnsupportedSyntaxError,
    f16,
    f32,
    i32,
    u32,
)

from ..conftest import compile_checked, expect_error, marker_line

NEG_INF = float("-inf")


@cd.func
def exp_elem(row, col, x):
    return cd.exp(x)


@cd.func
def mask_keys(row, col, s, valid):
    if col < valid:
        return s
    return f32(NEG_INF)


@cd.func
def larger(row, col, x, y):
    return max(x, y)


@cd.func
def replace_padding(row, col, x, replace, rows, cols):  # llama.cpp's replacePadding: scalar extras
    if row >= rows or col >= cols:
        return replace
    return x


@cd.kernel(workgroup_size=(32, 1, 1))
def per_element(a: cd.Buffer[f32], o: cd.Buffer[f32], n: u32):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    e = s.map(exp_elem)
    m = s.map(mask_keys, n)
    b = m.map(larger, e)
    p = b.map(replace_padding, f32(0.0), n, u32(12))
    p.store(o, 0, stride=16)


def test_per_element_functions_with_scalar_and_matrix_extras():
    compile_checked(
        per_element, r"OpCapability CooperativeMatrixPerElementOperationsNV",
        r'OpExtension "SPV_NV_cooperative_matrix2"',
        r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %exp_elem\n",
        r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %mask_keys %\w+\n",
        r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %larger %\w+\n",
        r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %replace_padding %float_0 %\w+ %uint_12\n",
        r"%mask_keys = OpFunction %float None %\w+\n(\s+%\w+ = OpFunctionParameter %uint\n){2}"
        r"\s+%\w+ = OpFunctionParameter %float\n\s+%\w+ = OpFunctionParameter %uint\n",
        r"%larger = OpFunction %float None %\w+\n(\s+%\w+ = OpFunctionParameter %uint\n){2}"
        r"(\s+%\w+ = OpFunctionParameter %float\n){2}", r"FMax")


@cd.func
def scatter(row, col, x, base, out, ld):
    out[base + row * ld + col] = x  # llama.cpp's perElemOpD: the callback stores the result itself
    return x


@cd.func
def table_scale(row, col, x, table, off):
    return x * table[row + off]


@cd.kernel(workgroup_size=(32, 1, 1))
def closures(a: cd.Buffer[f16], out: cd.Buffer[f16], ld: u32, TILE: cd.Spec[u32] = 16):
    s = Acc[f16, 16, 16].load(a, 0, stride=16)
    table = cd.shared(f16, 64)
    table[cd.local_invocation_index] = a[cd.local_invocation_index]
    cd.barrier()
    s = s.map(cd.partial(table_scale, table=table, off=TILE))
    s.map(cd.partial(scatter, out=out, ld=ld), cd.workgroup_id.x * u32(256))


def test_callbacks_close_over_buffers_shared_arrays_push_and_spec_constants():
    text = compile_checked(
        closures, r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %table_scale\n",
        r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %scatter %\w+\n",
        # the push constant is read again inside the callback
        r"%scatter = OpFunction(.*\n)*?.*OpAccessChain %_ptr_PushConstant_uint %push_constants %uint_0\n"
        r"\s+%\w+ = OpLoad %uint",
        r"%table_scale = OpFunction(.*\n)*?.*OpIAdd %uint %\w+ %TILE\n.*OpAccessChain %_ptr_Workgroup_half %table",
        r"OpStore %\w+ %\w+\n")
    assert "OpDecorate %a NonWritable" in text and "OpDecorate %out NonWritable" not in text  # written by a callback
    # the unused result of a storing map is kept (the op is not pure)
    assert len(re.findall("OpCooperativeMatrixPerElementOpNV", text)) == 2


@cd.func
def scaled(row, col, x, factor=2.0):
    return x * f32(factor)


@cd.kernel(workgroup_size=(32, 1, 1))
def bound_constants(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    s = s.map(scaled)
    s = s.map(cd.partial(scaled, factor=0.5))
    s = s.map(cd.partial(cd.partial(replace_padding, replace=f32(1.0)), rows=u32(8), cols=u32(8)))
    s.store(o, 0, stride=16)


def test_defaults_constants_and_nested_partials_specialise():
    text = compile_checked(bound_constants, r"%scaled = OpFunction", r"%scaled_1 = OpFunction",
                           r"OpFMul %float %\w+ %float_2\n", r"OpFMul %float %\w+ %float_0_5\n")
    assert re.search(r"%replace_padding = OpFunction %float None %\w+\n(\s+%\w+ = OpFunctionParameter %\w+\n){3}"
                     r"\s+%\w+ = OpLabel", text), text


@cd.kernel(workgroup_size=(32, 1, 1))
def any_use(a: cd.Buffer[f16], o: cd.Buffer[f32]):
    ma = MatA[f16, 16, 16].load(a, 0, stride=16).map(cd.partial(scaled_h, factor=2.0))
    mb = MatB[f16, 16, 16].load(a, 0, stride=16)
    cd.muladd(ma, mb, Acc[f32, 16, 16](0.0)).store(o, 0, stride=16)


@cd.func
def scaled_h(row, col, x, factor):
    return x * f16(factor)


def test_matrices_of_any_use():
    compile_checked(any_use, r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %scaled_h\n")


# -- errors ------------------------------------------------------------------------------------
@cd.func
def two_params(row, col):
    return f32(0.0)


@cd.func
def barrier_inside(row, col, x):
    cd.barrier()  # E:barrier
    return x


@cd.func
def subgroup_inside(row, col, x):
    return cd.subgroup_add(x)  # E:subgroup


@cd.func
def inner_matrix(x):
    m = Acc[f32, 16, 16].splat(x)  # E:inner
    return m[0]


@cd.func
def calls_matrix(row, col, x):
    return inner_matrix(x)


@cd.func
def returns_int(row, col, x):
    return i32(1)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_extra_type(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    t = Acc[f32, 16, 32].load(a, 0, stride=32)
    r = s.map(larger, t)  # E:extratype


@cd.kernel(workgroup_size=(32, 1, 1))
def k_extra_number(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(larger, 0.5)  # E:number


@cd.kernel(workgroup_size=(32, 1, 1))
def k_extra_buffer(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(larger, a)  # E:buffer


@cd.kernel(workgroup_size=(32, 1, 1))
def k_missing_extra(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(larger)  # E:missing


@cd.kernel(workgroup_size=(32, 1, 1))
def k_too_few(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(two_params)  # E:few


@cd.kernel(workgroup_size=(32, 1, 1))
def k_returns(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(returns_int)  # E:returns


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bind_runtime(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    v = a[0]
    r = s.map(cd.partial(scaled, factor=v))  # E:runtime


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bind_local(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    loc = cd.local_array(f32, 4)
    r = s.map(cd.partial(table_scale, table=loc, off=0))  # E:local


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bind_passed(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(cd.partial(scaled, x=1.0))  # E:passed


@cd.kernel(workgroup_size=(32, 1, 1))
def k_partial_unknown(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(cd.partial(scaled, fctor=1.0))  # E:unknown


@cd.kernel(workgroup_size=(32, 1, 1))
def k_partial_twice(a: cd.Buffer[f32]):
    f = cd.partial(scaled, factor=1.0)
    g = cd.partial(f, factor=2.0)  # E:twice


@cd.kernel(workgroup_size=(32, 1, 1))
def k_partial_positional(a: cd.Buffer[f32]):
    f = cd.partial(scaled, 1.0)  # E:positional


@cd.kernel(workgroup_size=(32, 1, 1))
def k_barrier(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(barrier_inside)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_subgroup(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(subgroup_inside)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_nested(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(calls_matrix)


@cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.1")
def k_old_target(a: cd.Buffer[f32]):
    s = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = s.map(exp_elem)  # E:target


CASES = [
    (k_extra_type, TypeMismatchError, "extra matrix operand 1 of map must have the matrix's type Acc[f32, 16, 16]: "
                                      "Acc[f32, 16, 16] and Acc[f32, 16, 32] differ in columns 16 vs 32",
     "# E:extratype", 9),
    (k_extra_number, ArgumentError, "extra operand 1 of map is the number 0.5, which has no type: bind compile-time "
                                    "numbers to the function with cd.partial(fn, name=0.5), or give it one "
                                    "(e.g. f32(0.5))", "# E:number", 9),
    (k_extra_buffer, TypeMismatchError, "extra operand 1 of map must be a runtime scalar, vector or matrix of type "
                                        "Acc[f32, 16, 16], got buffer 'a'", "# E:buffer", 9),
    (k_missing_extra, ArgumentError, "the function of m.map larger is called with (row: u32, col: u32, element: "
                                     "f32); its parameter 'y' gets no value", "# E:missing", 9),
    (k_too_few, ArgumentError, "the function of m.map two_params takes 2 parameters, but it is called with 3",
     "# E:few", 9),
    (k_returns, TypeMismatchError, "the function of m.map must return f32, but returns_int returns i32",
     "# E:returns", 9),
    (k_bind_runtime, TypeMismatchError, "cannot bind 'factor' to a runtime f32: a callback receives only the "
                                        "parameters its instruction passes", "# E:runtime", 9),
    (k_bind_local, UnsupportedSyntaxError, "'table' is the local array 'loc', which belongs to the function that "
                                           "declares it: declare it in the device function, or use a shared "
                                           "array or a buffer", "# E:local", 9),
    (k_bind_passed, ArgumentError, "the function of m.map scaled: 'x' cannot be bound, the instruction passes it",
     "# E:passed", 9),
    (k_partial_unknown, ArgumentError, "partial: scaled has no parameter 'fctor' (it has: row, col, x, factor)",
     "# E:unknown", 15),
    (k_partial_twice, ArgumentError, "partial: 'factor' is already bound", "# E:twice", 9),
    (k_partial_positional, ArgumentError, "partial(fn, **bound) takes the function and keyword arguments only, got "
                                          "2 positional arguments", "# E:positional", 9),
    (k_barrier, UniformityError, "a control barrier cannot run inside the function of m.map barrier_inside: an "
                                 "instruction calls it per element", "# E:barrier", 5),
    (k_subgroup, UniformityError, "a subgroup operation cannot run inside the function of m.map subgroup_inside",
     "# E:subgroup", 12),
    (k_nested, UniformityError, "a cooperative-matrix operation cannot run inside the function of m.map "
                                "calls_matrix, through the call of inner_matrix at line", "# E:inner", 9),
    (k_old_target, UnsupportedSyntaxError, "m.map needs SPV_NV_cooperative_matrix2, which requires SPIR-V 1.6: "
                                           "compile for vulkan1.3 or vulkan1.4 (this kernel targets SPIR-V 1.3, "
                                           "vulkan1.1)", "# E:target", 9),
]


@pytest.mark.parametrize("k,cls,message,marker,col", CASES, ids=[c[3][4:] for c in CASES])
def test_map_rules(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)


@cd.func
def add_extra(row, col, x, y):
    return x + y  # E:callee


@cd.func
def scaled_by(row, col, x, k):
    return x * k  # E:bound


@cd.kernel(workgroup_size=(32, 1, 1))
def k_extra_passed_wrong(s: cd.Buffer[f32], o: cd.Buffer[f32], z: cd.Buffer[u32]):
    t = Acc[f32, 16, 16].load(s, 0, stride=16)
    t.map(add_extra, z[0]).store(o, 0, stride=16)  # L:map-call


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bound_wrong(s: cd.Buffer[f32], n: u32):
    t = Acc[f32, 16, 16].load(s, 0, stride=16)
    r = t.map(cd.partial(scaled_by, k=n))  # L:partial-call


def test_an_error_inside_a_callback_names_the_call_that_passes_its_arguments():
    """As for a device function called directly, the error stays in the callback's body and names the m.map
    call (file, line, column) and the types the instruction passes (row, col, element, extras), then the
    bound values: the mistake may be a wrong extra operand or a wrong bound value."""
    expect_error(k_extra_passed_wrong, TypeMismatchError,
                 f"operands of '+' have different types: f32 and u32; convert one explicitly (e.g. u32(x)) (in "
                 f"add_extra(u32, u32, f32, u32), called at {__file__}:{marker_line('# L:map-call')}:5)",
                 "# E:callee", 12)
    expect_error(k_bound_wrong, TypeMismatchError,
                 f"operands of '*' have different types: f32 and u32; convert one explicitly (e.g. u32(x)) (in "
                 f"scaled_by(u32, u32, f32, u32), called at {__file__}:{marker_line('# L:partial-call')}:9)",
                 "# E:bound", 12)


@cd.func
def axpy(x, y, a):
    return a * x + y


@cd.func
def apply_inside(m, n):
    """map (and a partial) used inside a device function, which is itself called by the kernel."""
    return m.map(cd.partial(scaled, factor=3.0)).map(mask_keys, n)


@cd.kernel(workgroup_size=(32, 1, 1))
def partial_calls(a: cd.Buffer[f32], o: cd.Buffer[f32], n: u32):
    f = cd.partial(axpy, a=f32(2.0))
    o[0] = f(a[0], a[1])                                   # an ordinary call with the bound argument added
    apply_inside(Acc[f32, 16, 16].load(a, 0, stride=16), n).store(o, 0, stride=16)


def test_a_partial_can_be_called_and_map_works_inside_device_functions():
    compile_checked(partial_calls, r"OpFunctionCall %float %axpy %\w+ %\w+ %float_2\n",
                    r"%apply_inside = OpFunction(.*\n)*?.*OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %scaled",
                    r"OpCooperativeMatrixPerElementOpNV %\w+ %\w+ %mask_keys %\w+\n")
