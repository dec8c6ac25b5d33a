"""Function calls: the callee runs for the caller's active invocations."""

from __future__ import annotations

from .registry import semantics


@semantics("call")
def _call(m, op, args):
    from ..control import run_function

    return run_function(m, op.attrs["func"], args, m.mask)
