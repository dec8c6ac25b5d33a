"""AST -> IR for one kernel: the code generator assembled from its parts.

:class:`CodeGen` is :class:`~.context.Context` (state, names, the ``visit``
choke point) plus :class:`~.control.ControlFlow` (statements) with the
dispatch tables that make up the supported Python subset: ``STATEMENTS``
here, ``EXPRESSIONS`` in :mod:`.expr`.

Values are either IR values (runtime) or plain Python objects (compile time:
numbers, types, tuples, builtins...).  Operations on compile-time values are
evaluated by Python, which is how constants fold and ``static_range`` unrolls.
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir import types as T
from ..ir.core import Block, Function, GlobalVar, Value
from ..ir.vocab import StorageClass
from .control import ControlFlow
from .expr import EXPRESSIONS
from .params import build_params


class CodeGen(ControlFlow):
    """Code generation of a kernel's entry function."""

    EXPRESSIONS = EXPRESSIONS

    def run(self, consts: dict[str, Any] | None = None) -> Function:
        params, bindings = build_params(self.fn, self.src, self.module, consts)
        self.params = params
        entry = self.em.new_block("entry")
        self.em.start(entry)
        for name, value in bindings.items():
            self.ssa.write(name, entry, value)
        self.locals |= set(bindings) | {name for name, _, _ in params.push}
        self._load_push_constants(entry)
        self.body(self.src.tree.body)
        if self.em.block is not None:
            self.em.terminate("return")
        for ref in params.buffers:
            assert isinstance(ref.var, GlobalVar)  # a buffer parameter's variable
            ref.var.info["readonly"] = ref.name not in self.written
        return self.em.func

    def _load_push_constants(self, entry: Block) -> None:
        p = self.params
        for name, var, st in p.uniforms:  # uniform blocks: read once, members by extraction
            block = var.type.pointee
            parts: list[Value] = [self.em.op("load", t, [self.em.op("access", T.PointerType(t, StorageClass.Uniform),
                                                                    [var, self.em.const(T.u32, i)])])
                                  for i, (_, t) in enumerate(block.members)]
            value = self.em.op("construct", st, parts)
            self.ssa.write(name, entry, value)
            self.read_only[name] = (value, f"uniform block '{name}'")
            self.locals.add(name)
        for index, (name, t, _) in enumerate(p.push):
            assert p.push_var is not None  # made with the first push constant
            ptr = self.em.op("access", T.PointerType(t, StorageClass.PushConstant),
                             [p.push_var, self.em.const(T.u32, index)])
            value = self.em.op("load", t, [ptr])
            self.ssa.write(name, entry, value)
            self.read_only[name] = (value, f"push constant '{name}'")


CodeGen.STATEMENTS = {
    ast.Expr: ControlFlow.stmt_expr,
    ast.Pass: ControlFlow.stmt_pass,
    ast.Assign: ControlFlow.stmt_assign,
    ast.AnnAssign: ControlFlow.stmt_annassign,
    ast.AugAssign: ControlFlow.stmt_augassign,
    ast.If: ControlFlow.stmt_if,
    ast.Match: ControlFlow.stmt_match,
    ast.For: ControlFlow.stmt_for,
    ast.While: ControlFlow.stmt_while,
    ast.Break: ControlFlow.stmt_break,
    ast.Continue: ControlFlow.stmt_continue,
    ast.Return: ControlFlow.stmt_return,
}
