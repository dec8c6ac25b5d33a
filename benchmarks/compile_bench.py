"""Compile time of coopdsl against glslang compiling equivalent GLSL.

    python benchmarks/compile_bench.py --glslang /tmp/glslang/install/bin/glslang [--rounds 15]
        [--steps 16 32 64 128 256 512 1024] [--out benchmarks/notes/compile-time.md]

glslang is not part of coopdsl and nothing of it is committed: build glslang 16.x from
https://github.com/KhronosGroup/glslang outside this tree, e.g.

    cmake -S glslang -B /tmp/glslang/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_OPT=OFF \\
          -DGLSLANG_TESTS=OFF -DENABLE_HLSL=OFF -DCMAKE_INSTALL_PREFIX=/tmp/glslang/install
    ninja -C /tmp/glslang/build install

and give its ``glslang`` executable with ``--glslang`` or the ``GLSLANG`` environment variable (else the
one on PATH). Without one the script says so and exits with status 0, measuring nothing.

What it measures (each a median over ``--rounds`` interleaved rounds, with the 25th-75th percentiles):

1. whole processes: ``python -m coopdsl emit EXAMPLE.py -o X.spv`` against ``glslang -V --target-env
   vulkan1.3 -o X.spv X.comp`` for every example and its GLSL counterpart (benchmarks/glsl), with
   coopdsl's bytecode cached and without it (a copy of the package with no ``__pycache__`` and
   ``PYTHONDONTWRITEBYTECODE=1``); ratios are of the medians, and their spread is that of the
   per-round ratios;
2. in one process: coopdsl's first compile in a fresh interpreter (after ``import coopdsl`` and loading
   the file) and repeated compiles of new ``Kernel`` objects for the same function, with spirv-val's
   cost given apart (it runs once per distinct module); glslang's library through
   benchmarks/glslang_inproc/main.cpp, built with g++ when the glslang install holds its headers and
   libraries (``--glslang-prefix``, default: the folder above the executable's ``bin``);
3. kernels of N unrolled load/load/muladd steps (benchmarks/compile_cases.py) as whole processes.

Module sizes are those of the files each compiler writes.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import cpu_name, replace_section  # noqa: E402
from benchmarks.compile_cases import EXAMPLES, ROOT, example, write_steps  # noqa: E402
from coopdsl._gcpause import paused  # noqa: E402

HEADING = "## Compile time against glslang"
DEFAULT_STEPS = (16, 32, 64, 128, 256, 512, 1024)
INPROC_SOURCE = ROOT / "benchmarks" / "glslang_inproc" / "main.cpp"
GLSLANG_LIBS = ("glslang", "MachineIndependent", "GenericCodeGen", "OSDependent", "glslang-default-resource-limits",
                "SPIRV")

# Run in a fresh interpreter: import, load the file, first compile, repeated compiles, spirv-val alone.
INPROC_DRIVER = """
import json, runpy, subprocess, sys, time
t0 = time.perf_counter()
import coopdsl
from coopdsl.kernel import Kernel
from coopdsl.spirv import tools
t1 = time.perf_counter()
k = next(v for v in runpy.run_path(sys.argv[1]).values() if isinstance(v, Kernel))
t2 = time.perf_counter()
binary = k.compile()
t3 = time.perf_counter()
repeated = []
for _ in range(int(sys.argv[2])):
    fresh = Kernel(k.fn, k.workgroup_size, k.target_env, k.consts)
    t = time.perf_counter()
    assert fresh.compile() == binary
    repeated.append(time.perf_counter() - t)
val = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    subprocess.run([str(tools.tool_path("spirv-val")), "--target-env", k.target_env, "-"], input=binary, check=True)
    val.append(time.perf_counter() - t)
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "repeated": repeated, "spirv_val": val,
                  "bytes": len(binary)}))
"""

# Compiles the source of every coopdsl module an emit of argv[1] imported, as Python does on each run without
# cached bytecode (argv[2] rounds); prints the module count, line count and the times.
SOURCE_DRIVER = """
import json, sys, time
from coopdsl import cli
cli.main(["emit", sys.argv[1], "-o", sys.argv[3]])
files = sorted(m.__file__ for m in list(sys.modules.values())
               if m.__name__.split(".")[0] == "coopdsl" and (getattr(m, "__file__", "") or "").endswith(".py"))
sources = [(f, open(f).read()) for f in files]
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    for f, text in sources:
        compile(text, f, "exec")
    times.append(time.perf_counter() - t)
print(json.dumps({"modules": len(files), "lines": sum(t.count(chr(10)) for _, t in sources), "compile": times}))
"""

# -- finding and building glslang ---------------------------------------------------------------------
def find_glslang(given: str | None) -> Path | None:
    """The glslang executable: ``given``, else $GLSLANG, else ``glslang`` on PATH (None when there is none)."""
    for candidate in (given, os.environ.get("GLSLANG"), shutil.which("glslang")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def glslang_version(glslang: Path) -> str:
    """The first line of ``glslang --version``."""
    out = subprocess.run([str(glslang), "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0].strip() if out else "unknown version"


def build_inproc(prefix: Path | None, work: Path) -> tuple[Path | None, str]:
    """Build benchmarks/glslang_inproc/main.cpp against the glslang install at ``prefix``: (binary, note)."""
    if prefix is None or not (prefix / "include" / "glslang" / "Public" / "ShaderLang.h").is_file():
        return None, f"no glslang headers under {prefix}/include (give --glslang-prefix)"
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        return None, "no C++ compiler (g++) on PATH"
    out = work / "glslang_inproc"
    cmd = [compiler, "-O2", "-std=c++17", str(INPROC_SOURCE), f"-I{prefix / 'include'}", f"-L{prefix / 'lib'}",
           *[f"-l{lib}" for lib in GLSLANG_LIBS], "-lpthread", "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode:
        return None, "building the glslang library driver failed: " + r.stderr.strip().splitlines()[-1]
    return out, ""


# -- running and timing -------------------------------------------------------------------------------
def run_timed(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of ``cmd``; a failure stops the benchmark."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"compile_bench.py: {' '.join(cmd)} failed:\n{proc.stderr.read().decode()}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def interleaved(jobs: dict[str, tuple[list[str], dict | None]], rounds: int,
                cwd: Path) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(wall times, CPU times) of each job over ``rounds`` rounds, the jobs' order rotating each round."""
    names = list(jobs)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            cmd, env = jobs[name]
            w, c = run_timed(cmd, env, cwd)
            wall[name].append(w)
            cpu[name].append(c)
    return wall, cpu


def spread(values: list[float], scale: float = 1e3) -> str:
    """``median (p25-p75)`` of ``values`` times ``scale``."""
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values) * scale:.1f} ({q[0] * scale:.1f}-{q[2] * scale:.1f})"


def ratio(ours: list[float], theirs: list[float]) -> str:
    """Ratio of the medians, with the 25th-75th percentiles of the per-round ratios."""
    per_round = [a / b for a, b in zip(ours, theirs)]
    q = statistics.quantiles(per_round, n=4) if len(per_round) > 1 else [per_round[0]] * 3
    return f"{statistics.median(ours) / statistics.median(theirs):.2f}x ({q[0]:.2f}-{q[2]:.2f})"


def cpu_ratio(cpu: dict[str, list[float]], ours: str, theirs: str) -> str:
    """Ratio of the median CPU times (user + system, the process and the children it waited for)."""
    return f"{statistics.median(cpu[ours]) / statistics.median(cpu[theirs]):.2f}x"


# -- the measurements ---------------------------------------------------------------------------------
def package_copies(work: Path, names: list[str]) -> tuple[dict, dict]:
    """Environments running a copy of this coopdsl with bytecode cached (warmed up) and one without any."""
    envs = []
    for name, cached in (("cached", True), ("nobytecode", False)):
        shutil.copytree(ROOT / "coopdsl", work / name / "coopdsl", ignore=shutil.ignore_patterns("__pycache__"))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
        # the copy first; then the run's own PYTHONPATH (where a `pip install --target` put the SPIR-V tools)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(work / name), os.environ.get("PYTHONPATH", "")) if p)
        if not cached:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        envs.append(env)
    for name in names:  # writes the cached copy's __pycache__ (every module emit loads)
        run_timed(emit_cmd(example(name)[0], work / "warm.spv"), envs[0], work)
    return envs[0], envs[1]


def emit_cmd(py: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "coopdsl", "emit", str(py), "-o", str(out)]


def glslang_cmd(glslang: Path, comp: Path, out: Path) -> list[str]:
    return [str(glslang), "-V", "--target-env", "vulkan1.3", "-o", str(out), str(comp)]


def process_table(glslang: Path, cached: dict, nobc: dict, names: list[str], rounds: int,
                  work: Path) -> tuple[list[str], dict[str, tuple[float, float]]]:
    """Whole-process times of the examples ``names`` against glslang, and module sizes; and per example the
    medians (glslang, coopdsl with cached bytecode) in seconds."""
    lines = ["| example | glslang ms | coopdsl emit ms | ratio | CPU ratio | coopdsl, no bytecode ms | ratio | "
             "CPU ratio | glslang bytes | coopdsl bytes |", "|---|---|---|---|---|---|---|---|---|---|"]
    medians = {}
    for name in names:
        py, comp = example(name)
        jobs = {"glslang": (glslang_cmd(glslang, comp, work / "g.spv"), None),
                "cached": (emit_cmd(py, work / "c.spv"), cached),
                "nobc": (emit_cmd(py, work / "n.spv"), nobc)}
        t, cpu = interleaved(jobs, rounds, work)
        medians[name] = (statistics.median(t["glslang"]), statistics.median(t["cached"]))
        sizes = [(work / f).stat().st_size for f in ("g.spv", "c.spv")]
        lines.append(f"| {name} | {spread(t['glslang'])} | {spread(t['cached'])} | "
                     f"{ratio(t['cached'], t['glslang'])} | {cpu_ratio(cpu, 'cached', 'glslang')} | "
                     f"{spread(t['nobc'])} | {ratio(t['nobc'], t['glslang'])} | {cpu_ratio(cpu, 'nobc', 'glslang')} | "
                     f"{sizes[0]} | {sizes[1]} |")
    return lines, medians


def steps_table(glslang: Path, cached: dict, steps: list[int], rounds: int, work: Path) -> list[str]:
    """Whole-process times of the N-step kernels, sizes, the cost per step (least squares) and what of it
    CPython's own parse and module compile take."""
    lines = ["| N steps | glslang ms | coopdsl emit ms | ratio | CPU ratio | glslang bytes | coopdsl bytes |",
             "|---|---|---|---|---|---|---|"]
    medians: dict[str, list[float]] = {"glslang": [], "coopdsl": []}
    for n in steps:
        py, comp = write_steps(n, work)
        jobs = {"glslang": (glslang_cmd(glslang, comp, work / "g.spv"), None),
                "coopdsl": (emit_cmd(py, work / "c.spv"), cached)}
        t, cpu = interleaved(jobs, rounds, work)
        for k in medians:
            medians[k].append(statistics.median(t[k]))
        sizes = [(work / f).stat().st_size for f in ("g.spv", "c.spv")]
        lines.append(f"| {n} | {spread(t['glslang'])} | {spread(t['coopdsl'])} | "
                     f"{ratio(t['coopdsl'], t['glslang'])} | {cpu_ratio(cpu, 'coopdsl', 'glslang')} | "
                     f"{sizes[0]} | {sizes[1]} |")
    if len(steps) > 1:
        slopes = {k: statistics.linear_regression(steps, v) for k, v in medians.items()}
        lines += ["", "Least-squares fit of the medians, time = fixed + N x per step: " + "; ".join(
            f"{k} {fit.intercept * 1e3:.1f} ms + N x {fit.slope * 1e3:.3f} ms" for k, fit in slopes.items()) + "."]
        parse, build = python_per_step(steps, rounds, work)
        lines += ["", f"Of coopdsl's cost per step, CPython itself (before coopdsl's front end runs) takes "
                      f"{parse * 1e3:.3f} ms to parse the kernel file into a tree (`ast.parse`) and "
                      f"{build * 1e3:.3f} ms to compile the module from that tree (medians of {rounds} runs in this "
                      f"process, least-squares slope): {(parse + build) * 1e3:.3f} ms a step, against glslang's "
                      f"{slopes['glslang'].slope * 1e3:.3f} ms for the whole step."]
    return lines


def inproc_table(inproc: Path | None, note: str, cached: dict, names: list[str], repeat: int,
                 work: Path) -> list[str]:
    """In-process first and repeated compiles of the examples ``names``, coopdsl and glslang's library."""
    lines = ["| example | glslang first ms | glslang repeated ms | coopdsl first ms | coopdsl repeated ms | "
             "spirv-val ms | coopdsl import + load ms |", "|---|---|---|---|---|---|---|"]
    for name in names:
        py, comp = example(name)
        out = subprocess.run([sys.executable, "-c", INPROC_DRIVER, str(py), str(repeat)], env=cached, cwd=work,
                             capture_output=True, text=True, check=True).stdout
        ours = json.loads(out)
        theirs = ["-", "-"]
        if inproc is not None:
            rows = subprocess.run([str(inproc), str(comp), str(repeat)], capture_output=True, text=True,
                                  check=True).stdout.split("\n")
            us = [float(r.split()[0]) * 1e-6 for r in rows if r.strip()]
            theirs = [f"{us[0] * 1e3:.1f}", spread(us[1:])]
        lines.append(f"| {name} | {theirs[0]} | {theirs[1]} | {ours['first'] * 1e3:.1f} | {spread(ours['repeated'])} "
                     f"| {spread(ours['spirv_val'])} | {(ours['import'] + ours['load']) * 1e3:.1f} |")
    if inproc is None:
        lines += ["", f"glslang's library was not measured: {note}."]
    return lines


def source_compile(cached: dict, name: str, rounds: int, work: Path) -> dict:
    """How long compiling the source of the coopdsl modules an emit of example ``name`` imports takes: what
    a run without cached bytecode pays on top of one with it (less reading the bytecode)."""
    out = subprocess.run([sys.executable, "-c", SOURCE_DRIVER, str(example(name)[0]), str(rounds),
                          str(work / "s.spv")], env=cached, cwd=work, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def python_per_step(steps: list[int], rounds: int, work: Path) -> tuple[float, float]:
    """Per step of the N-step kernels (least-squares slope, seconds): CPython's ``ast.parse`` of the kernel
    file, and compiling the module from that tree (what an emit runs before coopdsl's own front end), with
    the cyclic collector off as the emit command runs them."""
    parse, build = [], []
    with paused():
        for n in steps:
            parse_n, build_n = _parse_and_build(write_steps(n, work)[0].read_text(), rounds)
            parse.append(parse_n)
            build.append(build_n)
    return (statistics.linear_regression(steps, parse).slope, statistics.linear_regression(steps, build).slope)


def _parse_and_build(text: str, rounds: int) -> tuple[float, float]:
    """Medians (seconds) of ``ast.parse(text)`` and of compiling its tree."""
    p, b = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        tree = ast.parse(text)
        t1 = time.perf_counter()
        compile(tree, "steps.py", "exec")
        p.append(t1 - t0)
        b.append(time.perf_counter() - t1)
    return statistics.median(p), statistics.median(b)


def python_startup(rounds: int, work: Path) -> str:
    """Median wall time of ``python -c pass`` (the interpreter's own start-up, site-packages included)."""
    return spread([run_timed([sys.executable, "-c", "pass"], None, work)[0] for _ in range(rounds)])


# -- the report ---------------------------------------------------------------------------------------
def report(args: argparse.Namespace, glslang: Path, parts: dict[str, list[str]], startup: str,
           loads: tuple[float, float]) -> str:
    """The markdown section: how it was run, on what, and the tables."""
    cmd = " ".join(["python benchmarks/compile_bench.py --glslang PATH", f"--rounds {args.rounds}",
                    *([f"--examples {' '.join(args.examples)}"] if args.examples != list(EXAMPLES) else []),
                    *([f"--steps {' '.join(map(str, args.steps))}"] if args.steps != list(DEFAULT_STEPS) else []),
                    *([f"--out {args.out}"] if args.out else [])])
    return "\n".join([
        f"Machine: host {platform.node()}: {cpu_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
        f" ({sys.executable}); {glslang_version(glslang)} (built with ENABLE_OPT=OFF); {datetime.date.today()}. "
        f"Load average {loads[0]:.1f} at the start, {loads[1]:.1f} at the end (the host may be shared).", "",
        f"Command: `{cmd}`", "",
        "Times are wall-clock medians over interleaved rounds, with the 25th-75th percentiles in brackets; "
        "ratios are coopdsl / glslang of the medians, with the 25th-75th percentiles of the per-round ratios; "
        "CPU ratios are of the median CPU times (user + system, the compiler's own subprocesses included), "
        "which depend less on what else the host runs. "
        f"`python -c pass` takes {startup} ms here (interpreter start-up with this site-packages).", "",
        "### Whole process: `python -m coopdsl emit X.py -o X.spv` vs `glslang -V --target-env vulkan1.3`", "",
        "\"No bytecode\": a copy of the package without `__pycache__`, run with `PYTHONDONTWRITEBYTECODE=1`.", "",
        *parts["process"], "",
        "### In one process", "",
        "coopdsl: the first `Kernel.compile()` in a fresh interpreter (it also imports the front end, passes "
        "and writer), then new `Kernel` objects for the same function compiled again (the parsed source and "
        "spirv-val's verdict are cached, as in a long-running process); spirv-val: one run of the validator "
        "subprocess on the module, which each distinct module pays once. glslang: its library "
        "(benchmarks/glslang_inproc/main.cpp), parse + link + SPIR-V generation per compile; its first compile "
        "includes building the built-in symbol tables.", "",
        *parts["inproc"], "",
        "### N unrolled load/load/muladd steps, whole process", "",
        *parts["steps"], ""])


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the section and write it into ``--out`` when given."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--glslang", help="glslang executable (default: $GLSLANG, else glslang on PATH)")
    p.add_argument("--glslang-prefix", help="glslang install prefix with include/ and lib/ (default: the "
                   "executable's folder's parent) for the in-process figures")
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds per measurement (default: 15)")
    p.add_argument("--steps", type=int, nargs="+", default=list(DEFAULT_STEPS), help="N of the step kernels")
    p.add_argument("--examples", nargs="+", choices=sorted(EXAMPLES), default=list(EXAMPLES),
                   help="examples to compile (default: all)")
    p.add_argument("--out", help="markdown file to add or replace this benchmark's section in")
    args = p.parse_args(argv)
    if args.rounds < 2 or min(args.steps) < 1:
        p.error("--rounds must be >= 2 and --steps >= 1")
    glslang = find_glslang(args.glslang)
    if glslang is None:
        print("compile_bench.py: skipped: glslang not found (give --glslang PATH or set GLSLANG; build glslang "
              "16.x as this script's docstring says)", file=sys.stderr)
        return 0
    prefix = Path(args.glslang_prefix) if args.glslang_prefix else glslang.resolve().parent.parent
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="compile_bench-") as tmp:
        work = Path(tmp)
        cached, nobc = package_copies(work, args.examples)
        inproc, note = build_inproc(prefix, work)
        process, medians = process_table(glslang, cached, nobc, args.examples, args.rounds, work)
        name = "gemm_shared" if "gemm_shared" in args.examples else args.examples[0]
        src = source_compile(cached, name, args.rounds, work)
        g, c = medians[name]
        process += ["", f"Without cached bytecode Python compiles the source of the {src['modules']} coopdsl modules "
                        f"({src['lines']:,} lines) that an emit of {name} imports: {spread(src['compile'])} ms here "
                        f"(`compile()` of their text, {args.rounds} runs). For {name} the 0.75x target leaves "
                        f"{(0.75 * g - c) * 1e3:.1f} ms over an emit with cached bytecode (0.75 x glslang's "
                        f"{g * 1e3:.1f} ms, less coopdsl's {c * 1e3:.1f} ms)."]
        parts = {"process": process,
                 "inproc": inproc_table(inproc, note, cached, args.examples, args.rounds, work),
                 "steps": steps_table(glslang, cached, sorted(args.steps), args.rounds, work)}
        startup = python_startup(args.rounds, work)
    loads.append(os.getloadavg()[0])
    text = report(args, glslang, parts, startup, (loads[0], loads[1]))
    print(text)
    if args.out:
        replace_section(args.out, HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
