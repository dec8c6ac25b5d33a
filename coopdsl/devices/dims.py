"""Cooperative-matrix dimensions as reflection data, and their values for given spec constants.

A dimension in the reflection (``docs/devices.md``) is an ``int``, a
specialization constant ``{"spec_id", "name", "value"}`` or an expression of
them ``{"op", "args", "expr", "value"}`` whose ``op`` is an IR operator name
(``mul``, ``add``, ``div`` ...).  ``value`` is what the dimension comes to with
the defaults the module was compiled with; :func:`resolve` recomputes it for
the specialization values a launch passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from .._numbers import int_op
from ..errors import CoopDSLError

Dim = int | dict[str, Any]


# the operators a reflection dimension may hold (each evaluated by coopdsl/_numbers.py's ``int_op``, in the
# constants' integer type, as the device computes it)
OPS = ("add", "sub", "mul", "div", "rem", "neg", "not", "and", "or", "xor", "shl", "shr", "lt", "le", "gt", "ge",
       "eq", "ne", "land", "lor", "select")


class DimError(CoopDSLError, ValueError):
    """A reflection dimension that cannot be evaluated (unknown operator, division by zero)."""


def resolve(dim: Dim, spec: Mapping[str, Any] | None = None) -> int:
    """The value of ``dim`` with the specialization constants in ``spec`` (by name) overriding defaults, computed
    in the constants' integer type (a spec constant's ``type``), as the device computes it: ``K * 2**31 + 1`` is 1
    at K = 2 in u32 (reflection written without a type: Python's ints); a ``"host": true`` node (a shared array's
    byte count, a sum of them) on Python's ints, its operands each as they come."""
    if not isinstance(dim, dict):
        return dim
    if "spec_id" in dim:
        return cast(int, (spec or {}).get(dim["name"], dim["value"]))
    if dim["op"] not in OPS:
        raise DimError(f"cannot evaluate the operator '{dim['op']}' in dimension {dim.get('expr', dim)}")
    value = int_op(dim["op"], [resolve(a, spec) for a in dim["args"]], None if dim.get("host") else _type(dim))
    if value is None:
        raise DimError(f"dimension {dim.get('expr')} divides by zero" if dim["op"] in ("div", "rem") else
                       f"dimension {dim.get('expr')} shifts by a negative count or by its width or more")
    return value


def _type(dim: Dim) -> str | None:
    """The integer type of a dimension expression's specialization constants."""
    if not isinstance(dim, dict):
        return None
    if "spec_id" in dim:
        return cast("str | None", dim.get("type"))
    return next((t for t in (_type(a) for a in dim["args"]) if t is not None), None)


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
