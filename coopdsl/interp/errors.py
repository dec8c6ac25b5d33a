"""Errors of the CPU interpreter.

:class:`InterpreterError` is behaviour the hardware leaves undefined, found
while running a kernel (a cooperative-matrix instruction reached by part of
its scope, an out-of-bounds access, a shared-memory data race ...).  It is
located in the user's code and renders like a :class:`CompileError`
(``file:line:col: error: message``, the line, a caret), which it subclasses
so one ``except CompileError`` catches every located kernel error.
"""

from __future__ import annotations

from ..errors import CompileError, CoopDSLError, LaunchError, SourceLoc


class InterpreterError(CompileError):
    """Undefined behaviour detected while interpreting a kernel; ``loc`` is the user's line."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        super().__init__(message, loc)


class LaunchArgumentError(CoopDSLError, LaunchError):
    """Launch arguments that do not fit the kernel (missing, wrong dtype, wrong size, unknown name): a
    ``coopdsl.runtime.LaunchError`` (and a ``ValueError``) as on a GPU, and a ``CoopDSLError``."""

