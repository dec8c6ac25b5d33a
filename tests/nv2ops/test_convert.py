"""Use changes (accumulator -> A or B) and OpCooperativeMatrixTransposeNV, and each rule's error."""

import pytest

import coopdsl as cd
from coopdsl import (
    Acc,
    MatA,
    MatB,
    ShapeError,
    TypeMismatchError,
    UnsupportedSyntaxError,
    f16,
    f32,
    i8,
    i32,
    u8,
    u32,
)

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def use_changes(a: cd.Buffer[f16], c: cd.Buffer[f32], d: cd.Buffer[i32], e: cd.Buffer[u8]):
    acc16 = Acc[f16, 16, 16].load(a, 0, stride=16)
    pa = MatA[f16, 16, 16](acc16)                       # only the use changes: ConvertNV
    pb = MatB[f16, 16, 16](acc16)
    acc32 = Acc[f32, 16, 16].load(c, 0, stride=16)
    qa = MatA[f16, 16, 16](acc32)                       # component and use: FConvert (llama.cpp's P -> P_A)
    cd.muladd(pa, pb, acc32).store(c, 0, stride=16)
    cd.muladd(qa, pb, acc32).store(c, 256, stride=16)
    ia = MatA[i8, 16, 32](Acc[i32, 16, 32].load(d, 0, stride=32))     # SConvert with a use change
    ub = MatB[i8, 32, 16](Acc[u8, 32, 16].load(e, 0, stride=16))      # same width: ConvertNV + bitcast
    vb = MatB[i8, 32, 16](Acc[u32, 32, 16].load(d, 0, stride=16))     # UConvert with a use change + bitcast
    cd.muladd(ia, ub, Acc[i32, 16, 16](0)).store(d, 0, stride=16)
    cd.muladd(ia, vb, Acc[i32, 16, 16](0)).store(d, 0, stride=16)


def test_use_changes_lower_to_convert_nv_or_op_convert():
    compile_checked(
        use_changes, r"OpCapability CooperativeMatrixConversionsNV", r'OpExtension "SPV_NV_cooperative_matrix2"',
        r"OpCooperativeMatrixConvertNV %\w+ %\w+\n(.*\n)*.*OpCooperativeMatrixConvertNV %\w+ %\w+\n",
        r"%\w+ = OpFConvert %\w+ %\w+\n", r"%\w+ = OpSConvert %\w+ %\w+\n",
        r"(%\w+) = OpCooperativeMatrixConvertNV %\w+ %\w+\n\s+%\w+ = OpBitcast %\w+ \1\n",
        r"(%\w+) = OpUConvert %\w+ %\w+\n\s+%\w+ = OpBitcast %\w+ \1\n")


@cd.kernel(workgroup_size=(32, 1, 1))
def transposes(a: cd.Buffer[f16], c: cd.Buffer[f16]):
    acc = Acc[f16, 16, 32].load(a, 0, stride=32)
    bt = acc.transpose()
    bt2 = acc.transpose(into=MatB[f16, 32, 16])
    pa = MatA[f16, 16, 32](acc)
    cd.muladd(pa, bt, Acc[f16, 16, 16](0.0)).store(c, 0, stride=16)
    cd.muladd(pa, bt2, Acc[f16, 16, 16](0.0)).store(c, 256, stride=16)


def test_transpose_gives_the_b_matrix_with_rows_and_columns_swapped():
    compile_checked(transposes, r"OpCapability CooperativeMatrixConversionsNV",
                    r"(%\w+) = OpTypeCooperativeMatrixKHR %half %uint_3 %uint_32 %uint_16 %uint_1\n(.*\n)*"
                    r".*OpCooperativeMatrixTransposeNV \1 %\w+\n")


@cd.kernel(workgroup_size=(128, 1, 1))
def workgroup_transpose(a: cd.Buffer[f16], c: cd.Buffer[f32], R: cd.Spec[u32] = 64):
    acc = Acc[f16, R, 32, cd.Workgroup].load(a, 0, stride=32)
    cd.muladd(MatA[f16, R, 32, cd.Workgroup](acc), acc.transpose(), Acc[f32, R, R, cd.Workgroup](0.0)) \
        .store(c, 0, stride=R)


def test_workgroup_scope_and_specialization_constant_dimensions():
    compile_checked(workgroup_transpose, r"OpTypeCooperativeMatrixKHR %half %uint_2 %uint_32 %R %uint_1",
                    r"OpCooperativeMatrixTransposeNV", r"OpCooperativeMatrixConvertNV")


# -- errors ------------------------------------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def k_b_to_a(a: cd.Buffer[f16]):
    b = MatB[f16, 16, 16].load(a, 0, stride=16)
    x = MatA[f16, 16, 16](b)  # E:btoa


@cd.kernel(workgroup_size=(32, 1, 1))
def k_shape(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 16].load(a, 0, stride=16)
    x = MatA[f16, 16, 32](acc)  # E:shape


@cd.kernel(workgroup_size=(32, 1, 1))
def k_transpose_a(a: cd.Buffer[f16]):
    m = MatA[f16, 16, 16].load(a, 0, stride=16)
    x = m.transpose()  # E:transa


@cd.kernel(workgroup_size=(32, 1, 1))
def k_transpose_component(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 32].load(a, 0, stride=32)
    x = acc.transpose(into=MatB[f32, 32, 16])  # E:transcomp


@cd.kernel(workgroup_size=(32, 1, 1))
def k_transpose_shape(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 32].load(a, 0, stride=32)
    x = acc.transpose(into=MatB[f16, 16, 32])  # E:transshape


@cd.kernel(workgroup_size=(32, 1, 1))
def k_transpose_use(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 32].load(a, 0, stride=32)
    x = acc.transpose(into=MatA[f16, 32, 16])  # E:transuse


@cd.kernel(workgroup_size=(32, 1, 1))
def k_transpose_into(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 32].load(a, 0, stride=32)
    x = acc.transpose(into=f16)  # E:transinto


@cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.2")
def k_old_convert(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 16].load(a, 0, stride=16)
    x = MatA[f16, 16, 16](acc)  # E:oldconv


@cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.2")
def k_old_transpose(a: cd.Buffer[f16]):
    acc = Acc[f16, 16, 16].load(a, 0, stride=16)
    x = acc.transpose()  # E:oldtrans


CASES = [
    (k_b_to_a, ShapeError, "cannot convert MatB[f16, 16, 16] to MatA[f16, 16, 16]: a conversion keeps the use, or "
                           "changes it from an accumulator to A or B", "# E:btoa", 9),
    (k_shape, ShapeError, "cannot convert Acc[f16, 16, 16] to MatA[f16, 16, 32]: rows, columns and scope must match",
     "# E:shape", 9),
    (k_transpose_a, ShapeError, "m.transpose: it takes an accumulator matrix (Acc[...]), but MatA[f16, 16, 16] has "
                                "use A (MatA)", "# E:transa", 9),
    (k_transpose_component, ShapeError, "m.transpose of Acc[f16, 16, 32] gives MatB[f16, 32, 16], not "
                                        "MatB[f32, 32, 16]: the component type stays f16 (GLSL requires it)",
     "# E:transcomp", 9),
    (k_transpose_shape, ShapeError, "rows and columns swap: 16 x 32 becomes 32 x 16", "# E:transshape", 9),
    (k_transpose_use, ShapeError, "the result is a B matrix (MatB[...])", "# E:transuse", 9),
    (k_transpose_into, TypeMismatchError, "into= must be the matrix type MatB[f16, 32, 16], got f16",
     "# E:transinto", 9),
    (k_old_convert, UnsupportedSyntaxError, "converting Acc[f16, 16, 16] to MatA[f16, 16, 16] needs "
                                            "SPV_NV_cooperative_matrix2, which requires SPIR-V 1.6", "# E:oldconv", 9),
    (k_old_transpose, UnsupportedSyntaxError, "m.transpose needs SPV_NV_cooperative_matrix2", "# E:oldtrans", 9),
]


@pytest.mark.parametrize("k,cls,message,marker,col", CASES, ids=[c[3][4:] for c in CASES])
def test_conversion_rules(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)
