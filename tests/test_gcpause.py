"""The cyclic garbage collector is off while coopdsl imports and compiles, and as it was afterwards."""

import gc
import subprocess
import sys
from pathlib import Path

import pytest

import coopdsl as cd
from coopdsl._gcpause import paused

from .conftest import child_env

ROOT = Path(__file__).resolve().parents[1]


def test_paused_restores_the_collector_even_on_errors():
    assert gc.isenabled()
    with pytest.raises(ValueError), paused():
        assert not gc.isenabled()
        with paused():  # nested: the inner pause leaves it to the outer one
            assert not gc.isenabled()
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off():
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_compiling_pauses_the_collector_and_turns_it_back_on(monkeypatch):
    seen = []
    kmod = sys.modules["coopdsl.kernel"]
    real = kmod._compile
    monkeypatch.setattr(kmod, "_compile", lambda *a: (seen.append(gc.isenabled()), real(*a))[1])

    @cd.kernel
    def k(x: cd.Buffer[cd.f32]):
        x[0] = 1.0

    @cd.kernel
    def broken(x: cd.Buffer[cd.f32]):
        x[0] = nope  # noqa: F821

    k.compile()
    with pytest.raises(cd.NameResolutionError):
        broken.compile()
    assert seen == [False, False] and gc.isenabled()


def test_importing_coopdsl_leaves_the_collector_on():
    out = subprocess.run([sys.executable, "-c", "import gc, coopdsl; print(gc.isenabled())"], capture_output=True,
                         text=True, check=True, cwd=ROOT, env=child_env())
    assert out.stdout.strip() == "True"
