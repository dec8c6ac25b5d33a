"""Device functions as instruction operands (callbacks such as a tensor load's decode function).

A callback is a ``@cd.func`` compiled from the parameter types the
instruction gives it, without a call site, and referenced by id
(:class:`~coopdsl.ir.core.FuncRef`).  Its signature is checked before it is
compiled (spirv-val 2025.5 aborts on some wrong ones), and its body, with every
function it calls, may hold no *tangled* instruction: the implementation runs
callbacks per element, in no uniform control flow (SPV_NV_cooperative_matrix2).
"""

from __future__ import annotations

import inspect

from ..errors import ArgumentError, TypeMismatchError, UniformityError
from ..ir import types as T
from ..ir.core import FuncRef, Function, Op
from ..ir.ops import OPS
from .functions import DeviceFunction

TANGLED_WHAT = {"matrix": "a cooperative-matrix operation", "subgroup": "a subgroup operation",
                "execution": "a control barrier"}


def callback(cg, fn, param_types: list[T.Type], role: str, shape: str) -> FuncRef:
    """``fn`` compiled as the ``role`` of an instruction, taking ``param_types`` (written ``shape`` in messages)."""
    if not isinstance(fn, DeviceFunction):
        raise TypeMismatchError(f"the {role} must be a @cd.func device function {shape}, got {cg.describe(fn)}",
                                cg.em.loc)
    params = list(inspect.signature(fn.fn).parameters.values())
    plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if not plain or len(params) != len(param_types):
        raise ArgumentError(f"the {role} '{fn.fn.__name__}' must take exactly {len(param_types)} parameters "
                            f"{shape}; it takes ({', '.join(map(str, params))})", cg.em.loc)
    func = cg.function_operand(fn, {p.name: t for p, t in zip(params, param_types)})
    check_untangled(func, role)
    return FuncRef(func)


def check_untangled(func: Function, role: str, _seen: set | None = None) -> None:
    """A located UniformityError at the first tangled instruction ``func`` (or a function it calls) runs."""
    seen = set() if _seen is None else _seen
    if id(func) in seen:
        return
    seen.add(id(func))
    for op in func.ops():
        if op.kind == "call":
            check_untangled(op.attrs["func"], role, seen)
            continue
        what = _tangled(op)
        if what is not None:
            raise UniformityError(f"{what} cannot run inside {func.name}(), which is used as a {role}: the "
                                  f"implementation calls it per element, so it may contain no tangled instruction "
                                  f"(cooperative-matrix operations, barriers, subgroup operations; "
                                  f"SPV_NV_cooperative_matrix2)", op.loc)


def _tangled(op: Op) -> str | None:
    kind = OPS[op.kind].tangled
    if kind is not None:
        return TANGLED_WHAT.get(kind, "a tangled instruction")
    if any(isinstance(t, T.CoopMatType) for t in [op.type, *(v.type for v in op.operands)]):
        return "a cooperative-matrix value"
    return None
