"""benchmarks/compile_bench.py: its cases, its skip without glslang, and a whole (tiny) run against a stand-in."""

import runpy
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import compile_bench, compile_cases  # noqa: E402

# NV2 and QCOM examples have no GLSL counterpart written yet: they are left out of the comparison
WITHOUT_COUNTERPART = {"gemm_workgroup", "q4_matmul", "flash_attention"}


def test_every_example_has_its_glsl_counterpart():
    examples = {p.stem for p in (ROOT / "examples").glob("*.py")}
    examples = {e for e in examples if e not in WITHOUT_COUNTERPART and not e.startswith("qcom_")}
    assert set(compile_cases.EXAMPLES) == examples
    for name in compile_cases.EXAMPLES:
        py, comp = compile_cases.example(name)
        assert py.is_file() and comp.read_text().startswith(f"// GLSL counterpart of examples/{name}.py")


def test_step_kernels_hold_n_loads_and_muladds_in_both_languages(tmp_path):
    import coopdsl as cd

    py, comp = compile_cases.write_steps(3, tmp_path)
    assert comp.read_text().count("coopMatMulAdd") == 3 and comp.read_text().count("coopMatLoad") == 6
    k = next(v for v in runpy.run_path(str(py)).values() if isinstance(v, cd.Kernel))
    text = k.disassemble()
    assert text.count("OpCooperativeMatrixMulAddKHR") == 3 and text.count("OpCooperativeMatrixLoadKHR") == 6


def test_without_glslang_it_says_so_and_measures_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GLSLANG", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    out = tmp_path / "b.md"
    assert compile_bench.main(["--glslang", str(tmp_path / "nope"), "--out", str(out)]) == 0
    assert "skipped: glslang not found (give --glslang PATH or set GLSLANG" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture
def stand_in(tmp_path) -> Path:
    """A 'glslang' that answers --version and writes a fixed (valid) SPIR-V file where -o says."""
    import coopdsl as cd

    @cd.kernel
    def k(x: cd.Buffer[cd.f32]):
        x[0] = 1.0

    spv = k.save(tmp_path / "fixed.spv")
    script = tmp_path / "glslang"
    script.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "Glslang Version: 11:16.5.0 stand-in"; exit 0; }}\n'
                      f'cp {spv} "$5"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_a_tiny_run_writes_its_section(stand_in, tmp_path, capsys):
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nkept\n")
    argv = ["--glslang", str(stand_in), "--rounds", "2", "--examples", "gemm_khr", "--steps", "2", "4",
            "--out", str(out)]
    assert compile_bench.main(argv) == 0
    text = out.read_text()
    assert text.startswith("# Benchmarks\n\nkept\n\n## Compile time against glslang\n")
    assert "Glslang Version: 11:16.5.0 stand-in" in text
    assert "--examples gemm_khr --steps 2 4" in text
    process, inproc = [line for line in text.splitlines() if line.startswith("| gemm_khr |")]
    assert process.count("x (") == 2 and process.count("x |") == 2  # two ratios with their spread, two CPU ratios
    assert inproc.startswith("| gemm_khr | - | - | ")  # no glslang library here
    assert "glslang's library was not measured: no glslang headers" in text
    steps = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    assert "2" in steps and "4" in steps
    assert text == out.read_text() and text.split("## Compile time against glslang\n", 1)[1].strip() in \
        capsys.readouterr().out
