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


@cd.kernel(workgroup_size=(32, 1, 1))
def conversions(c: cd.Buffer[f32], d: cd.Buffer[i32], e: cd.Buffer[cd.u8]):
    acc = Acc[f32, 16, 16].splat(1.0)
    h = Acc[f16, 16, 16](acc)
    back = Acc[f32, 16, 16](h)
    si = Acc[i32, 16, 16](back)
    ui = Acc[u32, 16, 16](back)
    f_from_i = Acc[f32, 16, 16](si) + Acc[f32, 16, 16](ui)
    small = MatA[u8, 16, 32].load(e, 0, stride=32)
    wide = MatA[u32, 16, 32](small)
    swide = MatA[i32, 16, 32](MatA[i8, 16, 32](small))
    as_u = cd.bitcast(si, u32)
    f_from_i.store(c, 0, stride=16)
    (si + cd.bitcast(as_u, i32)).store(d, 0, stride=16)
    cd.bitcast(wide, i32).store(d, 256, stride=32)
    swide.store(d, 768, stride=32)


def test_matrix_conversions_and_bitcast():
    compile_checked(conversions, r"OpFConvert %\w+", r"OpConvertFToS", r"OpConvertFToU", r"OpConvertSToF",
                    r"OpConvertUToF", r"OpUConvert", r"OpSConvert", r"OpBitcast")


@cd.kernel(workgroup_size=(32, 1, 1))
def signed_override(a: cd.Buffer[u8], c: cd.Buffer[i32]):
    acc = cd.muladd(MatA[u8, 16, 32].load(a, 0, stride=32), MatB[u8, 32, 16].load(a, 0, stride=16),
                    Acc[i32, 16, 16].splat(0), signed=("a", "b"))
    acc.store(c, 0, stride=16)


def test_signedness_can_be_overridden():
    text = compile_checked(signed_override,
                           r"OpCooperativeMatrixMulAddKHR %\w+ %\w+ %\w+ %\w+ MatrixASignedComponentsKHR\|"
                           r"MatrixBSignedComponentsKHR\n")
    assert "MatrixCSigned" not in text


@cd.kernel(workgroup_size=(32, 1, 1))
def fp8_tile(a: cd.Buffer[cd.e4m3], c: cd.Buffer[f32]):
    ta = MatA[cd.e4m3, 16, 32].load(a, 0, stride=32)
    tb = MatB[cd.e5m2, 32, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16)


def test_fp8_matrices():
    compile_checked(fp8_tile, r"OpCapability Float8EXT", r"OpCapability Float8CooperativeMatrixEXT",
                    r'OpExtension "SPV_EXT_float8"', r"OpTypeFloat 8 Float8E4M3EXT", r"OpTypeFloat 8 Float8E5M2EXT")


@cd.kernel(workgroup_size=(32, 1, 1))
def bf16_tile(a: cd.Buffer[cd.bf16], c: cd.Buffer[f32]):
    ta = MatA[cd.bf16, 16, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, MatB[cd.bf16, 16, 16].load(a, 0, stride=16), Acc[f32, 16, 16].splat(0.0))
    Acc[cd.bf16, 16, 16](acc).store(a, 0, stride=16)
    acc.store(c, 0, stride=16)


def test_bf16_matrices_and_conversion():
    compile_checked(bf16_tile, r"OpCapability BFloat16TypeKHR", r"OpCapability BFloat16CooperativeMatrixKHR",
                    r'OpExtension "SPV_KHR_bfloat16"', r"OpTypeFloat 16 BFloat16KHR", r"OpFConvert")


import pytest  # noqa: E402

COMPONENTS = [cd.f16, cd.f32, cd.f64, cd.i8, cd.i16, cd.i32, cd.i64, cd.u8, cd.u16, cd.u32, cd.u64]


def _component_kernel(t):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def component(buf: cd.Buffer[t]):
        m = Acc[t, 16, 16].load(buf, 0, stride=16)
        (m + m).store(buf, 256, stride=16)
    return component


@pytest.mark.parametrize("t", COMPONENTS, ids=str)
def test_every_component_type(t):
    names = {"f16": "half", "f32": "float", "f64": "double", "i8": "char", "i16": "short", "i32": "int",
             "i64": "long", "u8": "uchar", "u16": "ushort", "u32": "uint", "u64": "ulong"}
    op = "OpFAdd" if t.kind == "float" else "OpIAdd"
    compile_checked(_component_kernel(t), rf"OpTypeCooperativeMatrixKHR %{names[t.name]} %uint_3 %uint_16 %uint_16 "
                    rf"%uint_2", rf"{op} %\w+")


@cd.kernel(workgroup_size=("WG", 1, 1))
def spec_use_scope(a: cd.Buffer[f16], USE: cd.Spec[u32] = 0, SCOPE: cd.Spec[u32] = 3, WG: cd.Spec[u32] = 32):
    m = cd.CoopMat[f16, 16, 16, USE, SCOPE].load(a, 0, stride=16)
    m.store(a, 256, stride=16)


def test_spec_constant_use_and_scope():
    compile_checked(spec_use_scope, r"OpTypeCooperativeMatrixKHR %half %SCOPE %uint_16 %uint_16 %USE")
