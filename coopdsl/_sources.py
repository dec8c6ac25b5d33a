"""The trees of the user's source files, parsed once (stdlib only): the front end finds a kernel's ``def``
in them, ``coopdsl emit`` runs a kernel file from its tree, and ``@cd.struct`` finds a struct's members.

A file is read as ``linecache`` reads it, so a file changed on disk is read again and a module run
without an import (``runpy``, ``exec``) is found by its file name.
"""

from __future__ import annotations

import ast
import linecache
from typing import Any

_files: dict[str, tuple[str, ast.Module]] = {}  # file -> (its text, its tree), the last version parsed


def file_text(file: str, module_globals: dict[str, Any] | None = None) -> str:
    """The text of ``file`` as ``linecache`` reads it now ("" when it cannot be read)."""
    linecache.checkcache(file)
    return "".join(linecache.getlines(file, module_globals))


def parse_file(file: str, text: str) -> ast.Module:
    """The tree of ``file``, whose text is ``text`` (as ``linecache`` reads it), parsed once while the
    text is unchanged.  Raises SyntaxError (or ValueError for a NUL byte)."""
    cached = _files.get(file)
    if cached is None or cached[0] != text:
        cached = _files[file] = (text, ast.parse(text, file))
    return cached[1]


def file_tree(file: str) -> ast.Module | None:
    """The tree of ``file`` now, or None when it cannot be read or parsed."""
    text = file_text(file)
    if not text:
        return None
    try:
        return parse_file(file, text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def find_class(tree: ast.Module, name: str, first: int) -> ast.ClassDef | None:
    """The ``class name`` statement of ``tree`` that starts (at its first decorator) at line ``first`` or
    nearest after it."""
    best: tuple[int, ast.ClassDef] | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if start >= first and (best is None or start < best[0]):
                best = (start, node)
    return None if best is None else best[1]
