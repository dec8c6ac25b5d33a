"""GLSL.std.450 math and vector builtins."""


import coopdsl as cd
from coopdsl import TypeMismatchError, f16, f32, f64, i32, u32, vec3, vec4
from coopdsl.lang.math import TABLE

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def every_float_op(x: cd.Buffer[f32], v: cd.Buffer[vec4[f32]]):
    i = cd.global_invocation_id.x
    a = x[i]
    b = x[i + 1]
    r = cd.exp(a) + cd.exp2(a) + cd.log(a) + cd.log2(a) + cd.sqrt(a) + cd.inversesqrt(a) + cd.floor(a)
    r += cd.ceil(a) + cd.trunc(a) + cd.round(a) + cd.round_even(a) + cd.fract(a) + cd.sin(a) + cd.cos(a)
    r += cd.tan(a) + cd.asin(a) + cd.acos(a) + cd.atan(a) + cd.sinh(a) + cd.cosh(a) + cd.tanh(a)
    r += cd.atan2(a, b) + cd.pow(a, 2.0) + cd.abs(a) + cd.sign(a) + cd.min(a, b) + cd.max(a, 1.0)
    r += cd.clamp(a, 0.0, 1.0) + cd.mix(a, b, 0.5) + cd.step(0.5, a) + cd.smoothstep(0.0, 1.0, a) + cd.fma(a, b, 1.0)
    r += cd.mod(a, 3.0)
    w = v[i]
    r += cd.length(w) + cd.distance(w, w) + cd.dot(w, w) + cd.normalize(w).x + cd.mix(w, w, 0.25).y
    c3 = cd.cross(vec3[f32](a, b, 1.0), vec3[f32](1.0, 0.0, 0.0))
    if cd.isnan(a) or cd.isinf(b) or cd.any(w > 1.0) or cd.all(w < 0.0):
        r = 0.0
    x[i] = cd.select(a > b, r, c3.z)


def test_every_float_math_builtin():
    text = compile_checked(every_float_op, r"OpExtInstImport \"GLSL.std.450\"", r"OpDot", r"OpFMod", r"OpIsNan",
                           r"OpIsInf", r"OpAny", r"OpAll", r"OpSelect %float")
    for name, (fop, *_rest) in TABLE.items():
        assert f" {fop} " in text or text.rstrip().endswith(fop) or f" {fop}\n" in text, name


@cd.kernel(workgroup_size=(32, 1, 1))
def int_math(x: cd.Buffer[i32], y: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    x[i] = cd.abs(x[i]) + cd.sign(x[i]) + cd.min(x[i], 3) + cd.max(x[i], -3) + cd.clamp(x[i], -1, 1)
    y[i] = cd.min(y[i], 3) + cd.max(y[i], 4) + cd.clamp(y[i], 1, 9)


def test_integer_forms():
    compile_checked(int_math, r"SAbs", r"SSign", r"SMin", r"SMax", r"SClamp", r"UMin", r"UMax", r"UClamp")


@cd.kernel
def k_exp_f64(x: cd.Buffer[f64]):
    x[0] = cd.exp(x[1])  # E:expf64


def test_transcendentals_take_16_or_32_bit_floats():
    expect_error(k_exp_f64, TypeMismatchError, "exp() takes 16- or 32-bit floats", "# E:expf64", 12)


@cd.kernel
def k_sqrt_int(x: cd.Buffer[u32]):
    x[0] = cd.sqrt(x[1])  # E:sqrtint


def test_float_only_builtin_on_ints():
    expect_error(k_sqrt_int, TypeMismatchError, "sqrt() takes floats, got u32", "# E:sqrtint", 12)


@cd.kernel
def k_bf16_math(x: cd.Buffer[cd.bf16]):
    x[0] = cd.exp(x[1])  # E:bf16math


def test_no_math_on_bf16():
    expect_error(k_bf16_math, TypeMismatchError, "exp() cannot take bf16 values", "# E:bf16math", 12)


@cd.kernel
def k_mixed_args(x: cd.Buffer[f32], h: cd.Buffer[f16]):
    x[0] = cd.pow(x[1], h[0])  # E:mixed


def test_argument_types_must_agree():
    expect_error(k_mixed_args, TypeMismatchError, "pow() arguments must have one type, got f32 and f16",
                 "# E:mixed", 12)


@cd.kernel(workgroup_size=(4, 1, 1))
def atan2_named(y: cd.Buffer[f32], x: cd.Buffer[f32], o: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    o[i] = cd.atan2(x=x[i], y=y[i]) - cd.atan2(y[i], x[i])


def test_atan2_takes_y_then_x_by_name_too():
    """The reference showed atan2(x, y) while the first operand is y (GLSL's atan(y, x)): keywords swapped it."""
    import inspect

    import numpy as np

    assert str(inspect.signature(cd.atan2)) == "(y, x)"
    y, x = np.array([1, 1, -1, 0], np.float32), np.array([0, 1, 1, -1], np.float32)
    o = np.ones(4, np.float32)
    atan2_named.launch((1,), y, x, o, device="cpu")
    assert not o.any()
