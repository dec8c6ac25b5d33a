"""Every ```python block in README.md and docs/ that defines a kernel compiles and validates."""

import re
from pathlib import Path

import pytest

import coopdsl
from coopdsl.spirv import tools

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks():
    for page in PAGES:
        for i, m in enumerate(BLOCK.finditer(page.read_text())):
            if "@cd.kernel" in m.group(1) or "@coopdsl.kernel" in m.group(1):
                yield pytest.param(page, m.group(1), id=f"{page.relative_to(ROOT)}#{i}")


@pytest.mark.parametrize("page,code", list(_blocks()))
def test_doc_example_compiles(page, code, tmp_path):
    path = tmp_path / "doc_example.py"
    path.write_text(code)
    ns = {"__name__": "doc_example", "__file__": str(path)}
    exec(compile(code, str(path), "exec"), ns)
    kernels = [v for v in ns.values() if isinstance(v, coopdsl.Kernel)]
    assert kernels
    for k in kernels:
        assert tools.validation_message(k.compile(), k.target_env) is None
