"""Structural and type checks of the IR, run between passes.

Beyond the block structure, every op is checked against its definition in
:mod:`coopdsl.ir.ops`: operand count, attribute names and types, and the op's
own ``verify`` rule for operand and result types (the cooperative-matrix rules
are the pure functions next to the op definitions, which the builtins apply
first at the user's line).  Every operand an op of the function defines must
be available where it is used: its definition dominates the use (comes first
in the same block, or in a block every path to the use passes through), and a
phi's operand dominates the end of the predecessor it arrives from.  Uses in
blocks control never reaches are not checked (nothing runs there).

A failure here is a bug in coopdsl (the front end reports user mistakes
itself), so it raises :class:`~coopdsl.errors.InternalCompilerError` naming
the user line whose op broke the invariant.
"""

from __future__ import annotations

from ..errors import InternalCompilerError
from .core import Block, Const, FuncRef, Function, GlobalVar, LoopMerge, Module, Op, Param, SpecConst, SpecOp
from .ops import OPS, OpDef, VerifyError

_OUTSIDE = (Const, SpecConst, SpecOp, GlobalVar, Param, FuncRef)  # values no op of the function defines


def verify(module: Module) -> None:
    """Raise InternalCompilerError if ``module`` breaks an IR invariant."""
    for func in module.functions:
        _verify_function(func)


def _verify_function(func: Function) -> None:
    blocks = set(map(id, func.blocks))
    where: dict[int, tuple[Block, int]] = {}  # id(op) -> (its block, its place among the block's ops)
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
        for i, op in enumerate(b.all_ops()):
            where[id(op)] = (b, i)
    dom = _Dominance(func.blocks[0]) if func.blocks else None
    for b in func.blocks:
        for phi in b.phis:
            incoming = phi.attrs["incoming"]
            if len(incoming) != len(phi.operands) or set(map(id, incoming)) != set(map(id, b.preds)):
                raise InternalCompilerError(f"phi in {b.name} does not match its predecessors", phi.loc)
        reached = dom is not None and dom.reaches(b)
        for i, op in enumerate(b.all_ops()):
            _verify_op(op, where)
            if reached:
                assert dom is not None
                _verify_dominance(op, b, i, where, dom)


def _verify_op(op: Op, where: dict[int, tuple[Block, int]]) -> None:
    try:
        d = OPS[op.kind]  # (a dict lookup; the registry's get() is a Python call)
    except KeyError:
        raise InternalCompilerError(f"unknown op kind {op.kind!r}", op.loc) from None
    low, high = d.operands
    if len(op.operands) < low or high is not None and len(op.operands) > high:
        raise InternalCompilerError(f"{op.kind} takes {low}..{high} operands, has {len(op.operands)}", op.loc)
    for v in op.operands:
        if id(v) in where:  # an op of this function (most operands)
            continue
        if not isinstance(v, _OUTSIDE):
            raise InternalCompilerError(f"{op.kind} uses a value not defined in its function", op.loc)
    if op.attrs or d.attrs:  # (with neither, there is nothing to check)
        _verify_attrs(op, d)
    if d.verify is not None:
        try:
            d.verify(op)
        except VerifyError as e:
            raise InternalCompilerError(str(e), op.loc) from None


def _verify_dominance(op: Op, block: Block, index: int, where: dict[int, tuple[Block, int]],
                      dom: _Dominance) -> None:
    """Every operand ``op`` (at ``index`` in reachable ``block``) takes from an op is defined where it is used."""
    if op.kind == "phi":
        for v, pred in zip(op.operands, op.attrs["incoming"]):
            home = where.get(id(v)) if isinstance(v, Op) else None
            if home is not None and dom.reaches(pred) and not dom.dominates(home[0], pred):
                raise InternalCompilerError(
                    f"phi in {block.name} takes the {_kind(v)} of block {home[0].name} from {pred.name}, which that "
                    f"block does not dominate", op.loc)
        return
    for v in op.operands:
        home = where.get(id(v)) if isinstance(v, Op) else None
        if home is None:
            continue
        if home[0] is block:
            if home[1] >= index:
                raise InternalCompilerError(
                    f"{op.kind} uses the {_kind(v)} of block {block.name} before it is defined", op.loc)
        elif not dom.dominates(home[0], block):
            raise InternalCompilerError(
                f"{op.kind} in block {block.name} uses the {_kind(v)} of block {home[0].name}, which does not "
                f"dominate it", op.loc)


def _kind(v: object) -> str:
    return v.kind if isinstance(v, Op) else type(v).__name__


class _Dominance:
    """The dominator tree of the blocks reachable from ``entry`` (Cooper, Harvey and Kennedy's algorithm),
    numbered so that a dominance query is two comparisons."""

    def __init__(self, entry: Block):
        order: list[Block] = []  # reverse postorder
        seen = {id(entry)}
        stack: list[tuple[Block, list[Block]]] = [(entry, list(entry.successors()))]
        while stack:
            b, succs = stack[-1]
            if succs:
                s = succs.pop(0)
                if id(s) not in seen:
                    seen.add(id(s))
                    stack.append((s, list(s.successors())))
            else:
                stack.pop()
                order.append(b)
        order.reverse()
        number = {id(b): i for i, b in enumerate(order)}
        idom: dict[int, int] = {0: 0}
        changed = True
        while changed:
            changed = False
            for i, b in enumerate(order[1:], 1):
                new = -1
                for p in b.preds:
                    j = number.get(id(p), -1)
                    if j < 0 or j not in idom:
                        continue
                    new = j if new < 0 else _intersect(idom, new, j)
                if idom.get(i) != new:
                    idom[i] = new
                    changed = True
        children: dict[int, list[int]] = {}
        for i in range(1, len(order)):
            children.setdefault(idom[i], []).append(i)
        self._number = number
        self._enter = [0] * len(order)
        self._leave = [0] * len(order)
        clock = 0
        walk: list[tuple[int, bool]] = [(0, False)]
        while walk:
            i, done = walk.pop()
            if done:
                self._leave[i] = clock
            else:
                self._enter[i] = clock
                walk.append((i, True))
                walk.extend((c, False) for c in children.get(i, ()))
            clock += 1

    def reaches(self, b: Block) -> bool:
        """Whether control can reach ``b`` from the entry."""
        return id(b) in self._number

    def dominates(self, a: Block, b: Block) -> bool:
        """Whether every path from the entry to ``b`` (reachable) passes through ``a``."""
        i, j = self._number.get(id(a)), self._number[id(b)]
        return i is not None and self._enter[i] <= self._enter[j] and self._leave[j] <= self._leave[i]


def _intersect(idom: dict[int, int], a: int, b: int) -> int:
    while a != b:
        while a > b:
            a = idom[a]
        while b > a:
            b = idom[b]
    return a


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
