"""The typed SSA IR: values, operations, blocks, functions, modules.

Control flow is a graph of basic blocks that is *structured* the way SPIR-V
wants it: a block that starts a selection or a loop carries its merge
information (:class:`SelectionMerge` / :class:`LoopMerge`), and values that
flow around loops or out of branches are ``phi`` operations.  Lowering to
SPIR-V (OpSelectionMerge, OpLoopMerge, OpPhi) is therefore one-to-one.

Every :class:`Op` carries the :class:`~coopdsl.errors.SourceLoc` of the user
code it came from.  Module-level values (constants, specialization constants,
global variables) are :class:`Const`, :class:`SpecConst` and :class:`GlobalVar`
and live in the :class:`Module`, not in blocks.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import field
from typing import Any, cast

from .._numbers import float_key
from .._records import record
from ..errors import SourceLoc
from .attrs import LoopHint
from .types import Dim, FunctionType, PointerType, ScalarType, StructType, SymDim, Type, symbolic, void

_ids = itertools.count()


class Value:
    """Anything an operation can use. ``type`` is its IR type."""

    def __init__(self, type: Type):
        self.type = type
        self.serial = next(_ids)  # stable identity for printing/debugging only

    @property
    def is_compile_time(self) -> bool:
        return False

    def __str__(self) -> str:  # how a message names a value: by its type, as kernels write it
        return f"a runtime {self.type}"


class Const(Value):
    """A constant (scalar, or a cooperative-matrix / vector splat of one)."""

    def __init__(self, type: Type, value: Any):
        super().__init__(type)
        self.value = value

    def __repr__(self) -> str:
        return f"const {self.type} {self.value!r}"


class SpecConst(Value):
    """A specialization constant (OpSpecConstant*, decorated with SpecId)."""

    type: ScalarType

    def __init__(self, type: ScalarType, name: str, spec_id: int, default: Any):
        super().__init__(type)
        self.name = name
        self.spec_id = spec_id
        self.default = default


class SpecOp(Value):
    """A module-level constant computed from specialization constants (OpSpecConstantOp).

    ``kind`` is an IR op kind (``mul``, ``add``, ``lt`` ...); ``sym`` is the
    symbolic dimension it stands for when used as a type parameter.
    """

    def __init__(self, kind: str, type: Type, operands: list[Value], sym: SymDim):
        super().__init__(type)
        self.kind = kind
        self.operands = list(operands)
        self.sym = sym


class GlobalVar(Value):
    """A module-scope variable; ``type`` is a PointerType.

    ``role`` is "buffer", "uniform", "push", "builtin", "shared" or "private"; ``info`` holds the
    role's details (binding/set, builtin name, ...).
    """

    type: PointerType

    def __init__(self, type: PointerType, name: str, role: str, **info: Any):
        super().__init__(type)
        self.name = name
        self.role = role
        self.info = dict(info)


class Param(Value):
    """A parameter of a helper function."""

    def __init__(self, type: Type, name: str):
        super().__init__(type)
        self.name = name


class FuncRef(Value):
    """A function used as an operand (the callbacks of reductions, per-element ops and decoders).

    Its type is the function's :class:`FunctionType`; it lowers to the
    function's id, not to a call.
    """

    type: FunctionType

    def __init__(self, func: Function):
        super().__init__(func.type)
        self.func = func

    def __repr__(self) -> str:
        return f"<function {self.func.name}>"


class Op(Value):
    """An operation: ``kind`` names its definition in :mod:`coopdsl.ir.ops`."""

    def __init__(self, kind: str, type: Type, operands: list[Value],
                 loc: SourceLoc, **attrs: Any):
        self.type = type  # (Value.__init__, inlined: ops are the values made most)
        self.serial = next(_ids)
        self.kind = kind
        self.operands = list(operands)
        self.attrs = attrs
        self.loc = loc
        self.block: Block | None = None

    @property
    def has_result(self) -> bool:
        return self.type is not void

    def __repr__(self) -> str:
        return f"<op {self.kind} : {self.type}>"


@record
class SelectionMerge:
    """The merge block of a selection header (OpSelectionMerge)."""

    merge: Block


@record
class LoopMerge:
    """The merge and continue blocks of a loop header, and its loop-control hint (OpLoopMerge)."""

    merge: Block
    cont: Block
    hint: LoopHint = LoopHint()


class Block:
    """A basic block: phis, then ops, then exactly one terminator."""

    def __init__(self, name: str):
        self.name = name
        self.phis: list[Op] = []
        self.ops: list[Op] = []
        self.terminator: Op | None = None
        self.merge: SelectionMerge | LoopMerge | None = None
        self.preds: list[Block] = []

    @property
    def last_op(self) -> Op:
        """The terminator of a finished block (every block of a built function has one)."""
        if self.terminator is None:
            raise ValueError(f"{self!r} has no terminator")
        return self.terminator

    def successors(self) -> list[Block]:
        t = self.terminator
        if t is None:
            return []
        return list(t.attrs.get("targets", ()))

    def all_ops(self) -> list[Op]:
        """Phis, ops and the terminator, in order (a new list: cheaper to make than a generator to run)."""
        if self.terminator is None:
            return [*self.phis, *self.ops]
        return [*self.phis, *self.ops, self.terminator]

    def __repr__(self) -> str:
        return f"<block {self.name}>"


@record
class Function:
    """A function: the kernel's entry point or a helper; ``blocks[0]`` is its entry block."""

    name: str
    type: FunctionType
    params: list[Param]
    blocks: list[Block] = field(default_factory=list)
    is_entry: bool = False
    loc: SourceLoc | None = None
    returns_tuple: bool = False  # a device function returning several values: a struct of them, unpacked at calls

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def ops(self) -> list[Op]:
        """Every op of every block, in block order."""
        return [op for b in self.blocks for op in b.all_ops()]


@record
class Module:
    """A compiled kernel: its entry function, helpers and module-level values."""

    name: str
    workgroup_size: tuple[int | SpecConst, ...] = (1, 1, 1)  # ints or SpecConst per dimension
    functions: list[Function] = field(default_factory=list)
    globals: list[GlobalVar] = field(default_factory=list)
    spec_consts: list[SpecConst] = field(default_factory=list)
    spec_ops: list[SpecOp] = field(default_factory=list)
    _consts: dict[tuple[Type, Any], Const] = field(default_factory=dict)
    source_file: str = ""
    target_version: tuple[int, int] = (1, 6)
    written_buffers: set[str] = field(default_factory=set)  # buffer names any function stores to
    # spec constant name -> the default compile(spec=...) gives it: the front end creates the constant with
    # that value, so every rule it checks at a spec constant's value sees it (not the Python default)
    spec_overrides: dict[str, Any] = field(default_factory=dict)
    helpers: dict[tuple[Any, ...], Function] = field(default_factory=dict)  # (device function, signature) -> Function
    # a type -> the first line that made a constant of it (a constant matrix splat has no op to carry a line):
    # reflection names it as the type's first use when it comes before every op that uses the type
    const_locs: dict[Type, SourceLoc] = field(default_factory=dict, repr=False)
    # SymDim -> spec_ops with it, in order
    _spec_ops_by_sym: dict[SymDim, list[SpecOp]] = field(default_factory=dict, repr=False)
    # (id(type), const key) -> (type, constant): const() for a type object seen before, without hashing the
    # type (the entry holds the object, so no other object takes its id)
    _consts_by_type_id: dict[tuple[int, Any], tuple[Type, Const]] = field(default_factory=dict, repr=False)

    def const(self, type: Type, value: Any) -> Const:
        """The (unique) constant of ``type`` with ``value``."""
        value_key = const_key(value)
        known = self._consts_by_type_id.get((id(type), value_key))
        if known is not None and known[0] is type:
            return known[1]
        key = (type, value_key)
        c = self._consts.get(key)
        if c is None:
            c = self._consts[key] = Const(type, value)
        self._consts_by_type_id[(id(type), value_key)] = (type, c)
        return c

    def spec_op(self, kind: str, type: Type, operands: list[Value]) -> SpecOp:
        """The (unique) OpSpecConstantOp computing ``kind`` over constant ``operands``."""
        sym = symbolic(kind, tuple(dim_of(v) for v in operands))
        same = self._spec_ops_by_sym.setdefault(sym, [])
        for op in same:
            if op.type == type:
                return op
        op = SpecOp(kind, type, operands, sym)
        self.spec_ops.append(op)
        same.append(op)
        return op

    def symbolic_value(self, sym: SymDim) -> Value:
        """The module value a symbolic dimension stands for."""
        if sym.op == "spec":
            return next(s for s in self.spec_consts if s.spec_id == sym.args[0])
        for o in self._spec_ops_by_sym.get(sym, ()):  # (spec_op() lists each op there, in the same order)
            if o in self.spec_ops:
                return o
        return next(o for o in self.spec_ops if o.sym == sym)

    def uses_device_addresses(self) -> bool:
        """Whether any value or global of the module involves a PhysicalStorageBuffer pointer."""
        if any(_has_psb(g.type) for g in self.globals):
            return True
        seen: set[int] = set()  # type objects looked into (ops share them: each is looked into once)
        for f in self.functions:  # only pointers and structs can hold one: the others are not looked into
            for t in [p.type for p in f.params] + [op.type for b in f.blocks for op in (*b.phis, *b.ops)]:
                if isinstance(t, (PointerType, StructType)) and id(t) not in seen:
                    if _has_psb(t):
                        return True
                    seen.add(id(t))
        return False

    @property
    def entry(self) -> Function:
        return next(f for f in self.functions if f.is_entry)


def _has_psb(t: Type, depth: int = 0) -> bool:
    """Whether ``t`` is or holds a PhysicalStorageBuffer pointer (a module-level function: a nested one
    calling itself is a reference cycle, left to the cyclic collector on every call)."""
    if depth > 6:
        return False
    if isinstance(t, PointerType):
        return t.space.is_physical or _has_psb(t.pointee, depth + 1)
    if isinstance(t, StructType):
        return any(_has_psb(m, depth + 1) for _, m in t.members)
    return False


def const_key(value: Any) -> Any:
    """The identity of a constant's value: 0.0 and -0.0, NaNs of other payloads (and True and 1) stay distinct;
    an enumerant is
    its value (``MatrixUse.B`` is the constant 1)."""
    if isinstance(value, float):
        return ("f", float_key(value))
    if isinstance(value, enum.Enum):
        value = value.value
    return (type(value).__name__, value)


def dim_of(v: Value) -> Dim:
    """A constant-like value as a Dim: an int, or a SymDim for spec constants and spec ops."""
    if isinstance(v, Const):
        return cast(Dim, v.value)
    if isinstance(v, SpecConst):
        return SymDim("spec", (v.spec_id, v.name, v.type.name, v.default))
    if isinstance(v, SpecOp):
        return v.sym
    raise TypeError(f"{v!r} is not a constant")
