"""A table of test-backend-ops perf logs: per case, the stock and coopdsl figures (median over rounds) and ratio.

    python3 benchmarks/ggml/perf_table.py LOG...   (names ...-stock-rN.log / ...-coopdsl-rN.log, from perf.sh)
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LINE = re.compile(r"^\s*([A-Z_]+)\((.*?)\):\s+\d+ runs -\s+([\d.]+) us/run .*?([\d.]+) (GFLOPS|TFLOPS|GB/s)")


def parse(path: str) -> dict[str, tuple[float, float, str]]:
    """case -> (us/run, rate, unit)"""
    out = {}
    text = ANSI.sub("", open(path, errors="replace").read())
    text = re.sub(r"ggml_vulkan: override [^\n]*\n", "", text)   # messages from the compile threads
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            op, params, us, rate, unit = m.groups()
            out[f"{op}({params})"] = (float(us), float(rate), unit)
    return out


def main(paths: list[str]) -> None:
    runs: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for p in paths:
        mode = "coopdsl" if "-coopdsl-" in p else "stock"
        for case, v in parse(p).items():
            runs[case][mode].append(v)
    print("| case | stock us | coopdsl us | stock | coopdsl | coopdsl / stock |")
    print("|---|---|---|---|---|---|")
    ratios = defaultdict(list)
    for case, modes in runs.items():
        if not modes["stock"] or not modes["coopdsl"]:
            continue
        s_us = statistics.median(v[0] for v in modes["stock"])
        c_us = statistics.median(v[0] for v in modes["coopdsl"])
        unit = modes["stock"][0][2]
        s_rate = statistics.median(v[1] for v in modes["stock"])
        c_rate = statistics.median(v[1] for v in modes["coopdsl"])
        ratio = s_us / c_us
        ratios[case.split("(")[0]].append(ratio)
        short = re.sub(r",(bs|nr|per|permute|nr23)=\[[^\]]*\]", "", case)
        short = re.sub(r",(k_v|o|src_overlap|kv_view|v_is_view_of_k)=[^,)]*", "", short)
        print(f"| {short} | {s_us:.1f} | {c_us:.1f} | {s_rate:.1f} {unit} | {c_rate:.1f} {unit} | {ratio:.2f} |")
    for op, rs in ratios.items():
        print(f"{op}: geometric mean coopdsl/stock {statistics.geometric_mean(rs):.3f} over {len(rs)} cases, "
              f"min {min(rs):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
