"""docs/benchmarks.md's charts are drawn from benchmarks/results/plots.json by benchmarks/plot.py.

The committed SVGs must be what the script draws now (so they cannot go stale), every number the
charts show must be a number of the page's tables, and the page's links (charts, notes files) must
resolve.
"""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks import plot  # noqa: E402

PAGE = ROOT / "docs" / "benchmarks.md"
DATA = ROOT / "benchmarks" / "results" / "plots.json"
IMG = ROOT / "docs" / "img"
CHARTS = json.loads(DATA.read_text())["charts"]


def test_the_committed_charts_are_what_the_script_draws(tmp_path):
    written = plot.write_all(DATA, tmp_path)
    assert sorted(p.name for p in written) == sorted(f"{c['name']}.svg" for c in CHARTS)
    for path in written:
        committed = IMG / path.name
        assert committed.exists(), f"{committed} is missing: run python3 benchmarks/plot.py"
        assert committed.read_text() == path.read_text(), \
            f"{committed} is stale: run python3 benchmarks/plot.py and commit docs/img/"


@pytest.mark.parametrize("chart", CHARTS, ids=[c["name"] for c in CHARTS])
def test_every_charted_number_is_on_the_page(chart):
    text = PAGE.read_text()
    assert f"](img/{chart['name']}.svg)" in text, f"docs/benchmarks.md does not show img/{chart['name']}.svg"
    for group in chart["groups"]:
        assert len(group["values"]) == len(chart["series"]), group["label"]
        for value in group["values"]:
            if value is not None:
                assert re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", text), \
                    f"{chart['name']}: {group['label']} {value} is not in docs/benchmarks.md"


def test_the_charts_are_svg_with_title_and_caption():
    for chart in CHARTS:
        svg = (IMG / f"{chart['name']}.svg").read_text()
        assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
        assert chart["title"].split(" (")[0].replace(">", "&gt;") in svg
        assert chart["caption"].split(",")[0] in svg  # the machine


def test_the_page_links_resolve():
    text = PAGE.read_text()
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links
    for link in links:
        assert (PAGE.parent / link).resolve().exists(), f"docs/benchmarks.md links to a missing file: {link}"
    for named in re.findall(r"`((?:coopdsl|benchmarks|tests|examples|scripts|docs)/[\w./-]+)`", text):
        assert (ROOT / named).exists(), f"docs/benchmarks.md names a missing file: {named}"


def test_every_notes_file_says_where_it_came_from_and_is_listed():
    notes = sorted((ROOT / "benchmarks" / "notes").glob("*.md"))
    assert notes
    text = PAGE.read_text()
    for note in notes:
        head = note.read_text()
        # moved from the page, or written as a note: a title naming the machine and the date
        assert head.startswith("Moved from docs/benchmarks.md on ") or \
            re.match(r"# .+\((?:NVIDIA )?[A-Z]\w+.*, 20\d\d-\d\d-\d\d\)\n", head), note.name
        assert f"(../benchmarks/notes/{note.name})" in text, f"docs/benchmarks.md does not list {note.name}"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading's text."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_contents_line_lists_every_section_and_the_intro_holds_none():
    """Each ``## `` section is in the page's Contents and each Contents anchor is a section; the text before
    the first section (what the page is, how to read it) holds no heading and no table: a section pasted into
    the intro by hand (as happened once) fails here."""
    lines = PAGE.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("## "))
    intro = "\n".join(lines[:first])
    assert not re.search(r"^#{2,} ", intro, re.M), "docs/benchmarks.md: a heading stands in the intro"
    assert "\n|" not in intro, "docs/benchmarks.md: a table stands in the intro"
    sections = [line[3:] for line in lines if line.startswith("## ")]
    contents = re.findall(r"\]\(#([\w-]+)\)", intro)
    assert sorted(contents) == sorted(_anchor(s) for s in sections)
