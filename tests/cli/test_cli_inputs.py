"""The CLI on bad input (issue 15 E): located kernel-file errors, the option named, files and folders named."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import coopdsl
from coopdsl.cli import main

from ..conftest import child_env

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_khr.py"


def _coopdsl(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run ``python -m coopdsl`` in a subprocess (bytes output)."""
    env = child_env()
    return subprocess.run([sys.executable, "-m", "coopdsl", *args], capture_output=True, cwd=cwd, env=env,
                          timeout=120)


def test_syntax_error_in_kernel_file_is_one_located_message(tmp_path, capsys):
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\n\ndef broken(:\n    pass\n")
    assert main(["emit", str(src)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"{src}:3:12: error: SyntaxError: invalid syntax", "    def broken(:",
                                "               ^"]


def test_import_error_in_kernel_file_names_the_line(tmp_path, capsys):
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\nimport no_such_module_here\n")
    assert main(["emit", str(src)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:2: error: running {src} failed: ModuleNotFoundError: "
                          "No module named 'no_such_module_here'\n    import no_such_module_here")
    assert "Traceback" not in err and "runpy" not in err


def test_coopdsl_errors_raised_while_the_file_runs_pass_through(tmp_path, capsys):
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\n\n@cd.kernel(workgroup_size=0)\ndef k(x: cd.Buffer[cd.f32]):\n"
                   "    x[0] = 1.0\n")
    assert main(["emit", str(src)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:3:") and "workgroup_size" in err
    assert "running" not in err and "Traceback" not in err


def test_other_exceptions_while_the_file_runs_name_the_users_line(tmp_path, capsys):
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\n\nLIMIT = int('sixteen')\n")
    assert main(["emit", str(src)]) == 1
    assert capsys.readouterr().err == (f"{src}:3: error: running {src} failed: ValueError: invalid literal for "
                                       f"int() with base 10: 'sixteen'\n    LIMIT = int('sixteen')\n")


def test_kernel_file_errors_have_no_traceback_in_a_real_process(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\nraise RuntimeError('boom')\n")
    r = _coopdsl("emit", str(src))
    assert r.returncode == 1
    assert r.stderr.decode() == f"{src}:2: error: running {src} failed: RuntimeError: boom\n" \
                                f"    raise RuntimeError('boom')\n"


def test_an_interrupt_is_one_line_and_status_130(tmp_path):
    # Ctrl-C while a kernel file runs (here the file raises KeyboardInterrupt itself): no traceback, and the
    # status a shell gives a process ended by SIGINT
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\nraise KeyboardInterrupt\n")
    r = _coopdsl("emit", str(src))
    assert (r.returncode, r.stderr.decode()) == (130, "coopdsl: interrupted\n")


def test_const_errors_name_const_and_spec_errors_name_spec(tmp_path, capsys):
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "g.spv"), "--const", "WM=abc"]) == 2
    assert "coopdsl: error: --const WM: 'abc' is not a number or true/false" in capsys.readouterr().err
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "g.spv"), "--const", "WM"]) == 2
    assert "--const takes NAME=VALUE, got 'WM'" in capsys.readouterr().err
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "g.spv"), "--spec", "K=abc"]) == 2
    assert "--spec K: 'abc' is not a number" in capsys.readouterr().err


def test_a_value_its_parameter_does_not_take_is_a_usage_error_for_const_as_for_spec(tmp_path, capsys):
    """--const C=2.5 for a Const[int] was a compile error at the parameter (exit 1) where --spec WG=2.5 for a
    Spec[u32] is a usage error (exit 2); Kernel.specialize now checks the value, at its caller's line."""
    src = tmp_path / "kc.py"
    src.write_text("import coopdsl as cd\nfrom coopdsl import f32, u32\n\n\n"
                   "@cd.kernel(workgroup_size=('WG', 1, 1))\n"
                   "def k(x: cd.Buffer[f32], WG: cd.Spec[u32] = 8, C: cd.Const[int] = 1, R: cd.Const[float] = 0.5):\n"
                   "    x[0] = f32(C) + R\n")
    out = str(tmp_path / "k.spv")
    assert main(["emit", str(src), "-o", out, "--spec", "WG=2.5"]) == 2
    assert "cannot use the float literal 2.5 as u32" in capsys.readouterr().err
    assert main(["emit", str(src), "-o", out, "--const", "C=2.5"]) == 2
    assert "coopdsl: error: k: Const parameter 'C' takes an int, got 2.5" in capsys.readouterr().err
    assert main(["emit", str(src), "-o", out, "--const", "R=3"]) == 2
    assert "coopdsl: error: k: Const parameter 'R' takes a float, got 3" in capsys.readouterr().err
    assert main(["emit", str(src), "-o", out, "--const", "C=3", "--const", "R=2.0"]) == 0


def test_output_dash_writes_the_binary_to_stdout(tmp_path):
    reference = tmp_path / "g.spv"
    assert main(["emit", str(GEMM), "-o", str(reference)]) == 0
    r = _coopdsl("emit", str(GEMM), "-o", "-")
    assert r.returncode == 0
    assert r.stdout == reference.read_bytes()
    assert not (ROOT / "-").exists()
    assert b"wrote <stdout>" in r.stderr


def test_version_comes_from_the_package(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"coopdsl {coopdsl.__version__}\n"


def test_val_and_dis_name_a_file_that_is_not_spirv(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    for command in ("val", "dis"):
        assert main([command, str(text)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"{text}: not a SPIR-V module")
        assert "'-'" not in err


def test_val_names_the_file_when_spirv_val_rejects_it(tmp_path, capsys):
    bad = tmp_path / "bad.spv"
    bad.write_bytes(b"\x03\x02\x23\x07" + b"\0" * 16)
    assert main(["val", str(bad)]) == 1
    assert capsys.readouterr().err.startswith(f"{bad}: spirv-val rejected the module")


@pytest.mark.parametrize("command", [["emit"], ["val"], ["dis"], ["build", "-o", "out"]])
def test_a_directory_is_not_a_missing_file(tmp_path, capsys, command):
    assert main([command[0], str(tmp_path), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: is a directory" in err and "no such file" not in err


@pytest.mark.parametrize("command", [["emit"], ["val"], ["dis"]])
def test_a_device_file_is_not_a_missing_file(capsys, command):
    """`coopdsl val /dev/null` said 'no such file'."""
    assert main([command[0], "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "/dev/null: is not a regular file (a device, a pipe or a socket)" in err and "no such file" not in err


def test_output_path_that_is_a_directory(tmp_path, capsys):
    assert main(["emit", str(GEMM), "-o", str(tmp_path)]) == 2
    assert f"{tmp_path}: is a directory; give a file name" in capsys.readouterr().err


def test_val_help_shows_the_default_target_env(capsys):
    with pytest.raises(SystemExit):
        main(["val", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: vulkan1.3)" in help_text


def test_readme_error_sample_is_the_real_output():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"\(`coopdsl emit (examples/\S+\.py)`\):\n\n```\n(.*?)```", readme, re.S)
    assert m, "README error sample not found"
    assert (ROOT / m.group(1)).is_file()
    r = _coopdsl("emit", m.group(1))
    assert r.returncode == 1
    assert r.stderr.decode() == m.group(2)


def test_python_dash_m_coopdsl(tmp_path):
    r = _coopdsl("emit", str(GEMM), "-o", str(tmp_path / "g.spv"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "g.spv").read_bytes()[:4] == b"\x03\x02\x23\x07"
    r = _coopdsl("--version")
    assert r.stdout.decode() == f"coopdsl {coopdsl.__version__}\n"
