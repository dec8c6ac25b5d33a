"""A kernel's source: its AST with line/column numbers of the user's file.

A function is parsed once per code object (:func:`parse_function` caches the
:class:`Source`), and a file once while its text is unchanged (:mod:`coopdsl._sources`): the function's
``def`` is found in the file's tree, so node positions are the file's own.
Functions whose file cannot be read that way (source only in ``linecache``
under an unusual name, a file edited since it was imported) fall back to
``inspect``'s source of the function, dedented and shifted.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import weakref
from collections.abc import Callable
from dataclasses import field
from types import CodeType
from typing import Any

from .._records import record
from .._sources import file_text, parse_file
from ..errors import SourceLoc, UnsupportedSyntaxError
from .scan import assigned_names, plainly_bound_names


@record
class Source:
    """A function's definition, parsed; :meth:`loc` turns a node into the user's file position."""

    file: str
    tree: ast.FunctionDef
    col_shift: int  # columns removed by dedent
    _body_names: frozenset[str] | None = field(default=None, repr=False)
    _element_only: frozenset[str] | None = field(default=None, repr=False)
    _loop_names: dict[int, tuple[str, ...]] = field(default_factory=dict, repr=False)  # by id(loop)

    def loc(self, node: ast.AST) -> SourceLoc:
        line = getattr(node, "lineno", self.tree.lineno)
        col = getattr(node, "col_offset", 0) + self.col_shift + 1
        return SourceLoc(self.file, line, col)

    def body_names(self) -> frozenset[str]:
        """``assigned_names`` of the function body (computed once per parsed function)."""
        if self._body_names is None:
            self._body_names = frozenset(assigned_names(self.tree.body))
        return self._body_names

    def element_only_names(self) -> frozenset[str]:
        """Names the body binds only as the root of element assignments (``f32[i] = x``, never ``f32 = ...``):
        Python keeps such a name global, so before any binding it reads the global (once per function)."""
        if self._element_only is None:
            self._element_only = self.body_names() - frozenset(plainly_bound_names(self.tree.body))
        return self._element_only

    def loop_names(self, loop: ast.For | ast.While) -> tuple[str, ...]:
        """The names ``loop``'s body binds that can carry a value around it, sorted (once per loop;
        ids of nodes are stable because the Source holds the tree)."""
        names = self._loop_names.get(id(loop))
        if names is None:
            names = self._loop_names[id(loop)] = tuple(sorted(assigned_names(loop.body, loop_carried=True)))
        return names


# id(code) -> (a weak reference to the code object, its Source).  By identity: code objects compare
# equal across files when only their file names differ, so a WeakKeyDictionary would mix them up.
_parsed: dict[int, tuple[weakref.ref[CodeType], Source]] = {}


def parse_function(fn: Callable[..., Any]) -> Source:
    """Parse ``fn``'s definition (once per code object); node line numbers are absolute in its file."""
    code = fn.__code__
    entry = _parsed.get(id(code))
    if entry is not None and entry[0]() is code:
        return entry[1]
    src = _from_file(fn) or _from_inspect(fn)
    _parsed[id(code)] = (weakref.ref(code, _forget(id(code))), src)
    return src


def _forget(key: int) -> Callable[[weakref.ref[CodeType]], None]:
    """The weak-reference callback that drops a dead code object's entry (unless the id was reused)."""
    def callback(ref: weakref.ref[CodeType]) -> None:
        entry = _parsed.get(key)
        if entry is not None and entry[0] is ref:
            del _parsed[key]
    return callback


def _from_file(fn: Callable[..., Any]) -> Source | None:
    """``fn``'s ``def`` found in the tree of its whole file, or None when that does not work out."""
    code = fn.__code__
    file = code.co_filename
    text = file_text(file, fn.__globals__)
    if not text:
        return None
    try:
        tree = parse_file(file, text)
    except (SyntaxError, ValueError):
        return None
    func = _find_def(tree, code)
    return None if func is None else Source(file, func, 0)


def _find_def(module: ast.Module, code: CodeType) -> ast.FunctionDef | None:
    """The ``def`` of ``code`` in ``module``: its name and first line (the first decorator's) match."""
    stack: list[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == code.co_firstlineno:
                return node if isinstance(node, ast.FunctionDef) else None
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(children)
    return None


def _from_inspect(fn: Callable[..., Any]) -> Source:
    """``fn``'s source as ``inspect`` finds it, dedented and parsed on its own."""
    file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise UnsupportedSyntaxError(
            f"cannot read the source of {fn.__qualname__}; coopdsl kernels must be defined in a file",
            SourceLoc(file or "<unknown>", 0, 0)) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    shift = _indent(lines[0]) - _indent(dedented.splitlines(True)[0])
    module = ast.parse(dedented)
    ast.increment_lineno(module, start - 1)
    func = module.body[0]
    if not isinstance(func, ast.FunctionDef):
        raise UnsupportedSyntaxError("a kernel must be a plain 'def' function", SourceLoc(file, start, 1))
    linecache.checkcache(file)
    return Source(file, func, shift)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
