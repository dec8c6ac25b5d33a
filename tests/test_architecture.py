"""docs/architecture.md stays true: every module it names exists, and its "Every module" table is what
scripts/gen_architecture.py makes from the package's docstrings (a new or removed module fails here)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_module_table_is_generated_from_the_tree():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_architecture.py"), "--check"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def test_every_module_the_page_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    text = text.split("<!-- every-module")[0]  # the hand-written part (the generated table is checked above)
    named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_0-9]+\.py)`", text)) | set(re.findall(r"`([a-z_]+/)`", text))
    missing = [n for n in sorted(named) if not (ROOT / "coopdsl" / n).exists() and not (ROOT / n).exists()]
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
