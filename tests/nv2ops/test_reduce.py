"""OpCooperativeMatrixReduceNV: every mode, built-in and device-function combines, and each rule's error."""

import pytest

import coopdsl as cd
from coopdsl import Acc, ArgumentError, MatA, ShapeError, TypeMismatchError, UnsupportedSyntaxError, f16, f32, u32

from ..conftest import compile_checked, expect_error

NV2 = (r"OpCapability CooperativeMatrixReductionsNV", r'OpExtension "SPV_NV_cooperative_matrix2"')


@cd.func
def add(a, b):
    return a + b


@cd.func
def keep_first(x, y):
    return x  # llama.cpp's smearReduce: resize a matrix whose rows hold one value each


@cd.kernel(workgroup_size=(32, 1, 1))
def modes(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    s = Acc[f32, 16, 32].load(a, 0, stride=32)
    s.reduce(cd.Row, cd.reduce_max, into=Acc[f32, 16, 16]).store(o, 0, stride=16)
    s.reduce(cd.Column, cd.reduce_min, into=Acc[f32, 48, 32]).store(o, 256, stride=32)
    s.reduce(cd.Row | cd.Column, cd.reduce_add, into=Acc[f32, 32, 64]).store(o, 2048, stride=64)
    s.reduce(cd.Reduce2x2, add, into=Acc[f32, 8, 16]).store(o, 4096, stride=16)
    s.reduce(cd.Row, keep_first).store(o, 8192, stride=32)


def test_every_mode_with_built_in_and_device_function_combines():
    text = compile_checked(
        modes, *NV2,
        r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row %reduce_max_f32\n",
        r"OpCooperativeMatrixReduceNV %\w+ %\w+ Column %reduce_min_f32\n",
        r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row\|Column %reduce_add_f32\n",
        r"OpCooperativeMatrixReduceNV %\w+ %\w+ 2x2 %add\n",
        r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row %keep_first\n",
        r"%reduce_max_f32 = OpFunction %float None %\w+\n.*\n.*\n.*\n.*OpExtInst %float %\w+ FMax",
        r"%reduce_min_f32 = OpFunction %float None %\w+\n.*\n.*\n.*\n.*OpExtInst %float %\w+ FMin",
        r"%reduce_add_f32 = OpFunction %float None %\w+\n.*\n.*\n.*\n.*OpFAdd %float",
        r"%add = OpFunction %float None %\w+\n(\s+%\w+ = OpFunctionParameter %float\n){2}",
        r"OpTypeCooperativeMatrixKHR %float %uint_3 %uint_8 %uint_16 %uint_2")
    assert text.count("OpFunction %float") == 5  # one combine function per (function, component type)


@cd.kernel(workgroup_size=(32, 1, 1))
def same_combine_twice(a: cd.Buffer[f16], o: cd.Buffer[f16]):
    s = Acc[f16, 16, 16].load(a, 0, stride=16)
    t = s.reduce(cd.Row, cd.reduce_add)
    t = t.reduce(cd.Column, cd.reduce_add)
    u = s.reduce(cd.Row, add)
    u.reduce(cd.Column, add).store(o, 0, stride=16)
    t.store(o, 256, stride=16)


def test_a_combine_function_is_written_once_per_type():
    text = compile_checked(same_combine_twice, r"OpFAdd %half")
    assert text.count("OpFunction %half") == 2


@cd.kernel(workgroup_size=(128, 1, 1))
def workgroup_scope(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    s = Acc[f32, 64, 64, cd.Workgroup].load(a, 0, stride=64)
    s.reduce(cd.Row, cd.reduce_max, into=Acc[f32, 64, 128, cd.Workgroup]).store(o, 0, stride=128)


def test_workgroup_scope_matrices():
    compile_checked(workgroup_scope, *NV2, r"OpTypeCooperativeMatrixKHR %float %uint_2 %uint_64 %uint_128 %uint_2",
                    r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row %reduce_max_f32")


@cd.kernel(workgroup_size=(32, 1, 1))
def symbolic(a: cd.Buffer[f32], o: cd.Buffer[f32], R: cd.Spec[u32] = 32, C: cd.Spec[u32] = 16):
    s = Acc[f32, R, C].load(a, 0, stride=C)
    s.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, R // 2, C // 2]).store(o, 0, stride=C)
    h = Acc[f32, 2 * R, C].load(a, 0, stride=C)
    h.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, R, C // 2]).store(o, 0, stride=C)
    s.reduce(cd.Row, cd.reduce_add, into=Acc[f32, R, 2 * C]).store(o, 0, stride=C)


def test_specialization_constant_dimensions_are_compared_symbolically():
    compile_checked(symbolic, r"OpCooperativeMatrixReduceNV %\w+ %\w+ 2x2", r"OpSpecConstantOp %uint UDiv %R %uint_2")


# -- errors -----------------------------------------------------------------------------------
@cd.kernel(workgroup_size=(32, 1, 1))
def k_not_acc(a: cd.Buffer[f16]):
    m = MatA[f16, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add)  # E:notacc


@cd.kernel(workgroup_size=(32, 1, 1))
def k_int(a: cd.Buffer[u32]):
    m = Acc[u32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add)  # E:int


@cd.kernel(workgroup_size=(32, 1, 1))
def k_rows(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add, into=Acc[f32, 32, 16])  # E:rows


@cd.kernel(workgroup_size=(32, 1, 1))
def k_cols(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Column, cd.reduce_add, into=Acc[f32, 16, 32])  # E:cols


@cd.kernel(workgroup_size=(32, 1, 1))
def k_quad(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, 8, 16])  # E:quad


@cd.kernel(workgroup_size=(32, 1, 1))
def k_quad_odd(a: cd.Buffer[f32]):
    m = Acc[f32, 15, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, 7, 8])  # E:quadodd


@cd.kernel(workgroup_size=(32, 1, 1))
def k_quad_symbolic(a: cd.Buffer[f32], R: cd.Spec[u32] = 32):
    m = Acc[f32, R, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, 16, 8])  # E:quadsym


@cd.kernel(workgroup_size=(32, 1, 1))
def k_rows_symbolic(a: cd.Buffer[f32], R: cd.Spec[u32] = 32):
    m = Acc[f32, R, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add, into=Acc[f32, 32, 16])  # E:rowsym


@cd.kernel(workgroup_size=(32, 1, 1))
def k_component(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row | cd.Column, cd.reduce_add, into=Acc[f16, 16, 16])  # E:comp


@cd.kernel(workgroup_size=(64, 1, 1))
def k_scope(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add, into=Acc[f32, 16, 16, cd.Workgroup])  # E:scope


@cd.kernel(workgroup_size=(32, 1, 1))
def k_into_use(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add, into=MatA[f32, 16, 16])  # E:intouse


@cd.kernel(workgroup_size=(32, 1, 1))
def k_into_value(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add, into=m)  # E:intoval


@cd.kernel(workgroup_size=(32, 1, 1))
def k_mode(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.RowMajor, cd.reduce_add)  # E:mode


@cd.kernel(workgroup_size=(32, 1, 1))
def k_mode_mix(a: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Reduce2x2 | cd.Row, cd.reduce_add)  # E:modemix


@cd.func
def one_param(a):
    return a


@cd.func
def three_params(a, b, c):
    return a + b + c


@cd.func
def to_f32(a, b):
    return f32(a + b)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_one(a: cd.Buffer[f16]):
    m = Acc[f16, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, one_param)  # E:one


@cd.kernel(workgroup_size=(32, 1, 1))
def k_three(a: cd.Buffer[f16]):
    m = Acc[f16, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, three_params)  # E:three


@cd.kernel(workgroup_size=(32, 1, 1))
def k_ret(a: cd.Buffer[f16]):
    m = Acc[f16, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, to_f32)  # E:ret


@cd.kernel(workgroup_size=(32, 1, 1))
def k_not_function(a: cd.Buffer[f16]):
    m = Acc[f16, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.exp)  # E:notfn


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bf16(a: cd.Buffer[f32]):
    m = Acc[cd.bf16, 16, 16](1.0)
    r = m.reduce(cd.Row, cd.reduce_max)  # E:bf16


@cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.2")
def k_old_target(a: cd.Buffer[f16]):
    m = Acc[f16, 16, 16].load(a, 0, stride=16)
    r = m.reduce(cd.Row, cd.reduce_add)  # E:target


CASES = [
    (k_not_acc, ShapeError, "m.reduce: it takes an accumulator matrix (Acc[...]), but MatA[f16, 16, 16] has use A "
                            "(MatA)", "# E:notacc", 9),
    (k_int, TypeMismatchError, "m.reduce needs a floating-point matrix (as GLSL_NV_cooperative_matrix2 requires), "
                               "got Acc[u32, 16, 16]", "# E:int", 9),
    (k_rows, ShapeError, "m.reduce(cd.Row) keeps the rows: the result needs 16 rows like Acc[f32, 16, 16], but "
                         "into= Acc[f32, 32, 16] has 32", "# E:rows", 9),
    (k_cols, ShapeError, "m.reduce(cd.Column) keeps the columns: the result needs 16 columns", "# E:cols", 9),
    (k_quad, ShapeError, "m.reduce(cd.Reduce2x2) halves both dimensions: Acc[f32, 16, 16] reduces into "
                         "Acc[f32, 8, 8], not Acc[f32, 8, 16]", "# E:quad", 9),
    # (it said "reduces into Acc[f32, 7, 8], not Acc[f32, 7, 8]": no into= fits an odd dimension)
    (k_quad_odd, ShapeError, "m.reduce(cd.Reduce2x2) halves both dimensions, so they must be even: Acc[f32, 15, 16] "
                             "has rows 15", "# E:quadodd", 9),
    (k_quad_symbolic, ShapeError, "Acc[f32, R, 16] reduces into Acc[f32, (R // 2), 8], not Acc[f32, 16, 8]",
     "# E:quadsym", 9),
    (k_rows_symbolic, ShapeError, "the result needs R rows like Acc[f32, R, 16], but into= Acc[f32, 32, 16] has 32",
     "# E:rowsym", 9),
    (k_component, ShapeError, "m.reduce keeps the component type: into= Acc[f16, 16, 16] must hold f32",
     "# E:comp", 9),
    (k_scope, ShapeError, "m.reduce keeps the scope: into= Acc[f32, 16, 16, Workgroup] must have the scope of "
                          "Acc[f32, 16, 16]", "# E:scope", 9),
    (k_into_use, ShapeError, "into= of m.reduce: it takes an accumulator matrix (Acc[...]), but MatA[f32, 16, 16]",
     "# E:intouse", 9),
    (k_into_value, TypeMismatchError, "into= must be an accumulator matrix type such as Acc[f32, 16, 16], got",
     "# E:intoval", 9),
    (k_mode, ArgumentError, "the reduce mode must be cd.Row, cd.Column, cd.Row | cd.Column or cd.Reduce2x2, got "
                            "coopdsl.RowMajor", "# E:mode", 9),
    (k_mode_mix, ArgumentError, "cd.Reduce2x2 cannot be combined with Row or Column (got Reduce2x2 | Row)",
     "# E:modemix", 9),
    (k_one, ArgumentError, "the combine function of m.reduce one_param takes 1 parameter, but it is called with 2: "
                           "(a: f16, b: f16)", "# E:one", 9),
    (k_three, ArgumentError, "its parameter 'c' gets no value: bind it with cd.partial(three_params, c=...)",
     "# E:three", 9),
    (k_ret, TypeMismatchError, "the combine function of m.reduce must return f16, but to_f32 returns f32",
     "# E:ret", 9),
    (k_not_function, TypeMismatchError, "the combine function of m.reduce must be a @cd.func device function (or "
                                        "cd.partial(...) of one), got", "# E:notfn", 9),
    (k_bf16, TypeMismatchError, "cd.reduce_max cannot combine bf16 values (SPV_KHR_bfloat16 and SPV_EXT_float8 "
                                "allow no arithmetic on them)", "# E:bf16", 9),
    (k_old_target, UnsupportedSyntaxError, "m.reduce needs SPV_NV_cooperative_matrix2, which requires SPIR-V 1.6: "
                                           "compile for vulkan1.3 or vulkan1.4 (this kernel targets SPIR-V 1.5, "
                                           "vulkan1.2)", "# E:target", 9),
]


@pytest.mark.parametrize("k,cls,message,marker,col", CASES, ids=[c[3][4:] for c in CASES])
def test_reduce_rules(k, cls, message, marker, col):
    expect_error(k, cls, message, marker, col)
