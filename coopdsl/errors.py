"""Errors coopdsl raises, and the source locations they point at.

Exception policy (see docs/architecture.md):

* ``CompileError`` and its subclasses are *user* errors: the kernel is wrong.
  They carry a :class:`SourceLoc` in the user's file and render as
  ``file:line:col: error: message`` followed by the source line and a caret.
  They are raised ``from None`` so no compiler-internal frame is shown.
* ``InternalCompilerError`` is a bug in coopdsl itself (a broken invariant).
  It also names the user's line being compiled when it happened, so the bug
  report can point at a reproducer.
* ``ToolError`` reports a problem with the SPIR-V tools (missing binary,
  validator rejecting a module).
"""

from __future__ import annotations

import linecache
from types import FrameType

from ._records import record
from ._words import with_article as with_article  # (the messages' article rule, for the modules that word them)


@record(frozen=True)
class SourceLoc:
    """A position in a user's source file (1-based line, 1-based column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def source_line(self) -> str:
        """The text of the line, without its newline ('' when unavailable)."""
        return linecache.getline(self.file, self.line).rstrip("\n")


UNKNOWN_LOC = SourceLoc("<unknown>", 0, 0)


class CoopDSLError(Exception):
    """Base class of every error coopdsl raises on purpose."""


class LaunchError(ValueError):
    """The arguments do not fit the kernel's reflection (missing, wrong dtype or size, read-only output): raised
    by a GPU launch (``coopdsl.runtime.LaunchError``, this class) and, as its subclass
    ``coopdsl.interp.LaunchArgumentError``, by the CPU interpreter's, so that one ``except`` catches both."""


class CompileError(CoopDSLError):
    """The kernel is not valid coopdsl; ``loc`` is where in the user's code."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc or UNKNOWN_LOC

    def __str__(self) -> str:
        head = f"{self.loc}: error: {self.message}"
        text = self.loc.source_line()
        if not text:
            return head
        caret = " " * (max(self.loc.col, 1) - 1) + "^"
        return f"{head}\n    {text}\n    {caret}"


class UnsupportedSyntaxError(CompileError):
    """A Python construct that coopdsl kernels cannot use."""


class NameResolutionError(CompileError):
    """A name that is neither a kernel local, a usable global nor a builtin."""


class TypeMismatchError(CompileError):
    """Operands or arguments whose types do not fit the operation."""


class ShapeError(TypeMismatchError):
    """Cooperative-matrix shapes, uses or scopes that do not fit together."""


class DeclarationError(TypeMismatchError):
    """A type, parameter annotation or struct that cannot be declared (raised where it is written)."""


def caller_loc(word: str = "") -> SourceLoc:
    """The location in the first frame outside coopdsl (the user's declaration), at ``word`` if it is there."""
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame = frame.f_back
    if frame is None:
        return UNKNOWN_LOC
    loc = SourceLoc(frame.f_code.co_filename, frame.f_lineno, 1)
    text = loc.source_line()
    col = text.find(word) + 1 if word and word in text else len(text) - len(text.lstrip()) + 1
    return SourceLoc(loc.file, loc.line, col)


class ArgumentError(CompileError):
    """A builtin called with missing, extra or ill-formed arguments."""


class UniformityError(CompileError):
    """A cooperative-matrix operation or control barrier in control flow that is not uniform across its scope."""


class LaunchCallError(CoopDSLError, TypeError):
    """``launch``/``bench`` arguments that do not bind to the kernel's parameters (too many positional ones, an
    unknown keyword, one given twice, a ``Const`` parameter): a ``TypeError``, as Python's own for a call that does
    not bind, and one of coopdsl's errors."""


class InternalCompilerError(CoopDSLError):
    """A bug in coopdsl: an invariant of the compiler was broken."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        where = f" (while compiling {loc})" if loc else ""
        super().__init__(f"internal compiler error{where}: {message}")
        self.message = message
        self.loc = loc


class ToolError(CoopDSLError):
    """A SPIR-V tool is missing or failed."""


class ValidationError(ToolError):
    """spirv-val rejected a module coopdsl produced (always a coopdsl bug)."""
