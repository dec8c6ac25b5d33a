"""Every ```python block in README.md and docs/ that defines a kernel compiles and validates.

docs/glsl-mapping.md also promises, row by row, which SPIR-V instruction each
coopdsl spelling becomes: the page's kernels must contain every instruction
named in a row that coopdsl supports.
"""

import re
from pathlib import Path

import pytest

import coopdsl
from coopdsl.spirv import tools

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
MAPPING = ROOT / "docs" / "glsl-mapping.md"


def _blocks():
    for page in PAGES:
        for i, m in enumerate(BLOCK.finditer(page.read_text())):
            if "@cd.kernel" in m.group(1) or "@coopdsl.kernel" in m.group(1):
                yield pytest.param(page, m.group(1), id=f"{page.relative_to(ROOT)}#{i}")


def run_block(code: str, path: Path) -> dict:
    """Execute a doc block as the module ``path`` (kernels read their source from it); its namespace."""
    path.write_text(code)
    ns = {"__name__": path.stem, "__file__": str(path)}
    exec(compile(code, str(path), "exec"), ns)
    return ns


def kernels_of(ns: dict) -> list:
    return [v for v in ns.values() if isinstance(v, coopdsl.Kernel)]


@pytest.mark.parametrize("page,code", list(_blocks()))
def test_doc_example_compiles(page, code, tmp_path):
    kernels = kernels_of(run_block(code, tmp_path / "doc_example.py"))
    assert kernels
    for k in kernels:
        assert tools.validation_message(k.compile(), k.target_env) is None


def _spirv_rows(text: str):
    """(coopdsl cell, SPIR-V cell) of every row of the tables that have a SPIR-V column."""
    for table in re.findall(r"(?:^\|.*\|\n)+", text, re.M):
        lines = table.splitlines()
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        if "SPIR-V" not in header:
            continue
        for line in lines[2:]:
            row = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
            yield row["coopdsl"], row["SPIR-V"]


def test_mapping_page_names_the_instructions_its_kernels_emit(tmp_path):
    text = MAPPING.read_text()
    dis = "\n".join(k.disassemble() for i, m in enumerate(BLOCK.finditer(text))
                    for k in kernels_of(run_block(m.group(1), tmp_path / f"mapping_{i}.py")))
    rows = list(_spirv_rows(text))
    supported = [(c, s) for c, s in rows if "not yet" not in c]
    assert len(supported) >= 20 and len(rows) - len(supported) >= 8
    for spelling, spirv in supported:
        named = re.findall(r"\bOp\w+", re.sub(r"\(.*?\)", "", spirv))   # parenthesised: other forms
        assert named, spelling
        missing = [op for op in named if not re.search(rf"\b{op}\b", dis)]
        assert not missing, f"{spelling}: the page's kernels do not emit {missing}"
