"""Hardening class 2: a rule that holds for a specialization constant's default holds for every value it gets
(compile(spec=...), coopdsl emit --spec, launch(...)): the same located error, not a module that passes at
its default and breaks later (the interpreter's numpy, or a driver)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from coopdsl.errors import ShapeError
from tests.conftest import exec_source

SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import MatA, f16, u32


    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(src: cd.Buffer[f16], out: cd.Buffer[f16], K: cd.Spec[u32] = 16, M: cd.Spec[u32] = 32):
        a = MatA[f16, M, K].from_rows(cd.array(f16, K))  # THE LINE
        a.store(out, 0, stride=K)
''')

CASES = [({"K": 32}, "has 16 columns (256 bits), not K = 32"),
         ({"M": 256}, "has 256 rows, one per invocation of a subgroup, but a subgroup has at most 128")]


@pytest.fixture()
def kernel(tmp_path):
    path = tmp_path / "qk.py"
    return exec_source(SRC, path)["k"], path


def _line():
    return next(i for i, line in enumerate(SRC.splitlines(), 1) if "THE LINE" in line)


def test_the_defaults_compile(kernel):
    assert "OpCompositeConstructCoopMatQCOM" in kernel[0].disassemble()


@pytest.mark.parametrize("spec,message", CASES)
def test_compile_with_spec_values_checks_them(kernel, spec, message):
    with pytest.raises(ShapeError) as e:
        kernel[0].compile(spec=spec)
    assert message in str(e.value) and e.value.loc.line == _line()


@pytest.mark.parametrize("spec,message", CASES)
def test_launch_with_spec_values_checks_them(kernel, spec, message):
    with pytest.raises(ShapeError) as e:
        kernel[0].launch((1, 1, 1), np.zeros(64, np.float16), np.zeros(256 * 32, np.float16), device="cpu", **spec)
    assert message in str(e.value) and e.value.loc.line == _line()


def test_a_launch_at_the_defaults_compiles_nothing_more(kernel):
    k = kernel[0]
    k.compile()
    before = len(k._cache)
    k.launch((1, 1, 1), np.zeros(64, np.float16), np.zeros(32 * 16, np.float16), device="cpu", K=16)
    assert len(k._cache) == before


@pytest.mark.parametrize("spec,message", CASES)
def test_emit_with_spec_values_checks_them(kernel, spec, message, tmp_path):
    (name, value), = spec.items()
    r = subprocess.run([sys.executable, "-m", "coopdsl", "emit", str(kernel[1]), "--spec", f"{name}={value}",
                        "-o", str(tmp_path / "k.spv")], capture_output=True, text=True, check=False)
    assert r.returncode == 1
    assert f"qk.py:{_line()}:" in r.stderr and message in r.stderr


SIZES = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import MatA, f16, f32, u32


    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    def k(a: cd.Buffer[f16], o: cd.Buffer[f32], R: cd.Spec[u32] = 16, S: cd.Spec[u32] = 8, A: cd.Spec[u32] = 4):
        m = MatA[f16, R, 16].load(a, 0, stride=16)  # MATRIX
        sh = cd.shared(f32, S * 2)  # SHARED
        loc = cd.array(f32, A - 4 + 1)  # ARRAY
        sh[0] = loc[0]
        o[0] = sh[0]
''')


@pytest.fixture()
def sizes(tmp_path):
    return exec_source(SIZES, tmp_path / "sz.py")["k"]


def _marked(marker: str) -> int:
    return next(i for i, line in enumerate(SIZES.splitlines(), 1) if marker in line)


@pytest.mark.parametrize("spec,marker,col,message", [
    ({"R": 0}, "# MATRIX", 9, "rows must be from 1 to 4294967295, got R = 0 (its specialization constants' values)"),
    ({"S": 0}, "# SHARED", 10, "shared: the length must be from 1 to 4294967295, got (S * 2) = 0"),
    ({"A": 3}, "# ARRAY", 11, "an array length must be from 1 to"),
])
def test_sizes_from_spec_values_are_checked_at_every_value(sizes, spec, marker, col, message):
    """A matrix dimension, a shared or local array length sized by specialization constants must be at least 1
    at the defaults, at compile(spec=...) values and at launch values alike (0 compiled and reached the driver)."""
    from coopdsl.errors import CompileError

    assert "OpTypeCooperativeMatrixKHR" in sizes.disassemble()
    with pytest.raises(CompileError) as e:
        sizes.compile(spec=spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (_marked(marker), col), str(e.value)
    with pytest.raises(CompileError) as e:
        sizes.launch((1, 1, 1), np.zeros(256, np.float16), np.zeros(1, np.float32), device="cpu", **spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (_marked(marker), col)


def test_at_the_defaults_alone_spec_sizes_are_not_checked_as_glslang_checks_none(tmp_path):
    """A port's defaults may be placeholders (vk_cooperative_matrix_perf sizes an array C_ROWS * C_COLS, 0 at its
    defaults, and gives the values at pipeline creation): the rule applies to the values a compile or launch
    gives, not to defaults alone."""
    src = SIZES.replace("R: cd.Spec[u32] = 16", "R: cd.Spec[u32] = 0")
    ns = exec_source(src, tmp_path / "sz0.py")
    assert "OpTypeCooperativeMatrixKHR" in ns["k"].disassemble()
    assert ns["k"].compile(spec={"R": 16})
