"""Wrong launch arguments (issue 24: no user mistake reaches a foreign exception): every argument of a kernel
with buffers, push constants, a push struct and a specialization constant, and the grid, given each of ~20 wrong
things, on the interpreter: the launch runs (numpy arrays of another shape are flattened, numbers that fit are
taken) or raises one of coopdsl's own errors (LaunchArgumentError and the like), never a TypeError or ValueError
from inside (an array or a list given to a Spec made Kernel._check_spec fail on `!=` and hashing)."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32


@cd.struct
class S:
    a: f32
    n: u32


@cd.kernel(workgroup_size=(32, 1, 1))
def k(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32, s: S, W: cd.Spec[u32] = 4):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + s.a + f32(W)


GOOD = {"x": np.ones(32, np.float32), "y": np.zeros(32, np.float32), "n": 32, "alpha": 2.0, "s": {"a": 1.0, "n": 3},
        "W": 4}
WRONG = {"none": None, "str": "abc", "list": [1, 2], "tuple": (1, 2), "f64 array": np.ones(32),
         "i32 array": np.ones(32, np.int32), "2-D array": np.ones((4, 8), np.float32),
         "empty array": np.zeros(0, np.float32), "huge": 2**40, "negative": -1, "float": 1.5, "bool": True,
         "dict": {"a": 1}, "numpy scalar": np.float32(1), "nan": float("nan"), "object": object(), "bytes": b"ab",
         "complex": 1j, "inf": float("inf")}


def _own(e: BaseException) -> bool:
    return type(e).__module__.startswith("coopdsl")


@pytest.mark.parametrize("arg", list(GOOD))
def test_a_wrong_argument_is_one_of_coopdsls_errors(arg):
    foreign = []
    for name, wrong in WRONG.items():
        try:
            k.launch((1,), device="cpu", **{**GOOD, arg: wrong})
        except Exception as e:  # noqa: BLE001 - what kind it is is the test
            if not _own(e):
                foreign.append(f"{arg}={name}: {type(e).__name__}: {e}")
    assert not foreign, "\n".join(foreign)


@pytest.mark.parametrize("grid", [None, (), (0,), (-1,), (1.5,), "a", (2**40,), (1, 2, 3, 4)])
def test_a_wrong_grid_is_one_of_coopdsls_errors(grid):
    with pytest.raises(Exception) as info:  # noqa: PT011 - its kind is checked below
        k.launch(grid, device="cpu", **GOOD)
    assert _own(info.value), f"{type(info.value).__name__}: {info.value}"
