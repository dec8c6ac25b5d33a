"""docs/tutorial.md runs: its python blocks, in order, in one namespace, on the CPU interpreter."""

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"


@pytest.mark.skipif(importlib.util.find_spec("coopdsl.interp") is None,
                    reason="the CPU interpreter (coopdsl.interp) is not installed")
def test_the_tutorial_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), re.S)
    assert len(blocks) >= 5
    # kernels read their source from the file they are defined in: run the page as one module
    path = tmp_path / "tutorial.py"
    path.write_text("\n\n".join(blocks))
    code = compile(path.read_text(), str(path), "exec")
    exec(code, {"__name__": "tutorial", "__file__": str(path)})  # noqa: S102 - the documentation's own code
    assert os.environ["COOPDSL_DEVICE"] == "cpu"
