"""Cooperative-matrix dimensions as reflection data, and their values for given spec constants.

A dimension in the reflection (``docs/devices.md``) is an ``int``, a
specialization constant ``{"spec_id", "name", "value"}`` or an expression of
them ``{"op", "args", "expr", "value"}`` whose ``op`` is an IR operator name
(``mul``, ``add``, ``div`` ...).  ``value`` is what the dimension comes to with
the defaults the module was compiled with; :func:`resolve` recomputes it for
the specialization values a launch passes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..errors import CoopDSLError

Dim = int | dict[str, Any]


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _rem(a: int, b: int) -> int:
    return a - _div(a, b) * b


OPS: dict[str, Callable[..., Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": _div, "rem": _rem,
    "neg": operator.neg, "not": operator.invert, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "shl": operator.lshift, "shr": operator.rshift,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
    "land": lambda a, b: bool(a) and bool(b), "lor": lambda a, b: bool(a) or bool(b),
    "select": lambda c, a, b: a if c else b,
}


class DimError(CoopDSLError, ValueError):
    """A reflection dimension that cannot be evaluated (unknown operator, division by zero)."""


def resolve(dim: Dim, spec: Mapping[str, Any] | None = None) -> int:
    """The value of ``dim`` with the specialization constants in ``spec`` (by name) overriding defaults."""
    if not isinstance(dim, dict):
        return dim
    if "spec_id" in dim:
        return cast(int, (spec or {}).get(dim["name"], dim["value"]))
    fn = OPS.get(dim["op"])
    if fn is None:
        raise DimError(f"cannot evaluate the operator '{dim['op']}' in dimension {dim.get('expr', dim)}")
    try:
        return cast(int, fn(*(resolve(a, spec) for a in dim["args"])))
    except ZeroDivisionError:
        raise DimError(f"dimension {dim.get('expr')} divides by zero") from None


def text(dim: Dim) -> str:
    """How ``dim`` reads in kernel code: ``16``, ``TM``, ``(TM * 2)``."""
    if not isinstance(dim, dict):
        return str(dim)
    return cast(str, dim["name"] if "spec_id" in dim else dim["expr"])


SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "//", "rem": "%", "and": "&", "or": "|", "xor": "^",
           "shl": "<<", "shr": ">>", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
           "land": "and", "lor": "or"}


def expression(op: str, args: list[Dim]) -> str:
    """Kernel-code text of ``op`` applied to ``args``: ``(TM * 2)``, ``-TM``, ``select(c, a, b)``."""
    parts = [text(a) for a in args]
    if op in SYMBOLS and len(parts) == 2:
        return f"({parts[0]} {SYMBOLS[op]} {parts[1]})"
    if op in ("neg", "not") and len(parts) == 1:
        return f"{'-' if op == 'neg' else '~'}{parts[0]}"
    return f"{op}({', '.join(parts)})"


FAMILY = {"A": "MatA", "B": "MatB", "Acc": "Acc"}


def matrix_text(component: str, rows: Dim, cols: Dim, use: Any, scope: Any) -> str:
    """A matrix type as kernel code writes it: ``MatA[f16, TM, 16]``, ``Acc[f32, 64, 64, Workgroup]``."""
    dims = f"{component}, {text(rows)}, {text(cols)}"
    if isinstance(use, str) and use in FAMILY:
        head = FAMILY[use]
    else:
        head, dims = "CoopMat", f"{dims}, {text(use)}"
    return f"{head}[{dims}{'' if scope == 'Subgroup' else ', ' + text(scope)}]"
