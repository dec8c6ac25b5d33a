"""``coopdsl emit --format spv|c|json``: default names, stdout, and what each format holds."""

from __future__ import annotations

import json
import os
from pathlib import Path

from coopdsl.cli import main

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_khr.py"


def test_default_output_names_follow_the_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for fmt, name in (("spv", "gemm.spv"), ("c", "gemm.h"), ("json", "gemm.json")):
        assert main(["emit", str(GEMM), "--format", fmt]) == 0
        assert (tmp_path / name).is_file()
    assert sorted(os.listdir(tmp_path)) == ["gemm.h", "gemm.json", "gemm.spv"]


def test_json_format_is_the_reflection_alone(tmp_path, capsys):
    assert main(["emit", str(GEMM), "--format", "json", "-o", "-", "--spec", "K=32"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["entry_point"] == "gemm"
    assert [(s["name"], s["default"]) for s in r["spec_constants"]] == [("M", 64), ("N", 64), ("K", 32)]


def test_c_format_holds_the_same_module_as_spv(tmp_path, capsys):
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "g.spv")]) == 0
    assert main(["emit", str(GEMM), "--format", "c", "-o", "-"]) == 0
    header = capsys.readouterr().out
    words = [int(w, 16) for w in header.split("gemm_spv[GEMM_SPV_WORDS] = {")[1].split("};")[0]
             .replace("u", "").replace(",", " ").split()]
    binary = (tmp_path / "g.spv").read_bytes()
    assert b"".join(w.to_bytes(4, "little") for w in words) == binary
    assert f"#define GEMM_SPV_WORDS {len(binary) // 4}u" in header
    assert " * Regenerate: coopdsl emit " + str(GEMM) + " --format c -o -" in header


def test_const_values_reach_every_format(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("import coopdsl as cd\nfrom coopdsl import f32\n\n@cd.kernel\n"
                   "def k(x: cd.Buffer[f32], F: cd.Const[float] = 1.0):\n    x[0] = x[0] * F\n")
    assert main(["emit", str(src), "--const", "F=4.5", "--format", "c", "-o", str(tmp_path / "k.h"),
                 "--ir", str(tmp_path / "k.ir")]) == 0
    assert "const F=4.5" in (tmp_path / "k.h").read_text()
    assert "4.5" in (tmp_path / "k.ir").read_text()
