"""Run vk_cooperative_matrix_perf's own harness with its shaders and with coopdsl's ports, interleaved.

    python benchmarks/peer_gemm/run_peer.py --harness SRC --vulkan-headers INC [--kernel shmem|workgroup]
        [--dim 8192] [--rounds 3] [--types fp16_fp32 fp16_fp16 ...] [--correctness]
        [--out benchmarks/notes/peer-harness-shmem.md]

SRC is a checkout of jeffbolznv/vk_cooperative_matrix_perf (nothing of it is in
this repository); INC the ``include`` folder of KhronosGroup/Vulkan-Headers (the
harness needs headers newer than Debian's).  The script builds the harness with
one g++ line into a scratch folder; with ``--parallel-fill`` the build first
replaces the serial ``rand()`` input fill by an OpenMP loop (inputs differ,
shaders, dispatch and timing do not).  Each round runs, for every type pair,
the original and our ``<kernel><A>_<C>.spv`` (emitted by ``shmem.py`` or
``workgroup.py``) in two folders holding only that one shader, alternating
which goes first, and parses the harness's own TFLOP/s lines.  ``--kernel
shmem`` runs the harness with ``--shmem``; ``--kernel workgroup`` without it
(the harness then also looks for its shmem shaders, finds none in the folder
and skips them).  Medians and min..max over rounds go to a table (and into
``--out`` as that kernel's "Peer harness" section, other sections kept).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LINE = re.compile(r"TILE_M=(\d+) TILE_N=(\d+), TILE_K=(\d+) BColMajor=(\d) workgroupSize=(\d+)\s+([\d.]+) TFlops")
PROPS = re.compile(r"cooperativeMatrixProps = (\d+)x(\d+)x(\d+)")
SECTIONS = {"shmem": "## Peer harness: vk_cooperative_matrix_perf --shmem, theirs vs ours (H100)",
            "workgroup": "## Peer harness: vk_cooperative_matrix_perf workgroup kernel, theirs vs ours (H100)"}


ONLY_ANCHOR = "            // For non-power of two tile sizes, round up the matrix size to"
ONLY_FILTER = """            if (const char *only = getenv("PEER_ONLY")) {  // coopdsl: only the listed configurations
                char key[96];
                snprintf(key, sizeof key, ";%ux%ux%u:%ux%u:%u;", MSize, NSize, KSize, testCase.TILE_M,
                         testCase.TILE_N, (unsigned)testCase.BColMajor);
                if (!strstr((std::string(";") + only + ";").c_str(), key)) continue;
            }
"""


def only_value(configs: list[str]) -> str:
    """The ``PEER_ONLY`` value for configurations written ``lMxlNxlK:TILE_MxTILE_N:BColMajor``."""
    for c in configs:
        if not re.fullmatch(r"\d+x\d+x\d+:\d+x\d+:[01]", c):
            raise SystemExit(f"--only {c!r}: write a configuration as lMxlNxlK:TILE_MxTILE_N:BColMajor, "
                             "e.g. 16x8x16:256x128:0")
    return ";".join(configs)


def build(src: Path, headers: Path, work: Path, parallel_fill: bool) -> Path:
    """Compile the harness (one g++ line); returns the executable.

    The build also lets the ``PEER_ONLY`` environment variable (see :func:`only_value`) skip every other
    configuration before its buffers are set up; unset, the harness runs as written."""
    source = (src / "src" / "vk_cooperative_matrix_perf.cpp").read_text()
    if ONLY_ANCHOR not in source:
        raise SystemExit("the harness's configuration loop changed; the PEER_ONLY filter has no place to go")
    source = source.replace(ONLY_ANCHOR, ONLY_FILTER + ONLY_ANCHOR, 1)
    if parallel_fill:
        fill = "for (uint32_t j = 0; j < m.totalElements; ++j) {\n                    if (m.isFloatType())"
        if fill not in source:
            raise SystemExit("the harness's input fill changed; run without --parallel-fill")
        source = source.replace(fill, "#pragma omp parallel for\n                " + fill, 1)
        source = source.replace("(float)(rand() & 0x3)", "(float)((j * 2654435761u >> 9) & 0x3)")
        source = source.replace("(rand() & 0xFF) - 128", "((j * 2654435761u >> 9) & 0xFF) - 128")
    work.mkdir(parents=True, exist_ok=True)
    cpp = work / "vk_cooperative_matrix_perf.cpp"
    cpp.write_text(source)
    exe = work / "vk_cooperative_matrix_perf"
    vulkan = next((p for p in ("/usr/lib/x86_64-linux-gnu/libvulkan.so.1", "/usr/lib/libvulkan.so.1")
                   if Path(p).exists()), "-lvulkan")
    cmd = ["g++", "-O2", "-std=c++17", "-fopenmp", f"-I{headers}", str(cpp), "-o", str(exe), vulkan]
    subprocess.run(cmd, check=True)
    return exe


def run(exe: Path, folder: Path, dim: int, correctness: bool, kernel: str = "shmem", only: str = "") -> str:
    """The harness's output for the shaders in ``folder``; ``only``: a ``PEER_ONLY`` filter (empty: all)."""
    args = [str(exe)] + (["--shmem"] if kernel == "shmem" else []) + \
        (["--correctness"] if correctness else [f"--dim={dim}"])
    env = dict(os.environ, PEER_ONLY=only) if only else {k: v for k, v in os.environ.items() if k != "PEER_ONLY"}
    r = subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=1200, env=env)
    return r.stdout + r.stderr


def parse(text: str) -> dict:
    """(shape, TILE_M, TILE_N, TILE_K, BColMajor, workgroup size) -> TFLOP/s."""
    out, shape = {}, None
    for line in text.splitlines():
        m = PROPS.search(line)
        if m:
            shape = "x".join(m.groups())
        m = LINE.search(line)
        if m and shape:
            out[(shape, *map(int, m.groups()[:5]))] = float(m.group(6))
    return out


def folder_with(shader: Path, where: Path) -> Path:
    (where / "shaders").mkdir(parents=True, exist_ok=True)
    for old in (where / "shaders").glob("*.spv"):
        old.unlink()
    shutil.copy(shader, where / "shaders" / shader.name)
    return where


def torch_ceiling(dim: int) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    out = {}
    for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        a = torch.randn(dim, dim, device="cuda", dtype=dtype)
        b = torch.randn(dim, dim, device="cuda", dtype=dtype)
        for _ in range(5):
            a @ b
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(10):
            start.record()
            a @ b
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        out[name] = 2 * dim ** 3 / (statistics.median(times) * 1e-3) / 1e12
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--harness", type=Path, help="a checkout of jeffbolznv/vk_cooperative_matrix_perf")
    p.add_argument("--vulkan-headers", type=Path, help="the include folder of KhronosGroup/Vulkan-Headers")
    p.add_argument("--work", type=Path, default=Path("/tmp/peer_work"))
    p.add_argument("--dim", type=int, default=8192)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--types", nargs="+", default=["fp16_fp16", "fp16_fp32", "bf16_fp32", "s8_s32", "u8_u32"])
    p.add_argument("--correctness", action="store_true", help="also run ours (and theirs) with --correctness")
    p.add_argument("--parallel-fill", action="store_true")
    p.add_argument("--out", type=Path)
    p.add_argument("--ours-only", action="store_true", help="skip the original (for code-shape experiments)")
    p.add_argument("--kernel", choices=sorted(SECTIONS), default="shmem")
    p.add_argument("--save-raw", type=Path, help="also write the measurements as JSON (for --merge)")
    p.add_argument("--merge", type=Path, nargs="+", help="make the table from --save-raw files of several runs "
                   "(type pairs split over calls) instead of running anything")
    args = p.parse_args(argv)
    if args.merge:
        return merge(args)
    if args.harness is None or args.vulkan_headers is None:
        p.error("--harness and --vulkan-headers are needed to run (not with --merge)")

    if args.kernel == "shmem":
        from benchmarks.peer_gemm.shmem import emit_all
    else:
        from benchmarks.peer_gemm.workgroup import emit_all

    kern = args.kernel
    ours_dir = args.work / "ours_shaders"
    emit_all(ours_dir)
    exe = build(args.harness, args.vulkan_headers, args.work / "build", args.parallel_fill)
    print(run(exe, args.work, args.dim, False).split("shader:")[0][:2000] if False else "built", flush=True)

    checks = {}
    if args.correctness:
        for t in args.types:
            for who, shader in (("theirs", args.harness / "shaders" / f"{kern}{t}.spv"),
                                ("ours", ours_dir / f"{kern}{t}.spv")):
                text = run(exe, folder_with(shader, args.work / who), args.dim, True, kern)
                checks[(t, who)] = (text.count("pass"), text.count("fail"))
                print(f"correctness {t} {who}: {checks[(t, who)][0]} pass, {checks[(t, who)][1]} fail", flush=True)

    results: dict = {}
    for rnd in range(args.rounds):
        for t in args.types:
            order = [("theirs", args.harness / "shaders" / f"{kern}{t}.spv"), ("ours", ours_dir / f"{kern}{t}.spv")]
            if args.ours_only:
                order = order[1:]
            for who, shader in (order if rnd % 2 == 0 else order[::-1]):
                text = run(exe, folder_with(shader, args.work / who), args.dim, False, kern)
                for key, tf in parse(text).items():
                    results.setdefault((t, *key), {}).setdefault(who, []).append(tf)
                print(f"round {rnd} {t} {who}: {len(parse(text))} configs", flush=True)

    import json

    print("RAW", json.dumps({"|".join(map(str, k)): v for k, v in results.items()}), flush=True)
    ceiling = torch_ceiling(args.dim) if not args.ours_only else {}
    if args.save_raw:
        args.save_raw.write_text(json.dumps({
            "results": {"|".join(map(str, k)): v for k, v in results.items()},
            "checks": {f"{t}|{who}": list(v) for (t, who), v in checks.items()}, "ceiling": ceiling,
            "types": args.types, "host": __import__("platform").node(), "date": str(datetime.date.today())}))
    table = report(results, checks, ceiling, args)
    print(table)
    if args.out:
        from benchmarks._report import replace_section

        replace_section(args.out, SECTIONS[kern], table)
    return 0


def merge(args) -> int:
    """The report of several ``--save-raw`` files (same kernel, dim, rounds and options), written like a run's."""
    import json

    results: dict = {}
    checks: dict = {}
    ceiling: dict = {}
    types: list = []
    for f in args.merge:
        data = json.loads(f.read_text())
        for key, v in data["results"].items():
            t, shape, *nums = key.split("|")
            results[(t, shape, *map(int, nums))] = v
        for key, v in data["checks"].items():
            checks[tuple(key.split("|"))] = tuple(v)
        ceiling = ceiling or data["ceiling"]
        types += [t for t in data["types"] if t not in types]
    args.types = types
    table = report(results, checks, ceiling, args)
    print(table)
    if args.out:
        from benchmarks._report import replace_section

        replace_section(args.out, SECTIONS[args.kernel], table)
    return 0


def report(results: dict, checks: dict, ceiling: dict, args) -> str:
    import platform

    merged = " (split over device calls, each with --save-raw, tabled with --merge)" if args.merge else ""
    lines = [f"Command: `python benchmarks/peer_gemm/run_peer.py --kernel {args.kernel} --dim {args.dim} "
             f"--rounds {args.rounds} --types {' '.join(args.types)}{' --correctness' if args.correctness else ''}"
             f"{' --parallel-fill' if args.parallel_fill else ''} ...`{merged} on the H100 "
             f"({platform.node()}), {datetime.date.today()}. The peer's own harness, its "
             f"`{args.kernel}` kernel (glslang output, prebuilt in its repository) against "
             f"`benchmarks/peer_gemm/{args.kernel}.py`, {args.rounds} interleaved rounds; TFLOP/s (TOP/s for "
             f"int8) median (min..max).", ""]
    if ceiling:
        lines.append("torch.matmul on the same GPU: " + ", ".join(f"{k} {v:.0f} TFLOP/s" for k, v in ceiling.items()))
        lines.append("")
    if checks:
        lines.append("Correctness (`--correctness`): " + "; ".join(
            f"{t} {who}: {p} pass / {f} fail" for (t, who), (p, f) in sorted(checks.items())))
        lines.append("")
    lines += ["| types | lMxlNxlK | TILE_M x TILE_N x TILE_K | B col-major | workgroup | theirs | ours | ours/theirs |",
              "|---|---|---|---|---|---|---|---|"]
    best: dict = {}
    for key in sorted(results):
        t, shape, tm, tn, tk, bcol, wg = key
        r = results[key]
        if "ours" not in r:
            continue
        r.setdefault("theirs", [float("nan")])
        th, ou = statistics.median(r["theirs"]), statistics.median(r["ours"])
        best.setdefault(t, [0.0, 0.0])
        best[t] = [max(best[t][0], th if th == th else 0.0), max(best[t][1], ou)]
        lines.append(f"| {t} | {shape} | {tm}x{tn}x{tk} | {bcol} | {wg} | {th:.1f} "
                     f"({min(r['theirs']):.1f}..{max(r['theirs']):.1f}) | {ou:.1f} "
                     f"({min(r['ours']):.1f}..{max(r['ours']):.1f}) | {ou / th:.2f} |")
    lines += ["", "Best configuration per type pair:", "", "| types | theirs | ours | ratio |", "|---|---|---|---|"]
    for t, (th, ou) in best.items():
        lines.append(f"| {t} | {th:.1f} | {ou:.1f} | {ou / th if th else float('nan'):.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
