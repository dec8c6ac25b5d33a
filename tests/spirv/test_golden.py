"""Every example's SPIR-V is what its snapshot tests/golden/<example>.spvasm says, and valid.

A change to the generated code shows here as a diff of the disassembly. When the change is meant,
regenerate the snapshots (``python3 scripts/gen_golden.py``) and commit them with it.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gen_golden", ROOT / "scripts" / "gen_golden.py")
assert _spec is not None and _spec.loader is not None
gen_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_golden)

EXAMPLES = gen_golden.examples()
DIFF_LINES = 80  # the first lines of a diff the failure shows


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_matches_its_snapshot(example):
    golden = gen_golden.snapshot_path(example)
    regenerate = gen_golden.command([example.stem])
    assert golden.exists(), f"no snapshot {golden.relative_to(ROOT)}; write it with: {regenerate}"
    text = gen_golden.render(example)  # (validates every kernel with spirv-val)
    expected = golden.read_text()
    if text != expected:
        diff = list(difflib.unified_diff(expected.splitlines(), text.splitlines(),
                                         f"{golden.relative_to(ROOT)} (snapshot)", f"examples/{example.name} (now)",
                                         lineterm="", n=2))
        shown = "\n".join(diff[:DIFF_LINES]) + (f"\n... {len(diff) - DIFF_LINES} more lines"
                                                if len(diff) > DIFF_LINES else "")
        pytest.fail(f"the SPIR-V of examples/{example.name} differs from its snapshot:\n{shown}\n"
                    f"If the change is meant, regenerate the snapshot with: {regenerate}", pytrace=False)


def test_every_snapshot_has_its_example():
    names = {p.stem for p in EXAMPLES}
    orphans = sorted(p.name for p in gen_golden.GOLDEN.glob("*.spvasm") if p.stem not in names)
    assert not orphans, f"snapshots without an example: {orphans}; remove them with: {gen_golden.command()}"


def test_check_mode_names_a_stale_snapshot(tmp_path, monkeypatch, capsys):
    example = EXAMPLES[0]
    monkeypatch.setattr(gen_golden, "GOLDEN", tmp_path)
    (tmp_path / (example.stem + ".spvasm")).write_text("; stale\n")
    assert gen_golden.main(["--check", example.stem]) == 1
    err = capsys.readouterr().err
    assert f"python3 scripts/gen_golden.py {example.stem}" in err
    assert (tmp_path / (example.stem + ".spvasm")).read_text() == "; stale\n"  # --check writes nothing
    assert gen_golden.main([example.stem]) == 0
    assert gen_golden.main(["--check", example.stem]) == 0


def test_snapshot_text_is_deterministic():
    example = next(p for p in EXAMPLES if p.stem == "gemm_khr")
    text = gen_golden.render(example)
    assert text == gen_golden.render(example)
    assert str(ROOT) not in text and sys.prefix not in text
