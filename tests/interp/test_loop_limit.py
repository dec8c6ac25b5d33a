"""The interpreter never hangs on a loop that does not end (hardening class 3): after
COOPDSL_INTERP_MAX_ITERATIONS back edges in one call it reports the loop, at its line."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, i32
from coopdsl.interp.errors import InterpreterError

from .conftest import line_of


@cd.kernel(workgroup_size=(32, 1, 1))
def stepping(o: cd.Buffer[f32], n: i32, s: i32):
    j = 0
    while j < n:  # LOOP
        j += s
    o[cd.global_invocation_id.x] = f32(j)



def test_a_loop_that_never_ends_is_reported_at_its_line(monkeypatch):
    monkeypatch.setenv("COOPDSL_INTERP_MAX_ITERATIONS", "5000")
    with pytest.raises(InterpreterError) as e:
        stepping.launch((1, 1, 1), np.zeros(32, np.float32), 10, 0, device="cpu")
    assert "a loop ran 5,000 iterations without ending" in str(e.value)
    assert e.value.loc.line in (line_of("# LOOP"), line_of("# LOOP") + 1)


def test_a_loop_that_ends_runs_as_before(monkeypatch):
    monkeypatch.setenv("COOPDSL_INTERP_MAX_ITERATIONS", "5000")
    out = np.zeros(32, np.float32)
    stepping.launch((1, 1, 1), out, 10, 3, device="cpu")
    assert (out == 12).all()
