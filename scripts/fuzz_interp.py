"""Fixed-budget fuzzing of the compiler and the CPU interpreter (not part of the test suite).

    python scripts/fuzz_interp.py --budget 300 --seed 1 [--out docs/robustness.md]

Until the time budget runs out, each case is one of:

* a generated well-typed kernel (tests/interp/kernelgen.py, scalar or
  cooperative-matrix): it must compile (spirv-val accepts it) and the
  interpreter must equal its numpy model;
* an ill-typed variant of one: it must raise a CompileError at the mutated line;
* a mutation of an example (a swapped layout, a changed number, type or
  operator, a deleted or swapped line), compiled and run on the interpreter
  through benchmarks/cases.py: anything may happen except an internal error,
  an error pointing outside the user's file, or a module spirv-val rejects.

The summary counts cases, located errors, internal errors, spirv-val
rejections and interpreter/numpy mismatches; every failure is listed with the
seed that reproduces it (``--replay SEED``).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import cases as example_cases  # noqa: E402
from coopdsl.errors import CompileError, InternalCompilerError  # noqa: E402
from coopdsl.interp import LaunchArgumentError  # noqa: E402
from tests.interp import kernelgen as kg  # noqa: E402

KINDS = ("scalar", "matrix", "ill-typed", "example-mutation")
OUTCOMES = ("ok", "located error", "argument error", "internal error", "spirv-val rejected", "mismatch",
            "missed type error", "unexpected error")


VERBOSE = False  # --replay: print each exception's traceback


def classify(e: BaseException, path: Path) -> str:
    """The outcome an exception stands for, given the user's file ``path``."""
    if VERBOSE:
        traceback.print_exception(e)
    if isinstance(e, CompileError):
        return "located error" if e.loc.file == str(path) and e.loc.line > 0 else "internal error"
    if isinstance(e, InternalCompilerError):
        return "spirv-val rejected" if "spirv-val rejects" in e.message else "internal error"
    if isinstance(e, LaunchArgumentError) or isinstance(e, TypeError) and ".launch: " in str(e):
        return "argument error"
    return "internal error"


def generated(seed: int, family: str, work: Path) -> str:
    case = kg.GENERATORS[family](kg.RandomChooser(seed))
    path = work / f"{family}_{seed}.py"
    try:
        got, want = kg.run_case(case, path)
    except Exception as e:  # noqa: BLE001 - every failure is classified
        outcome = classify(e, path)
        return "unexpected error" if outcome == "located error" else outcome  # the kernel is well-typed
    return "ok" if kg.agrees(case, got, want) else "mismatch"


def ill_typed(seed: int, work: Path) -> str:
    ch = kg.RandomChooser(seed)
    case = kg.ill_typed(kg.GENERATORS[ch.choice(["scalar", "matrix"])](ch), ch)
    if case is None:  # a scalar program without a top-level assignment: mutate a matrix program instead
        case = kg.ill_typed(kg.matrix_case(ch), ch)
    path = work / f"ill_{seed}.py"
    try:
        kg.load_kernel(case, path).compile()
    except CompileError as e:
        return "located error" if (e.loc.file, e.loc.line) == (str(path), case.bad_line) else "internal error"
    except Exception as e:  # noqa: BLE001
        return classify(e, path)
    return "missed type error"


MUTATIONS = [
    ("layout", r"\bRowMajor\b|\bColumnMajor\b", lambda m, r: "ColumnMajor" if m == "RowMajor" else "RowMajor"),
    ("number", r"(?<![\w.])\d+(?![\w.])", lambda m, r: str(r.choice([0, 1, 2, 3, 7, 8, 15, 16, 17, 32, 64, 100]))),
    ("type", r"\b(f16|f32|i8|i32|u32|bf16)\b", lambda m, r: r.choice(["f16", "f32", "i8", "i32", "u32", "bf16"])),
    ("operator", r" [-+*] ", lambda m, r: r.choice([" + ", " - ", " * ", " // "])),
    ("scope", r"\bSubgroup\b|\bWorkgroup\b", lambda m, r: "Workgroup" if m == "Subgroup" else "Subgroup"),
]


def mutate(source: str, r: random.Random) -> str:
    """A random mutation of the body of an example's (first) kernel that is still valid Python."""
    for _ in range(20):
        text = _mutate_once(source, r)
        try:
            compile(text, "<mutant>", "exec")
        except SyntaxError:
            continue
        return text
    return source


def _mutate_once(source: str, r: random.Random) -> str:
    lines = source.splitlines()
    # the first kernel: the first def after a @cd.kernel / @coopdsl.kernel line (other decorators may come
    # between; a factory's kernel is indented), its body the lines indented deeper than the def
    deco = next((i for i, line in enumerate(lines) if re.match(r"\s*@(cd|coopdsl)\.kernel\b", line)), None)
    if deco is None:
        return source
    d = next((i for i in range(deco, len(lines)) if lines[i].lstrip().startswith("def ")), None)
    if d is None:
        return source
    indent = len(lines[d]) - len(lines[d].lstrip())
    sig_end = next((i for i in range(d, len(lines)) if lines[i].rstrip().endswith(":")), d)
    start = sig_end + 1                 # (a signature may take several lines)
    end = next((i for i in range(start, len(lines))
                if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= indent), len(lines))
    body = [i for i in range(start, end) if lines[i].strip() and not lines[i].strip().startswith("#")]
    how = r.randint(0, 6)
    if how == 5 and len(body) > 2:  # delete a line
        del lines[r.choice(body)]
    elif how == 6 and len(body) > 2:  # swap two adjacent lines
        i = r.choice(body[:-1])
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    else:
        name, pattern, repl = MUTATIONS[min(how, len(MUTATIONS) - 1)]
        i = r.choice(body)
        hits = list(re.finditer(pattern, lines[i]))
        if hits:
            m = r.choice(hits)
            lines[i] = lines[i][:m.start()] + repl(m.group(0), r) + lines[i][m.end():]
    return "\n".join(lines) + "\n"


def example_mutation(seed: int, work: Path) -> str:
    r = random.Random(seed)
    case = r.choice(sorted(example_cases.CASES))
    fn, sizes = example_cases.CASES[case]
    file = {"gemm_shared_64": "gemm_shared.py", "gemm_workgroup_colmajor": "gemm_workgroup.py",
            "gemm_workgroup_f16": "gemm_workgroup.py"}.get(case, f"{case}.py")
    path = work / f"mut_{seed}_{file}"
    types = "from coopdsl import bf16, f16, f32, i8, i32, u32  # for type mutations\n"
    path.write_text(types + mutate((ROOT / "examples" / file).read_text(), r))
    original = example_cases.load_example
    example_cases.load_example = lambda name: original(str(path)) if name == file else original(name)
    try:
        fn(sizes[0], np.random.default_rng(seed), device="cpu")
    except Exception as e:  # noqa: BLE001
        return classify(e, path)
    finally:
        example_cases.load_example = original
    return "ok"


def run_one(kind: str, seed: int, work: Path) -> str:
    if kind in ("scalar", "matrix"):
        return generated(seed, kind, work)
    if kind == "ill-typed":
        return ill_typed(seed, work)
    return example_mutation(seed, work)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=120.0, help="seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="write the summary to this Markdown file")
    p.add_argument("--replay", default=None, help="KIND:SEED of one case to rerun with its traceback")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="coopdsl-fuzz-"))
    if args.replay:
        global VERBOSE
        VERBOSE = True
        kind, seed = args.replay.rsplit(":", 1)
        print(kind, seed, run_one(kind, int(seed), work), "; files in", work)
        return 0
    counts: dict[str, Counter] = {k: Counter() for k in KINDS}
    failures: list[str] = []
    master = random.Random(args.seed)
    start = time.monotonic()
    with np.errstate(all="ignore"):
        while time.monotonic() - start < args.budget:
            kind = master.choice(KINDS)
            seed = master.randrange(2**31)
            try:
                outcome = run_one(kind, seed, work)
            except Exception:  # noqa: BLE001 - a crash of the harness itself
                outcome = "internal error"
                traceback.print_exc()
            counts[kind][outcome] += 1
            if outcome in ("internal error", "spirv-val rejected", "mismatch", "missed type error", "unexpected error"):
                failures.append(f"{outcome}: --replay {kind}:{seed}")
                print(failures[-1], flush=True)
    elapsed = time.monotonic() - start
    total = Counter()
    for c in counts.values():
        total.update(c)
    print(f"{sum(total.values())} cases in {elapsed:.0f} s: " + ", ".join(f"{k} {total[k]}" for k in OUTCOMES))
    if args.out:
        write_summary(Path(args.out), args, counts, total, failures, elapsed)
    return 1 if failures else 0


def write_summary(path: Path, args, counts, total, failures, elapsed) -> None:
    """Replace the page's "## Fuzz run" section with this run's summary; the text above it stays as it is
    (a new page gets this script's introduction)."""
    lines = _intro(path) + _section(args, counts, total, failures, elapsed)
    path.write_text("\n".join(lines).rstrip() + "\n")


def _intro(path: Path) -> list[str]:
    text = path.read_text() if path.exists() else ""
    if "\n## Fuzz run" in text:
        return text[:text.index("\n## Fuzz run")].rstrip().split("\n") + [""]
    return ["# Robustness: differential testing and fuzzing", "",
             "The compiler and the CPU interpreter are tested against each other and against numpy:", "",
             "- `tests/interp/test_differential.py` (default test run, Hypothesis): random well-typed kernels "
             "from `tests/interp/kernelgen.py` compile to modules spirv-val accepts and the interpreter equals "
             "a plain numpy model of each program; ill-typed variants raise a CompileError at the mutated line.",
             "- `tests/interp/test_vs_lavapipe.py` (default test run, when a Vulkan device is present): the "
             "interpreter and lavapipe agree on control flow, subgroup operations, arithmetic, shared memory, "
             "atomics and device addresses.",
             "- `tests/gpu/test_interp_vs_gpu.py` (`-m gpu`): the interpreter and the GPU agree on every example "
             "case, and a seeded sample of generated kernels matches its numpy model on the GPU.",
             "- `scripts/fuzz_interp.py`: the fixed-budget fuzz run below.", ""]


def _section(args, counts, total, failures, elapsed) -> list[str]:
    lines = [f"## Fuzz run ({datetime.date.today()})", "",
             f"Command: `python scripts/fuzz_interp.py --budget {args.budget:g} --seed {args.seed} --out "
             f"docs/robustness.md` on {platform.node()} (Python {platform.python_version()}, numpy {np.__version__}); "
             f"{elapsed:.0f} s.", "",
             "| case kind | tried | " + " | ".join(OUTCOMES) + " |",
             "|---|---|" + "---|" * len(OUTCOMES)]
    for kind in KINDS:
        c = counts[kind]
        lines.append(f"| {kind} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in OUTCOMES) + " |")
    lines.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[o]) for o in OUTCOMES) + " |")
    lines += ["", "Outcomes: *ok* (generated kernels: compiled, validated and equal to the model; mutations: ran), "
              "*located error* (a CompileError or InterpreterError pointing into the kernel's file: expected for "
              "mutations, required for ill-typed variants), *argument error* (the mutated kernel no longer takes "
              "the example's arguments), and the failures, which must stay at 0: *internal error* (any other "
              "exception, or an error located outside the user's file), *spirv-val rejected*, *mismatch* "
              "(interpreter != numpy model), *missed type error* (an ill-typed variant compiled), *unexpected "
              "error* (a generated well-typed kernel raised a located error).", ""]
    lines += ["Failures: none." if not failures else "Failures (rerun one with `--replay KIND:SEED`):", ""]
    lines += [f"- {f}" for f in failures[:50]]
    return lines


if __name__ == "__main__":
    sys.exit(main())
