"""The four SPV_QCOM_cooperative_matrix_conversion instructions: every allowed form validates (spirv-val) and
disassembles to the instruction, with the capability and extension inferred."""

import re

import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, UniformityError, f16, f32, i8, i32, u8, u32
from coopdsl.errors import InternalCompilerError
from coopdsl.ir import types as T
from coopdsl.ir.core import Op
from coopdsl.ir.verifier import verify

from ..conftest import compile_checked, expect_error

DIS = {f16: "half", f32: "float", i32: "int", u32: "uint", i8: "char", u8: "uchar"}
HEADER = (r"OpCapability CooperativeMatrixConversionQCOM", r"OpCapability CooperativeMatrixKHR",
          r'OpExtension "SPV_QCOM_cooperative_matrix_conversion"')


def arr(elem, n) -> str:
    return f"%_arr_{DIS[elem]}_uint_{n}"


def roundtrip(mat, elem, length):
    """A kernel building ``mat`` from ``elem[length]`` rows/columns and extracting them back in that form."""
    is_b = mat.use == 1

    @cd.kernel(workgroup_size=(64, 1, 1))
    def conversion(out: cd.Buffer[f32]):
        row = cd.array(elem, length, 1)
        if is_b:
            back = mat.from_cols(row).to_cols(elem)
        else:
            back = mat.from_rows(row).to_rows(elem)
        out[cd.subgroup_invocation_id] = f32(back[length - 1])

    return conversion


FORMS = [  # (matrix, array element, array length): every component type and use, plain and packed
    (MatA[f16, 64, 16], f16, 16), (MatA[f16, 64, 16], u32, 8), (MatA[f32, 32, 8], f32, 8),
    (MatA[f32, 32, 8], u32, 8), (MatA[i8, 16, 32], i8, 32), (MatA[u8, 64, 32], u8, 32), (MatA[i8, 64, 32], u32, 8),
    (MatB[f16, 16, 64], f16, 16), (MatB[f16, 16, 32], u32, 8), (MatB[f32, 8, 64], f32, 8),
    (MatB[u8, 32, 16], u8, 32), (MatB[i8, 32, 64], u32, 8),
    (Acc[f16, 64, 32], f16, 32), (Acc[f16, 64, 32], u32, 16), (Acc[f32, 64, 64], f32, 64),
    (Acc[f32, 16, 8], u32, 8), (Acc[i32, 32, 16], i32, 16), (Acc[u32, 32, 32], u32, 32),
]


@pytest.mark.parametrize("mat,elem,length", FORMS, ids=lambda v: str(v))
def test_construct_and_extract_every_form(mat, elem, length):
    compile_checked(roundtrip(mat, elem, length), *HEADER,
                    r"OpCompositeConstructCoopMatQCOM %\w+ %\w+",
                    rf"= OpCompositeExtractCoopMatQCOM {arr(elem, length)} %\w+")


@cd.kernel(workgroup_size=(32, 1, 1))
def i32_acc_from_packed(out: cd.Buffer[i32]):
    c = Acc[i32, 32, 16].from_rows(cd.array(u32, 16, 7))  # u32 rows for any accumulator: Columns long
    c.store(out, 0, stride=16)


def test_an_integer_accumulator_is_built_from_u32_rows():
    compile_checked(i32_acc_from_packed, r"OpCompositeConstructCoopMatQCOM %\w+ %\w+")


@cd.kernel(workgroup_size=(32, 1, 1))
def bitcasts(src: cd.Buffer[f16], out: cd.Buffer[u32], K: cd.Spec[u32] = 8):
    lane = cd.subgroup_invocation_id
    halves = cd.array(f16, 16)
    for i in cd.static_range(16):
        halves[i] = src[lane * 16 + i]
    words = cd.bitcast_array(halves, u32)                 # f16[16] -> u32[8]
    again = cd.bitcast_array(words, f16)                  # u32[8] -> f16[16]
    floats = cd.bitcast_array(words, cd.array[f32, 8])    # an explicit array type, same size
    ints = cd.bitcast_array(floats, i32)                  # f32[8] -> i32[8]
    spec_halves = cd.array(f16, 2 * K)
    spec_words = cd.bitcast_array(spec_halves, u32)       # f16[2 * K] -> u32[K]
    spec_back = cd.bitcast_array(spec_words, f16)         # u32[K] -> f16[K * 2]
    out[lane] = words[0] + u32(f32(again[1])) + u32(ints[2]) + spec_words[0] + u32(len(spec_back))


def test_bitcast_array():
    compile_checked(bitcasts, *HEADER,
                    rf"= OpBitCastArrayQCOM {arr(u32, 8)} %\w+",
                    rf"= OpBitCastArrayQCOM {arr(f16, 16)} %\w+",
                    rf"= OpBitCastArrayQCOM {arr(f32, 8)} %\w+",
                    rf"= OpBitCastArrayQCOM {arr(i32, 8)} %\w+",
                    r"OpSpecConstantOp %uint IMul %uint_2 %K",
                    r"= OpBitCastArrayQCOM %_arr_uint_K %\w+")


@cd.kernel(workgroup_size=(32, 1, 1))
def slices(out: cd.Buffer[f32], step: u32, at: i32, K: cd.Spec[u32] = 8):
    acc = cd.array(f32, 32, 1.0)
    a = cd.sub_array(acc, step % 32, 8)       # a runtime u32 start becomes an i32
    b = cd.sub_array(acc, at, 8)              # an i32 start is used as it is
    c = cd.sub_array(acc, 24, 8)              # a constant start
    d = cd.sub_array(acc, 0, K)               # a specialization-constant length
    out[0] = a[0] + b[1] + c[7] + d[0]


def test_sub_array_with_runtime_constant_and_specialization_parts():
    text = compile_checked(slices, *HEADER,
                           rf"%(\w+) = OpBitcast %int %\w+\n\s+%\w+ = OpExtractSubArrayQCOM {arr(f32, 8)} %\w+ %\1",
                           rf"%(\w+) = OpLoad %int %\w+\n[\s\S]*OpExtractSubArrayQCOM {arr(f32, 8)} %\w+ %\1\n",
                           rf"OpExtractSubArrayQCOM {arr(f32, 8)} %\w+ %int_24",
                           r"OpExtractSubArrayQCOM %_arr_float_K %\w+ %int_0")
    assert text.count("OpExtractSubArrayQCOM") == 4


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_dims(out: cd.Buffer[f16], M: cd.Spec[u32] = 32, K: cd.Spec[u32] = 16, N: cd.Spec[u32] = 32):
    a = MatA[f16, M, K].from_rows(cd.array(f16, K))
    b = MatB[f16, K, N].from_cols(cd.array(f16, K))
    c = Acc[f16, M, N].from_rows(cd.array(u32, N // 2))   # packed f16 accumulator rows: N / 2 words
    d = cd.muladd(a, b, c)
    packed = d.to_rows(u32)
    plain = d.to_rows()
    out[0] = plain[1] + f16(f32(packed[0])) + f16(f32(len(packed)))


def test_specialization_constant_dimensions_and_lengths():
    compile_checked(spec_dims,
                    r"OpSpecConstantOp %uint UDiv %N %uint_2",
                    r"OpCompositeExtractCoopMatQCOM %_arr_half_N %\w+",
                    r"OpCompositeConstructCoopMatQCOM %\w+ %\w+")


# the probe module of the study (shared/spvasm/qcom_coopmat_conv.spvasm), written in coopdsl
@cd.kernel(workgroup_size=(64, 1, 1))
def probe(out: cd.Buffer[f32]):
    ones = cd.array(f16, 16, 1.0)
    bits = cd.bitcast_array(ones, u32)
    a = MatA[f16, 64, 16].from_rows(bits)
    b = MatB[f16, 16, 64].from_cols(ones)
    c = Acc[f32, 64, 64].from_rows(cd.array(f32, 64, 1.0))
    d = cd.muladd(a, b, c)
    sub = cd.sub_array(d.to_rows(), 4, 8)
    out[0] = sub[0]


@pytest.mark.parametrize("env", ["vulkan1.1", "vulkan1.2", "vulkan1.3"])
def test_the_probe_module_in_every_target(env):
    text = compile_checked(probe, *HEADER, target_env=env)
    order = [m.group(1) for m in re.finditer(r"= (Op\w+QCOM|OpCooperativeMatrixMulAddKHR)", text)]
    assert order == ["OpBitCastArrayQCOM", "OpCompositeConstructCoopMatQCOM", "OpCompositeConstructCoopMatQCOM",
                     "OpCompositeConstructCoopMatQCOM", "OpCooperativeMatrixMulAddKHR",
                     "OpCompositeExtractCoopMatQCOM", "OpExtractSubArrayQCOM"]


def test_kernels_without_qcom_instructions_do_not_declare_the_extension():
    @cd.kernel(workgroup_size=(32, 1, 1))
    def plain(out: cd.Buffer[f32]):
        row = cd.array(f32, 4, 2.0)
        out[0] = row[1]

    compile_checked(plain, absent=(r"QCOM",))


def test_reflection_lists_the_capability():
    caps = probe.reflect()["capabilities"]
    assert "CooperativeMatrixConversionQCOM" in caps and "CooperativeMatrixKHR" in caps


# -- uniformity: a row is per invocation --------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def branch_on_a_row(a: cd.Buffer[f16], out: cd.Buffer[f32]):
    acc = Acc[f32, 32, 32].from_rows(cd.array(f32, 32, 1.0))
    row = acc.to_rows()
    if row[0] > 0.0:
        acc = Acc[f32, 32, 32].from_rows(row)  # E:divergent
    acc.store(out, 0, stride=32)


def test_a_row_of_a_matrix_is_divergent():
    err = expect_error(branch_on_a_row, UniformityError,
                       "the matrix built from arrays (.from_rows / .from_cols) must be executed by every invocation "
                       "of the subgroup", "# E:divergent", 15)
    assert "a row or column of a cooperative matrix (each invocation gets its own)" in err.message


# -- the IR verifier applies the same rules ---------------------------------------------------------
def test_the_verifier_rejects_a_broken_op():
    module = cd.kernel(workgroup_size=(64, 1, 1))(probe.fn).ir()  # a fresh copy: the cached one stays intact
    ops = [op for f in module.functions for op in f.ops() if isinstance(op, Op) and op.kind == "coop_from_array"]
    ops[0].type = T.CoopMatType(f16, 3, 64, 16, 1)  # a MatB of f16 with 64 rows
    with pytest.raises(InternalCompilerError, match=r"a MatB of f16 built from or split into arrays has 16 rows"):
        verify(module)
