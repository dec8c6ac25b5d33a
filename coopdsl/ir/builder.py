"""The IR builder: appends ops to the current block of a function, stamped with a location.

The :class:`Emitter` appends ops to the current block and stamps each with the
source location the code generator is visiting; phis, Function variables and
loop merges, which go elsewhere (a block's phis, the start of the entry block,
a loop header), are made by it too, so every op of a function is built here.
When the current block is ``None`` the code being compiled is unreachable
(after ``return``, ``break`` or ``continue``) and nothing is emitted.

It is also where the kernel's target meets what the IR needs of it: every op
whose definition declares an ``availability`` and every loop hint that has
one is checked against the module's SPIR-V version as it is built, at the
user's line (:func:`coopdsl.ir.targets.check_available`), so no builtin and
no part of the front end checks a version itself.  The one rewrite it makes
is a legalization: a select of values OpSelect cannot take becomes a branch
and a phi as it is built (:meth:`Emitter.legalize_select`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InternalCompilerError, SourceLoc, TypeMismatchError
from . import types as T
from .attrs import LoopHint
from .core import Block, Const, Function, LoopMerge, Module, Op, SelectionMerge, SpecConst, SpecOp, Value
from .literals import LiteralError, fit
from .ops import OPS
from .ops.base import is_float
from .targets import check_available


class Emitter:
    def __init__(self, module: Module, func: Function, loc: SourceLoc):
        self.module = module
        self.func = func
        self.loc = loc
        self.block: Block | None = None
        self._names: dict[str, int] = {}
        self._int_literals: dict[tuple[int, int], tuple[T.Type, Const]] = {}  # see literal()

    # -- blocks -----------------------------------------------------------------
    def new_block(self, hint: str) -> Block:
        n = self._names.get(hint, 0)
        self._names[hint] = n + 1
        return Block(hint if n == 0 else f"{hint}{n}")

    @property
    def current(self) -> Block:
        """The current block, where reachable code is being emitted (an internal error in unreachable code)."""
        if self.block is None:
            raise InternalCompilerError("no current block: the code is unreachable", self.loc)
        return self.block

    def start(self, block: Block | None) -> None:
        """Make ``block`` current (placing it in the function's block order)."""
        if block is not None and block not in self.func.blocks:
            self.func.blocks.append(block)
        self.block = block

    def terminate(self, kind: str, operands: Sequence[Value] = (), targets: Sequence[Block] = ()) -> None:
        if self.block is None:
            return
        if self.block.terminator is not None:
            raise InternalCompilerError("block already terminated", self.loc)
        op = Op(kind, T.void, list(operands), self.loc, **({"targets": list(targets)} if targets else {}))
        op.block = self.block
        self.block.terminator = op
        for t in targets:
            t.preds.append(self.block)
        self.block = None

    def branch(self, target: Block) -> None:
        self.terminate("br", targets=[target])

    # -- ops --------------------------------------------------------------------
    def op(self, kind: str, type: T.Type, operands: list[Value], **attrs: Any) -> Op | SpecOp:
        """Op ``kind`` at the current location, once the kernel's target is found to have it (its
        definition's ``availability``)."""
        try:
            need = OPS[kind].availability  # (a dict lookup; the registry's ``in`` is a Python call)
        except KeyError:
            raise InternalCompilerError(f"unknown op kind {kind}", self.loc) from None
        if need is not None:
            check_available(self.module.target_version, need, self.loc, type, operands)
        if kind == "select" and self.block is not None and (isinstance(type, BRANCH_SELECTED) or isinstance(
                type, T.StructType) and self.module.target_version < (1, 4)):   # (OpSelect of a struct: SPIR-V 1.4)
            return self.legalize_select(self.block, *operands)
        # (an op whose first operand is an op is not foldable: _spec_foldable's loop would stop there)
        if kind in SPEC_FOLDABLE and operands and _type(operands[0]) is not Op and \
                _spec_foldable(kind, type, operands, attrs):
            # integer/bool arithmetic on specialization constants stays a constant
            # (OpSpecConstantOp), so it can size types and arrays.
            return self.module.spec_op(kind, type, operands)
        op = Op(kind, type, operands, self.loc, **attrs)
        if self.block is not None:
            op.block = self.block
            self.block.ops.append(op)
        return op

    # -- legalizations: ops the SPIR-V writer cannot take as asked, rewritten as they are built -------
    def legalize_select(self, header: Block, cond: Value, a: Value, b: Value) -> Op:
        """``cond ? a : b`` for values OpSelect cannot take (:data:`BRANCH_SELECTED`: spirv-val rejects it on
        cooperative matrices, tensor layouts and views, on arrays, and on structs before SPIR-V 1.4) as a selection and
        an OpPhi, built in place of the select op, so that every select the IR holds is one SPIR-V takes."""
        then_b, else_b, merge = self.new_block("sel_true"), self.new_block("sel_false"), self.new_block("sel_end")
        header.merge = SelectionMerge(merge)
        self.terminate("cond_br", [cond], [then_b, else_b])
        for blk in (then_b, else_b):
            self.start(blk)
            self.branch(merge)
        self.start(merge)
        return self.phi(merge, a.type, [a, b], [then_b, else_b])

    def phi(self, block: Block, type: T.Type, operands: list[Value], incoming: list[Block],
            loc: SourceLoc | None = None, **attrs: Any) -> Op:
        """A phi at the end of ``block``'s phis: operand i arrives from ``incoming[i]`` (a loop header's phi
        gets its back-edge operands later)."""
        phi = Op("phi", type, operands, self.loc if loc is None else loc, incoming=incoming, **attrs)
        phi.block = block
        block.phis.append(phi)
        return phi

    def loop_merge(self, header: Block, merge: Block, cont: Block, hint: LoopHint = LoopHint(),
                   loc: SourceLoc | None = None) -> None:
        """Make ``header`` a loop header merging at ``merge`` and continuing at ``cont``, with the
        loop-control ``hint`` once the target is found to have it (reported at ``loc``, default the
        current location: the front end gives the loop's range call)."""
        need = hint.availability
        if need is not None:
            check_available(self.module.target_version, need, self.loc if loc is None else loc, hint)
        header.merge = LoopMerge(merge, cont, hint)

    def selection_merge(self, header: Block, merge: Block) -> None:
        """Make ``header`` a selection header merging at ``merge`` (its conditional branch comes next)."""
        header.merge = SelectionMerge(merge)

    def function_variable(self, ptr: T.PointerType) -> Op:
        """A Function-storage variable, placed after the other variables at the start of the entry block
        (SPIR-V wants them first)."""
        entry = self.func.entry
        op = Op("variable", ptr, [], self.loc)
        op.block = entry
        at = sum(1 for o in entry.ops if o.kind == "variable")
        entry.ops.insert(at, op)
        return op

    def const(self, type: T.Type, value: Any) -> Const:
        return self.module.const(type, value)

    def literal(self, value: Any, type: T.Type) -> Const:
        """A Python number as a constant of ``type`` (scalar component for composites)."""
        if _type(value) is int:  # an int literal of a type object seen before: its constant, found once
            known = self._int_literals.get((id(type), value))
            if known is not None and known[0] is type:
                return known[1]
        elem = T.elem_of(type)
        if not isinstance(elem, T.ScalarType):
            raise TypeMismatchError(f"cannot use the number {value!r} as a {type}", self.loc)
        try:
            c = self.const(type, fit(value, elem))
        except LiteralError as e:
            raise TypeMismatchError(str(e), self.loc) from None
        if _type(value) is int:  # (the entry holds the type object, so no other object takes its id)
            self._int_literals[(id(type), value)] = (type, c)
        return c


_type = type  # (Emitter.op's parameter ``type`` hides the builtin)

# spirv-val rejects OpSelect on these (on arrays before SPIR-V 1.4)
BRANCH_SELECTED = (T.CoopMatType, T.TensorLayoutType, T.TensorViewType, T.ArrayType)
SPEC_FOLDABLE = {"add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "neg", "not",
                 "lt", "le", "gt", "ge", "eq", "ne", "land", "lor", "select"}


def _spec_foldable(kind: str, type: T.Type, operands: list[Value], attrs: dict[str, Any]) -> bool:
    """SPIR-V allows these opcodes in OpSpecConstantOp for shaders (integers and bools only)."""
    if kind not in SPEC_FOLDABLE or attrs or not isinstance(type, T.ScalarType) or type.is_float:
        return False
    symbolic = False  # (loops, not generators: this runs for every op the front end makes)
    for v in operands:
        if isinstance(v, (SpecConst, SpecOp)):
            symbolic = True
        elif not isinstance(v, Const):
            return False
    if not symbolic:
        return False
    for v in operands:
        if is_float(v.type):
            return False
    return True
