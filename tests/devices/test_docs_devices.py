"""docs/devices.md shows the real message: its first example, emitted with --device, prints its text block."""

import re
from pathlib import Path

from coopdsl.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "devices.md"


def test_documented_error_is_what_emit_prints(tmp_path, monkeypatch, capsys):
    page = PAGE.read_text()
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", page, re.S).group(1)
    (tmp_path / "example.py").write_text(code)
    monkeypatch.chdir(tmp_path)
    assert main(["emit", "example.py", "--device", "nvidia-h100", "-o", "x.spv"]) == 1
    assert capsys.readouterr().err == shown
