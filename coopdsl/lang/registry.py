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

The typed seam: a builtin declared with per-parameter conversions (:mod:`coopdsl.lang.conversions`;
``@builtin("(value, type)", value=RUNTIME, type=TypeObject(...))``) has its arguments bound and
converted once, here (:func:`bind`), and its ``impl`` is called with them as keyword arguments:
``impl(cg, value=..., type=...)`` (methods: ``impl(cg, receiver, ...)``).  The front end calls every
builtin through :func:`call` / :func:`call_method`; a builtin declared without conversions still gets
``(cg, args, kwargs)`` and converts its own arguments.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, NoReturn

from .._lazy import Registry
from .._records import record
from ..errors import ArgumentError, CompileError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Value

if TYPE_CHECKING:
    from .context import Builder


@record(frozen=True)
class Param:
    """One parameter of a builtin's signature."""

    name: str
    keyword_only: bool
    required: bool
    none_default: bool = False  # its default is None: an explicit None means the default, unconverted
    variadic: bool = False      # ``*name``: the positional arguments after the others, as a tuple


@record(frozen=True)
class Builtin:
    """A kernel builtin: its name, implementation, documentation and signature."""

    name: str
    impl: Callable[..., Any]
    doc: str
    signature: str
    params: tuple[Param, ...] | None = field(default=None, compare=False)
    # parameter name -> its conversion; None: a builtin that binds and converts its arguments itself
    conversions: Mapping[str, Conversion] | None = field(default=None, compare=False)
    # how a typed builtin's arguments are bound (default :func:`bind`; a family's own binder, e.g. one that
    # explains a keyword of loads given to a store, calls bind in the end)
    binder: Callable[..., dict[str, Any]] | None = field(default=None, compare=False)

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"coopdsl.{self.name} can only be called inside a @coopdsl.kernel function")

    def __repr__(self) -> str:
        return f"<coopdsl builtin {self.name}{self.signature}>"


class Conversion:
    """What a builtin's parameter takes: ``conv(cg, value, name, param)`` is the checked value, or a located
    CompileError naming builtin ``name`` and parameter ``param``.  The kinds are :mod:`coopdsl.lang.conversions`'
    (a family may subclass this for its own); :func:`bind` applies them."""

    __slots__ = ()
    error: type[CompileError] = TypeMismatchError
    message: str = ""

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Any:
        raise NotImplementedError

    def fail(self, cg: Builder, v: Any, name: str, param: str) -> CompileError:
        """The located error for argument ``v`` (``message`` filled in: see :mod:`coopdsl.lang.conversions`)."""
        text = self.message.format(name=name, param=param, got=cg.describe(v), value=v,
                                   type=v.type if isinstance(v, Value) else None)
        return self.error(text, cg.em.loc)


LATER: list[str] = []  # builtin families imported on first need (named in coopdsl/lang/__init__.py)
BUILTINS: Registry[str, Builtin] = Registry(LATER)
TYPE_METHODS: Registry[tuple[type, str], Builtin] = Registry(LATER)
VALUE_METHODS: Registry[tuple[type, str], Builtin] = Registry(LATER)


Parsed = tuple[list[tuple[str, "ast.expr | None"]], "str | None", list[tuple[str, "ast.expr | None"]]]


@functools.cache  # ~100 builtins share ~30 signatures: each is parsed once, at import
def _parsed(signature: str) -> Parsed | None:
    """(positional parameters with their defaults, the ``*name`` parameter, keyword-only ones with theirs) of a
    Python-style signature string; None for a descriptive one like ``(a[, b])``."""
    try:
        fn = ast.parse(f"def f{signature}: pass").body[0]
    except SyntaxError:
        return None
    assert isinstance(fn, ast.FunctionDef)  # the source parsed is one def
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return ([(a.arg, d) for a, d in zip(positional, defaults)], args.vararg.arg if args.vararg else None,
            [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)])


@functools.cache
def parse_signature(signature: str) -> tuple[Param, ...] | None:
    """The parameters of a Python-style signature string (None for a descriptive one like ``(a[, b])``)."""
    parsed = _parsed(signature)
    if parsed is None:
        return None
    positional, vararg, keyword = parsed
    out = [Param(name, False, d is None, _is_none(d)) for name, d in positional]
    if vararg is not None:
        out.append(Param(vararg, False, False, variadic=True))
    # (a keyword-only parameter without a default is the builtin's to check: None is left to it too)
    out += [Param(name, True, False, d is None or _is_none(d)) for name, d in keyword]
    return tuple(out)


def _is_none(default: ast.expr | None) -> bool:
    return isinstance(default, ast.Constant) and default.value is None


def make_builtin(name: str, impl: Callable[..., Any], doc: str, signature: str,
                 conversions: Mapping[str, Conversion] | None = None,
                 binder: Callable[..., dict[str, Any]] | None = None) -> Builtin:
    """A :class:`Builtin` whose parameters are parsed from ``signature``; ``conversions`` (parameter name ->
    :class:`~coopdsl.lang.conversions.Conversion`, possibly empty) makes it a typed builtin (see the module)."""
    params = parse_signature(signature)
    if conversions is not None:
        names = {p.name for p in params or ()}
        unknown = sorted(set(conversions) - names)
        if params is None or unknown:
            raise TypeError(f"builtin {name}{signature}: conversions for {unknown or 'a descriptive signature'}")
        conversions = dict(conversions)
    return _documented(name, signature, doc)(name, impl, doc, signature, params, conversions, binder)


def _documented(name: str, signature: str, doc: str) -> type[Builtin]:
    """A subclass of :class:`Builtin` carrying the builtin's own signature and documentation, so that
    ``help(cd.dot4x8)`` shows them (help documents an instance through its class, and the class's signature
    through ``__signature__``: the builtin's, or none for a descriptive one such as ``(a[, b])``)."""
    return type(name, (Builtin,), {"__doc__": doc, "__module__": "coopdsl", "__qualname__": name,
                                   "__slots__": (), "__signature__": _signature(signature)})


class _Default:
    """A parameter default shown as it is written in the signature string."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


@functools.cache
def _signature(signature: str) -> inspect.Signature | str:
    """``signature`` as an ``inspect.Signature`` (a string, which ``inspect.signature`` refuses, when it is
    descriptive)."""
    parsed = _parsed(signature)
    if parsed is None:
        return signature
    positional, vararg, keyword = parsed
    kind = inspect.Parameter

    def default(d: ast.expr | None) -> Any:
        return kind.empty if d is None else _Default(ast.unparse(d))

    params = [kind(name, kind.POSITIONAL_OR_KEYWORD, default=default(d)) for name, d in positional]
    if vararg is not None:
        params.append(kind(vararg, kind.VAR_POSITIONAL))
    params += [kind(name, kind.KEYWORD_ONLY, default=default(d)) for name, d in keyword]
    return inspect.Signature(params)


def builtin(signature: str, method_of: type | None = None, on_values: bool = False,
            typed: bool = False, binder: Callable[..., dict[str, Any]] | None = None,
            conversions: Mapping[str, Conversion] | None = None,
            **declared: Conversion) -> Callable[[Callable[..., Any]], Builtin]:
    """Register the decorated ``fn`` (named after it) as a builtin; doc = its docstring.

    ``method_of`` is an IR type class: the builtin becomes a method of type
    objects of that class, or of runtime values of it with ``on_values=True``.
    Keyword arguments declare the conversion of each parameter so named (see
    :mod:`coopdsl.lang.conversions`), and ``conversions`` more of them (a
    mapping several builtins share); with any of them, or ``typed=True`` (a
    typed builtin whose parameters need no conversion), ``fn`` receives its
    bound arguments as keyword arguments (bound by ``binder``, default :func:`bind`).
    """
    declared = {**(conversions or {}), **declared}
    def deco(fn: Callable[..., Any]) -> Builtin:
        name = fn.__name__.rstrip("_")
        b = make_builtin(name, fn, (fn.__doc__ or "").strip(), signature,
                         declared if declared or typed or binder else None, binder)
        if method_of is None:
            BUILTINS[name] = b
        else:
            (VALUE_METHODS if on_values else TYPE_METHODS)[(method_of, name)] = b
        return b
    return deco


def call(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call builtin ``b`` from a kernel: a typed one with its arguments bound and converted (:func:`bind`)."""
    if b.conversions is None:
        return b.impl(cg, args, kwargs)
    return b.impl(cg, **(b.binder or bind)(cg, b, args, kwargs))


def call_method(cg: Builder, b: Builtin, receiver: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call method ``b`` of ``receiver`` (a type object or a runtime value) from a kernel, as :func:`call`."""
    if b.conversions is None:
        return b.impl(cg, receiver, args, kwargs)
    return b.impl(cg, receiver, **(b.binder or bind)(cg, b, args, kwargs))


def method(receiver: Any, name: str) -> Builtin | None:
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


def method_names(receiver: Any) -> list[str]:
    """The method names ``receiver`` has (for "it has: ..." messages)."""
    table, t = (TYPE_METHODS, receiver) if isinstance(receiver, T.Type) else (VALUE_METHODS, receiver.type)
    classes = type(t).__mro__
    return sorted(n for cls, n in table if cls in classes)


def bind(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Match positional/keyword arguments to ``b``'s parameters; ArgumentError otherwise.  Then apply the
    conversions ``b`` declares, in parameter order (an explicit None where the default is None stays None).

    Positional parameters without a default are required; keyword-only ones
    are checked by the builtin itself (so it can explain what they mean).
    """
    params = b.params or ()
    plan = _BIND_PLANS.get(id(params))
    if plan is None or plan[0] is not params:
        plan = _BIND_PLANS[id(params)] = _bind_plan(params)
    _, names, positional, required, variadic = plan
    if len(args) > len(positional) and variadic is None:
        raise ArgumentError(f"{b.name}{b.signature} takes at most {len(positional)} positional "
                            f"arguments, got {len(args)}", cg.em.loc)
    out = dict(zip(positional, args))
    if variadic is not None:
        out[variadic] = tuple(args[len(positional):])
    for k, v in kwargs.items():
        if k not in names or k == variadic:
            raise ArgumentError(f"{b.name}{b.signature} has no argument '{k}'", cg.em.loc)
        if k in out:
            raise ArgumentError(f"{b.name}: argument '{k}' given twice", cg.em.loc)
        out[k] = v
    for name in required:
        if name not in out:
            raise ArgumentError(f"{b.name}{b.signature}: missing argument '{name}'", cg.em.loc)
    conversions = b.conversions
    if conversions:
        for p in params:
            conv = conversions.get(p.name)
            if conv is not None and p.name in out:
                v = out[p.name]
                if v is not None or not p.none_default:
                    out[p.name] = conv(cg, v, b.name, p.name)
    return out


# id(params) -> (params, names, positional names, required names, the variadic one or None): what bind() matches
# against, made once per parameter tuple (the entry holds the tuple, so no other object takes its id)
_BIND_PLANS: dict[int, tuple[Any, ...]] = {}


def _bind_plan(params: tuple[Param, ...]) -> tuple[Any, ...]:
    return (params, frozenset(p.name for p in params),
            tuple(p.name for p in params if not p.keyword_only and not p.variadic),
            tuple(p.name for p in params if p.required), next((p.name for p in params if p.variadic), None))
