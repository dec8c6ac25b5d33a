"""benchmarks/launch_overhead.py runs (on lavapipe here) and writes its own section of docs/benchmarks.md."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._report import replace_section  # noqa: E402


def test_replace_section_keeps_the_rest(tmp_path):
    p = tmp_path / "b.md"
    p.write_text("# Benchmarks\n\nintro\n\n## GEMM\n\ngemm table\n\n## Launch overhead on X\n\nold\n\n## Later\n\nz\n")
    replace_section(p, "## Launch overhead on X", "new 1\nnew 2")
    assert p.read_text() == ("# Benchmarks\n\nintro\n\n## GEMM\n\ngemm table\n\n## Launch overhead on X\n\n"
                             "new 1\nnew 2\n\n## Later\n\nz\n")
    replace_section(p, "## Launch overhead on Y", "other")
    assert p.read_text().endswith("## Later\n\nz\n\n## Launch overhead on Y\n\nother\n")
    replace_section(p, "## Launch overhead on Y", "again")
    assert p.read_text().endswith("## Later\n\nz\n\n## Launch overhead on Y\n\nagain\n")


@pytest.mark.vulkan
def test_launch_overhead_runs_and_writes_its_section(device, tmp_path, capsys):
    from benchmarks import launch_overhead

    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nkept\n")
    assert launch_overhead.main(["--launches", "20", "--repeats", "2", "--out", str(out)]) == 0
    text, printed = out.read_text(), capsys.readouterr().out
    assert text.startswith("# Benchmarks\n\nkept\n\n## Launch overhead on ")
    for mode in launch_overhead.MODES:
        assert f"| {mode} | " in text and f"| {mode} | " in printed
    rows = [line for line in text.splitlines() if line.startswith("| resident arrays, one batch")]
    median, lowest, recording = (float(c) for c in rows[0].strip("|").split("|")[1:])
    assert 0 < lowest <= median and 0 < recording <= median
