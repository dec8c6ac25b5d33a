"""Loop builtins: ``static_range`` (unrolled at compile time) and ``cd.range`` (with loop hints).

Both are only valid as the iterable of a ``for`` loop, which the code
generator handles; called anywhere else they raise a located error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import UnsupportedSyntaxError
from .registry import builtin

if TYPE_CHECKING:
    from .context import Builder


@builtin("(start, stop=None, step=None)", typed=True)
def static_range(cg: Builder, start: Any, stop: Any = None, step: Any = None) -> NoReturn:
    """Like ``range`` with compile-time ints, but the loop is unrolled at compile time.

    The loop variable is a Python int in each copy of the body, so it can
    index compile-time tuples/lists and choose tiles: ``for i in static_range(4):``.
    """
    raise UnsupportedSyntaxError("static_range(...) can only be iterated by a for loop", cg.em.loc)


@builtin("(start, stop=None, step=None, *, unroll=None)", typed=True)
def range_(cg: Builder, start: Any, stop: Any = None, step: Any = None, unroll: Any = None) -> NoReturn:
    """A runtime loop like ``range`` with a loop-control hint for the driver's compiler.

    ``unroll=True`` -> OpLoopMerge Unroll, ``unroll=False`` -> DontUnroll,
    ``unroll=n`` (int) -> PartialCount n (SPIR-V 1.4+).  Useful for loops whose
    trip count is a specialization constant, known only at pipeline creation.
    Only valid as the iterable of a ``for`` loop.
    """
    raise UnsupportedSyntaxError("cd.range(...) can only be iterated by a for loop", cg.em.loc)
