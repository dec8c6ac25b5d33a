"""docs/aot.md's examples are real: the TOML is the shipped spec, and the transcripts are what the commands print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..conftest import child_env

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "aot.md").read_text()

SCALE = '''import coopdsl as cd
from coopdsl import f32

@cd.kernel(workgroup_size=(32, 1, 1))
def scale(x: cd.Buffer[f32], F: cd.Const[float] = 2.0):
    i = cd.global_invocation_id.x
    x[i] = x[i] * F + undefined_name
'''


def _blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the page, in order."""
    blocks, lang, lines = [], None, []
    for line in DOC.splitlines(keepends=True):
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                blocks.append((lang, "".join(lines)))
                lang = None
        elif lang is not None:
            lines.append(line)
    return blocks


def _block(fence: str, containing: str) -> str:
    found = [text for lang, text in _blocks() if lang == fence and containing in text]
    assert len(found) == 1, f"expected one ```{fence} block with {containing!r}"
    return found[0]


def _coopdsl(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coopdsl", *args], capture_output=True, text=True, cwd=cwd,
                          env=child_env(), timeout=300)


def _transcript(block: str) -> list[tuple[list[str], str]]:
    """(command arguments after 'coopdsl', expected output) for each '$ coopdsl ...' in a shell transcript."""
    runs = []
    for chunk in block.split("$ coopdsl ")[1:]:
        command, _, output = chunk.partition("\n")
        runs.append((command.split(), output))
    return runs


def test_toml_block_is_the_shipped_spec():
    assert _block("toml", "[[kernel]]") == (ROOT / "examples" / "host_cpp" / "kernels.toml").read_text()


def test_build_transcript(tmp_path):
    for args, expected in _transcript(_block("", "$ coopdsl build examples/host_cpp")):
        out = args.index("-o") + 1
        args[out] = str(tmp_path / args[out])
        r = _coopdsl(args, ROOT)
        assert r.returncode == 0, r.stderr
        assert r.stderr == expected.replace("build/kernels", str(tmp_path / "build/kernels"))


def test_failure_transcript(tmp_path):
    (tmp_path / "scale.py").write_text(SCALE)
    (tmp_path / "kernels.toml").write_text('[[kernel]]\nfile = "scale.py"\nname = "scale"\n')
    ((args, expected),) = _transcript(_block("", "$ coopdsl build kernels.toml"))
    r = _coopdsl(args, tmp_path)
    assert r.returncode == 1
    assert r.stderr == expected


def test_python_block_runs(tmp_path, monkeypatch):
    code = _block("python", "from coopdsl.aot import").replace('"build/kernels"', repr(str(tmp_path / "k")))
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(code, "docs/aot.md", "exec"), namespace)
    assert "saxpy_spec_defaults = {128u};" in namespace["header"]
    assert namespace["report"].compiled == ["saxpy_WG64", "saxpy_WG256", "gemm_256", "gemm_4k"]
