"""``@coopdsl.func``: helper (device) functions called from kernels."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NoReturn


class DeviceFunction:
    """A Python function compiled, per argument signature, to a SPIR-V function when a kernel calls it."""

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"{self.fn.__name__} is a coopdsl device function: call it from a @coopdsl.kernel")

    def __repr__(self) -> str:
        return f"<coopdsl.func {self.fn.__name__}>"


def func(fn: Callable) -> DeviceFunction:
    """Decorate a helper that kernels (and other helpers) call.

    Parameters take runtime values (scalars, vectors, cooperative matrices:
    passed as OpFunctionParameters) or compile-time values (numbers, types,
    buffers, shared arrays: each distinct value gives its own specialisation).
    ``return`` values must all have one type.  Recursion is an error.

    Usage::

        @coopdsl.func
        def scale(m, s):
            return m * s
    """
    return DeviceFunction(fn)
