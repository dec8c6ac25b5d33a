"""Record the SPIR-V hash of every module the test suite and the examples compile.

A refactor that must not change output proves itself with this script:

    python scripts/spirv_hashes.py before.txt
    ... refactor ...
    python scripts/spirv_hashes.py after.txt && diff before.txt after.txt

Each line is ``test-id | kernel | target env | sha256``; modules a test compiles
several times (or that fail to compile) are listed in order of compilation.
"""

from __future__ import annotations

import hashlib
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


class _Recorder:
    def __init__(self) -> None:
        self.current = "examples"
        self.lines: list[str] = []

    def pytest_sessionstart(self, session) -> None:
        import coopdsl  # noqa: F401

        kmod = sys.modules["coopdsl.kernel"]

        original = kmod._compile

        def recording(k, env, spec):
            try:
                module, binary = original(k, env, spec)
            except Exception as e:  # noqa: BLE001 - errors are part of the record
                self.lines.append(f"{self.current} | {k.name} | {env} | error {type(e).__name__}")
                raise
            self.lines.append(f"{self.current} | {k.name} | {env} | {hashlib.sha256(binary).hexdigest()}")
            return module, binary

        kmod._compile = recording

    def pytest_runtest_setup(self, item) -> None:
        self.current = item.nodeid


def main() -> int:
    rec = _Recorder()
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-x", str(ROOT / "tests"), "-m", "not gpu and not vulkan"],
                       plugins=[rec])
    rec.current = "examples"
    import coopdsl

    for p in sorted((ROOT / "examples").glob("*.py")):
        ns = runpy.run_path(str(p))
        for _name, k in sorted(ns.items()):
            if isinstance(k, coopdsl.Kernel):
                rec.current = f"examples/{p.name}"
                k.compile()
    Path(sys.argv[1] if len(sys.argv) > 1 else "spirv-hashes.txt").write_text("\n".join(rec.lines) + "\n")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
