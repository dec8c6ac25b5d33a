"""The front end: Python source -> typed SSA IR.

:func:`compile_kernel` builds the entry function of a kernel into a module;
device functions it calls are compiled on demand (one per signature) by
:mod:`.helpers`, which the code generator receives as its ``device_call``
(and, for functions used as instruction operands, its ``operand_compiler``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ir.core import Function, Module
from .codegen import CodeGen
from .helpers import call, compile_function, function_operand
from .source import Source


def compile_kernel(fn: Callable[..., Any], src: Source, module: Module,
                   consts: dict[str, Any] | None = None) -> Function:
    """Compile kernel ``fn`` (parsed as ``src``) into ``module``; returns its entry function."""
    return CodeGen(fn, src, module, device_call=call, operand_compiler=function_operand).run(consts)


__all__ = ["compile_kernel", "compile_function"]
