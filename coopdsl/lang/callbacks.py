"""Callbacks: device functions used as instruction operands, and what they may close over.

SPV_NV_cooperative_matrix2 instructions take a function (``OpFunction``) as
an operand and call it themselves: the combine function of a reduction, the
function of a per-element operation, the decoder of a tensor load.  In
coopdsl a callback is a ``@cd.func``:

* its leading parameters receive what the instruction passes (for a
  reduction two elements, for ``m.map`` the row, the column, the element and
  one value per extra operand), with the types the instruction gives them;
* every further parameter is bound when the callback is compiled, with
  ``cd.partial(fn, name=value, ...)`` or by its Python default: buffers,
  shared arrays, push constants, specialization constants, numbers and types
  (as llama.cpp's callbacks read ``data_d``, ``row_ids`` or ``p.M``).  Runtime
  values of the kernel cannot be bound: a per-element function receives them
  as extra operands.

The checks SPIR-V validators do not make are made here, at the user's line:
the callback's parameter count and return type, and that neither it nor any
function it calls contains a *tangled* instruction (cooperative-matrix
operations, control barriers, subgroup operations).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, TypeMismatchError, UniformityError
from ..ir import types as T
from ..ir.core import FuncRef, Function, Op
from ..ir.ops import OPS
from .functions import DeviceFunction, Partial
from .registry import builtin

if TYPE_CHECKING:
    from .context import Builder


def _bind_partial(cg: Builder, b: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``partial``'s binding: one positional argument, the function; every keyword argument is bound."""
    if len(args) != 1:
        raise ArgumentError(f"partial(fn, **bound) takes the function and keyword arguments only, got {len(args)} "
                            f"positional arguments", cg.em.loc)
    return {"fn": args[0], "bound": dict(kwargs)}


@builtin("(fn, **bound)", binder=_bind_partial)
def partial(cg: Builder, fn: Any, bound: dict[str, Any] | None = None) -> Partial:
    """``fn`` (a ``@cd.func``) with the parameters named in ``bound`` fixed, for use as a callback.

    ``cd.partial(store_row, out=c, ld=N)`` binds the buffer ``c`` and the push
    constant ``N``: the callback reads them itself (like ``functools.partial``,
    by keyword only).  Bound values are compile-time values, buffers, shared
    arrays, push constants and specialization constants.  Called directly,
    ``cd.partial(f, x=1)(a)`` is ``f(a, x=1)``.
    """
    kwargs = bound or {}
    if isinstance(fn, Partial):
        clash = sorted(set(kwargs) & {n for n, _ in fn.bound})
        if clash:
            raise ArgumentError(f"partial: '{clash[0]}' is already bound", cg.em.loc)
        return Partial(fn.func, fn.bound + tuple(kwargs.items()))
    if not isinstance(fn, DeviceFunction):
        raise TypeMismatchError(f"partial needs a @cd.func device function, got {cg.describe(fn)}", cg.em.loc)
    names = list(inspect.signature(fn.fn).parameters)
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        raise ArgumentError(f"partial: {fn.fn.__name__} has no parameter '{unknown[0]}' (it has: {', '.join(names)})",
                            cg.em.loc)
    return Partial(fn, tuple(kwargs.items()))


def callback_operand(cg: Builder, fn: Any, what: str, passes: Sequence[tuple[str, T.Type]], ret: T.Type) -> FuncRef:
    """``fn`` (a ``@cd.func`` or a :class:`Partial`) compiled as the callback ``what`` describes.

    ``passes`` names and types the arguments the instruction passes, in order;
    the function must return ``ret``.  Located errors for a function that does
    not fit, or that contains a tangled instruction.
    """
    dfn, bound = (fn.func, dict(fn.bound)) if isinstance(fn, Partial) else (fn, {})
    if not isinstance(dfn, DeviceFunction):
        raise TypeMismatchError(f"{what} must be a @cd.func device function (or cd.partial(...) of one), "
                                f"got {cg.describe(fn)}", cg.em.loc)
    _check_parameters(cg, dfn, bound, what, passes)
    ref = cg.function_operand(dfn, [t for _, t in passes], bound)
    if ref.func.type.ret != ret:
        got = "nothing" if ref.func.type.ret == T.void else ref.func.type.ret
        raise TypeMismatchError(f"{what} must return {ret}, but {dfn.fn.__name__} returns {got} (convert the "
                                f"result, e.g. return {ret}(x))", cg.em.loc)
    check_untangled(ref.func, f"{what} {dfn.fn.__name__}")
    return ref


def parameter_annotation(cg: Builder, fn: Any, index: int) -> Any:
    """The annotation of the callback ``fn``'s parameter ``index`` (evaluated when it is a string, as under
    ``from __future__ import annotations``), or None: none, or ``fn`` is not a device function (which
    :func:`callback_operand` reports)."""
    dfn = fn.func if isinstance(fn, Partial) else fn
    if not isinstance(dfn, DeviceFunction):
        return None
    params = list(inspect.signature(dfn.fn).parameters.values())
    if index >= len(params) or params[index].annotation is inspect.Parameter.empty:
        return None
    ann = params[index].annotation
    if isinstance(ann, str):
        try:
            ann = eval(ann, dfn.fn.__globals__, {})  # noqa: S307 - the user's own annotation
        except Exception as e:
            raise TypeMismatchError(f"{dfn.fn.__name__}: cannot evaluate the annotation '{ann}' of parameter "
                                    f"'{params[index].name}' ({type(e).__name__}: {e})", cg.em.loc) from None
    return ann


def _check_parameters(cg: Builder, dfn: DeviceFunction, bound: dict[str, Any], what: str,
                      passes: Sequence[tuple[str, T.Type]]) -> None:
    """The callback's own parameters: one per passed argument first, then bound ones or defaults."""
    params = list(inspect.signature(dfn.fn).parameters.values())
    name = dfn.fn.__name__
    wanted = ", ".join(f"{n}: {t}" for n, t in passes)
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise ArgumentError(f"{what} {name} must take plain positional parameters ({wanted}, then bound ones)",
                            cg.em.loc)
    if len(params) < len(passes):
        raise ArgumentError(f"{what} {name} takes {len(params)} parameter{'s' * (len(params) != 1)}, but it is "
                            f"called with {len(passes)}: ({wanted})", cg.em.loc)
    for p in params[:len(passes)]:
        if p.name in bound:
            raise ArgumentError(f"{what} {name}: '{p.name}' cannot be bound, the instruction passes it "
                                f"({wanted})", cg.em.loc)
    for p in params[len(passes):]:
        if p.name not in bound and p.default is inspect.Parameter.empty:
            raise ArgumentError(
                f"{what} {name} is called with ({wanted}); its parameter '{p.name}' gets no value: bind it with "
                f"cd.partial({name}, {p.name}=...), give it a default, or remove it", cg.em.loc)


REPEAT_UNSAFE = ("atomic_rmw", "atomic_cmpxchg")  # ops whose effect differs when a callback runs twice


def tangled(op: Op) -> str | None:
    """What makes ``op`` tangled (all invocations of a scope must run it together), or None."""
    kind = OPS[op.kind].tangled
    if kind == "execution":
        return "a control barrier"
    if kind == "subgroup":
        return "a subgroup operation"
    types = [op.type, *(v.type for v in op.operands), *op.attrs.values()]
    if kind == "matrix" or any(isinstance(t, T.CoopMatType) for t in types):
        return "a cooperative-matrix operation"
    return None


def check_untangled(func: Function, what: str) -> None:
    """A located UniformityError at the first tangled instruction of ``func`` or a function it calls."""
    _walk(func, what, (), set())


def _walk(func: Function, what: str, calls: tuple[Op, ...], seen: set[int]) -> None:
    if id(func) in seen:
        return
    seen.add(id(func))
    for op in func.ops():
        reason = tangled(op)
        if reason is not None:
            via = "".join(f", through the call of {c.attrs['func'].name} at line {c.loc.line}" for c in calls)
            raise UniformityError(
                f"{reason} cannot run inside {what}{via}: an instruction calls it per element, not with every "
                f"invocation of the scope together, so SPV_NV_cooperative_matrix2 forbids tangled instructions "
                f"(cooperative-matrix operations, control barriers, subgroup operations) in callbacks and the "
                f"functions they call", op.loc)
        if op.kind in REPEAT_UNSAFE:
            via = "".join(f", through the call of {c.attrs['func'].name} at line {c.loc.line}" for c in calls)
            raise ArgumentError(
                f"an atomic read-modify-write cannot run inside {what}{via}: SPV_NV_cooperative_matrix2 calls it "
                f"per element, unordered, and \"calls may occur more than once\", so its effect could repeat "
                f"(plain stores, which repeat harmlessly, are allowed)", op.loc)
        if op.kind == "call":
            _walk(op.attrs["func"], what, calls + (op,), seen)

