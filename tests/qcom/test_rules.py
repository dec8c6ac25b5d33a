"""Every rule of SPV_QCOM_cooperative_matrix_conversion is a located compile error (never an internal error or a
module spirv-val rejects), including the ones spirv-val 2025.5 misses (NV2_QCOM.md section 5): the f16
accumulator built from u32[cols], two-dimensional sources and constant out-of-range slices."""

import pytest

import coopdsl as cd
from coopdsl import Acc, CoopMat, MatA, MatB, ShapeError, TypeMismatchError, f16, f32, i8, i32, u8, u32, vec2

from ..conftest import expect_error

TYPE, SHAPE = TypeMismatchError, ShapeError


# -- OpBitCastArrayQCOM ---------------------------------------------------------------------------
@cd.kernel
def bc_not_array(out: cd.Buffer[f32]):
    x = cd.bitcast_array(out[0], u32)  # E:bc_scalar


@cd.kernel
def bc_two_dim(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(cd.array[f32, 8], 2), u32)  # E:bc_2d


@cd.kernel
def bc_vectors(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(vec2[f32], 2), u32)  # E:bc_vec


@cd.kernel
def bc_src_elem(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(i8, 32), u32)  # E:bc_src


@cd.kernel
def bc_dst_elem(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(u32, 8), u8)  # E:bc_dst


@cd.kernel
def bc_odd_bytes(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(f16, 3), u32)  # E:bc_odd


@cd.kernel
def bc_sizes(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(u32, 8), cd.array[f32, 4])  # E:bc_size


@cd.kernel
def bc_dst_array_elem(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(u32, 8), cd.array[u8, 32])  # E:bc_dstarr


@cd.kernel
def bc_spec(out: cd.Buffer[f32], K: cd.Spec[u32] = 8):
    x = cd.bitcast_array(cd.array(f16, K), u32)  # E:bc_spec


@cd.kernel
def bc_target(out: cd.Buffer[f32]):
    x = cd.bitcast_array(cd.array(u32, 8), 4)  # E:bc_target


# -- OpCompositeConstructCoopMatQCOM / OpCompositeExtractCoopMatQCOM -------------------------------
@cd.kernel
def cm_workgroup(out: cd.Buffer[f32]):
    m = MatA[f16, 64, 16, cd.Workgroup].from_rows(cd.array(f16, 16))  # E:cm_wg


@cd.kernel
def cm_spec_scope(out: cd.Buffer[f32], S: cd.Spec[u32] = 3):
    m = MatA[f16, 64, 16, S].from_rows(cd.array(f16, 16))  # E:cm_sscope


@cd.kernel
def cm_spec_use(out: cd.Buffer[f32], U: cd.Spec[u32] = 0):
    m = CoopMat[f16, 64, 16, U].from_rows(cd.array(f16, 16))  # E:cm_suse


@cd.kernel
def cm_a_elem(out: cd.Buffer[f32]):
    m = MatA[i32, 64, 8].from_rows(cd.array(i32, 8))  # E:cm_aelem


@cd.kernel
def cm_a_cols(out: cd.Buffer[f32]):
    m = MatA[f16, 64, 32].from_rows(cd.array(f16, 32))  # E:cm_acols


@cd.kernel
def cm_a_spec_cols(out: cd.Buffer[f32], K: cd.Spec[u32] = 8):
    m = MatA[f16, 64, K].from_rows(cd.array(f16, K))  # E:cm_aspec


@cd.kernel
def cm_b_rows(out: cd.Buffer[f32]):
    m = MatB[i8, 16, 64].from_cols(cd.array(i8, 16))  # E:cm_brows


@cd.kernel
def cm_subgroup(out: cd.Buffer[f32]):
    m = MatA[f16, 256, 16].from_rows(cd.array(f16, 16))  # E:cm_sg


@cd.kernel
def cm_acc_elem(out: cd.Buffer[f32]):
    m = Acc[u8, 32, 32].from_rows(cd.array(u8, 32))  # E:cm_accelem


@cd.kernel
def cm_acc_cols(out: cd.Buffer[f32]):
    m = Acc[f32, 32, 256].from_rows(cd.array(f32, 256))  # E:cm_acccols


@cd.kernel
def cm_elem(out: cd.Buffer[f32]):
    m = MatA[f16, 64, 16].from_rows(cd.array(f32, 16))  # E:cm_elem


@cd.kernel
def cm_length(out: cd.Buffer[f32]):
    m = MatA[f16, 64, 16].from_rows(cd.array(f16, 8))  # E:cm_len


@cd.kernel
def cm_packed_a(out: cd.Buffer[f32]):
    m = MatA[f16, 64, 16].from_rows(cd.array(u32, 16))  # E:cm_packa


@cd.kernel
def cm_packed_acc(out: cd.Buffer[f32]):
    m = Acc[f16, 64, 16].from_rows(cd.array(u32, 16))  # E:cm_packacc


@cd.kernel
def cm_odd(out: cd.Buffer[f32]):
    m = Acc[f16, 16, 7].from_rows(cd.array(u32, 3))  # E:cm_odd


@cd.kernel
def cm_spec_length(out: cd.Buffer[f32], M: cd.Spec[u32] = 64, K: cd.Spec[u32] = 16):
    m = MatA[f16, M, K].from_rows(cd.array(f16, 16))  # E:cm_speclen


@cd.kernel
def cm_b_rows_call(out: cd.Buffer[f32]):
    m = MatB[f16, 16, 64].from_rows(cd.array(f16, 16))  # E:cm_dirb


@cd.kernel
def cm_acc_cols_call(out: cd.Buffer[f32]):
    m = Acc[f32, 32, 32].from_cols(cd.array(f32, 32))  # E:cm_diracc


@cd.kernel
def cm_to_rows_of_b(out: cd.Buffer[f32]):
    b = MatB[f16, 16, 64].from_cols(cd.array(f16, 16))
    r = b.to_rows()  # E:cm_dirto


@cd.kernel
def cm_two_dim(out: cd.Buffer[f32]):
    m = MatA[f32, 32, 8].from_rows(cd.array(cd.array[f32, 8], 1))  # E:cm_2d


@cd.kernel
def cm_not_array(out: cd.Buffer[f32]):
    m = MatA[f32, 32, 8].from_rows(out[0])  # E:cm_scalar


@cd.kernel
def cm_to_elem(out: cd.Buffer[f32]):
    r = Acc[f16, 32, 32].splat(0.0).to_rows(u8)  # E:cm_toelem


@cd.kernel
def cm_to_packed_int(out: cd.Buffer[f32]):
    r = Acc[i32, 32, 16].splat(0).to_rows(u32)  # E:cm_topacked


@cd.kernel
def cm_to_not_type(out: cd.Buffer[f32]):
    r = Acc[f32, 32, 16].splat(0.0).to_rows(4)  # E:cm_totype


@cd.kernel
def cm_slice_k(out: cd.Buffer[f32]):
    m = MatA[f32, 32, 8].from_rows(cd.sub_array(cd.array(f32, 32), 4, 8))  # E:cm_k


# -- OpExtractSubArrayQCOM ------------------------------------------------------------------------
@cd.kernel
def sa_not_array(out: cd.Buffer[f32]):
    x = cd.sub_array(out[0], 0, 4)  # E:sa_scalar


@cd.kernel
def sa_two_dim(out: cd.Buffer[f32]):
    x = cd.sub_array(cd.array(cd.array[f32, 8], 4), 0, 2)  # E:sa_2d


@cd.kernel
def sa_elem(out: cd.Buffer[f32]):
    x = cd.sub_array(cd.array(i8, 32), 0, 8)  # E:sa_elem


@cd.kernel
def sa_out_of_range(out: cd.Buffer[f32]):
    x = cd.sub_array(cd.array(f32, 32), 28, 8)  # E:sa_range


@cd.kernel
def sa_too_long(out: cd.Buffer[f32], at: u32):
    x = cd.sub_array(cd.array(f32, 8), at, 16)  # E:sa_long


@cd.kernel
def sa_negative(out: cd.Buffer[f32]):
    x = cd.sub_array(cd.array(f32, 8), -1, 4)  # E:sa_neg


@cd.kernel
def sa_float_start(out: cd.Buffer[f32]):
    x = cd.sub_array(cd.array(f32, 8), out[0], 4)  # E:sa_fstart


@cd.kernel
def sa_runtime_length(out: cd.Buffer[f32], n: u32):
    x = cd.sub_array(cd.array(f32, 8), 0, n)  # E:sa_rtlen


@cd.kernel
def sa_zero_length(out: cd.Buffer[f32]):
    x = cd.sub_array(cd.array(f32, 8), 0, 0)  # E:sa_zero


RULES = [
    (bc_not_array, TYPE, "the array bitcast_array converts must be an array (cd.array), got a runtime f32",
     "# E:bc_scalar"),
    (bc_two_dim, TYPE, "the array bitcast_array converts must be a one-dimensional array, got the array of "
     "arrays f32[8][2]", "# E:bc_2d"),
    (bc_vectors, TYPE, "must be an array of scalars, got vec2[f32][2]", "# E:bc_vec"),
    (bc_src_elem, TYPE, "the array bitcast_array converts must hold i32, u32, f32 or f16 elements, not i8 (i8[32])",
     "# E:bc_src"),
    (bc_dst_elem, TYPE, "bitcast_array converts to i32, u32, f32 or f16 elements, not u8", "# E:bc_dst"),
    (bc_odd_bytes, SHAPE, "f16[3] holds 6 bytes, which is not a whole number of u32 (4 bytes each)", "# E:bc_odd"),
    (bc_sizes, SHAPE, "bitcast_array keeps the byte size: u32[8] is 32 bytes, so it becomes f32[8], not f32[4]",
     "# E:bc_size"),
    (bc_dst_array_elem, TYPE, "the result of bitcast_array must hold i32, u32, f32 or f16 elements, not u8",
     "# E:bc_dstarr"),
    (bc_spec, SHAPE, "cannot bitcast f16[K] to u32: its length K must be a multiple of 2, which coopdsl cannot tell "
     "for a specialization constant (write the length as 2 * K)", "# E:bc_spec"),
    (bc_target, TYPE, "bitcast_array converts to an element type (e.g. u32) or an array type (cd.array[u32, 8]), "
     "not the number 4", "# E:bc_target"),
    (cm_workgroup, SHAPE, "MatA[f16, 64, 16, Workgroup] has Workgroup scope; matrices meet per-invocation arrays "
     "only at Subgroup scope", "# E:cm_wg"),
    (cm_spec_scope, SHAPE, "has a specialization-constant scope; matrices meet per-invocation arrays only at "
     "Subgroup scope", "# E:cm_sscope"),
    (cm_spec_use, SHAPE, "has a specialization-constant use (U); arrays become rows or columns of a matrix whose use "
     "is known when the kernel is compiled", "# E:cm_suse"),
    (cm_a_elem, TYPE, "a MatA built from or split into arrays has f32, f16, i8 or u8 components, not i32",
     "# E:cm_aelem"),
    (cm_a_cols, SHAPE, "MatA[f16, 64, 32]: a MatA of f16 built from or split into arrays has 16 columns (256 bits), "
     "not 32", "# E:cm_acols"),
    (cm_a_spec_cols, SHAPE, "has 16 columns (256 bits), not K = 8 by default", "# E:cm_aspec"),
    (cm_b_rows, SHAPE, "a MatB of i8 built from or split into arrays has 32 rows (256 bits), not 16", "# E:cm_brows"),
    (cm_subgroup, SHAPE, "MatA[f16, 256, 16] has 256 rows, one per invocation of a subgroup, but a subgroup has at "
     "most 128 invocations", "# E:cm_sg"),
    (cm_acc_elem, TYPE, "an accumulator built from or split into arrays has i32, u32, f16 or f32 components, not u8",
     "# E:cm_accelem"),
    (cm_acc_cols, SHAPE, "Acc[f32, 32, 256] has 256 columns", "# E:cm_acccols"),
    (cm_elem, TYPE, "an array for a row of MatA[f16, 64, 16] holds f16 (its component type) or u32 (packed), not f32",
     "# E:cm_elem"),
    (cm_length, SHAPE, "a row of MatA[f16, 64, 16] is f16[16], not f16[8]", "# E:cm_len"),
    (cm_packed_a, SHAPE, "a row of MatA[f16, 64, 16] is u32[8] (2 f16 per u32), not u32[16]", "# E:cm_packa"),
    (cm_packed_acc, SHAPE, "a row of Acc[f16, 64, 16] is u32[8] (2 f16 per u32), not u32[16]", "# E:cm_packacc"),
    (cm_odd, SHAPE, "Acc[f16, 16, 7] has an odd number of columns, so its rows do not pack into u32 pairs",
     "# E:cm_odd"),
    (cm_spec_length, SHAPE, "a row of MatA[f16, M, K] is f16[K], not f16[16]", "# E:cm_speclen"),
    (cm_b_rows_call, SHAPE, "MatB[f16, 16, 64]: each invocation's array is a column; use from_cols", "# E:cm_dirb"),
    (cm_acc_cols_call, SHAPE, "Acc[f32, 32, 32]: each invocation's array is a row; use from_rows", "# E:cm_diracc"),
    (cm_to_rows_of_b, SHAPE, "MatB[f16, 16, 64]: each invocation's array is a column; use to_cols", "# E:cm_dirto"),
    (cm_two_dim, TYPE, "must be a one-dimensional array, got the array of arrays f32[8][1]", "# E:cm_2d"),
    (cm_not_array, TYPE, "the array for a row of MatA[f32, 32, 8] must be an array (cd.array), got a runtime f32",
     "# E:cm_scalar"),
    (cm_to_elem, TYPE, "an array for a row of Acc[f16, 32, 32] holds f16 (its component type) or u32 (packed), "
     "not u8", "# E:cm_toelem"),
    (cm_to_packed_int, TYPE, "rows of Acc[i32, 32, 16] are extracted as i32 arrays; the packed u32 form is for f16 "
     "and f32 accumulators", "# E:cm_topacked"),
    (cm_to_not_type, TYPE, "to_rows(elem) takes an element type (f32 or u32), not the number 4", "# E:cm_totype"),
    (cm_slice_k, SHAPE, "a sub-array that becomes a row of MatA[f32, 32, 8] must start at a multiple of its length "
     "8 (K), got 4", "# E:cm_k"),
    (sa_not_array, TYPE, "the array sub_array slices must be an array (cd.array), got a runtime f32",
     "# E:sa_scalar"),
    (sa_two_dim, TYPE, "the array sub_array slices must be a one-dimensional array, got the array of arrays "
     "f32[8][4]", "# E:sa_2d"),
    (sa_elem, TYPE, "the array sub_array slices must hold i32, u32, f32 or f16 elements, not i8 (i8[32])",
     "# E:sa_elem"),
    (sa_out_of_range, SHAPE, "elements 28..35 are out of range for f32[32] (indices 0..31)", "# E:sa_range"),
    (sa_too_long, SHAPE, "a sub-array of 16 elements does not fit in f32[8]", "# E:sa_long"),
    (sa_negative, SHAPE, "the start of a sub-array must not be negative, got -1", "# E:sa_neg"),
    (sa_float_start, TYPE, "the start of a sub-array must be an integer, got a runtime f32", "# E:sa_fstart"),
    (sa_runtime_length, TYPE, "sub_array: an array length is an int from 1 to 65536 or an integer Spec constant",
     "# E:sa_rtlen"),
    (sa_zero_length, TYPE, "sub_array: an array length is an int from 1 to 65536, got 0", "# E:sa_zero"),
]


@pytest.mark.parametrize("k,cls,message,marker", RULES, ids=[r[3][4:] for r in RULES])
def test_rule_is_a_located_error(k, cls, message, marker):
    expect_error(k, cls, message, marker, 9)
