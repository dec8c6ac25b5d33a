"""Each class of defect held-out code found (issue 15): located errors, never an internal error or a
foreign exception, no silent acceptance, and the valid kernels that used to be rejected."""

import re
import textwrap

import pytest

import coopdsl as cd
from coopdsl import (
    Acc,
    ArgumentError,
    CoopMat,
    MatA,
    MatB,
    ShapeError,
    TypeMismatchError,
    UnsupportedSyntaxError,
    f16,
    f32,
    i32,
    u32,
)
from coopdsl.errors import CompileError, DeclarationError

from ..conftest import compile_checked, expect_error

# -- A. once internal errors -------------------------------------------------------------------


@cd.kernel(workgroup_size=(32, 1, 1))
def k_select_matrices(c: cd.Buffer[f32], n: cd.Push[u32]):
    x = Acc[f32, 16, 16].splat(0.0)
    y = Acc[f32, 16, 16].splat(1.0)
    z = x if n > 3 else y
    w = cd.select(n > 5, z, x)
    w.store(c, 0, stride=16)


def test_choosing_between_matrices_is_a_selection_with_a_phi():
    text = compile_checked(k_select_matrices, r"OpPhi %\w+", r"OpSelectionMerge")
    assert "OpSelect " not in text


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_use(a: cd.Buffer[f16], c: cd.Buffer[f32], U: cd.Spec[u32] = 0):
    ta = CoopMat[f16, 16, 16, U].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))  # E:specuse
    acc.store(c, 0, stride=16)


def test_muladd_needs_uses_known_at_compile_time():
    expect_error(k_spec_use, ShapeError, "has a specialization-constant use (U)", "# E:specuse", 11)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_local_load(c: cd.Buffer[f32]):
    loc = cd.local_array(f16, 256)
    ta = MatA[f16, 16, 16].load(loc, 0, stride=16)  # E:local


def test_no_matrix_loads_from_local_arrays():
    expect_error(k_local_load, TypeMismatchError, "cannot load a cooperative matrix from local array 'loc'",
                 "# E:local", 10)


@cd.struct
class Pair:
    x: f16
    y: f16


@cd.kernel(workgroup_size=(32, 1, 1))
def k_struct_load(a: cd.Buffer[Pair]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)  # E:structload


@cd.kernel(workgroup_size=(32, 1, 1))
def k_vec3_load(a: cd.Buffer[cd.vec3[f32]]):
    ta = Acc[f32, 16, 16].load(a, 0, stride=16)  # E:vec3


@cd.kernel(workgroup_size=(32, 1, 1))
def k_crossdevice(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16, visible=cd.CrossDevice)  # E:cross


def test_matrix_memory_must_hold_numbers_and_scopes_must_exist_in_vulkan():
    expect_error(k_struct_load, TypeMismatchError, "through Pair elements: the memory must hold numeric",
                 "# E:structload", 10)
    expect_error(k_vec3_load, TypeMismatchError, "through vec3[f32] elements", "# E:vec3", 10)
    expect_error(k_crossdevice, ArgumentError, "visible= cannot be CrossDevice in Vulkan", "# E:cross", 10)


@cd.kernel
def k_neg_index(c: cd.Buffer[f32]):
    h = cd.shared(f32, 64)
    c[0] = h[-1]  # E:neg


@cd.kernel
def k_past_end(c: cd.Buffer[f32]):
    h = cd.shared(f32, 64)
    c[0] = h[64]  # E:past


@cd.kernel(workgroup_size=(32, 1, 1))
def k_neg_offset(c: cd.Buffer[f32]):
    sa = cd.shared(f16, 256)
    ta = MatA[f16, 16, 16].load(sa, -16, stride=16)  # E:negoff


def test_constant_indices_are_checked():
    expect_error(k_neg_index, TypeMismatchError, "index -1 is out of bounds for shared array 'h' of 64", "# E:neg", 12)
    expect_error(k_past_end, TypeMismatchError, "index 64 is out of bounds", "# E:past", 12)
    expect_error(k_neg_offset, TypeMismatchError, "index -16 is out of bounds for shared array 'sa'", "# E:negoff",
                 10)


@cd.kernel
def k_matrix_as_bound(c: cd.Buffer[f32]):
    for i in range(0, MatB, 32):  # E:bound
        c[i] = 1.0


def test_a_type_where_a_number_belongs():
    expect_error(k_matrix_as_bound, TypeMismatchError, "the stop of range(...) must be an integer, got the matrix "
                 "type MatB", "# E:bound", 14)


@cd.kernel
def k_load_element_ptr(p: cd.Push[cd.Ptr[f32]]):
    v = cd.load_element(p, 3, nontemporal=True)
    cd.store_element(p, 4, v, volatile=True)


def test_element_access_with_memory_operands_through_a_pointer():
    compile_checked(k_load_element_ptr, r"OpLoad %float %\w+ Aligned\|Nontemporal 4",
                    r"OpStore %\w+ %\w+ Volatile\|Aligned 4")


# -- B. foreign exceptions ---------------------------------------------------------------------


@cd.kernel
def k_f16_overflow(c: cd.Buffer[f16]):
    c[0] = f16(70000.0)  # E:f16


@cd.kernel
def k_f32_overflow(c: cd.Buffer[f32]):
    c[0] = -1e300  # E:f32


def test_float_literals_that_overflow_their_type():
    expect_error(k_f16_overflow, TypeMismatchError, "the literal 70000.0 does not fit in f16", "# E:f16", 12)
    expect_error(k_f32_overflow, TypeMismatchError, "the literal -1e+300 does not fit in f32", "# E:f32", 5)


@cd.kernel
def k_f16_underflow(c: cd.Buffer[f16]):
    c[0] = c[1] / (c[2] + 1e-8)  # E:f16 eps


@cd.kernel
def k_f32_underflow(c: cd.Buffer[f32]):
    c[0] = 1e-46  # E:f32 tiny


def test_nonzero_float_literals_that_would_be_zero_in_their_type():
    """A nonzero literal at or below half the type's smallest (subnormal) value rounds to 0: refused, as an
    overflow is (an epsilon that vanishes turns a guarded division into inf)."""
    expect_error(k_f16_underflow, TypeMismatchError, "the literal 1e-08 is 0 in f16 (its smallest nonzero value is "
                 "5.96046e-08); write 0.0 if zero is meant", "# E:f16 eps", 20)
    expect_error(k_f32_underflow, TypeMismatchError, "the literal 1e-46 is 0 in f32", "# E:f32 tiny", 5)


def _declare(tmp_path, source: str, name: str = "decl.py"):
    """Run ``source`` as a user module; returns the CompileError it raises at declaration time."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    import runpy

    with pytest.raises(CompileError) as info:
        ns = runpy.run_path(str(path))
        for v in ns.values():
            if isinstance(v, cd.Kernel):
                v.compile()
    return path, info.value


@pytest.mark.parametrize("size, shown", [("(0, 1, 1)", "got 0"), ("(0.5, 1, 1)", "got 0.5"),
                                         ("(-2.0, 1, 1)", "got -2.0"), ("(2**33, 1, 1)", "got 8589934592")])
def test_workgroup_sizes_are_checked_at_the_decorator(tmp_path, size, shown):
    path, err = _declare(tmp_path, f"""\
        import coopdsl as cd
        @cd.kernel(workgroup_size={size})
        def k(c: cd.Buffer[cd.f32]):
            c[0] = 1.0
        """)
    assert shown in err.message and "workgroup_size entries must be ints from 1 to 4294967295" in err.message
    assert (err.loc.file, err.loc.line, err.loc.col) == (str(path), 2, 12)


@pytest.mark.parametrize("future", ["", "from __future__ import annotations\n"])
@pytest.mark.parametrize("annotation, message, col", [
    ("cd.Buffer[cd.Acc[cd.f32, 16, 16]]", "Buffer[...] takes one scalar, vector or struct element type", 13),
    ("cd.Spec[cd.Acc[cd.f32, 16, 16]]", "Spec[...] takes a scalar type", 13),
    ("cd.Uniform[cd.f32]", "Uniform[...] takes a @coopdsl.struct type, got f32", 13),
    # a SpecId is a 32-bit literal: 2**40 was once written as SpecId 0
    ("cd.Spec[cd.u32, 2**40]", "a specialization constant id must be an int from 0 to 4294967295 (a 32-bit "
                               "SpecId), got 1099511627776", 13),
    # the user's spelling, not the internal ArrayType(...), CoopMatType(...), BufferParam(...) reprs
    ("cd.array[cd.f32, 4]", "parameter 'c': annotation f32[4] is not Buffer[T], Spec[T], Push[T]", 7),
    ("cd.MatA[cd.f16, 16, 16]", "parameter 'c': annotation MatA[f16, 16, 16] is not Buffer[T]", 7),
    ("list", "parameter 'c': annotation list is not Buffer[T]", 7),
    ("cd.Buffer[cd.Buffer[cd.f32]]", "Buffer[...] takes one scalar, vector or struct element type, e.g. "
                                     "Buffer[f16]; got Buffer[f32]", 13),
    ("cd.Uniform[cd.Buffer[cd.f32]]", "Uniform[...] takes a @coopdsl.struct type, got Buffer[f32]", 13),
    ("cd.Ptr[cd.Push[cd.u32]]", "Ptr[...] points at a numeric scalar, vector or struct type, not Push[u32]", 13),
    ("cd.Push[cd.Spec[cd.u32, 3]]", "Push[...] takes one scalar, vector, struct or Ptr type, e.g. Push[u32]; "
                                    "got Spec[u32, 3]", 13),
    ("cd.vec2[cd.Const[int]]", "vec2[...] takes a scalar type, not Const[int]", 13),
    ("cd.array[cd.Buffer[cd.f32], 2]", "array elements are numeric scalars or vectors, not Buffer[f32]", 13),
])
def test_bad_parameter_declarations_are_located(tmp_path, future, annotation, message, col):
    path, err = _declare(tmp_path, future + textwrap.dedent(f"""\
        import coopdsl as cd
        @cd.kernel
        def k(c: {annotation}):
            pass
        """))
    assert isinstance(err, TypeMismatchError) and message in err.message
    line = 3 + bool(future)
    assert (err.loc.file, err.loc.line) == (str(path), line)
    # evaluated late: at the annotation (an annotation of no kind is refused at the parameter, col 7, either way)
    assert err.loc.col == (col if not future or col == 7 else 10)


def test_a_bad_struct_member_is_located(tmp_path):
    path, err = _declare(tmp_path, """\
        import coopdsl as cd
        @cd.struct
        class S:
            n: cd.u32
            m: cd.Acc[cd.f32, 16, 16]
        """)
    assert isinstance(err, DeclarationError)
    assert "struct S: member 'm' has unsupported type Acc[f32, 16, 16]" in err.message
    assert (err.loc.line, err.loc.col) == (5, 5)
    path, err = _declare(tmp_path, """\
        import coopdsl as cd
        @cd.struct
        class S:
            n: cd.u32
            b: cd.Buffer[cd.f32]
        """)
    assert isinstance(err, DeclarationError)   # (it showed the internal BufferParam(elem=f32))
    assert "struct S: member 'b' is annotated Buffer[...], which declares a kernel parameter" in err.message
    assert (err.loc.line, err.loc.col) == (5, 5)


# -- C. silently accepted ------------------------------------------------------------------------


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec64(a: cd.Buffer[f16], R: cd.Spec[cd.u64] = 16):
    ta = MatA[f16, R, 16].load(a, 0, stride=16)  # E:spec64


@cd.kernel(workgroup_size=(32, 1, 1))
def k_wrap(a: cd.Buffer[f16]):
    ta = MatA[f16, 4294967312, 16].load(a, 0, stride=16)  # E:wrap


@cd.kernel(workgroup_size=(32, 1, 1))
def k_neg_stride(a: cd.Buffer[f16], c: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=-16)  # E:negstride


@cd.kernel(workgroup_size=(32, 1, 1))
def k_neg_store_stride(c: cd.Buffer[f32]):
    Acc[f32, 16, 16].splat(0.0).store(c, 0, stride=-1)  # E:negstore


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_scope(a: cd.Buffer[f16], c: cd.Buffer[f32], S: cd.Spec[u32] = 2):
    ta = MatA[f16, 16, 16, S].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))  # E:specscope
    acc.store(c, 0, stride=16)


def test_matrix_parameters_strides_and_scopes():
    expect_error(k_spec64, TypeMismatchError, "'R' used as a type parameter must be a 32-bit integer", "# E:spec64",
                 10)
    expect_error(k_wrap, TypeMismatchError, "rows must be from 1 to 4294967295", "# E:wrap", 10)
    expect_error(k_neg_stride, ArgumentError, "load: stride must be 0 or more, got -16", "# E:negstride", 10)
    expect_error(k_neg_store_stride, ArgumentError, "store: stride must be greater than 0, got -1", "# E:negstore", 5)
    expect_error(k_spec_scope, ShapeError, "muladd operands have different scopes: MatA[f16, 16, 16, S]",
                 "# E:specscope", 11)


@cd.kernel
def k_spec_default(c: cd.Buffer[f32], K: cd.Spec[u32] = -64):  # E:default
    c[0] = 1.0


@cd.kernel
def k_spec_ok(c: cd.Buffer[f32], K: cd.Spec[u32] = 64):
    c[0] = 1.0


def test_spec_constant_values_must_fit_their_type():
    expect_error(k_spec_default, TypeMismatchError, "default of specialization constant 'K': the literal -64 does "
                 "not fit in u32", "# E:default", 39)
    for bad in (-16, 99999999999, 1.5):
        with pytest.raises(ValueError, match="specialization constant 'K'"):
            k_spec_ok.compile(spec={"K": bad})


@cd.kernel(workgroup_size=(32, 1, 1))
def k_enum_rows(a: cd.Buffer[f16]):
    ta = MatA[f16, cd.RowMajor, 16].load(a, 0, stride=16)  # E:enumrows


@cd.kernel(workgroup_size=(32, 1, 1))
def k_scope_as_use(a: cd.Buffer[f16]):
    ta = CoopMat[f16, 16, 16, cd.Workgroup].load(a, 0, stride=16)  # E:scopeuse


@cd.kernel(workgroup_size=(32, 1, 1))
def k_use_as_scope(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16, cd.UseAcc].load(a, 0, stride=16)  # E:usescope


def test_enumerants_only_where_they_belong():
    expect_error(k_enum_rows, TypeMismatchError, "rows must be a number, not coopdsl.RowMajor", "# E:enumrows", 10)
    expect_error(k_scope_as_use, TypeMismatchError, "use must be UseA, UseB or UseAcc, not coopdsl.Workgroup",
                 "# E:scopeuse", 10)
    expect_error(k_use_as_scope, TypeMismatchError, "scope must be Subgroup or Workgroup, not coopdsl.UseAcc",
                 "# E:usescope", 10)


# -- D. valid kernels that were rejected ---------------------------------------------------------


@cd.kernel(workgroup_size=(32, 1, 1))
def k_commutative(a: cd.Buffer[f16], c: cd.Buffer[f32], TN: cd.Spec[u32] = 8):
    ta = MatA[f16, 16, TN * 2].load(a, 0, stride=16)
    tb = MatB[f16, 2 * TN, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16)


@cd.func
def tile(a, K):
    return MatA[f16, 16, K].load(a, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_into_func(a: cd.Buffer[f16], c: cd.Buffer[f32], K: cd.Spec[u32] = 16):
    ta = tile(a, K)
    tb = MatB[f16, K, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16)


def test_spec_constant_shapes_compare_symbolically_and_pass_into_functions():
    compile_checked(k_commutative, r"= OpSpecConstantOp %uint IMul %TN %uint_2", "OpCooperativeMatrixMulAddKHR")
    text = compile_checked(k_spec_into_func, "OpFunctionCall", "OpCooperativeMatrixMulAddKHR")
    assert len(re.findall(r"OpFunctionParameter", text)) == 0  # K stays a constant, `a` a compile-time buffer


@cd.struct
class Item:
    m: f32
    count: u32


@cd.kernel
def k_member_store(out: cd.Buffer[Item], p: cd.Push[cd.Ptr[Item]]):
    out[1].m = 2.0
    out[2].count += 1
    p[3].m = 4.0


def test_struct_members_of_memory_elements_can_be_assigned():
    compile_checked(k_member_store, r"OpAccessChain %_ptr_StorageBuffer_float %\w+ %uint_0\n",
                    r"OpIAdd %uint", r"OpStore %\w+ %float_4 Aligned 4")


@cd.kernel
def k_range_builtin(out: cd.Buffer[f32]):
    for i in range(cd.subgroup_invocation_id):
        out[i] = 1.0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_layout(a: cd.Buffer[f16], c: cd.Buffer[f16], L: cd.Spec[u32] = 1):
    MatA[f16, 16, 16].load(a, 0, stride=16, layout=L).store(c, 0, stride=16, layout=L)


def test_range_over_a_builtin_and_spec_constant_layouts():
    compile_checked(k_range_builtin, r"OpULessThan %bool")
    compile_checked(k_spec_layout, r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %L %uint_16",
                    r"OpCooperativeMatrixStoreKHR %\w+ %\w+ %L %uint_16")


# -- F. messages -------------------------------------------------------------------------------------


@cd.kernel(workgroup_size=(32, 1, 1))
def k_muladd_number(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, 0.0)  # E:number


@cd.kernel(workgroup_size=(32, 1, 1))
def k_matmul_operator(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 0, stride=16)
    acc = ta @ tb  # E:matmul


@cd.kernel(workgroup_size=(32, 1, 1))
def k_int_matrix_div(c: cd.Buffer[i32]):
    acc = Acc[i32, 16, 16].splat(4)
    q = acc // acc
    r = acc / acc  # E:intdiv


@cd.kernel(workgroup_size=(32, 1, 1))
def k_matmul_augassign(a: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    ta @= ta  # E:imatmul


@cd.kernel(workgroup_size=(1, 1, 1))
def k_in_operator(a: cd.Buffer[i32]):
    if a[0] in (1, 2):  # E:in
        a[1] = 0


@cd.kernel(workgroup_size=(1, 1, 1))
def k_is_not_operator(a: cd.Buffer[i32]):
    if a[0] is not a[1]:  # E:isnot
        a[1] = 0


@cd.kernel(workgroup_size=(1, 1, 1))
def k_starred_assign(a: cd.Buffer[i32]):
    x, *rest = a[0]  # E:starred


@cd.kernel(workgroup_size=(4, 1, 1))
def k_tuple_runtime_index(a: cd.Buffer[i32]):
    t = (a[0], a[1], a[2])
    a[3] = t[a[4]]  # E:tupleidx


def test_unsupported_python_is_named_as_written():
    """Operators are named as the user spells them, not by Python's AST class names."""
    expect_error(k_matmul_augassign, UnsupportedSyntaxError, "'@=' is not supported; multiply cooperative matrices "
                 "with cd.muladd(a, b, c)", "# E:imatmul", 5)
    expect_error(k_in_operator, UnsupportedSyntaxError, "'in' is not supported; kernels compare numbers with <, <=, "
                 ">, >=, == and !=", "# E:in", 8)
    expect_error(k_is_not_operator, UnsupportedSyntaxError, "'is not' is not supported", "# E:isnot", 8)
    expect_error(k_starred_assign, TypeMismatchError, "cannot unpack a runtime i32 into 1 or more names", "# E:starred",
                 5)
    expect_error(k_tuple_runtime_index, TypeMismatchError, "a compile-time tuple or list must be indexed with a "
                 "compile-time int, got a runtime i32 (a runtime index needs a cd.local_array)", "# E:tupleidx", 12)


def test_messages_point_to_the_fix():
    expect_error(k_muladd_number, TypeMismatchError, "must be an accumulator matrix (Acc[...]), got the number 0.0; "
                 "to start from zero, pass Acc[T, M, N].splat(0)", "# E:number", 11)
    expect_error(k_matmul_operator, UnsupportedSyntaxError, "'@' is not supported; multiply cooperative matrices with "
                 "cd.muladd(a, b, c)", "# E:matmul", 11)
    expect_error(k_int_matrix_div, TypeMismatchError, "'/' divides floats; use '//' to divide Acc[i32, 16, 16]",
                 "# E:intdiv", 9)


# -- constants for which SPIR-V leaves an operation undefined (2026-11-26) ---------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def k_shift_too_far(out: cd.Buffer[u32]):
    x = cd.local_invocation_index
    out[0] = (x << 31) + (x >> 0)  # the widest and the narrowest valid counts
    out[1] = x << 32  # E:shift


@cd.kernel(workgroup_size=(32, 1, 1))
def k_divide_by_zero(out: cd.Buffer[i32]):
    out[0] = i32(cd.local_invocation_index) // 0  # E:div


@cd.kernel(workgroup_size=(32, 1, 1))
def k_remainder_by_zero(out: cd.Buffer[u32]):
    out[0] = cd.vec2[u32](cd.local_invocation_index, 1).x % 0  # E:rem


@cd.kernel(workgroup_size=(32, 1, 1))
def k_matrix_element_beyond(out: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].splat(0.0)
    m[255] = 1.0  # within rows x cols: the device decides whether this invocation holds it
    m[256] = 1.0  # E:melem
    m.store(out, 0, stride=16)


@pytest.mark.parametrize("k, message, marker, col", [
    (k_shift_too_far, "a shift of u32 by 32: the count must be from 0 to 31 (SPIR-V leaves larger and negative "
                      "shift counts undefined)", "# E:shift", 14),
    (k_divide_by_zero, "integer division by the constant 0: undefined in SPIR-V", "# E:div", 14),
    (k_remainder_by_zero, "integer remainder by the constant 0: undefined in SPIR-V", "# E:rem", 14),
    (k_matrix_element_beyond, "element index 256 is out of range for Acc[f32, 16, 16]: an invocation holds "
                              "m.length() of its 256 elements", "# E:melem", 5),
], ids=["shift", "division", "remainder", "matrix element"])
def test_constants_that_make_an_operation_undefined_are_located_errors(k, message, marker, col):
    # spirv-val accepts all four (the values are constants, not types); the GPU result would be undefined
    expect_error(k, CompileError, message, marker, col)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bool_push(c: cd.Buffer[f32], flag: cd.boolean):  # E:boolpush
    if flag:
        c[0] = 1.0


def test_a_bool_push_constant_is_refused_with_the_way_round_it():
    # (it reached spirv-val: "OpTypeBool ... only ... non-externally visible shader Storage Classes")
    expect_error(k_bool_push, TypeMismatchError, "push constant 'flag' cannot be bool: SPIR-V has no bool in "
                 "push-constant blocks (as in struct members); pass a u32 and test it (`if flag != 0:`), or make "
                 "it a Spec[cd.boolean] specialization constant", "# E:boolpush", 36)


# -- messages that named the wrong problem, and `...` as a statement (a fuzz run, 2027) -----------------


@cd.kernel
def k_abs_two(x: cd.Buffer[f32]):
    x[0] = abs(x[0], x[1])  # E:abstwo


@cd.kernel
def k_int_text(x: cd.Buffer[f32]):
    x[0] = f32(int("abc"))  # E:inttext


@cd.kernel
def k_int_base(x: cd.Buffer[f32]):
    x[0] = f32(int("zz", 16))  # E:intbase


@cd.kernel
def k_int_numbers(x: cd.Buffer[f32]):
    x[0] = f32(int("12") + int("ff", 16))


@cd.struct
class Halves:
    a: f16


@cd.kernel(workgroup_size=(32, 1, 1))
def k_uniform_load(u: cd.Uniform[Halves], c: cd.Buffer[f16]):
    MatA[f16, 16, 16].load(u, 0, stride=16).store(c, 0, stride=16)  # E:uniformload


def test_builtin_messages_name_the_real_problem():
    """abs() of two values and int() of text said "works on compile-time values only"; a matrix load from a
    uniform block listed local arrays among what it takes, which it refuses."""
    expect_error(k_abs_two, ArgumentError, "abs() takes exactly one argument (2 given)", "# E:abstwo", 12)
    expect_error(k_int_text, TypeMismatchError, "int('abc'): 'abc' is not a number", "# E:inttext", 16)
    expect_error(k_int_base, TypeMismatchError, "int('zz', 16): 'zz' is not a number in base 16", "# E:intbase", 16)
    compile_checked(k_int_numbers, r"OpConstant %float 267")
    expect_error(k_uniform_load, TypeMismatchError, "load needs a buffer, a shared array or a Ptr[...], got a "
                 "runtime Halves", "# E:uniformload", 5)


@cd.kernel
def k_ellipsis_statement(x: cd.Buffer[f32]):
    if x[0] > 1.0:
        ...
    else:
        x[0] = 1.0
    ...


@cd.kernel
def k_pass_statement(x: cd.Buffer[f32]):
    if x[0] > 1.0:
        pass
    else:
        x[0] = 1.0
    pass


@cd.kernel
def k_ellipsis_value(x: cd.Buffer[f32]):
    x[0] = ...  # E:ellipsis


def test_an_ellipsis_statement_does_nothing_as_pass_does():
    """``...`` as a statement was refused ("constant Ellipsis is not supported"); as a value it still is."""
    with_dots = compile_checked(k_ellipsis_statement).replace("k_ellipsis_statement", "K")
    with_pass = compile_checked(k_pass_statement).replace("k_pass_statement", "K")
    assert with_dots == with_pass
    expect_error(k_ellipsis_value, UnsupportedSyntaxError, "constant Ellipsis is not supported", "# E:ellipsis", 12)
