"""The verifier runs on the front end's output and after every pass that may have changed the module."""

from __future__ import annotations

import pytest

from coopdsl import passes
from coopdsl.errors import InternalCompilerError
from coopdsl.ir import types as T

from ..ir.helpers import kernel_module


def _module_with_an_unused_add():
    m, em = kernel_module()
    em.op("add", T.f32, [em.const(T.f32, 1.0), em.const(T.f32, 2.0)])  # nobody uses it: dce removes it
    em.terminate("return")
    return m


@pytest.fixture
def verified(monkeypatch) -> list[str]:
    """The pipeline step after which each verification ran ("front end" for the first)."""
    seen: list[str] = []
    step = ["front end"]
    monkeypatch.setattr(passes, "verify", lambda m: seen.append(step[0]))
    monkeypatch.setattr(passes, "PIPELINE", [(name, _tracking(step, name, run)) for name, run in passes.PIPELINE])
    return seen


def _tracking(step, name, run):
    def tracked(m):
        step[0] = name
        return run(m)
    return tracked


def test_dce_removing_ops_is_verified_and_the_analysis_is_not(verified):
    passes.run_pipeline(_module_with_an_unused_add())
    assert verified == ["front end", "dce"]


def test_dce_removing_nothing_is_not_verified_again(verified):
    m, em = kernel_module()
    em.terminate("return")
    passes.run_pipeline(m)
    assert verified == ["front end"]


def test_a_pass_that_does_not_say_it_changed_nothing_is_verified(monkeypatch):
    def breaks_the_module(m):
        m.functions[0].blocks[0].terminator = None  # returns None: maybe changed

    monkeypatch.setattr(passes, "PIPELINE", passes.PIPELINE + [("breaker", breaks_the_module)])
    with pytest.raises(InternalCompilerError, match="has no terminator"):
        passes.run_pipeline(_module_with_an_unused_add())
