"""The same kernel compiles to byte-identical SPIR-V, in-process and across processes."""

import subprocess
import sys
from pathlib import Path

from .conftest import child_env

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = f"""
import runpy, sys, hashlib
sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
for p in sorted(Path({str(ROOT / 'examples')!r}).glob('*.py')):
    ns = runpy.run_path(str(p))
    import coopdsl
    for name, k in sorted(ns.items()):
        if isinstance(k, coopdsl.Kernel):
            print(p.name, name, hashlib.sha256(k.compile()).hexdigest())
"""


def _run(seed: str) -> str:
    env = child_env(PYTHONHASHSEED=seed)
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_byte_identical_across_processes_and_hash_seeds():
    first = _run("1")
    assert first.strip()
    assert first == _run("2") == _run("12345")


def test_recompiling_gives_the_same_words():
    import runpy

    ns = runpy.run_path(str(ROOT / "examples" / "gemm_khr.py"))
    k = ns["gemm"]
    a = k.compile()
    k._cache.clear()
    assert k.compile() == a
