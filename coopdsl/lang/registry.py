"""The builtin registry: each builtin kernels call is declared once, with its signature and doc.

A :class:`Builtin` is what ``coopdsl.muladd`` (or ``MatA[...].load``) *is*:
calling it from ordinary Python raises, and the front end dispatches calls in
kernels to its ``impl(cg, args, kwargs)`` (methods: ``impl(cg, receiver, args,
kwargs)``).  ``cg`` is the narrow :class:`~coopdsl.lang.context.Builder`
interface, never the code generator itself.  The signature string is parsed
once into the parameter list :func:`bind` matches arguments against.

Methods are looked up by the IR type of their receiver: :data:`TYPE_METHODS`
for methods of a type object (``Acc[f32, 16, 16].splat``) and
:data:`VALUE_METHODS` for methods of a runtime value (``acc.store``), each
keyed by (IR type class, name); subclasses inherit their bases' methods.

The three tables are :class:`~coopdsl._lazy.Registry` objects sharing :data:`LATER`: the builtin
families :mod:`coopdsl.lang` does not import up front (subgroup operations, atomics, tensor layouts,
SPV_NV_cooperative_matrix2, QCOM conversions, callbacks) load when a lookup misses or a table is
listed whole.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import field
from typing import NoReturn

from .._lazy import Registry
from .._records import record
from ..errors import ArgumentError
from ..ir import types as T


@record(frozen=True)
class Param:
    """One parameter of a builtin's signature."""

    name: str
    keyword_only: bool
    required: bool


@record(frozen=True)
class Builtin:
    """A kernel builtin: its name, implementation, documentation and signature."""

    name: str
    impl: Callable
    doc: str
    signature: str
    params: tuple[Param, ...] | None = field(default=None, compare=False)

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"coopdsl.{self.name} can only be called inside a @coopdsl.kernel function")

    def __repr__(self) -> str:
        return f"<coopdsl builtin {self.name}{self.signature}>"


LATER: list[str] = []  # builtin families imported on first need (named in coopdsl/lang/__init__.py)
BUILTINS: Registry[str, Builtin] = Registry(LATER)
TYPE_METHODS: Registry[tuple[type, str], Builtin] = Registry(LATER)
VALUE_METHODS: Registry[tuple[type, str], Builtin] = Registry(LATER)


@functools.cache  # ~100 builtins share ~30 signatures: each is parsed once, at import
def parse_signature(signature: str) -> tuple[Param, ...] | None:
    """The parameters of a Python-style signature string (None for a descriptive one like ``(a[, b])``)."""
    try:
        fn = ast.parse(f"def f{signature}: pass").body[0]
    except SyntaxError:
        return None
    assert isinstance(fn, ast.FunctionDef)  # the source parsed is one def
    args = fn.args
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    out = [Param(a.arg, False, i < first_default) for i, a in enumerate(positional)]
    out += [Param(a.arg, True, False) for a in args.kwonlyargs]
    return tuple(out)


def make_builtin(name: str, impl: Callable, doc: str, signature: str) -> Builtin:
    """A :class:`Builtin` whose parameters are parsed from ``signature``."""
    return Builtin(name, impl, doc, signature, parse_signature(signature))


def builtin(signature: str, method_of: type | None = None, on_values: bool = False):
    """Register the decorated ``fn`` (named after it) as a builtin; doc = its docstring.

    ``method_of`` is an IR type class: the builtin becomes a method of type
    objects of that class, or of runtime values of it with ``on_values=True``.
    """
    def deco(fn):
        name = fn.__name__.rstrip("_")
        b = make_builtin(name, fn, (fn.__doc__ or "").strip(), signature)
        if method_of is None:
            BUILTINS[name] = b
        else:
            (VALUE_METHODS if on_values else TYPE_METHODS)[(method_of, name)] = b
        return b
    return deco


def method(receiver, name: str) -> Builtin | None:
    """The method ``name`` of ``receiver``: an IR type object, or a runtime value (by its IR type)."""
    table, t = (TYPE_METHODS, receiver) if isinstance(receiver, T.Type) else (VALUE_METHODS, receiver.type)
    found = _declared_method(table, type(t).__mro__, name)
    if found is None:  # a family not imported yet may declare it
        table.load()
        found = _declared_method(table, type(t).__mro__, name)
    return found


def _declared_method(table: Registry[tuple[type, str], Builtin], classes: tuple[type, ...],
                     name: str) -> Builtin | None:
    """The method ``name`` of the first of ``classes`` that has one, among the families loaded so far."""
    for cls in classes:
        b = dict.get(table, (cls, name))
        if b is not None:
            return b
    return None


def method_names(receiver) -> list[str]:
    """The method names ``receiver`` has (for "it has: ..." messages)."""
    table, t = (TYPE_METHODS, receiver) if isinstance(receiver, T.Type) else (VALUE_METHODS, receiver.type)
    classes = type(t).__mro__
    return sorted(n for cls, n in table if cls in classes)


def bind(cg, b: Builtin, args: list, kwargs: dict) -> dict:
    """Match positional/keyword arguments to ``b``'s parameters; ArgumentError otherwise.

    Positional parameters without a default are required; keyword-only ones
    are checked by the builtin itself (so it can explain what they mean).
    """
    params = b.params or ()
    plan = _BIND_PLANS.get(id(params))
    if plan is None or plan[0] is not params:
        plan = _BIND_PLANS[id(params)] = _bind_plan(params)
    _, names, positional, required = plan
    if len(args) > len(positional):
        raise ArgumentError(f"{b.name}{b.signature} takes at most {len(positional)} positional "
                            f"arguments, got {len(args)}", cg.em.loc)
    out = dict(zip(positional, args))
    for k, v in kwargs.items():
        if k not in names:
            raise ArgumentError(f"{b.name}{b.signature} has no argument '{k}'", cg.em.loc)
        if k in out:
            raise ArgumentError(f"{b.name}: argument '{k}' given twice", cg.em.loc)
        out[k] = v
    for name in required:
        if name not in out:
            raise ArgumentError(f"{b.name}{b.signature}: missing argument '{name}'", cg.em.loc)
    return out


# id(params) -> (params, names, positional names, required names): the lists bind() matches arguments
# against, made once per parameter tuple (the entry holds the tuple, so no other object takes its id)
_BIND_PLANS: dict[int, tuple] = {}


def _bind_plan(params: tuple[Param, ...]) -> tuple:
    return (params, frozenset(p.name for p in params), tuple(p.name for p in params if not p.keyword_only),
            tuple(p.name for p in params if p.required))
