"""What the driver compiled: register counts and memory of the peer's shmem kernel and of our port.

    python benchmarks/peer_gemm/pipeline_stats.py --harness SRC [--kernel shmem] [--dim 8192]
        [--from benchmarks/notes/peer-harness-shmem.md] [--out benchmarks/notes/peer-harness-shmem.md]

For every configuration in the kernel's "Peer harness" table of ``--from``
(type pair, lM x lN x lK, tiles, B layout), both modules are specialized with
the values the harness gives them (its specialization data for ``--dim``) and
compiled by the device's driver with statistics capture
(VK_KHR_pipeline_executable_properties, ``Program.statistics``); the table
lists each executable statistic that differs between the two, next to the
measured speed ratio, so that a slower configuration can be read against what
the driver made of it (on NVIDIA: registers per invocation, shared and local
memory).  Needs a GPU whose driver offers the extension.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

ROW = re.compile(r"^\| (\w+) \| (\d+)x(\d+)x(\d+) \| (\d+)x(\d+)x(\d+) \| ([01]) \|(?: (\d+) \|)? .*\| ([\d.]+) \|$")


def harness_spec(lm: int, ln: int, lk: int, tm: int, tn: int, tk: int, bcol: int, wg: int, dim: int,
                 subgroup: int = 32) -> dict:
    """The specialization values vk_cooperative_matrix_perf gives its kernels (by our parameter names)."""
    return {"lM": lm, "lN": ln, "lK": lk, "TILE_M": tm, "TILE_N": tn, "TILE_K": tk, "K": dim, "strideA": dim,
            "strideB": dim, "strideC": dim, "strideD": dim, "alpha": 2.0, "beta": 3.0, "BColMajor": bool(bcol),
            "A_ROW_LEN": tk, "A_NUM_ROWS": tm, "B_ROW_LEN": tk if bcol else tn, "B_NUM_ROWS": tn if bcol else tk,
            "WG": wg, "M": dim, "N": dim, "SUBGROUP_SIZE": subgroup}


def configs(markdown: Path, kernel: str) -> list[tuple]:
    """(types, lM, lN, lK, TILE_M, TILE_N, TILE_K, BColMajor, workgroup size, measured ratio) per table row."""
    text = markdown.read_text()
    title = "--shmem" if kernel == "shmem" else "workgroup kernel"
    start = text.index(f"## Peer harness: vk_cooperative_matrix_perf {title}")
    end = text.find("\n## ", start + 1)
    out = []
    for line in text[start:end if end > 0 else None].splitlines():
        m = ROW.match(line)
        if m:
            g = m.groups()
            wg = int(g[8]) if g[8] else 256
            out.append((g[0], *map(int, g[1:8]), wg, float(g[9])))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--harness", type=Path, required=True, help="a checkout of jeffbolznv/vk_cooperative_matrix_perf")
    p.add_argument("--kernel", choices=["shmem", "workgroup"], default="shmem")
    p.add_argument("--dim", type=int, default=8192)
    p.add_argument("--from", dest="source", type=Path, default=ROOT / "benchmarks" / "notes" / "peer-harness-shmem.md")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)

    from benchmarks._gpu import require_vulkan
    from benchmarks.peer_gemm import shmem, workgroup

    port = shmem if args.kernel == "shmem" else workgroup
    dev = require_vulkan("pipeline_stats.py")
    rows = configs(args.source, args.kernel)
    lines = [f"Command: `python benchmarks/peer_gemm/pipeline_stats.py --kernel {args.kernel} --dim {args.dim} ...`; "
             f"{dev.info.name}, driver {dev.info.driver_name} {dev.info.driver_info}, {datetime.date.today()}. "
             "Statistics the driver reports for each configuration of the table above, theirs / ours "
             "(only the statistics that differ somewhere are listed); ratio: the measured ours/theirs.", ""]
    table: list[tuple] = []
    names: list[str] = []
    for types, lm, ln, lk, tm, tn, tk, bcol, wg, ratio in rows:
        a_tok, c_tok = types.split("_")
        kernel = port.variant(*port.VARIANTS[(a_tok, c_tok)])
        reflection = kernel.reflect()
        spec = harness_spec(lm, ln, lk, tm, tn, tk, bcol, wg, args.dim)
        spec = {k: v for k, v in spec.items() if any(s["name"] == k for s in reflection["spec_constants"])}
        theirs_spv = (args.harness / "shaders" / f"{args.kernel}{types}.spv").read_bytes()
        stats = {}
        for who, spirv in (("theirs", theirs_spv), ("ours", kernel.compile())):
            execs = dev.program(spirv, reflection).statistics(spec)
            stats[who] = {f"{e['name']}: {k}" if len(execs) > 1 else k: v
                          for e in execs for k, v in e["statistics"].items()}
        for k in stats["theirs"]:
            if stats["theirs"][k] != stats["ours"].get(k) and k not in names:
                names.append(k)
        table.append(((types, f"{lm}x{ln}x{lk}", f"{tm}x{tn}x{tk}", bcol, wg, ratio), stats))
        print(types, lm, ln, lk, tm, tn, tk, bcol, wg, ratio,
              {k: (stats["theirs"][k], stats["ours"].get(k)) for k in stats["theirs"]}, flush=True)
    head = ["types", "lMxlNxlK", "tiles", "B col-major", "workgroup", "ratio", *(f"{n} (theirs / ours)" for n in names)]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---" * len(head) + "|")
    for (types, shape, tiles, bcol, wg, ratio), stats in table:
        cells = [f"{_fmt(stats['theirs'].get(n))} / {_fmt(stats['ours'].get(n))}" for n in names]
        lines.append("| " + " | ".join([types, shape, tiles, str(bcol), str(wg), f"{ratio:.2f}", *cells]) + " |")
    seen = [k for _, stats in table for k in stats["theirs"]]
    same = [k for k in dict.fromkeys(seen) if k not in names]
    if same:
        lines += ["", "The same for theirs and ours in every configuration: " + ", ".join(same) + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        from benchmarks._report import replace_section

        replace_section(args.out, f"## What the driver compiled: {args.kernel} kernel, theirs vs ours (H100)", text)
    return 0


def _fmt(value) -> str:
    return "-" if value is None else (f"{value:.3g}" if isinstance(value, float) else str(value))


if __name__ == "__main__":
    sys.exit(main())
