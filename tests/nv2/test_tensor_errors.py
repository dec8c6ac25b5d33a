"""Every tensor-addressing rule spirv-val does not check (and the ones it does, reported earlier and better) is a
CompileError at the user's line and column."""

import pytest

import coopdsl as cd
from coopdsl import (
    Acc,
    ArgumentError,
    MatA,
    TypeMismatchError,
    UniformityError,
    UnsupportedSyntaxError,
    f16,
    f32,
    i8,
    i32,
    u8,
    u16,
    u32,
)
from coopdsl.errors import DeclarationError, ShapeError

from ..conftest import expect_error, marker_line


@cd.struct
class Blk:
    d: f16
    qs: cd.array[cd.u8, 16]


@cd.func
def good_decode(bl, bc, cib):
    return bl.d


@cd.kernel(workgroup_size=(32, 1, 1))
def k_dims0(a: cd.Buffer[f32]):
    L = cd.tensor_layout(0)  # E:dims0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_dims6(a: cd.Buffer[f32]):
    V = cd.tensor_view(6)  # E:dims6


@cd.kernel(workgroup_size=(32, 1, 1))
def k_perm(a: cd.Buffer[f32]):
    V = cd.tensor_view(3, perm=(0, 1, 1))  # E:perm


@cd.kernel(workgroup_size=(32, 1, 1))
def k_perm_len(a: cd.Buffer[f32]):
    V = cd.tensor_view(2, perm=(0, 1, 2))  # E:permlen


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2, clamp=cd.RowMajor)  # E:clamp


@cd.kernel(workgroup_size=(32, 1, 1))
def k_spec_clamp(a: cd.Buffer[f32], C: cd.Spec[u32] = 7):
    L = cd.tensor_layout(2, clamp=C)  # E:specclamp


@cd.kernel(workgroup_size=(32, 1, 1))
def k_count(a: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2).dimension(n, n, n)  # E:count


@cd.kernel(workgroup_size=(32, 1, 1))
def k_slice_count(a: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(3).slice(0, n, 0, n)  # E:slicecount


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clip_count(a: cd.Buffer[f32], n: u32):
    V = cd.tensor_view(2).clip(0, n, 0)  # E:clipcount


@cd.kernel(workgroup_size=(32, 1, 1))
def k_width(a: cd.Buffer[f32], n: u16):
    L = cd.tensor_layout(2).dimension(n, 16)  # E:width


@cd.kernel(workgroup_size=(32, 1, 1))
def k_float(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).stride(1.5, 1)  # E:float


@cd.kernel(workgroup_size=(32, 1, 1))
def k_stride_min(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(64, 256).stride(7, 1)  # E:stride


@cd.kernel(workgroup_size=(32, 1, 1))
def k_negative(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).dimension(16, 16).slice(-2, 4, 0, -4)  # E:negative


@cd.kernel(workgroup_size=(32, 1, 1))
def k_block0(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).block_size(1, 0)  # E:block0


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp_float(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).clamp_value(0.5)  # E:clampfloat


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp_type(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).clamp_value(1.0e6, f16)  # E:clamptype


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp_i8(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).clamp_value(300, i8)  # E:clampi8


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp_u8(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).clamp_value(-1, u8)  # E:clampu8


@cd.kernel(workgroup_size=(32, 1, 1))
def k_clamp_float_as_int(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).clamp_value(2.5, i32)  # E:clampfloatint


@cd.kernel(workgroup_size=(32, 1, 1))
def k_offset_u32_max(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).slice(2**32 - 1, 16, 0, 16)  # E:offsetmax


@cd.kernel(workgroup_size=(32, 1, 1))
def k_offset_2_31(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2).slice(0, 16, 2**31, 16)  # E:offset231


@pytest.mark.parametrize("k,cls,message,marker,col", [
    (k_dims0, ArgumentError, "a tensor layout has 1 to 5 dimensions (a compile-time int), got the number 0",
     "# E:dims0", 9),
    (k_dims6, ArgumentError, "a tensor view has 1 to 5 dimensions", "# E:dims6", 9),
    (k_perm, ArgumentError, "perm must be a permutation of 0 .. 2 (each once, a compile-time tuple), got (0, 1, 1)",
     "# E:perm", 9),
    (k_perm_len, ArgumentError, "perm must be a permutation of 0 .. 1", "# E:permlen", 9),
    (k_clamp, ArgumentError, "clamp must be cd.ClampUndefined, cd.ClampConstant", "# E:clamp", 9),
    (k_spec_clamp, ArgumentError, "clamp mode: specialization constant 'C' holds 7; clamp modes are 0 to 4",
     "# E:specclamp", 9),
    (k_count, ArgumentError, "dimension of a 2-dimensional layout (TensorLayout[2, Undefined]) takes 2 values (one "
     "dimension per tensor dimension), got 3", "# E:count", 9),
    (k_slice_count, ArgumentError, "takes 6 values (an (offset, span) pair per tensor dimension), got 4",
     "# E:slicecount", 9),
    (k_clip_count, ArgumentError, "takes 4 values (row offset, row span, column offset, column span), got 3",
     "# E:clipcount", 9),
    (k_width, TypeMismatchError, "dimension's value 0 must be a 32-bit integer (u32 or i32), got a runtime u16",
     "# E:width", 9),
    (k_float, TypeMismatchError, "stride's value 0 must be an integer, got 1.5", "# E:float", 9),
    (k_stride_min, ArgumentError, "stride 0 of this layout must be at least stride 1 x ceil(dimension 1 / block "
     "size 1) = 1 x ceil(256 / 32) = 8, got 7", "# E:stride", 9),
    (k_negative, ArgumentError, "slice's value 3 must not be negative, got -4 (only slice offsets may be)",
     "# E:negative", 9),
    (k_block0, ArgumentError, "block sizes are at least 1, got 0 for dimension 1", "# E:block0", 9),
    (k_clamp_float, ArgumentError, "clamp_value takes a bit pattern; for the number 0.5 say which type it is",
     "# E:clampfloat", 9),
    (k_clamp_type, ArgumentError, "1000000.0 does not fit in f16", "# E:clamptype", 9),
    (k_offset_u32_max, ArgumentError, "slice's value 0, an offset, is a signed 32-bit value: the literal "
     "4294967295 does not fit in i32", "# E:offsetmax", 9),
    (k_offset_2_31, ArgumentError, "slice's value 2, an offset, is a signed 32-bit value: the literal 2147483648 "
     "does not fit in i32", "# E:offset231", 9),
    (k_clamp_i8, ArgumentError, "the literal 300 does not fit in i8 (-128..127)", "# E:clampi8", 9),
    (k_clamp_u8, ArgumentError, "the literal -1 does not fit in u8 (0..255)", "# E:clampu8", 9),
    (k_clamp_float_as_int, ArgumentError, "cannot use the float literal 2.5 as i32", "# E:clampfloatint", 9),
])
def test_layout_and_view_rules(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)


def test_slice_offsets_take_every_i32():
    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(a: cd.Buffer[f32]):
        cd.tensor_layout(2).slice(-2**31, 16, 2**31 - 1, 16)

    k.compile()


def test_the_stride_rule_passes_when_it_holds():
    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(a: cd.Buffer[f32]):
        cd.tensor_layout(3).block_size(1, 1, 32).dimension(2, 64, 256).stride(512, 8, 1)

    k.compile()


# -- loads and stores ---------------------------------------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def k_store_blocks(a: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    m = Acc[f32, 16, 16].splat(0.0)
    m.store_tensor(a, 0, L.slice(0, 16, 0, 16))  # E:storeblock


@cd.kernel(workgroup_size=(32, 1, 1))
def k_store_blocks_phi(a: cd.Buffer[f32], n: u32):
    L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
    for _ in range(n):
        L = L.slice(0, 16, 0, 16)
    Acc[f32, 16, 16].splat(0.0).store_tensor(a, 0, L)  # E:storeblockphi


@cd.kernel(workgroup_size=(32, 1, 1))
def k_store_decode(a: cd.Buffer[f32], n: u32):
    m = Acc[f32, 16, 16].splat(0.0)
    m.store_tensor(a, 0, cd.tensor_layout(2).dimension(n, n), decode=good_decode)  # E:storedecode


@cd.kernel(workgroup_size=(32, 1, 1))
def k_decode_shared(n: u32):
    sh = cd.shared(f16, 256)
    m = MatA[f16, 16, 16].load_tensor(sh, 0, cd.tensor_layout(2).dimension(16, 16), decode=good_decode)  # E:dshared


@cd.kernel(workgroup_size=(32, 1, 1))
def k_decode_scalars(a: cd.Buffer[f16], n: u32):
    m = MatA[f16, 16, 16].load_tensor(a, 0, cd.tensor_layout(2).dimension(16, 16), decode=good_decode)  # E:dscalar


@cd.kernel(workgroup_size=(32, 1, 1))
def k_blocks_no_decode(w: cd.Ptr[Blk], n: u32):
    m = MatA[f16, 16, 16].load_tensor(w, 0, cd.tensor_layout(2).dimension(16, 16))  # E:nodecode


@cd.kernel(workgroup_size=(32, 1, 1))
def k_local(a: cd.Buffer[f32]):
    loc = cd.local_array(f32, 256)
    m = Acc[f32, 16, 16].load_tensor(loc, 0, cd.tensor_layout(2).dimension(16, 16))  # E:local


@cd.kernel(workgroup_size=(32, 1, 1))
def k_unaligned(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load_tensor(a, 3, cd.tensor_layout(2).dimension(16, 16))  # E:unaligned


@cd.kernel(workgroup_size=(32, 1, 1))
def k_not_layout(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load_tensor(a, 0, cd.tensor_view(2))  # E:notlayout


@cd.kernel(workgroup_size=(32, 1, 1))
def k_not_view(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2)
    Acc[f32, 16, 16].splat(0.0).store_tensor(a, 0, L, view=L)  # E:notview


@cd.kernel(workgroup_size=(32, 1, 1))
def k_fill(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load_tensor(a, 0, cd.tensor_layout(2), fill=Acc[f32, 16, 32].splat(0.0))  # E:fill


@cd.kernel(workgroup_size=(32, 1, 1))
def k_stride_then_dimension(a: cd.Buffer[f32], n: u32):
    lay = cd.tensor_layout(2).stride(n, 1).dimension(n, n)  # E:stridefirst
    m = Acc[f32, 16, 16].load_tensor(a, 0, lay.slice(0, 16, 0, 16))


@cd.kernel(workgroup_size=(32, 1, 1))
def k_dims_on_dimless_view(a: cd.Buffer[f32], n: u32):
    v = cd.tensor_view(2).dimension(n, n)  # E:dimlessview
    m = Acc[f32, 16, 16].load_tensor(a, 0, cd.tensor_layout(2).dimension(n, n), view=v)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_view_rank(a: cd.Buffer[f32], n: u32):
    m = Acc[f32, 16, 16].load_tensor(a, 0, cd.tensor_layout(2).dimension(n, n), view=cd.tensor_view(3))  # E:vrank


@pytest.mark.parametrize("k,cls,message,marker,col", [
    (k_stride_then_dimension, ArgumentError, "dimension() resets the strides that stride() set earlier on this "
     "layout", "# E:stridefirst", 11),
    (k_dims_on_dimless_view, ArgumentError, "dimension() on a view made with has_dims=False would be ignored",
     "# E:dimlessview", 9),
    (k_view_rank, ShapeError, "load_tensor: a view without its own dimensions (has_dims=False) takes the layout's "
     "span as its dimensions, so it needs as many: the view has 3, the layout 2", "# E:vrank", 9),
    (k_store_blocks, ArgumentError, "store_tensor: this layout has block size 32; stores take layouts with block "
     "size 1", "# E:storeblock", 5),
    (k_store_blocks_phi, ArgumentError, "this layout has block size 32", "# E:storeblockphi", 5),
    (k_store_decode, ArgumentError, "store_tensor takes no decode function", "# E:storedecode", 5),
    (k_decode_shared, TypeMismatchError, "a decode function reads device memory (a buffer or a Ptr[...]), not shared "
     "array 'sh'", "# E:dshared", 9),
    (k_decode_scalars, TypeMismatchError, "the memory must hold block structs (Buffer[Block] or Ptr[Block] of a "
     "@cd.struct), not f16", "# E:dscalar", 9),
    (k_blocks_no_decode, TypeMismatchError, "the memory must hold numeric scalars or vectors, not Blk (memory of "
     "structs needs a decode function)", "# E:nodecode", 9),
    (k_local, TypeMismatchError, "cannot address local array 'loc'", "# E:local", 9),
    (k_unaligned, ArgumentError, "element 3 of f32 lies 12 bytes from the start; a tensor load or store must start "
     "16-byte aligned", "# E:unaligned", 9),
    (k_not_layout, TypeMismatchError, "load_tensor: layout must be a tensor layout (cd.tensor_layout(...)), got a "
     "runtime TensorView[2, False, 0, 1]", "# E:notlayout", 9),
    (k_not_view, TypeMismatchError, "store_tensor: view must be a tensor view", "# E:notview", 5),
    (k_fill, TypeMismatchError, "load_tensor: fill must be a number, a runtime f32 or a Acc[f32, 16, 16], got a "
     "runtime "
     "Acc[f32, 16, 32]", "# E:fill", 9),
])
def test_load_and_store_rules(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)


# -- decode functions ---------------------------------------------------------------------------------------
@cd.func
def two_params(bl, bc):
    return bl.d


@cd.func
def four_params(bl, bc, cib, extra):
    return bl.d


@cd.func
def returns_f32(bl, bc, cib):
    return f32(bl.d)


@cd.func
def with_barrier(bl, bc, cib):
    cd.barrier()  # E:barrier
    return bl.d


@cd.func
def with_subgroup_op(bl, bc, cib):
    return cd.subgroup_add(bl.d)  # E:subgroup


@cd.func
def helper_with_matrix(x):
    return Acc[f16, 16, 16].splat(x).length()  # E:matrix


@cd.func
def calls_a_tangled_helper(bl, bc, cib):
    return bl.d * f16(helper_with_matrix(bl.d))


def _decode_kernel(fn):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(w: cd.Ptr[Blk], n: u32):
        L = cd.tensor_layout(2).block_size(1, 32).dimension(n, n)
        m = MatA[f16, 16, 32].load_tensor(w, 0, L, decode=fn)  # E:decode

    return k


@pytest.mark.parametrize("fn,cls,message", [
    (two_params, ArgumentError, "the decode function two_params takes 2 parameters, but it is called with 3: (block: "
     "ptr<PhysicalStorageBuffer, Blk>, block_coords: u32[2], coord_in_block: u32[2])"),
    (four_params, ArgumentError, "the decode function four_params is called with (block: ptr<PhysicalStorageBuffer, "
     "Blk>, block_coords: u32[2], coord_in_block: u32[2]); its parameter 'extra' gets no value"),
    (returns_f32, TypeMismatchError, "the decode function must return f16, but returns_f32 returns f32"),
    (f16, TypeMismatchError, "the decode function must be a @cd.func device function (or cd.partial(...) of one), "
     "got the type f16"),
])
def test_decode_signatures_are_checked_before_spirv_val(fn, cls, message):
    expect_error(_decode_kernel(fn), cls, message, "# E:decode", 13)


@pytest.mark.parametrize("fn,message,marker,col", [
    (with_barrier, "a control barrier cannot run inside the decode function with_barrier", "# E:barrier", 5),
    (with_subgroup_op, "a subgroup operation cannot run inside the decode function with_subgroup_op",
     "# E:subgroup", 12),
    (calls_a_tangled_helper, "a cooperative-matrix operation cannot run inside the decode function "
     "calls_a_tangled_helper, through the call of helper_with_matrix", "# E:matrix", 12),
])
def test_tangled_instructions_inside_decode_functions(fn, message, marker, col):
    err = expect_error(_decode_kernel(fn), UniformityError, message, marker, col)
    assert "forbids tangled instructions" in err.message


@cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.2")
def k_old_target(a: cd.Buffer[f32]):
    L = cd.tensor_layout(2)  # E:target


def test_nv2_kernels_need_spirv_1_6():
    expect_error(k_old_target, UnsupportedSyntaxError, "a tensor layout needs SPV_NV_cooperative_matrix2 and "
                 "SPV_NV_tensor_addressing, which requires SPIR-V 1.6: compile for vulkan1.3 or vulkan1.4 (this "
                 "kernel targets SPIR-V 1.5, vulkan1.2)", "# E:target", 9)


def test_struct_array_members_are_checked_where_declared():
    with pytest.raises(DeclarationError) as info:
        cd.array[cd.boolean, 4]  # E:arraybool
    assert info.value.loc.line == marker_line("# E:arraybool")
    assert "array elements are numeric scalars or vectors, not bool" in info.value.message
    with pytest.raises(DeclarationError, match="an array length is an int from 1 to 65536, got 0"):
        cd.array[u32, 0]


@cd.func
def out_of_range(bl, bc, cib):
    return f16(bc[2])  # E:arrayindex


def test_constant_array_indices_are_checked():
    expect_error(_decode_kernel(out_of_range), TypeMismatchError, "index 2 is out of range for u32[2]",
                 "# E:arrayindex", 16)


def test_an_error_inside_a_decode_function_names_the_load_that_calls_it():
    """A decode function is compiled for what load_tensor passes (here a 2-D layout's coordinates): an error in its
    body names that call, as for a device function called directly."""
    expect_error(_decode_kernel(out_of_range), TypeMismatchError,
                 f"index 2 is out of range for u32[2] (indices 0..1); Python's negative indices are not supported (in "
                 f"out_of_range(ptr<PhysicalStorageBuffer, Blk>, u32[2], u32[2]), called at {__file__}:"
                 f"{marker_line('# E:decode')}:13)", "# E:arrayindex", 16)


@cd.func
def no_member(bl, bc, cib):
    return bl.scale  # E:member


def test_block_members_are_checked():
    expect_error(_decode_kernel(no_member), TypeMismatchError, "struct Blk has no member 'scale' (it has: d, qs)",
                 "# E:member", 12)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_divergent(a: cd.Buffer[f32]):
    if cd.local_invocation_index < 5:
        m = Acc[f32, 16, 16].load_tensor(a, 0, cd.tensor_layout(2).dimension(16, 16))  # E:divergent


def test_tensor_loads_are_tangled():
    expect_error(k_divergent, UniformityError, "", "# E:divergent", 13)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bad_float(a: cd.Buffer[f32]):
    x = float("infinity!")  # E:badfloat


def test_float_of_a_string_is_a_compile_time_constant():
    expect_error(k_bad_float, TypeMismatchError, "float('infinity!') is not a number", "# E:badfloat", 9)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_view_no_dims(a: cd.Buffer[f16], o: cd.Buffer[f16]):
    L = cd.tensor_layout(2).dimension(16, 16)
    V = cd.tensor_view(2, has_dims=True).stride(16, 1).clip(0, 16, 0, 16)
    m = Acc[f16, 16, 16].load_tensor(a, 0, L, view=V)  # E:viewnodims
    m.store_tensor(o, 0, L)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_view_no_dims_store(a: cd.Buffer[f16], o: cd.Buffer[f16]):
    L = cd.tensor_layout(2).dimension(16, 16)
    m = Acc[f16, 16, 16].load_tensor(a, 0, L)
    m.store_tensor(o, 0, L, view=cd.tensor_view(2, has_dims=True))  # E:viewnodimsstore


@cd.kernel(workgroup_size=(32, 1, 1))
def k_view_dims_set(a: cd.Buffer[f16], o: cd.Buffer[f16], n: cd.u32):
    L = cd.tensor_layout(2).dimension(16, 16)
    V = cd.tensor_view(2, has_dims=True).stride(16, 1)
    W = V.dimension(16, 16).clip(0, 8, 0, 16)
    if n > 0:           # (a view that comes through a branch is not followed)
        V = V.dimension(16, n)
    m = Acc[f16, 16, 16].load_tensor(a, 0, L, view=W)
    m2 = Acc[f16, 16, 16].load_tensor(a, 0, L, view=V)
    m.store_tensor(o, 0, L)
    m2.store_tensor(o, 256, L)


@pytest.mark.parametrize("k, marker", [(k_view_no_dims, "# E:viewnodims"),
                                       (k_view_no_dims_store, "# E:viewnodimsstore")])
def test_a_view_with_dimensions_of_its_own_must_have_them_set(k, marker):
    """A view created with has_dims=True that reaches a load or store without .dimension(...) addressed
    nothing meaningful (its dimensions start at 0): the interpreter reported a division by zero at the load;
    it is now a compile error there (found by a hardening fuzz)."""
    col = 9 if marker.endswith("dims") else 5
    expect_error(k, ArgumentError, "the view was created with has_dims=True but its dimensions are never set: give "
                 "it .dimension(...) (2 values), or create it without has_dims to use the layout's span", marker, col)


def test_a_view_whose_dimensions_are_set_compiles():
    assert k_view_dims_set.compile()
