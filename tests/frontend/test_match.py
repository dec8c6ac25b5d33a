"""``match``/``case`` on scalars (GLSL's ``switch``, in Python's words), and IntEnum constants."""

import enum

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, i32, vec2
from coopdsl.errors import NameResolutionError, TypeMismatchError, UnsupportedSyntaxError

from ..conftest import compile_checked, expect_error


class Op(enum.IntEnum):
    ADD = 5
    MUL = 6


@cd.kernel(workgroup_size=(16, 1, 1))
def switch(out: cd.Buffer[i32], a: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    x = a[i]
    r = i32(-1)
    match x:
        case 0:
            r = 100
        case 1 | 2:
            r = 200
        case Op.ADD:
            r = 500
        case -3:
            r = 300
        case n if n > 10:
            r = n * 2
        case 7 | 8 as m if m == 8:
            r = m + 1000
        case _:
            r = 9
    out[i] = r


def _switch_reference(x: int) -> int:
    if x == 0:
        return 100
    if x in (1, 2):
        return 200
    if x == Op.ADD:
        return 500
    if x == -3:
        return 300
    if x > 10:
        return x * 2
    if x == 8:
        return 1008
    return 9


A = np.array([0, 1, 2, 5, -3, 11, 20, 7, 8, 9, 3, 4, -1, 100, 6, 12], np.int32)


def test_match_runs_the_first_case_that_matches():
    """Value, alternative, enum, negative, capture-with-guard and 'as' patterns and the wildcard, as Python runs
    them (an if/elif chain: OpIEqual tests, the subject read once)."""
    text = compile_checked(switch, r"OpIEqual %bool", r"OpSGreaterThan %bool", r"OpBranchConditional",
                           r"OpSelectionMerge")
    assert text.count("OpLoad %int") == 1        # the subject a[i], evaluated once
    out = np.zeros(16, np.int32)
    switch.launch((1,), out, A, device="cpu")
    assert out.tolist() == [_switch_reference(int(x)) for x in A]


def test_match_runs_on_the_device(device):
    out = np.zeros(16, np.int32)
    switch.launch((1,), out, A, device=device)
    assert out.tolist() == [_switch_reference(int(x)) for x in A]


MODE = 2


@cd.kernel(workgroup_size=(1, 1, 1))
def compile_time(out: cd.Buffer[i32], v: f32):
    match MODE:
        case 1:
            out[0] = 1
        case 2:
            out[0] = i32(v) + i32(Op.MUL)
    match v > 1.0:
        case True:
            out[1] = 1
        case False:
            out[1] = 2


def test_a_compile_time_subject_keeps_the_case_it_takes_and_a_bool_matches_true_and_false():
    text = compile_checked(compile_time, r"OpFOrdGreaterThan")
    assert text.count("OpBranchConditional") == 2   # the bool's two cases; MODE's chain is folded
    out = np.zeros(2, np.int32)
    compile_time.launch((1,), out, 3.0, device="cpu")
    assert out.tolist() == [9, 1]


@cd.kernel(workgroup_size=(1, 1, 1))
def vector_subject(out: cd.Buffer[i32], v: vec2[f32]):
    match v:  # E:vec
        case 0:
            out[0] = 1


@cd.kernel(workgroup_size=(1, 1, 1))
def none_case(out: cd.Buffer[i32], x: i32):
    match x:
        case None:  # E:none
            out[0] = 1


@cd.kernel(workgroup_size=(1, 1, 1))
def sequence_case(out: cd.Buffer[i32], x: i32):
    match x:
        case [a, b]:  # E:seq
            out[0] = a


@cd.kernel(workgroup_size=(1, 1, 1))
def capture_in_or(out: cd.Buffer[i32], x: i32):
    match x:
        case (1 as n) | (2 as n):  # E:or
            out[0] = n


@cd.kernel(workgroup_size=(1, 1, 1))
def missing_enum_member(out: cd.Buffer[i32], x: i32):
    match x:
        case Op.DIV:  # E:enum
            out[0] = 1


def test_match_mistakes_are_located():
    expect_error(vector_subject, TypeMismatchError, "match takes a scalar (an integer, a bool or a float), got a "
                 "runtime vec2[f32]", "# E:vec", 11)
    expect_error(none_case, UnsupportedSyntaxError, "a kernel's case matches values (case 1:, case 1 | 2:, "
                 "case K.NAME:, case _:, case n:, with an optional 'if' guard); None patterns are not supported",
                 "# E:none", 14)
    expect_error(sequence_case, UnsupportedSyntaxError, "sequence patterns are not supported", "# E:seq", 14)
    expect_error(capture_in_or, UnsupportedSyntaxError, "an alternative of '|' is a value (case 1 | 2:); bind the "
                 "whole with 'as' (case 1 | 2 as n:)", "# E:or", 15)
    expect_error(missing_enum_member, NameResolutionError, "enum Op has no member 'DIV' (it has: ADD, MUL)",
                 "# E:enum", 14)


def test_a_plain_enum_member_is_no_number():
    class Color(enum.Enum):
        RED = 1

    @cd.kernel(workgroup_size=(1, 1, 1))
    def k(out: cd.Buffer[i32]):
        out[0] = Color.RED

    with pytest.raises(NameResolutionError, match="Color.RED' is a Color, which kernels cannot use"):
        k.compile()


@cd.kernel(workgroup_size=(1, 1, 1))
def capture_kept(out: cd.Buffer[i32], inp: cd.Buffer[i32]):
    n = i32(-7)
    m = i32(-7)
    match inp[0]:
        case n if n > 10:
            out[1] = 1
        case 1 | 2 as m if m == 2:
            out[1] = 2
        case _:
            out[1] = 3
    out[0] = n
    out[2] = m + i32(Op.MUL.value)


def test_a_capture_is_bound_once_its_pattern_matched_even_when_the_guard_fails():
    """As Python binds it (a check written from the docs alone found n left at -7 when 'n > 10' failed)."""
    def python(x):
        n = m = -7
        match x:
            case n if n > 10:
                r = 1
            case 1 | 2 as m if m == 2:
                r = 2
            case _:
                r = 3
        return [n, r, m + 6]

    for x in (3, 1, 2, 20):
        out = np.zeros(3, np.int32)
        capture_kept.launch((1,), out, np.array([x], np.int32), device="cpu")
        assert out.tolist() == python(x), x


ON = True


@cd.kernel(workgroup_size=(1, 1, 1))
def true_pattern(out: cd.Buffer[i32], x: i32, N: cd.Const[int] = 1):
    match N:
        case True:        # 1 is not True: Python matches True and False by identity
            out[0] = 1
        case _:
            out[0] = 2
    match ON:
        case True:
            out[2] = 1
    match x > 0:
        case True:
            out[1] = 1
        case False:
            out[1] = 2


@cd.kernel(workgroup_size=(1, 1, 1))
def true_on_int(out: cd.Buffer[i32], x: i32):
    match x:
        case True:  # E:true
            out[0] = 1


@cd.kernel(workgroup_size=(1, 1, 1))
def string_case(out: cd.Buffer[i32], x: i32):
    match x:
        case "a":  # E:str
            out[0] = 1


def test_true_and_false_match_bools_only_and_strings_are_refused():
    out = np.zeros(3, np.int32)
    true_pattern.launch((1,), out, 0, device="cpu")
    assert out.tolist() == [2, 2, 1]
    expect_error(true_on_int, TypeMismatchError, "case True matches a bool subject only (Python compares with 'is'), "
                 "and this one is a runtime i32", "# E:true", 14)
    expect_error(string_case, UnsupportedSyntaxError, "a kernel's case matches numbers; str patterns are not "
                 "supported", "# E:str", 14)
