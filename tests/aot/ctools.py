"""Compile and run small C/C++ programs against generated headers (skips when no compiler is installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

STRICT = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
LANGUAGES = {"c99": ("gcc", ["-std=c99", "-x", "c"]), "c++17": ("g++", ["-std=c++17", "-x", "c++"])}


def compiler(lang: str) -> tuple[str, list[str]]:
    """(compiler path, language flags) for ``lang`` ('c99' or 'c++17'); skips the test when it is missing."""
    name, flags = LANGUAGES[lang]
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (needed to compile generated headers as {lang})")
    return path, flags


def syntax_check(header: Path, lang: str) -> None:
    """The header alone compiles as ``lang`` with strict warnings as errors."""
    cc, flags = compiler(lang)
    r = subprocess.run([cc, *flags, *STRICT, "-fsyntax-only", str(header)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def build_and_run(source: str, include: Path, tmp: Path, lang: str, *args: str) -> str:
    """Compile ``source`` (with ``-I include``) as ``lang``, run it with ``args``; returns its stdout."""
    cc, flags = compiler(lang)
    src, exe = tmp / "prog.c", tmp / f"prog_{lang.replace('+', 'p')}"
    src.write_text(source)
    r = subprocess.run([cc, *flags, *STRICT, "-I", str(include), str(src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout
