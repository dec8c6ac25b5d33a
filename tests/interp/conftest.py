"""Helpers for interpreter tests: run on the CPU, expect located interpreter errors."""

from __future__ import annotations

import inspect

import pytest

from coopdsl.interp import InterpreterError


def line_of(marker: str) -> int:
    """The line in the calling test file that ends with ``marker``."""
    frame = inspect.stack()[1]
    lines = open(frame.filename).read().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


def expect_interp_error(run, message: str, marker: str) -> InterpreterError:
    """Call ``run()`` expecting an InterpreterError containing ``message`` at the line ending with ``marker``."""
    frame = inspect.stack()[1]
    lines = open(frame.filename).read().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    with pytest.raises(InterpreterError) as info:
        run()
    err = info.value
    assert message in err.message, f"{message!r} not in {err.message!r}"
    assert (err.loc.file, err.loc.line) == (frame.filename, hits[0]), f"error at {err.loc}, expected line {hits[0]}"
    text = str(err)
    assert text.startswith(f"{frame.filename}:{hits[0]}:")
    assert text.splitlines()[-1].strip() == "^"
    return err
