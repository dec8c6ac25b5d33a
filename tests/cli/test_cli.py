"""The coopdsl command line: emit, val, dis, --kernel, exit codes, messages."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coopdsl.cli import main

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_khr.py"

TWO_KERNELS = '''
import coopdsl as cd
from coopdsl import f32

@cd.kernel
def first(x: cd.Buffer[f32]):
    x[0] = 1.0

@cd.kernel
def second(x: cd.Buffer[f32]):
    x[0] = 2.0
'''

BAD = '''
import coopdsl as cd
from coopdsl import f32, u32

@cd.kernel
def bad(x: cd.Buffer[f32], y: cd.Buffer[u32]):
    x[0] = y[0] + 1.0
'''


def test_emit_val_dis(tmp_path, capsys):
    out = tmp_path / "gemm.spv"
    assert main(["emit", str(GEMM), "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x03\x02\x23\x07"
    assert main(["val", str(out)]) == 0
    assert "valid" in capsys.readouterr().err
    assert main(["dis", str(out)]) == 0
    text = capsys.readouterr().out
    for op in ("OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixMulAddKHR", "OpCooperativeMatrixStoreKHR",
               "OpTypeCooperativeMatrixKHR", "OpLoopMerge"):
        assert op in text


def test_emit_extras(tmp_path, capsys):
    out = tmp_path / "g.spv"
    assert main(["emit", str(GEMM), "-o", str(out), "--dis", str(tmp_path / "g.spvasm"),
                 "--reflect", str(tmp_path / "g.json"), "--ir", str(tmp_path / "g.ir"),
                 "--spec", "K=128", "--target-env", "vulkan1.2"]) == 0
    assert "OpCooperativeMatrixMulAddKHR" in (tmp_path / "g.spvasm").read_text()
    assert "Version: 1.5" in (tmp_path / "g.spvasm").read_text()
    r = json.loads((tmp_path / "g.json").read_text())
    assert [s["default"] for s in r["spec_constants"] if s["name"] == "K"] == [128]
    assert "coop_muladd" in (tmp_path / "g.ir").read_text()


def test_an_extra_written_over_the_output_is_a_usage_error(tmp_path, capsys):
    # `emit --reflect a.spv -o a.spv` wrote the JSON over the module (found by a check written from the docs alone)
    out = tmp_path / "a.spv"
    for flag in ("--reflect", "--dis", "--ir"):
        assert main(["emit", str(GEMM), "-o", str(out), flag, str(out)]) == 2
        assert f"{flag} {out} is the output file too" in capsys.readouterr().err
        assert not out.exists()


def test_kernel_selection(tmp_path, capsys):
    src = tmp_path / "two.py"
    src.write_text(TWO_KERNELS)
    assert main(["emit", str(src), "-o", str(tmp_path / "x.spv")]) == 2
    assert "several kernels (first, second); pick one with --kernel" in capsys.readouterr().err
    assert main(["emit", str(src), "--kernel", "second", "-o", str(tmp_path / "x.spv")]) == 0
    assert main(["emit", str(src), "--kernel", "third"]) == 2
    assert "has no kernel 'third'" in capsys.readouterr().err


def test_missing_file_and_bad_spec(tmp_path, capsys):
    assert main(["emit", str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["val", str(tmp_path / "nope.spv")]) == 2
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "a.spv"), "--spec", "Q=1"]) == 2
    assert "no specialization constant 'Q'" in capsys.readouterr().err


def test_an_output_that_cannot_be_written_is_a_message_not_a_traceback(tmp_path, capsys):
    # (both once ended in an OSError traceback)
    missing = tmp_path / "no" / "such" / "folder" / "a.spv"
    assert main(["emit", str(GEMM), "-o", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"coopdsl: error: cannot write {missing}: No such file or directory"
    spec = tmp_path / "b.toml"
    spec.write_text(f'[[kernel]]\nfile = "{GEMM}"\nname = "gemm"\n')
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    assert main(["build", str(spec), "-o", str(blocker / "out")]) == 2
    assert capsys.readouterr().err.strip().endswith(f"coopdsl: error: {blocker / 'out'}: Not a directory")


def test_compile_error_exit_code_and_location(tmp_path, capsys):
    src = tmp_path / "bad.py"
    src.write_text(BAD)
    assert main(["emit", str(src), "-o", str(tmp_path / "b.spv")]) == 1
    err = capsys.readouterr().err
    assert f"{src}:7:12: error: cannot use the float literal 1.0 as u32" in err
    assert "Traceback" not in err


def test_val_rejects_an_invalid_module(tmp_path, capsys):
    bad = tmp_path / "bad.spv"
    bad.write_bytes(b"\x03\x02\x23\x07" + b"\0" * 16)
    assert main(["val", str(bad)]) == 1


def test_console_script_runs(tmp_path):
    out = tmp_path / "gemm.spv"
    r = subprocess.run([sys.executable, "-m", "coopdsl.cli", "emit", str(GEMM), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.is_file()


@pytest.mark.parametrize("env", ["vulkan1.1", "vulkan1.2", "vulkan1.3", "vulkan1.4"])
def test_every_target_env(tmp_path, env):
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "g.spv"), "--target-env", env]) == 0
    assert main(["val", str(tmp_path / "g.spv"), "--target-env", env]) == 0
