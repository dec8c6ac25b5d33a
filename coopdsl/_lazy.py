"""Names a package exports but imports on first use (PEP 562), so that importing the package stays cheap.

    __getattr__ = lazy_exports(__name__, {"verify": ".check", "Mismatch": ".check"})
    __getattr__ = lazy_exports(__name__, {"atomic_add": ".lang.atomics:ATOMICS"})  # ATOMICS["atomic_add"]
    __getattr__ = lazy_exports(__name__, submodules=("devices", "runtime"))   # pkg.devices imports it

A submodule whose name is also an exported name (``devices.shapes``) must
stay an eager import: importing a submodule rebinds the package attribute of
that name to the module.
"""

from __future__ import annotations

import _thread
import importlib
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar


def lazy_exports(package: str, exports: dict[str, str] | None = None,
                 submodules: tuple[str, ...] = ()) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``name`` comes from submodule ``exports[name]`` (from the
    dict ``TABLE`` of the submodule for ``"submodule:TABLE"``), and a name in ``submodules`` is that
    submodule itself, each imported on first use."""
    exports = exports or {}

    def __getattr__(name: str) -> object:
        if name in submodules:
            return importlib.import_module(f".{name}", package)  # (the import binds the attribute)
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, table = where.partition(":")
        found = importlib.import_module(module, package)
        value = getattr(found, table)[name] if table else getattr(found, name)
        setattr(sys.modules[package], name, value)  # later lookups find it without coming here
        return value

    return __getattr__


K = TypeVar("K")
V = TypeVar("V")
_LOADING = _thread.RLock()  # deferred modules load one thread at a time; a thread that misses waits its turn
_ABSENT = object()


class Registry(dict[K, V]):
    """A registry some of whose entries are declared by modules imported only when first needed.

    ``later`` names those modules (a list the registries of one family of modules share).  Asking for a
    key the registry lacks (``r[k]``, ``r.get(k)``, ``k in r``) or listing it whole (iterating it,
    ``keys``/``values``/``items``, ``len``, ``copy``, comparing it) imports them all first, so that no
    lookup misses an entry only because its module was not loaded yet (nor because another thread is
    still loading it); a lookup that finds its key costs what it costs in a dict.  Modules register
    entries with ``r[k] = v`` and check for a duplicate with :meth:`declared`, which imports nothing.
    """

    def __init__(self, later: list[str] | None = None) -> None:
        super().__init__()
        self.later = later if later is not None else []

    def defer(self, package: str, *modules: str) -> None:
        """Import ``package.module`` for each of ``modules`` on first need, not now."""
        self.later.extend(f"{package}.{m}" for m in modules)

    def load(self) -> None:
        """Import every module still to come (each registers its entries); returns once they all have,
        also when another thread was importing them."""
        with _LOADING:
            while self.later:
                name = self.later.pop(0)
                try:
                    importlib.import_module(name)
                except BaseException:
                    self.later.insert(0, name)  # a failed import is tried again next time, never skipped
                    raise

    def declared(self, key: K) -> bool:
        """Whether ``key`` is registered by a module loaded so far (imports nothing)."""
        return dict.__contains__(self, key)

    def __missing__(self, key: K) -> V:
        self.load()
        value = dict.get(self, key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value  # type: ignore[return-value]

    def get(self, key: Any, default: Any = None) -> Any:  # (dict.get's overloads are not repeated)
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        self.load()
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[K]:
        self.load()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[K]:
        self.load()
        return dict.__reversed__(self)

    def __len__(self) -> int:
        self.load()
        return dict.__len__(self)

    def keys(self) -> Any:  # (dict's own view types)
        self.load()
        return dict.keys(self)

    def values(self) -> Any:
        self.load()
        return dict.values(self)

    def items(self) -> Any:
        self.load()
        return dict.items(self)

    def copy(self) -> dict[K, V]:
        self.load()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self.load()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        self.load()
        return dict.__repr__(self)
