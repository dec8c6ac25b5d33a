"""Bad kernels: each asserts the error class, the message, and the user's line:column."""

import pytest

import coopdsl as cd
from coopdsl import (
    Acc,
    ArgumentError,
    MatA,
    MatB,
    NameResolutionError,
    ShapeError,
    TypeMismatchError,
    UnsupportedSyntaxError,
    bf16,
    f16,
    f32,
    i32,
    u32,
    vec4,
)
from coopdsl.errors import CompileError

from ..conftest import expect_error, marker_line

TABLE = {"a": 1}


@cd.kernel
def k_listcomp(x: cd.Buffer[f32]):
    y = {i: i for i in range(3)}  # E:listcomp
    x[0] = y


def test_unsupported_construct():
    expect_error(k_listcomp, UnsupportedSyntaxError, "a dict comprehension is not supported", "# E:listcomp", 9)


@cd.kernel
def k_try(x: cd.Buffer[f32]):
    try:  # E:try
        x[0] = 1.0
    finally:
        pass


def test_unsupported_statement():
    expect_error(k_try, UnsupportedSyntaxError, "'try' is not supported", "# E:try", 5)


@cd.kernel
def k_unknown(x: cd.Buffer[f32]):
    x[0] = undefined_thing + 1.0  # E:unknown


def test_unknown_name():
    expect_error(k_unknown, NameResolutionError, "name 'undefined_thing' is not defined", "# E:unknown", 12)


@cd.kernel
def k_mix(x: cd.Buffer[f32], y: cd.Buffer[i32]):
    x[0] = x[1] + y[1]  # E:mix


def test_type_mismatch_in_arithmetic():
    expect_error(k_mix, TypeMismatchError, "different types: f32 and i32", "# E:mix", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_use(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, ta, Acc[f32, 16, 16].splat(0.0))  # E:use
    acc.store(c, 0, stride=16)


def test_muladd_use_mismatch():
    expect_error(k_use, ShapeError, "second operand of muladd must have use B (MatB)", "# E:use", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_m(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16), MatB[f16, 16, 16].load(a, 0, stride=16),
                    Acc[f32, 8, 16].splat(0.0))  # E:m
    acc.store(c, 0, stride=16)


def test_muladd_m_mismatch():
    err = expect_error_multiline(k_m, "muladd M mismatch: A has 16 rows but C has 8", "# E:m")
    assert isinstance(err, ShapeError)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_n(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    tb = MatB[f16, 16, 8].load(a, 0, stride=16)
    acc = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16), tb, Acc[f32, 16, 16].splat(0.0))  # E:n
    acc.store(c, 0, stride=16)


def test_muladd_n_mismatch():
    expect_error(k_n, ShapeError, "muladd N mismatch: B has 8 columns but C has 16", "# E:n", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_k(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 8, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))  # E:k
    acc.store(c, 0, stride=16)


def test_muladd_k_mismatch():
    expect_error(k_k, ShapeError, "muladd K mismatch: A has 16 columns but B has 8 rows", "# E:k", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_comp(a: cd.Buffer[f16], c: cd.Buffer[i32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0))  # E:comp
    acc.store(c, 0, stride=16)


def test_wrong_accumulator_component_type():
    expect_error(k_comp, TypeMismatchError, "needs a float accumulator, got i32", "# E:comp", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_stride(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0)  # E:stride


def test_missing_stride():
    expect_error(k_stride, ArgumentError, "load: missing argument 'stride'", "# E:stride", 10)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_stride0(c: cd.Buffer[f32]):
    Acc[f32, 16, 16].splat(1.0).store(c, 0, stride=0)  # E:stride0


def test_store_stride_zero():
    expect_error(k_stride0, ArgumentError, "stride must be greater than 0", "# E:stride0", 5)


@cd.kernel
def k_cond(x: cd.Buffer[u32]):
    if x[0]:  # E:cond
        x[1] = 1


def test_condition_must_be_bool():
    expect_error(k_cond, TypeMismatchError, "a condition must be a bool, got a runtime u32", "# E:cond", 8)


@cd.kernel
def k_float_lit(x: cd.Buffer[u32]):
    x[0] = 1.5  # E:floatlit


def test_float_literal_into_int_buffer():
    expect_error(k_float_lit, TypeMismatchError, "cannot use the float literal 1.5 as u32", "# E:floatlit", 5)


@cd.kernel
def k_bf16(x: cd.Buffer[bf16]):
    x[0] = x[1] * x[2]  # E:bf16


def test_bf16_arithmetic_is_rejected():
    expect_error(k_bf16, TypeMismatchError, "bf16 values cannot be used with '*'", "# E:bf16", 12)


@cd.kernel
def k_break(x: cd.Buffer[u32]):
    for i in cd.static_range(4):
        if x[i] == 0:
            break  # E:break


def test_break_in_static_range():
    expect_error(k_break, UnsupportedSyntaxError, "'break' inside static_range is not supported", "# E:break", 13)


@cd.kernel
def k_return_value(x: cd.Buffer[u32]):
    return x[0]  # E:retval


def test_kernel_returns_nothing():
    expect_error(k_return_value, TypeMismatchError, "a kernel returns nothing", "# E:retval", 5)


@cd.kernel
def k_noann(x):  # E:noann
    pass


def test_parameter_needs_annotation():
    expect_error(k_noann, TypeMismatchError, "parameter 'x' needs an annotation", "# E:noann", 13)


@cd.kernel
def k_loop_type(x: cd.Buffer[u32], n: u32):
    total = 0
    for j in range(n):
        total = total + x[j]  # E:looptype
    x[0] = total


def test_variable_changes_type_in_loop():
    """Located at the value the iteration leaves (it was the loop's line), naming the loop's line."""
    expect_error(k_loop_type, CompileError, "'total' is i32 when the loop starts but u32 after an iteration (the "
                 "loop at line ", "# E:looptype", 17)


@cd.kernel
def k_count_down_u32(x: cd.Buffer[u32], n: u32):
    for j in range(n, 0, -1):  # E:countdown
        x[j] = j


def test_counting_down_over_unsigned_bounds_points_at_the_step():
    # it said "the literal -1 does not fit in u32" at the 'for' (found by a user writing kernels from the docs)
    expect_error(k_count_down_u32, TypeMismatchError, "range(...) counts down (step -1) but its bounds are u32, "
                 "which cannot hold a negative step or count below 0: give it signed bounds, e.g. "
                 "range(i32(n), 0, -1)", "# E:countdown", 26)


@cd.kernel
def k_two_types(x: cd.Buffer[u32], n: u32):
    if n > 2:
        v = f32(1.0)
    else:
        v = u32(2)
    x[0] = v  # E:twotypes


@cd.kernel
def k_float_or_uint(x: cd.Buffer[u32], n: u32):
    if n > 2:
        v = 1.5
    else:
        v = u32(2)
    x[0] = v  # E:floatoruint


def test_a_variable_of_two_types_names_the_lines_that_assigned_them():
    # the error is where the paths meet (the use); it named neither assignment, and a float literal on one path
    # was only "cannot use the float literal 1.5 as u32" (found by a user writing kernels from the docs)
    first = k_two_types.fn.__code__.co_firstlineno
    expect_error(k_two_types, CompileError, f"'v' is f32 on one path (assigned on line {first + 3}) and u32 on "
                 f"another (assigned on line {first + 5}); convert one of them", "# E:twotypes", 12)
    first = k_float_or_uint.fn.__code__.co_firstlineno
    expect_error(k_float_or_uint, TypeMismatchError, f"'v' is u32 on one path (assigned on line {first + 5}) and "
                 "the literal 1.5 on another, which u32 cannot hold: cannot use the float literal 1.5 as u32",
                 "# E:floatoruint", 12)


@cd.kernel
def k_list_two_types(x: cd.Buffer[f32], z: cd.Buffer[u32], c: u32):
    t = [x[0], [x[1], x[2]]]  # L:list-first
    if c > 0:
        t[1][0] = z[0]  # L:list-other
    x[3] = t[0]  # E:listtwotypes


@cd.kernel
def k_list_literal(x: cd.Buffer[u32], c: u32):
    t = [x[0], x[1]]  # L:list-literal
    if c > 0:
        t[1] = 1.5
    x[3] = t[1]  # E:listliteral


@cd.kernel
def k_list_loop_type(x: cd.Buffer[f32], z: cd.Buffer[u32], n: u32):
    t = [x[0], x[1]]
    for j in range(n):
        t[1] = z[j]  # E:listloop
    x[3] = t[0]


def test_an_element_of_a_list_of_two_types_names_the_lines_that_assigned_them():
    # as for a variable: at the use where the paths meet, naming the element and both assignments (it said "'t' is
    # f32 on one path and u32 on another", naming neither the element nor a line; found by a hardening fuzz)
    expect_error(k_list_two_types, CompileError,
                 f"'t[1][0]' is f32 on one path (assigned on line {marker_line('# L:list-first')}) and u32 on another "
                 f"(assigned on line {marker_line('# L:list-other')}); convert one of them", "# E:listtwotypes", 12)
    expect_error(k_list_literal, TypeMismatchError,
                 f"'t[1]' is u32 on one path (assigned on line {marker_line('# L:list-literal')}) and the literal 1.5 "
                 "on another, which u32 cannot hold", "# E:listliteral", 12)
    expect_error(k_list_loop_type, CompileError, "'t[1]' is f32 when the loop starts but u32 after an iteration (the "
                 "loop at line ", "# E:listloop", 16)
    assert "(e.g. t[1] = u32(...))" in str(pytest.raises(CompileError, k_list_loop_type.compile).value)


@cd.kernel
def k_maybe(x: cd.Buffer[u32]):
    if x[0] > 1:
        y = 2
    x[1] = y  # E:maybe


def test_maybe_unassigned():
    expect_error(k_maybe, NameResolutionError, "'y' may be used before it is assigned", "# E:maybe", 12)


@cd.kernel
def k_maybe_loop(x: cd.Buffer[u32], n: u32):
    for j in range(n):
        y = x[j]
    x[1] = y  # E:maybeloop


@cd.kernel
def k_maybe_while(x: cd.Buffer[u32]):
    while x[0] > 1:
        z = 3
        break
    x[1] = z  # E:maybewhile


@cd.kernel
def k_maybe_short_circuit(x: cd.Buffer[u32]):
    c = x[0] > 1 and len([i for i in cd.static_range(1)]) == 1
    x[c] = i  # E:maybeshort


def test_maybe_unassigned_when_the_only_assignment_is_in_a_loop_or_a_short_circuit():
    """A variable assigned once is read without a walk up the blocks only when that assignment is outside
    every branch and loop (frontend/ssa.py): one inside a loop still leaves it unassigned on a path. A
    comprehension's name (on the right of 'and' here) is the comprehension's own, as in Python 3: after it the
    name is not defined at all."""
    expect_error(k_maybe_loop, NameResolutionError, "'y' may be used before it is assigned", "# E:maybeloop", 12)
    expect_error(k_maybe_while, NameResolutionError, "'z' may be used before it is assigned", "# E:maybewhile", 12)
    expect_error(k_maybe_short_circuit, NameResolutionError, "name 'i' is not defined", "# E:maybeshort", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_method(c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].splat(0.0)
    acc.transpose_me()  # E:method


def test_unknown_matrix_method():
    expect_error(k_method, NameResolutionError, "has no attribute 'transpose_me'", "# E:method", 5)


@cd.kernel
def k_global(x: cd.Buffer[u32]):
    x[0] = TABLE["a"]  # E:global


def test_unusable_global():
    expect_error(k_global, NameResolutionError, "global 'TABLE' is a dict", "# E:global", 12)


@cd.kernel
def k_intdiv(x: cd.Buffer[u32]):
    x[0] = x[1] / 2  # E:intdiv


def test_integer_true_division():
    expect_error(k_intdiv, TypeMismatchError, "'/' divides floats; use '//'", "# E:intdiv", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_args(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    cd.muladd(ta, ta)  # E:args


def test_muladd_missing_argument():
    expect_error(k_args, ArgumentError, "missing argument 'c'", "# E:args", 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_layout(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16, layout=3)  # E:layout


def test_bad_layout():
    expect_error(k_layout, ArgumentError, "layout must be coopdsl.RowMajor, coopdsl.ColumnMajor or a Spec[u32]",
                 "# E:layout", 10)


@cd.kernel
def k_modattr(x: cd.Buffer[u32]):
    x[0] = cd.no_such_builtin  # E:modattr


def test_missing_module_attribute():
    expect_error(k_modattr, NameResolutionError, "module 'coopdsl' has no attribute 'no_such_builtin'",
                 "# E:modattr", 12)


@cd.kernel
def k_booltype(x: cd.Buffer[u32]):
    m = Acc[cd.boolean, 16, 16].splat(0)  # E:booltype


def test_matrix_of_bools():
    expect_error(k_booltype, TypeMismatchError, "component type must be a numeric scalar type", "# E:booltype", 9)


@cd.kernel
def k_elem_type(x: cd.Buffer[f32], y: cd.Buffer[f16]):
    x[0] = y[0]  # E:elemtype


def test_store_of_wrong_element_type():
    expect_error(k_elem_type, TypeMismatchError, "cannot store a runtime f16 into buffer 'x' of f32",
                 "# E:elemtype", 5)


def expect_error_multiline(k, message, marker):
    """For a call spanning lines, the error points at the call's first line."""
    import inspect

    with pytest.raises(CompileError) as info:
        k.compile()
    lines = open(inspect.stack()[1].filename).read().splitlines()
    end = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)][0]
    assert message in info.value.message
    assert info.value.loc.line == end - 1
    return info.value


def test_internal_errors_are_a_distinct_class():
    from coopdsl.errors import InternalCompilerError

    assert not issubclass(InternalCompilerError, CompileError)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_signed_float(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, MatB[f16, 16, 16].load(a, 0, stride=16), Acc[f32, 16, 16].splat(0.0), signed=("a",))  # E:sf


def test_signedness_on_float_matrices():
    expect_error(k_signed_float, TypeMismatchError, "signedness operands apply to integer matrices only",
                 "# E:sf", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bitcast_width(c: cd.Buffer[f32]):
    m = Acc[i32, 16, 16].splat(0)
    n = cd.bitcast(m, cd.u8)  # E:bitcast


def test_matrix_bitcast_needs_same_width():
    expect_error(k_bitcast_width, TypeMismatchError, "i32 -> u8 is not allowed", "# E:bitcast", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_use_convert(c: cd.Buffer[f32]):
    m = MatA[f32, 16, 16].splat(0.0)
    a = Acc[f32, 16, 16](m)  # E:useconv


@cd.kernel(workgroup_size=(32, 1, 1))
def k_b_to_a(c: cd.Buffer[f32]):
    m = MatB[f32, 16, 16].splat(0.0)
    a = MatA[f32, 16, 16](m)  # E:btoa


def test_use_change_only_from_an_accumulator():
    expect_error(k_use_convert, ShapeError, "a conversion keeps the use, or changes it from an accumulator to A or B "
                 "(SPV_NV_cooperative_matrix2); A (MatA) matrices cannot become accumulator (Acc) ones (to get an "
                 "accumulator, multiply by an identity matrix with cd.muladd)", "# E:useconv", 9)
    # B to A: the hint is the way round through an accumulator (it suggested getting an accumulator, a docs-only
    # check's report)
    expect_error(k_b_to_a, ShapeError, "B (MatB) matrices cannot become A (MatA) ones (multiply by an identity "
                 "matrix with cd.muladd into an accumulator, which converts to A or B)", "# E:btoa", 9)


@cd.kernel
def k_plus_plus(x: cd.Buffer[u32]):
    i = x[0]
    ++i  # E:plusplus
    x[0] = i


@cd.kernel
def k_minus_minus(x: cd.Buffer[u32]):
    i = x[0]
    --i  # E:minusminus
    x[0] = i


@cd.kernel
def k_vector_condition(x: cd.Buffer[vec4[f32]]):
    a = x[0]
    b = x[1]
    x[2] = a if a > b else b  # E:vectorcond


def test_glsl_habits_are_named():
    # '++i' compiled to nothing (Python reads +(+i)) and a vector condition was told to 'compare explicitly' (found by
    # a GLSL user porting shaders from the docs alone)
    expect_error(k_plus_plus, UnsupportedSyntaxError, "'++i' is not an increment in Python: it is +(+i), which does "
                 "nothing; write i += 1", "# E:plusplus", 5)
    expect_error(k_minus_minus, UnsupportedSyntaxError, "'--i' is not a decrement in Python: it is -(-i), which does "
                 "nothing; write i -= 1", "# E:minusminus", 5)
    expect_error(k_vector_condition, TypeMismatchError, "a condition must be a bool, got a runtime vec4[bool]; a "
                 "vector of bools chooses per component with cd.select(cond, a, b)", "# E:vectorcond", 17)


@cd.struct
class _Rows:
    arr: cd.array[f32, 4]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_memory_on_two_paths(buf: cd.Buffer[_Rows], out: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    a = buf[i].arr
    if n > 2:
        a = buf[i + 1].arr
    out[i] = a[0]  # E:two_rows


@cd.kernel(workgroup_size=(1, 1, 1))
def k_memory_or_local(buf: cd.Buffer[_Rows], out: cd.Buffer[f32], n: u32):
    a = buf[0].arr
    if n > 2:
        a = cd.local_array(f32, 4)
        a[0] = 1.0
    out[0] = a[0]  # E:local_or_buffer


@cd.kernel(workgroup_size=(1, 1, 1))
def k_two_buffers(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32):
    src = x
    if n > 2:
        src = y
    x[1] = src[0]  # E:two_buffers


@cd.kernel(workgroup_size=(1, 1, 1))
def k_two_strings(x: cd.Buffer[f32], n: u32):
    mode = "add"
    if n > 2:
        mode = "mul"
    x[0] = 1.0 if mode == "add" else 2.0  # E:two_strings


@pytest.mark.parametrize("kernel, name, marker, col", [(k_memory_on_two_paths, "a", "# E:two_rows", 14),
                                                       (k_memory_or_local, "a", "# E:local_or_buffer", 14),
                                                       (k_two_buffers, "src", "# E:two_buffers", 12)])
def test_a_name_bound_to_memory_must_name_the_same_memory_on_every_path(kernel, name, marker, col):
    # (GLSL copies `float a[4] = buf[i].arr`; here such a name is a reference: SPIR-V has no pointer to choose at
    # run time without VariablePointers)
    expect_error(kernel, CompileError, f"'{name}' names different memory on the paths that meet here: a name bound "
                 "to memory (a buffer, a shared or local array, an array inside a struct in memory) is a "
                 "reference, not a copy, and must name the same memory on every path; index the memory inside "
                 "each branch, or copy its elements into one cd.local_array", marker, col)


def test_a_name_holding_other_compile_time_values_on_two_paths():
    expect_error(k_two_strings, CompileError, "'mode' holds different compile-time values on the paths that meet "
                 "here", "# E:two_strings", 19)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_bool_buffer(x: cd.Buffer[cd.boolean]):  # E:bool_buffer
    x[0] = True


@cd.kernel(workgroup_size=(1, 1, 1))
def k_bvec_buffer(x: cd.Buffer[cd.vec2[cd.boolean]]):  # E:bvec_buffer
    x[0] = cd.vec2[cd.boolean](True, False)


def test_a_buffer_of_bools_is_a_located_error():
    # (spirv-val refuses bool in storage buffers: it was an InternalCompilerError)
    expect_error(k_bool_buffer, TypeMismatchError, "buffer 'x' cannot hold bool: SPIR-V has no bool in storage "
                 "buffers (as in struct members and push constants); store a u32 (0 or 1) and test it "
                 "(`if x[i] != 0:`)", "# E:bool_buffer", 19)
    expect_error(k_bvec_buffer, TypeMismatchError, "buffer 'x' cannot hold vec2[bool]", "# E:bvec_buffer", 19)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_float_plus_bool(x: cd.Buffer[cd.f32]):
    x[0] = x[1] + (x[2] > 0.0)  # E:fbool


def test_arithmetic_with_a_bool_suggests_converting_the_bool():
    """It suggested bool(x): arithmetic on a bool takes its 0 or 1 in the other side's type."""
    expect_error(k_float_plus_bool, TypeMismatchError, "operands of '+' have different types: f32 and bool; "
                 "convert one explicitly (e.g. f32(x))", "# E:fbool", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_smoothstep_bool(x: cd.Buffer[cd.f32]):
    x[0] = cd.smoothstep(0.0, x[0] > 0.0, x[0])  # E:ssbool


def test_a_math_builtin_names_the_wrong_type_not_a_number_converted_to_it():
    """It said "cannot use the number 0.0 as a bool": the first runtime argument's type is checked first."""
    expect_error(k_smoothstep_bool, TypeMismatchError, "smoothstep() takes floats, got bool", "# E:ssbool", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_tuple_item(x: cd.Buffer[cd.f32]):
    t = (1.0, 2.0)
    t[0] = 3.0  # E:tupleitem
    x[0] = t[0]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_tuple_in_list(x: cd.Buffer[cd.f32]):
    m = [(1.0, 2.0), (3.0, 4.0)]
    m[1][0] = 5.0  # E:tupleinlist
    x[0] = m[1][0]


@cd.kernel(workgroup_size=(1, 1, 1))
def k_list_item(x: cd.Buffer[cd.f32]):
    t = [1.0, 2.0]
    t[0] = 3.0
    m = [[1.0, 2.0], [3.0, 4.0]]
    m[1][0] = 5.0
    x[0] = t[0] + m[1][0]


def test_a_tuple_display_s_items_are_not_assigned_as_in_python():
    """``t = (1.0, 2.0); t[0] = 3.0`` compiled (Python raises TypeError); a list's items are still assigned."""
    expect_error(k_tuple_item, TypeMismatchError, "a tuple's items cannot be assigned (as in Python)", "# E:tupleitem",
                 5)
    expect_error(k_tuple_in_list, TypeMismatchError, "a tuple's items cannot be assigned", "# E:tupleinlist", 5)
    import numpy as np

    x = np.zeros(1, np.float32)
    k_list_item.launch((1,), x, device="cpu")
    assert x[0] == 8.0
