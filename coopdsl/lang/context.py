"""The narrow interface builtins build IR through (Triton's ``semantic.py`` receives a builder, not the code generator).

Builtins in ``coopdsl.lang`` are handed an object satisfying :class:`Builder`:
the IR emitter positioned at the call, the module, and a few conversions and
checks on argument values.  The front end's code generator implements it;
nothing in ``lang`` imports the front end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..ir import types as T
from ..ir.builder import Emitter
from ..ir.core import FuncRef, Module, Op, Value
from .values import BufferRef, BuiltinVar


@runtime_checkable
class Builder(Protocol):
    """What a builtin may use to inspect its arguments and emit IR."""

    module: Module

    @property
    def em(self) -> Emitter:
        """The IR emitter, positioned at the call.  Read-only here, so an implementation may hold a
        subclass (the front end's NodeLocEmitter)."""

    def as_runtime(self, v: Any) -> Value:
        """``v`` as an IR value (loading built-in inputs); a located error for compile-time objects."""

    def as_operand(self, v: Any) -> Any:
        """``v`` usable in arithmetic: IR values and Python numbers."""

    def as_index(self, v: Any, what: str) -> Value:
        """``v`` as an integer index value (literals become u32/i32 constants)."""

    def compile_time(self, v: Any, what: str, kind: type) -> Any:
        """``v`` if it is a compile-time value of Python type ``kind``; a located error otherwise."""

    def describe(self, v: Any) -> str:
        """How to name ``v`` in an error message."""

    def load_builtin(self, b: BuiltinVar) -> Value:
        """Load a built-in input variable."""

    def element_pointer(self, buf: BufferRef, index: Any) -> Value:
        """Pointer to element ``index`` of a buffer, shared or local array."""

    def function_variable(self, ptr: T.PointerType) -> Op:
        """A new Function-storage variable (placed first in the entry block)."""

    def note_buffer_write(self, buf: BufferRef) -> None:
        """Record that the kernel writes ``buf`` (buffers never written are NonWritable)."""

    def function_operand(self, dfn: Any, param_types: Sequence[T.Type],
                         consts: dict[str, Any] | None = None) -> FuncRef:
        """Device function ``dfn`` as an instruction operand (a callback), compiled without a call site.

        Its leading parameters, in order, take the runtime types ``param_types``
        (what the instruction passes); every other parameter is bound to the
        value ``consts`` gives it (or keeps its default) when it is compiled:
        buffers, shared arrays, push constants, specialization constants and
        compile-time values (see :mod:`coopdsl.frontend.captures`).  The same
        types and bindings give the same function.
        """
