"""Arithmetic and conversions on values that are not numbers (structs) are located errors.

The type checker found these paths reading a scalar's fields from any type;
they used to surface as internal compiler errors (AttributeError).
"""

import coopdsl as cd
from coopdsl import TypeMismatchError, f32, u32

from ..conftest import expect_error


@cd.struct
class Point:
    x: f32
    y: f32


@cd.kernel
def k_add_structs(a: cd.Buffer[Point]):
    p = a[0]
    q = p + p  # E:add


@cd.kernel
def k_compare_structs(a: cd.Buffer[Point]):
    p = a[0]
    q = p < p  # E:lt


@cd.kernel
def k_negate_struct(a: cd.Buffer[Point]):
    p = a[0]
    q = -p  # E:neg


@cd.kernel
def k_invert_struct(a: cd.Buffer[Point]):
    p = a[0]
    q = ~p  # E:inv


@cd.kernel
def k_convert_struct(a: cd.Buffer[Point], b: cd.Buffer[f32]):
    p = a[0]
    b[0] = f32(p)  # E:conv


@cd.kernel
def k_vector_of_struct(a: cd.Buffer[Point]):
    p = a[0]
    v = cd.vec2[f32](p)  # E:vec


@cd.struct
class Word:
    bits: u32


@cd.kernel
def k_bitcast_struct(a: cd.Buffer[Word], b: cd.Buffer[u32]):
    b[0] = cd.bitcast(a[0], u32)  # E:bitcast


@cd.kernel
def k_mod_structs(a: cd.Buffer[Point], b: cd.Buffer[f32]):
    p = a[0]
    q = cd.mod(p, p)  # E:mod


@cd.kernel
def k_isnan_struct(a: cd.Buffer[Point], b: cd.Buffer[f32]):
    p = a[0]
    q = cd.isnan(p)  # E:isnan


def test_binary_operators_on_structs():
    expect_error(k_add_structs, TypeMismatchError, "'+' is not defined on Point values", "# E:add", 9)
    expect_error(k_compare_structs, TypeMismatchError, "'<' is not defined on Point values", "# E:lt", 9)


def test_unary_operators_on_structs():
    expect_error(k_negate_struct, TypeMismatchError, "'-' is not defined on Point values", "# E:neg", 9)
    expect_error(k_invert_struct, TypeMismatchError, "'~' is not defined on Point values", "# E:inv", 9)


def test_conversions_of_structs():
    expect_error(k_convert_struct, TypeMismatchError, "cannot convert Point to f32", "# E:conv", 12)
    expect_error(k_vector_of_struct, TypeMismatchError, "cannot convert Point to f32", "# E:vec", 9)


def test_builtins_on_structs():
    expect_error(k_bitcast_struct, TypeMismatchError, "bitcast takes a scalar, vector or cooperative-matrix value, "
                 "got Word", "# E:bitcast", 12)
    expect_error(k_mod_structs, TypeMismatchError, "mod() takes floats (GLSL mod); use % for integers, got Point",
                 "# E:mod", 9)
    expect_error(k_isnan_struct, TypeMismatchError, "isnan() takes float scalars or vectors, got Point", "# E:isnan", 9)
