"""Bar charts of docs/benchmarks.md's tables, as hand-written SVG (no plotting library).

    python3 benchmarks/plot.py [--data benchmarks/results/plots.json] [--out docs/img]

``--data`` lists the charts: each has a ``name`` (the file ``<out>/<name>.svg``), a ``title``, a
``unit`` (the axis label), a ``caption`` (machine, driver, date, command), the ``series`` (one bar
colour each) and ``groups`` of bars, each a ``label`` and one value per series written as a string
exactly as the page prints it (``null``: no bar), and optionally a ``reference`` value drawn as a
dashed line (1.0 for ratios).  The output depends only on the data, so tests/test_docs_plots.py can
check that the committed charts are up to date.
"""

from __future__ import annotations

import argparse
import json
import math
import textwrap
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "results" / "plots.json"
OUT = ROOT / "docs" / "img"

COLORS = ["#3b6fb6", "#e08a2e", "#6a9f58", "#9467bd"]
WIDTH = 760
LEFT = 230  # room for the group labels
RIGHT = 70  # room for the value printed after the longest bar
BAR = 14
GAP = 3  # between the bars of a group
GROUP_GAP = 12
CAPTION_CHARS = 105  # a caption line at font size 11 fits the width
FONT = "font-family=\"sans-serif\""


def nice_step(top: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` ticks up to ``top``."""
    raw = top / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def fmt(x: float) -> str:
    """A coordinate, with one decimal and no trailing zero."""
    s = f"{x:.1f}"
    return s[:-2] if s.endswith(".0") else s


def tick_label(v: float) -> str:
    return f"{v:g}"


def chart(spec: dict) -> str:
    """The SVG text of one chart."""
    series, groups = spec["series"], spec["groups"]
    values = [float(v) for g in groups for v in g["values"] if v is not None]
    reference = spec.get("reference")
    top = max(values + ([reference] if reference is not None else []))
    step = nice_step(top)
    axis_max = step * math.ceil(top / step - 1e-9)
    plot_w = WIDTH - LEFT - RIGHT
    scale = plot_w / axis_max

    legend_h = 20 * len(series) if len(series) > 1 else 0
    y0 = 44 + legend_h  # top of the first group
    group_h = len(series) * BAR + (len(series) - 1) * GAP
    plot_h = len(groups) * group_h + (len(groups) - 1) * GROUP_GAP
    axis_y = y0 + plot_h + 8
    caption = textwrap.wrap(spec["caption"], CAPTION_CHARS)
    height = axis_y + 46 + 15 * len(caption)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" {FONT} font-size="12">',
           f"<title>{escape(spec['title'])}</title>",
           f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
           f'<text x="{WIDTH // 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
           f"{escape(spec['title'])}</text>"]
    for i, name in enumerate(series if legend_h else []):
        y = 34 + 20 * i
        out.append(f'<rect x="{LEFT}" y="{y}" width="12" height="12" fill="{COLORS[i % len(COLORS)]}"/>')
        out.append(f'<text x="{LEFT + 18}" y="{y + 10}">{escape(name)}</text>')

    # grid and axis
    t = 0.0
    while t <= axis_max + 1e-9:
        x = LEFT + t * scale
        out.append(f'<line x1="{fmt(x)}" y1="{y0 - 4}" x2="{fmt(x)}" y2="{axis_y}" stroke="#dddddd"/>')
        out.append(f'<text x="{fmt(x)}" y="{axis_y + 15}" text-anchor="middle">{tick_label(t)}</text>')
        t += step
    out.append(f'<line x1="{LEFT}" y1="{axis_y}" x2="{LEFT + plot_w}" y2="{axis_y}" stroke="#333333"/>')
    out.append(f'<line x1="{LEFT}" y1="{y0 - 4}" x2="{LEFT}" y2="{axis_y}" stroke="#333333"/>')
    out.append(f'<text x="{LEFT + plot_w // 2}" y="{axis_y + 32}" text-anchor="middle">{escape(spec["unit"])}</text>')

    # bars
    for gi, group in enumerate(groups):
        gy = y0 + gi * (group_h + GROUP_GAP)
        out.append(f'<text x="{LEFT - 8}" y="{fmt(gy + group_h / 2 + 4)}" text-anchor="end">'
                   f"{escape(group['label'])}</text>")
        for si, value in enumerate(group["values"]):
            y = gy + si * (BAR + GAP)
            if value is None:
                out.append(f'<text x="{LEFT + 4}" y="{y + 11}" fill="#777777">(not measured)</text>')
                continue
            w = float(value) * scale
            out.append(f'<rect x="{LEFT}" y="{y}" width="{fmt(w)}" height="{BAR}" '
                       f'fill="{COLORS[si % len(COLORS)]}"><title>{escape(series[si])}: {value}</title></rect>')
            out.append(f'<text x="{fmt(LEFT + w + 4)}" y="{y + 11}">{escape(value)}</text>')
    if reference is not None:
        x = fmt(LEFT + reference * scale)
        out.append(f'<line x1="{x}" y1="{y0 - 4}" x2="{x}" y2="{axis_y}" stroke="#aa0000" '
                   'stroke-dasharray="4 3"/>')

    for i, line in enumerate(caption):
        out.append(f'<text x="{WIDTH // 2}" y="{axis_y + 52 + 15 * i}" text-anchor="middle" font-size="11" '
                   f'fill="#444444">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_all(data: Path = DATA, out: Path = OUT) -> list[Path]:
    """Write every chart of ``data`` into ``out``; the paths written."""
    specs = json.loads(Path(data).read_text())["charts"]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in specs:
        path = out / f"{spec['name']}.svg"
        path.write_text(chart(spec))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    for path in write_all(args.data, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
