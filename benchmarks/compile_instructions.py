"""Instructions a repeated in-process compile executes (valgrind's callgrind), a figure the host's load does not move.

    python benchmarks/compile_instructions.py [examples/gemm_shared.py] [--repeat 10] [--tree DIR]

Runs Python under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``) twice on the example: loading it and
compiling its kernel once, then the same plus ``--repeat`` compiles of new ``Kernel`` objects for the same
function (as ``compile_bench.py``'s in-process figures do); prints the difference over ``--repeat``, in
millions of instructions.  ``--tree``: the checkout whose ``coopdsl`` is measured (default this one; e.g. a
``git worktree`` of an older commit, to compare).  Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = """
import runpy, sys
from coopdsl.kernel import Kernel
k = next(v for v in runpy.run_path(sys.argv[1]).values() if isinstance(v, Kernel))
k.compile()
for _ in range(int(sys.argv[2])):
    Kernel(k.fn, k.workgroup_size, k.target_env, k.consts).compile()
"""


def instructions(example: Path, repeat: int, tree: Path = ROOT) -> int:
    """Instructions ("I refs") of a callgrind run of DRIVER with ``repeat`` repeated compiles, importing the
    ``coopdsl`` of ``tree`` (its folder is the working directory, first on ``sys.path`` for ``python -c``)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                            sys.executable, "-c", DRIVER, str(example), str(repeat)],
                           env=env, cwd=tree, capture_output=True, text=True, check=True)
    m = re.search(r"refs:\s+([\d,]+)", r.stderr)
    if m is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{r.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("example", type=Path, nargs="?", default=ROOT / "examples" / "gemm_shared.py")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose coopdsl is measured")
    args = p.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("compile_instructions.py: cannot run: valgrind is not on PATH")
    example, tree = args.example.resolve(), args.tree.resolve()
    base, more = instructions(example, 0, tree), instructions(example, args.repeat, tree)
    print(f"{args.example.name}: {(more - base) / args.repeat / 1e6:.2f} M instructions per repeated compile")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
