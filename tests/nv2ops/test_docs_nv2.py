"""docs/lang/nv2-ops.md: its error example raises exactly the message the page shows.

(Its ```python kernels are compiled and validated by tests/test_docs.py.)
"""

import re
from pathlib import Path

import pytest

import coopdsl
from coopdsl.errors import CompileError

PAGE = Path(__file__).resolve().parents[2] / "docs" / "lang" / "nv2-ops.md"
PAIRS = re.findall(r"```py\n(.*?)```\s*```text\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_has_an_error_example():
    assert PAIRS


@pytest.mark.parametrize("code,message", PAIRS)
def test_error_example_message(code, message, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(code)
    ns = {"__name__": "k", "__file__": str(path)}
    exec(compile(code, str(path), "exec"), ns)
    kernels = [v for v in ns.values() if isinstance(v, coopdsl.Kernel)]
    with pytest.raises(CompileError) as info:
        for k in kernels:
            k.compile()
    assert str(info.value).replace(str(path), "k.py").strip() == message.strip()
