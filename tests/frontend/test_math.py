"""GLSL.std.450 math and vector builtins."""


import numpy as np

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


@cd.kernel(workgroup_size=(64, 1, 1))
def erfs(x: cd.Buffer[f32], y: cd.Buffer[f32], xh: cd.Buffer[cd.f16], yh: cd.Buffer[cd.f16],
         v: cd.Buffer[cd.vec4[f32]]):
    i = cd.global_invocation_id.x
    y[i] = cd.erf(x[i])
    yh[i] = cd.erf(xh[i])
    if i == 0:
        v[0] = cd.erf(v[0])


def test_erf_is_abramowitz_and_stegun_in_f32():
    """cd.erf (no GLSL.std.450 instruction: exp, abs, sign and arithmetic): within 6e-7 of math.erf on f32, the
    f16 result within half an f16 unit at 1, vectors per component."""
    import math

    compile_checked(erfs, r"OpExtInst %float %\w+ Exp", r"OpExtInst %float %\w+ FAbs", r"OpExtInst %float %\w+ FSign",
                    r"OpFConvert %float", r"OpFConvert %half", r"OpExtInst %v4float %\w+ Exp")
    n = 64 * 100
    xs = np.linspace(-6, 6, n).astype(np.float32)
    y, yh, v = np.zeros(n, np.float32), np.zeros(n, np.float16), np.array([[0.5, -1.0, 2.0, 0.0]], np.float32)
    erfs.launch((n // 64, 1, 1), xs, y, xs.astype(np.float16), yh, v, device="cpu")
    assert np.abs(y - [math.erf(float(t)) for t in xs]).max() < 6e-7
    assert np.abs(yh.astype(np.float64) - [math.erf(float(t)) for t in xs.astype(np.float16)]).max() <= 2.5e-4
    np.testing.assert_allclose(v[0], [math.erf(t) for t in (0.5, -1.0, 2.0, 0.0)], atol=6e-7)


@cd.kernel(workgroup_size=(1, 1, 1))
def erf_of_an_int(k: cd.Buffer[cd.i32], y: cd.Buffer[f32]):
    y[0] = cd.erf(k[0])  # E:erf-int


def test_erf_takes_f16_or_f32():
    expect_error(erf_of_an_int, TypeMismatchError, "erf() takes f16 or f32 scalars or vectors, got i32",
                 "# E:erf-int", 12)


@cd.kernel(workgroup_size=(1, 1, 1))
def erf_of_a_number(y: cd.Buffer[f32]):
    y[0] = cd.erf(0.5)  # E:erf-number


def test_erf_of_a_number_says_to_use_python():
    expect_error(erf_of_a_number, TypeMismatchError, "erf() needs a runtime argument (compile-time math: use "
                 "Python's math.erf)", "# E:erf-number", 12)
