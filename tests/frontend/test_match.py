"""``match``/``case`` on scalars (GLSL's ``switch``, in Python's words), and IntEnum constants."""

import enum

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, i32
from coopdsl.errors import NameResolutionError, TypeMismatchError, UnsupportedSyntaxError

from ..conftest import compile_checked, exec_source


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


# one refused pattern (or subject) a kernel: the case line, the error, its words and column
REFUSED = {
    "vector subject": ("vec2[f32]", "case 0:", TypeMismatchError,
                       "match takes a scalar (an integer, a bool or a float), got a runtime vec2[f32]", 11),
    "None": ("i32", "case None:", UnsupportedSyntaxError,
             "a kernel's case matches values (case 1:, case 1 | 2:, case K.NAME:, case _:, case n:, with an optional "
             "'if' guard); None patterns are not supported", 14),
    "sequence": ("i32", "case [a, b]:", UnsupportedSyntaxError, "sequence patterns are not supported", 14),
    "captures in |": ("i32", "case (1 as n) | (2 as n):", UnsupportedSyntaxError,
                      "an alternative of '|' is a value (case 1 | 2:); bind the whole with 'as' (case 1 | 2 as n:)",
                      15),
    "missing enum member": ("i32", "case Op.DIV:", NameResolutionError,
                            "enum Op has no member 'DIV' (it has: ADD, MUL)", 14),
    "True on an int": ("i32", "case True:", TypeMismatchError,
                       "case True matches a bool subject only (Python compares with 'is'), and this one is a runtime "
                       "i32", 14),
    "string": ("i32", 'case "a":', UnsupportedSyntaxError,
               "a kernel's case matches numbers; str patterns are not supported", 14),
}

REFUSED_SOURCE = """import enum

import coopdsl as cd
from coopdsl import f32, i32, vec2


class Op(enum.IntEnum):
    ADD = 5
    MUL = 6


@cd.kernel(workgroup_size=(1, 1, 1))
def k(out: cd.Buffer[i32], x: {subject}):
    match x:  # E:subject
        {case}  # E:case
            out[0] = 1
"""


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_match_mistakes_are_located(case, tmp_path):
    subject, line, cls, words, col = REFUSED[case]
    src = REFUSED_SOURCE.format(subject=subject, case=line)
    k = exec_source(src, tmp_path / "refused.py")["k"]
    with pytest.raises(cls) as info:
        k.compile()
    marker = "# E:subject" if case == "vector subject" else "# E:case"
    want_line = next(i + 1 for i, text in enumerate(src.splitlines()) if text.endswith(marker))
    assert words in info.value.message and (info.value.loc.line, info.value.loc.col) == (want_line, col)


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


def test_true_and_false_match_bools_only():
    # (a runtime non-bool subject for True and string patterns: REFUSED above)
    out = np.zeros(3, np.int32)
    true_pattern.launch((1,), out, 0, device="cpu")
    assert out.tolist() == [2, 2, 1]
