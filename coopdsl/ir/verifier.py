"""Structural and type checks of the IR, run between passes.

Beyond the block structure, every op is checked against its definition in
:mod:`coopdsl.ir.ops`: operand count, attribute names and types, and the op's
own ``verify`` rule for operand and result types.

A failure here is a bug in coopdsl (the front end reports user mistakes
itself), so it raises :class:`~coopdsl.errors.InternalCompilerError` naming
the user line whose op broke the invariant.
"""

from __future__ import annotations

from ..errors import InternalCompilerError
from .core import Const, FuncRef, Function, GlobalVar, LoopMerge, Module, Op, Param, SpecConst, SpecOp
from .ops import OPS, OpDef, VerifyError


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
        defined.update(map(id, b.all_ops()))
    for b in func.blocks:
        for phi in b.phis:
            incoming = phi.attrs["incoming"]
            if len(incoming) != len(phi.operands) or set(map(id, incoming)) != set(map(id, b.preds)):
                raise InternalCompilerError(f"phi in {b.name} does not match its predecessors", phi.loc)
        for op in b.all_ops():
            _verify_op(op, defined)


def _verify_op(op: Op, defined: set[int]) -> None:
    try:
        d = OPS[op.kind]  # (a dict lookup; the registry's get() is a Python call)
    except KeyError:
        raise InternalCompilerError(f"unknown op kind {op.kind!r}", op.loc) from None
    low, high = d.operands
    if len(op.operands) < low or high is not None and len(op.operands) > high:
        raise InternalCompilerError(f"{op.kind} takes {low}..{high} operands, has {len(op.operands)}", op.loc)
    for v in op.operands:
        if id(v) in defined:  # an op of this function (most operands)
            continue
        if isinstance(v, (Const, SpecConst, SpecOp, GlobalVar, Param, FuncRef)):
            continue
        if not isinstance(v, Op) or id(v) not in defined:
            raise InternalCompilerError(f"{op.kind} uses a value not defined in its function", op.loc)
    if op.attrs or d.attrs:  # (with neither, there is nothing to check)
        _verify_attrs(op, d)
    if d.verify is not None:
        try:
            d.verify(op)
        except VerifyError as e:
            raise InternalCompilerError(str(e), op.loc) from None


def _verify_attrs(op: Op, d: OpDef) -> None:
    present = 0
    for name, (kind, required) in d.attrs.items():
        if name not in op.attrs:
            if required:
                raise InternalCompilerError(f"{op.kind} needs attribute {name!r}", op.loc)
            continue
        present += 1
        value = op.attrs[name]
        if not isinstance(value, kind) or kind is int and isinstance(value, bool):
            raise InternalCompilerError(f"{op.kind} attribute {name!r} must be {getattr(kind, '__name__', kind)}, "
                                        f"got {value!r}", op.loc)
    if present == len(op.attrs):  # every attribute the op has is one the definition names
        return
    extra = set(op.attrs) - set(d.attrs)
    if extra:
        raise InternalCompilerError(f"{op.kind} has unknown attributes {sorted(extra)}", op.loc)
