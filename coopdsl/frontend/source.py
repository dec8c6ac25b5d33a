"""A kernel's source: its AST with line/column numbers of the user's file."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass

from ..errors import SourceLoc, UnsupportedSyntaxError


@dataclass
class Source:
    file: str
    tree: ast.FunctionDef
    col_shift: int  # columns removed by dedent

    def loc(self, node: ast.AST) -> SourceLoc:
        line = getattr(node, "lineno", self.tree.lineno)
        col = getattr(node, "col_offset", 0) + self.col_shift + 1
        return SourceLoc(self.file, line, col)


def parse_function(fn) -> Source:
    """Parse ``fn``'s definition; node line numbers are absolute in its file."""
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
