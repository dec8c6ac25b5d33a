"""Regenerates the SPIR-V snapshots tests/golden/<example>.spvasm of the kernels in examples/*.py.

    python3 scripts/gen_golden.py                  # rewrite every snapshot
    python3 scripts/gen_golden.py gemm_khr ...     # rewrite only these examples' snapshots
    python3 scripts/gen_golden.py --check          # exit 1 naming the stale snapshots (rewrites nothing)

A snapshot is the spirv-dis text of each kernel the example defines (sorted by the name it is bound to),
compiled for the target environment the kernel declares and validated with spirv-val, each under a
one-line header naming the kernel. The text holds no path or date, so it is the same on every machine
with the pinned SPIRV-Tools. tests/spirv/test_golden.py compares every example with its snapshot; a
deliberate change to the generated SPIR-V is committed with the regenerated snapshots, whose diff shows
what changed.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"


def examples() -> list[Path]:
    """Every example module, in name order."""
    return sorted(EXAMPLES.glob("*.py"))


def snapshot_path(example: Path) -> Path:
    return GOLDEN / (example.stem + ".spvasm")


def render(example: Path) -> str:
    """The snapshot text of ``example``: each kernel's header line, then its validated disassembly."""
    import coopdsl
    from coopdsl.spirv import tools

    ns = runpy.run_path(str(example))
    seen: set[int] = set()
    parts = []
    for name, k in sorted(ns.items()):
        if not isinstance(k, coopdsl.Kernel) or id(k) in seen:
            continue
        seen.add(id(k))
        binary = k.compile()
        tools.validate(binary, k.target_env)
        parts.append(f"; coopdsl golden: examples/{example.name} kernel {name} (entry point {k.name}), "
                     f"target {k.target_env}\n" + tools.disassemble(binary))
    if not parts:
        raise ValueError(f"examples/{example.name} defines no kernel")
    return "\n".join(parts)


def _shown(p: Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def command(names: list[str] | None = None) -> str:
    """The command that regenerates the snapshots of the examples ``names`` (all when None)."""
    return "python3 scripts/gen_golden.py" + "".join(f" {n}" for n in names or [])


def main(argv: list[str]) -> int:
    check = "--check" in argv
    wanted = [a.removesuffix(".py") for a in argv if not a.startswith("-")]
    chosen = [p for p in examples() if not wanted or p.stem in wanted]
    unknown = sorted(set(wanted) - {p.stem for p in chosen})
    if unknown:
        print(f"no example named {', '.join(unknown)} in examples/", file=sys.stderr)
        return 2
    stale = []
    for p in chosen:
        text = render(p)
        out = snapshot_path(p)
        if out.exists() and out.read_text() == text:
            continue
        stale.append(p.stem)
        if not check:
            GOLDEN.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
            print(f"wrote {_shown(out)}")
    orphans = [] if wanted else sorted(set(GOLDEN.glob("*.spvasm")) - {snapshot_path(p) for p in chosen})
    for o in orphans:  # a snapshot whose example is gone
        stale.append(o.stem)
        if not check:
            o.unlink()
            print(f"removed {_shown(o)} (no such example)")
    if check and stale:
        print(f"stale SPIR-V snapshots: {', '.join(stale)}; regenerate with: {command(None if orphans else stale)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
