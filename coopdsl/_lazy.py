"""Names a package exports but imports on first use (PEP 562), so that importing the package stays cheap.

    __getattr__ = lazy_exports(__name__, {"verify": ".check", "Mismatch": ".check"})
    __getattr__ = lazy_exports(__name__, submodules=("devices", "runtime"))   # pkg.devices imports it

A submodule whose name is also an exported name (``devices.shapes``) must
stay an eager import: importing a submodule rebinds the package attribute of
that name to the module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str] | None = None,
                 submodules: tuple[str, ...] = ()) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``name`` comes from submodule ``exports[name]``, and a
    name in ``submodules`` is that submodule itself, each imported on first use."""
    exports = exports or {}

    def __getattr__(name: str) -> object:
        if name in submodules:
            return importlib.import_module(f".{name}", package)  # (the import binds the attribute)
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, package), name)
        setattr(sys.modules[package], name, value)  # later lookups find it without coming here
        return value

    return __getattr__
