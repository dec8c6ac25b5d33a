"""scripts/base_tree.sh copies a commit's package and benchmarks into a folder whose own scripts import that tree
first (the way to time the code before a change beside the working tree)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_the_base_trees_scripts_import_the_base_tree(tmp_path):
    dest = tmp_path / "base"
    r = subprocess.run(["bash", str(ROOT / "scripts" / "base_tree.sh"), "HEAD", str(dest)], cwd=ROOT,
                       capture_output=True, text=True, check=True)
    assert f"wrote {dest} from " in r.stdout
    assert (dest / "coopdsl" / "__init__.py").exists() and (dest / "benchmarks" / "ops_llm.py").exists()
    # a benchmark script of the copy (its module code: the path it puts first, its imports) imports the copy's
    # package, though this checkout's is installed
    probe = ("import runpy, sys; runpy.run_path(sys.argv[1], run_name='probe'); "
             "print(sys.modules['coopdsl'].__file__)")
    out = subprocess.run([sys.executable, "-c", probe, str(dest / "benchmarks" / "alu_rates.py")], cwd=tmp_path,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == str(dest / "coopdsl" / "__init__.py")
