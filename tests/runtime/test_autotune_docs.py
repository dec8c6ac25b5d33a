"""Every ```python block of docs/autotune.md runs, in order, in one namespace, on a Vulkan device."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "autotune.md"


@pytest.mark.vulkan
def test_autotune_page_examples_run(device, tmp_path, monkeypatch, capsys):
    from coopdsl.runtime import device as device_module

    monkeypatch.setattr(device_module, "_default", device)  # the page's default device: the test device
    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "autotune.json"))
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    # (the 4th: ops.linear(tune=True) on the interpreter, docs/autotune.md since 1c16fde; the 5th: the prefill
    # products' choice and candidates)
    assert len(blocks) == 5
    code = "\n".join(blocks)
    path = tmp_path / "autotune_doc.py"  # kernels need a source file
    path.write_text(code)
    exec(compile(code, str(path), "exec"), {"__name__": "autotune_doc", "__file__": str(path)})
    out = capsys.readouterr().out
    assert "fastest: Config(" in out and f"|n=100000|{device.info.name} / " in out
    assert (tmp_path / "autotune.json").is_file()
