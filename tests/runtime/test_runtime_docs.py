"""Every ```python block of docs/runtime.md runs, in order, in one namespace, on a Vulkan device."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


@pytest.mark.vulkan
def test_runtime_page_examples_run(device, tmp_path, monkeypatch, capsys):
    from coopdsl.runtime import device as device_module

    monkeypatch.setattr(device_module, "_default", device)  # the page's default device: the test device
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 6
    code = "\n".join(blocks)
    path = tmp_path / "runtime_doc.py"  # kernels need a source file
    path.write_text(code)
    exec(compile(code, str(path), "exec"), {"__name__": "runtime_doc", "__file__": str(path)})
    out = capsys.readouterr().out
    assert device.info.name in out and "us per dispatch" in out
