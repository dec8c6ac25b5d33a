"""``@coopdsl.func``: helper (device) functions called from kernels."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NoReturn

from .._records import record


class DeviceFunction:
    """A Python function compiled, per argument signature, to a SPIR-V function when a kernel calls it."""

    def __init__(self, fn: Callable[..., Any]):
        if not inspect.isfunction(fn):   # (a builtin has no source to compile; a bound method's self would be lost)
            from ..errors import DeclarationError, caller_loc

            what = (f"a method bound to {type(fn.__self__).__name__} (decorate the function itself)"
                    if inspect.ismethod(fn) else f"class {fn.__name__}" if isinstance(fn, type)
                    else f"{type(fn).__name__} {fn!r}")
            raise DeclarationError(f"@coopdsl.func decorates a function (def name(params): ...), got {what}",
                                   caller_loc("func"))
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"{self.fn.__name__} is a coopdsl device function: call it from a @coopdsl.kernel")

    def __repr__(self) -> str:
        return f"<coopdsl.func {self.fn.__name__}>"


def func(fn: Callable[..., Any]) -> DeviceFunction:
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


@record(frozen=True)
class Partial:
    """A device function with some parameters bound at compile time (``cd.partial``, a builtin of
    :mod:`.callbacks`; the class is here so that the front end knows it without loading that family)."""

    func: DeviceFunction
    bound: tuple[tuple[str, Any], ...]

    def __repr__(self) -> str:
        names = ", ".join(f"{n}=..." for n, _ in self.bound)
        return f"cd.partial({self.func.fn.__name__}, {names})"
