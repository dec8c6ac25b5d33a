"""Cooperative-matrix ops of the vertical slice, each validated and read back."""

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, RowMajor, f16, f32, i8, i32, u8, u32

from ..conftest import compile_checked


@cd.kernel(workgroup_size=(32, 1, 1))
def ops(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32], lengths: cd.Buffer[u32], s: f32):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16, layout=RowMajor)
    tb = MatB[f16, 16, 16].load(b, 0, stride=16, layout=ColumnMajor)
    acc = Acc[f32, 16, 16].splat(0.0)
    acc = cd.muladd(ta, tb, acc)
    twice = acc + acc - acc * acc / Acc[f32, 16, 16].splat(s)
    scaled = -(twice * 0.5)
    first = scaled[0]
    scaled[1] = first
    lengths[0] = acc.length() + Acc[f32, 16, 16].length()
    scaled.store(c, 0, stride=16, layout=RowMajor)


def test_every_cooperative_matrix_op_of_the_slice():
    compile_checked(
        ops,
        r"OpCapability CooperativeMatrixKHR", r'OpExtension "SPV_KHR_cooperative_matrix"',
        r"OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 %uint_16 %uint_0",
        r"OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 %uint_16 %uint_1",
        r"OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_2",
        r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_0 %uint_16",
        r"OpCooperativeMatrixLoadKHR %\w+ %\w+ %uint_1 %uint_16",
        r"OpConstantComposite %\w+ %float_0", r"OpCompositeConstruct %\w+ %\w+\n",
        r"OpCooperativeMatrixMulAddKHR", r"OpFAdd %\w+", r"OpFSub", r"OpFMul", r"OpFDiv",
        r"OpMatrixTimesScalar %\w+ %\w+ %float_0_5", r"OpFNegate", r"OpCompositeExtract %float",
        r"OpCompositeInsert", r"OpCooperativeMatrixLengthKHR %uint", r"OpCooperativeMatrixStoreKHR")


@cd.kernel(workgroup_size=(32, 1, 1))
def int8_tile(a: cd.Buffer[i8], b: cd.Buffer[i8], c: cd.Buffer[i32]):
    ta = MatA[i8, 16, 32].load(a, 0, stride=32)
    tb = MatB[i8, 32, 16].load(b, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0), saturate=True)
    acc.store(c, 0, stride=16)


def test_signed_int8_muladd_sets_signedness_and_saturation():
    compile_checked(int8_tile, r"OpCapability Int8", r"OpCapability StorageBuffer8BitAccess",
                    r"OpCooperativeMatrixMulAddKHR %\w+ %\w+ %\w+ %\w+ MatrixASignedComponentsKHR\|"
                    r"MatrixBSignedComponentsKHR\|MatrixCSignedComponentsKHR\|MatrixResultSignedComponentsKHR\|"
                    r"SaturatingAccumulationKHR")


@cd.kernel(workgroup_size=(32, 1, 1))
def uint8_tile(a: cd.Buffer[u8], b: cd.Buffer[u8], c: cd.Buffer[u32]):
    acc = cd.muladd(MatA[u8, 16, 32].load(a, 0, stride=32), MatB[u8, 32, 16].load(b, 0, stride=16),
                    Acc[u32, 16, 16].splat(0))
    acc.store(c, 0, stride=16)


def test_unsigned_muladd_has_no_operands():
    text = compile_checked(uint8_tile, r"OpCooperativeMatrixMulAddKHR %\w+ %\w+ %\w+ %\w+\n")
    assert "SignedComponents" not in text


@cd.kernel(workgroup_size=(32, 1, 1))
def f16_acc(a: cd.Buffer[f16], c: cd.Buffer[f16]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16)
    tb = MatB[f16, 16, 16].load(a, 256, stride=16)
    acc = cd.muladd(ta, tb, Acc[f16, 16, 16](0.0))
    acc.store(c, 0, stride=16)


def test_f16_accumulator_and_constructor_splat():
    compile_checked(f16_acc, r"OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 %uint_16 %uint_2",
                    r"OpConstantComposite %\w+ %half_0x0p_0")
