"""A table of test-backend-ops perf logs: per case, the stock and coopdsl figures (median over rounds) and ratio.

    python3 benchmarks/ggml/perf_table.py LOG...   (names ...-stock-rN.log / ...-coopdsl-rN.log / ...-trace.log,
                                                    from perf.sh)
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LINE = re.compile(r"^\s*([A-Z_]+)\((.*?)\):\s+\d+ runs -\s+([\d.]+) us/run .*?([\d.]+) (GFLOPS|TFLOPS|GB/s)")


def parse(path: str) -> dict[str, tuple[float, float, str, bool]]:
    """case -> (us/run, rate, unit, ran on coopdsl pipelines): the last from the ``[override-dispatch]`` lines
    GGML_VK_OVERRIDE_TRACE=1 prints before a case's line."""
    out = {}
    text = ANSI.sub("", open(path, errors="replace").read())
    text = re.sub(r"ggml_vulkan: override [^\n]*\n", "", text)   # messages from the compile threads
    traced = False
    for line in text.splitlines():
        if line.startswith("[override-dispatch] "):
            traced = True
            continue
        m = LINE.match(line)
        if m:
            op, params, us, rate, unit = m.groups()
            out[f"{op}({params})"] = (float(us), float(rate), unit, traced)
            traced = False
    return out


def main(paths: list[str]) -> None:
    runs: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    traced: set[str] = set()
    for p in paths:
        if p.endswith("-trace.log"):   # attribution only (perf.sh's traced run)
            traced |= {case for case, v in parse(p).items() if v[3]}
            continue
        mode = "coopdsl" if "-coopdsl-" in p else "stock"
        for case, v in parse(p).items():
            runs[case][mode].append(v)
    print("| case | coopdsl kernel ran | stock us | coopdsl us | stock | coopdsl | coopdsl / stock |")
    print("|---|---|---|---|---|---|---|")
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
        ours = case in traced or any(v[3] for v in modes["coopdsl"])
        if ours:
            ratios[case.split("(")[0]].append(ratio)
        short = re.sub(r",(bs|nr|per|permute|nr23)=\[[^\]]*\]", "", case)
        short = re.sub(r",(k_v|o|src_overlap|kv_view|v_is_view_of_k)=[^,)]*", "", short)
        print(f"| {short} | {'yes' if ours else 'no (stock path)'} | {s_us:.1f} | {c_us:.1f} | {s_rate:.1f} {unit} | "
              f"{c_rate:.1f} {unit} | {ratio:.2f} |")
    for op, rs in ratios.items():
        print(f"{op}: geometric mean coopdsl/stock {statistics.geometric_mean(rs):.3f} over the {len(rs)} cases "
              f"that ran coopdsl's kernels, min {min(rs):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
