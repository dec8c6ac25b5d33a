"""The headers committed for the C++ host example are what ``coopdsl emit --format c`` writes today.

They are committed so the example builds where Python is absent (the GPU
machine); if the compiler's output changes, regenerate them with the command
each header records (from the repository root).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coopdsl.cli import main

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "examples" / "host_cpp" / "generated"


@pytest.mark.parametrize("name", ["saxpy", "gemm"])
def test_committed_header_is_current(name, tmp_path, monkeypatch, capsys):
    committed = (GENERATED / f"{name}.h").read_text()
    command = re.search(r" \* Regenerate: coopdsl (.*)\n", committed).group(1).split()
    out = command.index("-o") + 1
    assert command[out] == f"examples/host_cpp/generated/{name}.h"
    fresh = tmp_path / f"{name}.h"
    monkeypatch.chdir(ROOT)
    assert main([*command[:out], str(fresh), *command[out + 1:]]) == 0, capsys.readouterr().err
    text = fresh.read_text().replace(str(fresh), command[out])
    assert text == committed, f"regenerate it: (cd {ROOT} && coopdsl {' '.join(command)})"
