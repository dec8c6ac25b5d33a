"""Structural checks of the IR, run between passes.

A failure here is a bug in coopdsl (the front end reports user mistakes
itself), so it raises :class:`~coopdsl.errors.InternalCompilerError` naming
the user line whose op broke the invariant.
"""

from __future__ import annotations

from ..errors import InternalCompilerError
from .core import Const, Function, GlobalVar, LoopMerge, Module, Op, Param, SpecConst, SpecOp
from .ops import OPS


def verify(module: Module) -> None:
    """Raise InternalCompilerError if ``module`` breaks an IR invariant."""
    for func in module.functions:
        _verify_function(func)


def _verify_function(func: Function) -> None:
    blocks = set(map(id, func.blocks))
    defined: set[int] = set()
    for b in func.blocks:
        if b.terminator is None:
            raise InternalCompilerError(f"block {b.name} of {func.name} has no terminator", func.loc)
        for t in b.successors():
            if id(t) not in blocks:
                raise InternalCompilerError(f"{b.name} branches to a block outside {func.name}", b.terminator.loc)
            if b not in t.preds:
                raise InternalCompilerError(f"{b.name} -> {t.name} missing from preds", b.terminator.loc)
        if b.merge is not None:
            targets = [b.merge.merge] + ([b.merge.cont] if isinstance(b.merge, LoopMerge) else [])
            for t in targets:
                if id(t) not in blocks:
                    raise InternalCompilerError(f"merge of {b.name} is not in {func.name}", func.loc)
        for op in b.all_ops():
            defined.add(id(op))
    for b in func.blocks:
        for phi in b.phis:
            incoming = phi.attrs["incoming"]
            if len(incoming) != len(phi.operands) or set(map(id, incoming)) != set(map(id, b.preds)):
                raise InternalCompilerError(f"phi in {b.name} does not match its predecessors", phi.loc)
        for op in b.all_ops():
            _verify_op(op, defined)


def _verify_op(op: Op, defined: set[int]) -> None:
    d = OPS.get(op.kind)
    if d is None:
        raise InternalCompilerError(f"unknown op kind {op.kind!r}", op.loc)
    if d.operands is not None and len(op.operands) != d.operands and op.kind != "return":
        raise InternalCompilerError(f"{op.kind} takes {d.operands} operands, has {len(op.operands)}", op.loc)
    for v in op.operands:
        if isinstance(v, (Const, SpecConst, SpecOp, GlobalVar, Param)):
            continue
        if not isinstance(v, Op) or id(v) not in defined:
            raise InternalCompilerError(f"{op.kind} uses a value not defined in its function", op.loc)
    if op.kind in ("add", "sub", "mul", "div", "rem") and op.operands[0].type != op.operands[1].type:
        raise InternalCompilerError(
            f"{op.kind} operand types differ: {op.operands[0].type} vs {op.operands[1].type}", op.loc)
