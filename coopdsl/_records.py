"""``@record``: ``@dataclass`` for coopdsl's own classes, built without compiling source for most methods.

``dataclasses.dataclass`` writes every method it adds (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, and ``__setattr__``/``__delattr__`` when frozen) as source text and compiles it: 0.4 to
0.7 ms a class on Python 3.11, about 34 ms of a ``coopdsl emit`` for the 47 classes it loads (a third
of the process).  :func:`record` compiles ``__init__`` alone (the one method whose signature is the
fields') and gives every other method as a closure over the field names that computes what the
dataclass method computes: equality and hashing of the same tuple of fields, the same ``repr`` text
(recursion shown as ``...``), the same :class:`dataclasses.FrozenInstanceError`.  Classes keep
``__dataclass_fields__``, so :func:`dataclasses.fields`, ``replace``, ``asdict`` and ``is_dataclass``
work on them as on dataclasses; ``field(...)`` gives defaults, factories and ``repr``/``compare``.

What it accepts is what coopdsl's classes use: ``frozen``, ``repr``, ``eq`` (always on), fields with
defaults or default factories, ``ClassVar`` annotations (skipped), ``__post_init__`` without
arguments, records inheriting the fields of records.  Anything else (``InitVar``, ``KW_ONLY``,
``init=False`` fields, ``order``, ``slots``) is a TypeError: use ``dataclasses.dataclass`` there.
"""

from __future__ import annotations

import _thread
import dataclasses
import re
import sys
import typing
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_kwargs):  # the type checker's view only (PEP 681)
        return lambda f: f

_C = TypeVar("_C", bound=type)
_FIELD: Any = vars(dataclasses)["_FIELD"]  # what dataclasses.fields() keeps: the marker of a plain field
_HAS_FACTORY: Any = vars(dataclasses)["_HAS_DEFAULT_FACTORY"]  # an argument left out, a factory fills it
_MODULE_IDENTIFIER = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")  # as dataclasses reads string annotations


@overload
def record(cls: _C, /) -> _C: ...


@overload
def record(*, frozen: bool = False, repr: bool = True) -> Callable[[_C], _C]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, frozen: bool = False, repr: bool = True) -> Any:
    """``@dataclass`` / ``@dataclass(frozen=..., repr=...)``, with the same methods (see the module)."""
    if cls is None:
        return lambda c: _process(c, frozen, repr)
    return _process(cls, frozen, repr)


def _process(cls: type, frozen: bool, want_repr: bool) -> type:
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:  # inherited fields first, in dataclasses' order
        inherited = base.__dict__.get("__dataclass_fields__")
        if inherited is not None:
            fields.update(inherited)
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation, cls):
            continue
        if isinstance(annotation, str) and re.match(r"\s*(dataclasses\.)?(InitVar|KW_ONLY)\b", annotation):
            raise TypeError(f"{cls.__name__}.{name}: @record takes no InitVar or KW_ONLY (use @dataclass)")
        default = cls.__dict__.get(name, dataclasses.MISSING)
        f: Any = default if isinstance(default, dataclasses.Field) else dataclasses.field(default=default)
        if not f.init or f.kw_only is True:
            raise TypeError(f"{cls.__name__}.{name}: @record takes no init=False or keyword-only fields")
        f.name, f.type, f._field_type = name, annotation, _FIELD
        fields[name] = f
        if isinstance(default, dataclasses.Field):  # the class attribute is the default, or nothing
            if f.default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    _set(cls, "__dataclass_fields__", fields)
    own = cls.__dict__
    class_hash = own.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own))
    values = list(fields.values())
    if "__init__" not in own:
        _add(cls, "__init__", _init(cls, values, frozen))
    if want_repr and "__repr__" not in own:
        _add(cls, "__repr__", _repr(tuple(f.name for f in values if f.repr)))
    compared = [f.name for f in values if f.compare]
    if "__eq__" not in own:
        _add(cls, "__eq__", _eq(_key(compared)))
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in own:
                raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
        _add(cls, "__setattr__", _frozen_setattr(cls, frozenset(fields)))
        _add(cls, "__delattr__", _frozen_delattr(cls, frozenset(fields)))
    if not explicit_hash:  # dataclasses' rule for eq=True: a hash of the fields when frozen, else none
        if frozen:
            hashed = [f.name for f in values if (f.compare if f.hash is None else f.hash)]
            _add(cls, "__hash__", _hash(_key(hashed)))
            if "__getstate__" not in own:
                _set(cls, "__getstate__", _getstate)
        else:
            _set(cls, "__hash__", None)
    if "__match_args__" not in own:
        _set(cls, "__match_args__", tuple(fields))
    if not cls.__doc__:  # as dataclasses does: the signature stands in for a docstring
        import inspect

        try:
            text = str(inspect.signature(cls)).replace(" -> None", "")
        except (TypeError, ValueError):
            text = ""
        cls.__doc__ = cls.__name__ + text
    return cls


def _is_classvar(annotation: object, cls: type) -> bool:
    """Whether a field annotation is ``ClassVar[...]`` (a string: read as dataclasses reads it)."""
    if not isinstance(annotation, str):
        return annotation is typing.ClassVar or getattr(annotation, "__origin__", None) is typing.ClassVar
    m = _MODULE_IDENTIFIER.match(annotation)
    if m is None:
        return False
    module = sys.modules.get(cls.__module__)
    ns = vars(module) if module is not None else {}
    if m.group(1):
        if ns.get(m.group(1)) is not typing:
            return False
    return ns.get(m.group(2)) is typing.ClassVar if not m.group(1) else getattr(typing, m.group(2), None) is \
        typing.ClassVar


def _set(cls: type, name: str, value: object) -> None:
    setattr(cls, name, value)


def _add(cls: type, name: str, fn: Callable[..., Any]) -> None:
    fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    setattr(cls, name, fn)


def _init(cls: type, fields: list[dataclasses.Field[Any]], frozen: bool) -> Callable[..., Any]:
    """``__init__``, compiled from the text dataclasses writes (its one compiled method; a frozen record's
    fields are set through ``object.__setattr__`` looked up once, not once per field)."""
    ns: dict[str, Any] = {"__dataclass_object_setattr__": object.__setattr__, "_HAS_DEFAULT_FACTORY": _HAS_FACTORY}
    params, body = ["self"], []
    for f in fields:
        value = f.name
        if f.default_factory is not dataclasses.MISSING:
            ns[f"_dflt_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_HAS_DEFAULT_FACTORY")
            value = f"_dflt_{f.name}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
        elif f.default is not dataclasses.MISSING:
            ns[f"_dflt_{f.name}"] = f.default
            params.append(f"{f.name}=_dflt_{f.name}")
        else:
            params.append(f.name)
        body.append(f"__dataclass_object_setattr__(self, {f.name!r}, {value})" if frozen
                    else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    text = f"def __init__({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    exec(text, ns)  # noqa: S102 - the text is made here from field names (identifiers)
    fn: Callable[..., Any] = ns["__init__"]
    fn.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return fn


def _key(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the fields ``names`` of an instance (what dataclasses' methods compare and hash)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[..., Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other is self:  # what the tuples' comparison finds: each field is itself
            return True
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented
    return __eq__


_HASH = "_record_hash"  # where a frozen record keeps its hash once made (the fields never change)


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[..., Any]:
    """``hash`` of the fields' tuple, kept in the instance: IR types are dict keys throughout the compiler
    and nest (a pointer to an array of matrices with symbolic sizes), and hashing one again hashed all
    it is made of again."""
    def __hash__(self: Any) -> int:
        d = self.__dict__
        h: int | None = d.get(_HASH)
        if h is None:
            h = d[_HASH] = hash(key(self))  # (an unhashable field raises, as before, and nothing is kept)
        return h
    return __hash__


def _getstate(self: Any) -> dict[str, Any]:
    """What pickling and copying keep: the instance's fields, not its kept hash (which differs between
    processes)."""
    state: dict[str, Any] = self.__dict__.copy()
    state.pop(_HASH, None)
    return state


def _repr(names: tuple[str, ...]) -> Callable[..., Any]:
    running: set[tuple[int, int]] = set()  # (instance, thread) whose repr is being made: recursion

    def __repr__(self: Any) -> str:
        key = (id(self), _thread.get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            qualname: str = self.__class__.__qualname__
            return qualname + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
        finally:
            running.discard(key)
    return __repr__


def _frozen_setattr(cls: type, names: frozenset[str]) -> Callable[..., Any]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]
    return __setattr__


def _frozen_delattr(cls: type, names: frozenset[str]) -> Callable[..., Any]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]
    return __delattr__
