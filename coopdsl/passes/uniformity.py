"""uniformity: which values and blocks are uniform, and tangled ops in non-uniform control flow.

For every value the analysis knows whether it is the same in every invocation
of the workgroup (``WORKGROUP``), only within each subgroup (``SUBGROUP``), or
neither (``DIVERGENT``); for every block, with which of these uniformities
control reaches it.  Cooperative-matrix operations must be executed by every
invocation of the matrix's scope together and control barriers by every
invocation of their execution scope, so one of them in a block that control
reaches less uniformly is a :class:`~coopdsl.errors.UniformityError` (see
docs/uniformity.md for the rules and the ``cd.assume_uniform`` escape hatch).
So is an operand of a matrix operation that certainly differs within the
matrix's scope (SPIR-V requires every operand to be dynamically uniform); one
that only possibly differs (read from memory the kernel writes) is left to
the interpreter's run-time check.

The analysis is optimistic and monotone (in the style of WGSL's uniformity
analysis and of SSA divergence analyses): every level starts at WORKGROUP and
only goes down, until nothing changes.

* Values: constants, specialization constants, push constants and uniform
  blocks are uniform; builtins by their meaning (:data:`BUILTIN_LEVELS`);
  loads are as uniform as their address when the memory is read-only in the
  kernel (Function variables, and Private ones only the kernel uses: as
  uniform as everything stored to them and the control under which it was
  stored; an element written into a matrix leaves the matrix as it was);
  atomics are divergent; subgroup
  reductions, broadcasts, votes and ballots are subgroup-uniform; other ops are
  as uniform as their least uniform operand.  A phi is also only as uniform as
  the branches whose two sides meet at it, and a value leaving a loop only as
  uniform as the loop's exits (invocations may leave at different iterations).
* Control: a block is reached as uniformly as the least uniform condition of
  the branches it is control dependent on (which covers ``if``, loop
  conditions, ``break``, ``continue`` and early ``return``).
* Device functions are analysed once per combination of argument
  uniformities, relative to their entry; a call is as demanding as the most
  demanding tangled op its callee runs in the callee's uniform control flow.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable, Iterator
from typing import cast

from .._records import record
from ..errors import SourceLoc, UniformityError
from ..ir import types as T
from ..ir.attrs import Scope
from ..ir.core import Block, Const, Function, GlobalVar, Module, Op, Param, Value
from ..ir.ops import OPS
from .cfg import CFG, cond_loc


class Level(enum.IntEnum):
    """How uniform a value or the control reaching a block is (ordered: more is more uniform)."""

    DIVERGENT = 0
    SUBGROUP = 1
    WORKGROUP = 2


DIVERGENT, SUBGROUP, WORKGROUP = Level.DIVERGENT, Level.SUBGROUP, Level.WORKGROUP


@record(frozen=True)
class Origin:
    """Why a value is not workgroup-uniform: what it comes from, and where."""

    what: str
    loc: SourceLoc | None = None
    # only possibly not uniform: a load from memory the kernel also writes (a value another invocation may
    # have stored), which is often uniform in fact (a shared value read after a barrier)
    maybe: bool = False


Fact = tuple[Level, Origin | None]  # (Level, Origin | None)
UNIFORM: Fact = (WORKGROUP, None)

# SPIR-V BuiltIn -> uniformity; builtins not listed (invocation ids, subgroup masks) are divergent.
BUILTIN_LEVELS = {"WorkgroupId": WORKGROUP, "NumWorkgroups": WORKGROUP, "WorkgroupSize": WORKGROUP,
                  "SubgroupSize": WORKGROUP, "NumSubgroups": WORKGROUP, "SubgroupId": SUBGROUP}
# builtins whose component i is the workgroup id's when the workgroup is 1 wide along i
PER_AXIS = ("LocalInvocationId", "GlobalInvocationId")
# What ops do is read from their definitions (coopdsl.ir.ops): ``writes`` (memory through operand 0),
# ``atomic``, ``element_access`` (per-invocation access to matrix elements) and ``per_invocation_operands``
# (matrix ops whose operands are each invocation's row or column of the matrix; every other op that takes or
# makes a cooperative matrix needs all its operands uniform in the matrix's scope, SPV_KHR_cooperative_matrix:
# "All the operands to this instruction must be dynamically uniform within every instance of the Scope of the
# cooperative matrix").
DEVICE_MEMORY = "device memory"  # the memory root of every PhysicalStorageBuffer pointer
UNKNOWN_MEMORY = "unknown memory"
MemoryRoot = Value | str  # a GlobalVar, a ``variable`` op, DEVICE_MEMORY or UNKNOWN_MEMORY


def worst(facts: Iterable[Fact]) -> Fact:
    """The least uniform of ``facts`` (on a tie the first one, unless a later one is certain where the first
    is only possibly not uniform)."""
    out = UNIFORM
    for f in facts:
        if f[0] < out[0] or f[0] == out[0] and _more_certain(f, out):
            out = f
    return out


def _more_certain(f: Fact, than: Fact) -> bool:
    """Whether ``f`` certainly is what ``than`` only possibly is (both at one level below WORKGROUP)."""
    return than[1] is not None and than[1].maybe and f[1] is not None and not f[1].maybe


def memory_root(ptr: Value) -> MemoryRoot:
    """The variable a pointer points into: a GlobalVar, a ``variable`` op, DEVICE_MEMORY or UNKNOWN_MEMORY."""
    if isinstance(ptr.type, T.PointerType) and ptr.type.space.is_physical:
        return DEVICE_MEMORY
    while isinstance(ptr, Op) and ptr.kind == "access":
        ptr = ptr.operands[0]
    if isinstance(ptr, GlobalVar) or isinstance(ptr, Op) and ptr.kind == "variable":
        return ptr
    return UNKNOWN_MEMORY


def _storage_buffer(root: MemoryRoot) -> bool:
    """Whether ``root`` is a storage buffer, memory a device pointer may also reach."""
    return isinstance(root, GlobalVar) and root.role == "buffer"


_SCOPE_LEVELS = {Scope.Subgroup.value: SUBGROUP, Scope.Invocation.value: DIVERGENT}  # others: WORKGROUP


def scope_level(scope: object) -> Level:
    """The control uniformity an op of ``scope`` needs (a symbolic scope may be Workgroup: WORKGROUP)."""
    value = scope.value if isinstance(scope, Scope) else scope
    if not isinstance(value, int):
        return WORKGROUP
    return _SCOPE_LEVELS.get(value, WORKGROUP)


def matrix_scope_level(op: Op) -> Level:
    """The uniformity needed by an op that takes or makes cooperative matrices (DIVERGENT: none)."""
    if op.kind == "phi" or OPS[op.kind].element_access:
        return DIVERGENT
    # the most demanding scope among the result and operand types (a loop: runs per op)
    t = op.type
    level = scope_level(t.scope) if isinstance(t, T.CoopMatType) else DIVERGENT
    for v in op.operands:
        t = v.type
        if isinstance(t, T.CoopMatType):
            level = max(level, scope_level(t.scope))
    return level


@record(frozen=True)
class Need:
    """What a tangled op (or a call of a function running one) requires: a control uniformity and why."""

    level: Level
    op: Op  # the tangled op itself (inside the callee for calls)
    via: tuple[Op, ...] = ()  # the calls leading to it, outermost first


class FunctionUniformity:
    """The uniformity of one function's values and blocks, for given uniformities of its parameters.

    Levels of blocks are relative to the function's entry (the entry block is
    WORKGROUP); call sites combine them with their own control.
    """

    def __init__(self, analysis: Uniformity, func: Function, params: tuple[Level, ...]):
        self.analysis = analysis
        self.func = func
        self.params = params
        self.cfg = CFG(func)
        self.module_entry = analysis.module.entry
        self.facts: dict[int, Fact] = {}
        for p, level in zip(func.params, params):
            self.facts[id(p)] = (level, Origin(f"the argument '{p.name}' of {func.name}()", func.loc))
        self.ctl: dict[Block, Level] = {b: WORKGROUP for b in self.cfg.blocks}
        self.var_facts: dict[int, Fact] = {}  # Function variables: what was stored to them
        self.result: Fact = UNIFORM
        self.need: Need | None = None
        self._requirements: dict[int, Need | None] = {}  # by id(op), once solved
        self._ops: list[Op] = []  # the reachable ops in order (listed by solve())
        self._matrix_ops: list[Op] = []  # those whose operands must be uniform in their matrices' scope
        self._has_calls = False  # whether one of them is a call (found by solve())
        # (def block, use block) -> loops left between them
        self._left: dict[tuple[Block, Block | None], tuple[Block, ...]] = {}

    # -- queries -----------------------------------------------------------------------------
    def fact(self, v: Value) -> Fact:
        """(level, origin) of ``v`` where it is defined."""
        if isinstance(v, (Op, Param)):
            return self.facts.get(id(v), UNIFORM)
        return UNIFORM  # constants, spec constants, globals (pointers), function references

    def fact_at(self, v: Value, block: Block | None) -> Fact:
        """(level, origin) of ``v`` used in ``block``: a value used outside a loop it was computed in is
        only as uniform as that loop's exits (invocations may leave it at different iterations)."""
        if not isinstance(v, (Op, Param)):
            return UNIFORM  # constants, spec constants, globals (pointers), function references
        f = self.facts.get(id(v), UNIFORM)
        home = v.block if isinstance(v, Op) else None
        if home is None or home is block:  # not computed in a block, or used where it is computed
            return f
        loops_of = self.cfg.loops_of
        around = loops_of.get(home)
        if not around:  # not computed in a loop: none to leave
            return f
        key = (home, block)
        left = self._left.get(key)
        if left is None:  # the loops around the definition that are not around the use (once per pair)
            around_use = loops_of.get(block, set()) if block is not None else set()
            left = self._left[key] = tuple(around - around_use)
        if not left:
            return f
        op = cast(Op, v)  # only ops have a home block
        for h in left:
            level, _ = self.exit_fact(h)
            if level < f[0]:
                f = (level, Origin(f"a value computed in the loop at line {_loop_line(h)}, which invocations "
                                   f"leave at different iterations", op.loc))
        return f

    def cond_fact(self, branch: Block) -> Fact:
        """(level, origin) of the condition ``branch`` ends with."""
        return self.fact_at(branch.last_op.operands[0], branch)

    def exit_fact(self, header: Block) -> Fact:
        """How uniformly invocations leave the loop headed by ``header``: the least uniform condition of
        the branches in the loop that decide whether it goes round again."""
        body = self.cfg.loops[header]
        return worst(self.cond_fact(x) for x in self.cfg.control_deps[header] if x in body)

    # -- solving -----------------------------------------------------------------------------
    def solve(self) -> None:
        """Lower levels until nothing changes, then summarise the result and the requirement."""
        sweep, watched = self._list_ops()
        facts = self.facts
        again = True
        while again:  # a sweep whose changes no op before it reads leaves the next one nothing to change
            again = False
            for op, key, transfer, writes in sweep:
                if transfer is not None:
                    cur = facts.get(key, UNIFORM)
                    old = cur[0]
                    # nothing is lower than DIVERGENT: the (side-effect free) transfer could not change it,
                    # except to make a possible divergence a certain one; calls are evaluated still (each
                    # analyses its callee for the arguments' levels)
                    if old or transfer is _CALL or cur[1] is not None and cur[1].maybe:
                        fact = transfer(self, op)
                        if fact[0] < old or fact[0] == old and old < WORKGROUP and _more_certain(fact, cur):
                            facts[key] = fact  # (_lower, inlined)
                            if key in watched:
                                again = True
                if writes and self._record_write(op):
                    again = True  # (loads of the variable may come before the write)
            if self._update_control():
                again = True
        self.result = self._result()
        self.need = self._need()

    def _list_ops(self) -> tuple[list[tuple[Op, int, _Transfer | None, bool]], set[int]]:
        """One walk over the reachable ops, in order: lists them (for _need()), finds the requirements
        that do not depend on the facts (all but calls'; kept when there is one), and returns

        * the sweep: each op with its id, its transfer function (None: no result) and whether it writes
          (an op with neither does nothing in a sweep and is left out);
        * the watched values: those an op at or before their own place in the sweep reads (a phi's value
          from the end of its loop), and branch conditions (exit and control facts read them anywhere).
          A sweep that lowers none of them, no variable's and no block's control changes nothing for the
          ops before each change: the sweep after it would change nothing (the fixed point is reached).
        """
        sweep = []
        ops = self._ops
        known = self._requirements
        listed: set[int] = set()
        watched: set[int] = set()
        for b in self.cfg.blocks:
            for op in b.all_ops():
                ops.append(op)
                kind_transfer, writes, execution, exempt = _KIND_ROWS.get(op.kind) or _kind_row(op.kind)
                transfer = None if op.type is T.void else kind_transfer
                matrix = isinstance(op.type, T.CoopMatType)  # (whether it makes or takes one: _has_matrix())
                if transfer is not None or writes:
                    sweep.append((op, id(op), transfer, writes))
                    for v in op.operands:
                        if id(v) not in listed:
                            watched.add(id(v))
                        if isinstance(v.type, T.CoopMatType):
                            matrix = True
                elif not matrix:
                    matrix = _has_matrix(op)
                listed.add(id(op))
                if op.kind == "construct" and isinstance(op.type, T.StructType):
                    exempt = True   # (a struct that carries a matrix, as a device function's tuple: no matrix op)
                if execution or not exempt and matrix:
                    need = _static_requirement(op)
                    if need is not None:
                        known[id(op)] = need
                        if matrix and not OPS[op.kind].per_invocation_operands:
                            self._matrix_ops.append(op)
                elif op.kind == "call":
                    self._has_calls = True
            assert b.terminator is not None
            if b.terminator.kind == "cond_br":
                watched.add(id(b.terminator.operands[0]))
        return sweep, watched

    @staticmethod
    def _lower(table: dict[int, Fact], key: int, fact: Fact) -> bool:
        old = table.get(key, UNIFORM)
        if fact[0] < old[0] or fact[0] == old[0] < WORKGROUP and _more_certain(fact, old):
            table[key] = fact
            return True
        return False

    def _update_control(self) -> bool:
        changed = False
        ctl, control_deps = self.ctl, self.cfg.control_deps
        conds: dict[Block, Level] = {}  # each branch's condition, once (it does not depend on control)
        for b in self.cfg.blocks:
            level = WORKGROUP  # the least uniform of the branches b depends on (and of their own control)
            for x in control_deps[b]:
                cond = conds.get(x)
                if cond is None:
                    cond = conds[x] = self.cond_fact(x)[0]
                if cond < level:
                    level = cond
                if ctl[x] < level:
                    level = ctl[x]
            if level < ctl[b]:
                ctl[b] = level
                changed = True
        return changed

    def _record_write(self, op: Op) -> bool:
        root = memory_root(op.operands[0])
        if not (isinstance(root, Op) and root.kind == "variable"
                or root in self.analysis.kernel_private and self.func is self.module_entry):
            return False
        block = op.block
        assert block is not None  # the ops analysed are in blocks
        matrix = _matrix_of(op.operands[0])
        if matrix is not None:  # one element of a matrix, per invocation by nature: the matrix stays one matrix
            return self._lower(self.var_facts, id(root), self.fact_at(matrix, block))
        value = (DIVERGENT, Origin("the result of an atomic operation", op.loc)) if OPS[op.kind].atomic \
            else self.fact_at(op.operands[1], block)
        control = (self.ctl[block], Origin("a value stored under non-uniform control flow", op.loc))
        return self._lower(self.var_facts, id(root), worst([value, self.fact_at(op.operands[0], block), control]))

    # -- transfer functions ------------------------------------------------------------------
    def _operands(self, op: Op) -> Fact:
        out = UNIFORM  # worst() of the operands' facts, unrolled: this runs for most ops on every sweep
        block, facts = op.block, self.facts
        for v in op.operands:
            if type(v) is Op and v.block is block:  # computed in this block: fact_at's first answer
                f = facts.get(id(v), UNIFORM)
            elif isinstance(v, (Op, Param)):
                f = self.fact_at(v, block)
            else:
                continue  # uniform: never lower than out
            if f[0] < out[0] or f[0] == out[0] and f[0] < WORKGROUP and _more_certain(f, out):
                out = f
        return out

    def _phi(self, op: Op) -> Fact:
        block = op.block
        assert block is not None  # the ops analysed are in blocks
        facts = [self.fact_at(v, block) for v in op.operands]
        for x in self.cfg.sync_deps.get(block, ()):
            level, _ = self.cond_fact(x)
            loc = cond_loc(x)
            facts.append((level, Origin(f"a value that depends on which way the branch at line {loc.line} went", loc)))
        for h in self.cfg.exits_into.get(block, ()):
            level, _ = self.exit_fact(h)
            facts.append((level, Origin(f"a value that depends on when invocations left the loop at line "
                                        f"{_loop_line(h)}", op.loc)))
        return worst(facts)

    def _load(self, op: Op) -> Fact:
        ptr = op.operands[0]
        address = self.fact_at(ptr, op.block)
        root = memory_root(ptr)
        if isinstance(root, GlobalVar) and root.role == "builtin":
            level = BUILTIN_LEVELS.get(root.info.get("builtin", ""), DIVERGENT)
            return level, (Origin(f"cd.{root.name}", op.loc) if level < WORKGROUP else None)
        if isinstance(root, GlobalVar) and root.role in ("push", "uniform"):
            return address
        if isinstance(root, Op) or root in self.analysis.kernel_private and self.func is self.module_entry:
            # a Function variable, or a Private one only the kernel uses
            if _into_matrix(ptr):  # m[i] with a runtime i: one invocation's element, like an extract
                return DIVERGENT, Origin("an element of a cooperative matrix (each invocation holds different "
                                         "ones)", op.loc)
            return worst([address, self.var_facts.get(id(root), UNIFORM)])
        if self.analysis.read_only(root):
            return address
        if address[0] == DIVERGENT and not (address[1] is not None and address[1].maybe):
            return address   # an address that certainly differs per invocation: as for read-only memory
        return DIVERGENT, Origin(f"a load from {_memory_name(root)}, {self.analysis.writer_of(root)}", op.loc,
                                 maybe=True)

    def _extract(self, op: Op) -> Fact:
        src = op.operands[0]
        if isinstance(src, Op) and src.kind == "coop_reduce" and _whole_matrix(src.attrs["mode"]) and \
                isinstance(src.type, T.CoopMatType):
            level = scope_level(src.type.scope)  # every element holds the one combined value
            return level, (None if level == WORKGROUP else Origin("an element of a subgroup-scope matrix "
                                                                  "reduced with cd.Row | cd.Column", op.loc))
        if isinstance(src.type, T.CoopMatType):
            return DIVERGENT, Origin("an element of a cooperative matrix (each invocation holds different ones)",
                                     op.loc)
        if op.kind == "extract" and self._one_wide_axis(src, op.attrs["index"]):
            return UNIFORM
        if op.kind == "extract" and isinstance(src.type, T.StructType) and isinstance(src, Op):
            if src.kind == "construct":   # a member is as uniform as the value it was made of
                return self.fact_at(src.operands[op.attrs["index"]], op.block)
            if src.kind == "call":        # a device function's tuple: its member, as the callee returns it
                callee = self.analysis.function(src.attrs["func"], self.argument_levels(src))
                return callee.member_result(op.attrs["index"])
        return self._operands(op)

    def _one_wide_axis(self, v: Value, index: int) -> bool:
        """Whether ``v`` is a load of an invocation-id builtin and the workgroup is 1 wide along ``index``."""
        return _builtin_of(v) in PER_AXIS and self.analysis.extent(index) == 1

    def _divide(self, op: Op) -> Fact:
        """``id // d`` (or ``id >> s``) of an invocation id is the same in the whole workgroup when ``d`` is
        a multiple of the workgroup's extent (local ids: at least the extent; the result is 0)."""
        x, d = op.operands
        if isinstance(d, Const) and isinstance(d.value, int) and d.value >= 0 and _is_unsigned(op.type):
            divisor = 1 << d.value if op.kind == "shr" else d.value
            builtin, extent = self._invocation_axis(x)
            if divisor > 0 and extent is not None and (
                    builtin == "GlobalInvocationId" and divisor % extent == 0 or
                    builtin in ("LocalInvocationId", "LocalInvocationIndex") and divisor >= extent):
                return UNIFORM
        return self._operands(op)

    def _invocation_axis(self, v: Value) -> tuple[str | None, int | None]:
        """(builtin, extent of the workgroup along it) when ``v`` is an invocation-id component, else (None, None)."""
        if isinstance(v, Op) and v.kind == "extract" and _builtin_of(v.operands[0]) in PER_AXIS:
            return _builtin_of(v.operands[0]), self.analysis.extent(v.attrs["index"])
        if _builtin_of(v) == "LocalInvocationIndex":
            return "LocalInvocationIndex", self.analysis.extent(None)
        return None, None

    def _call(self, op: Op) -> Fact:
        callee = self.analysis.function(op.attrs["func"], self.argument_levels(op))
        return callee.result

    def argument_levels(self, call: Op) -> tuple[Level, ...]:
        """The uniformity of a call's arguments: the context its callee is analysed in."""
        return tuple(self.fact_at(v, call.block)[0] for v in call.operands)

    # -- summaries ---------------------------------------------------------------------------
    def _result(self) -> Fact:
        facts = []
        for b in self.cfg.blocks:
            t = b.terminator
            assert t is not None
            if t.kind == "return" and t.operands:
                facts.append(self.fact_at(t.operands[0], b))
                facts.append((self.ctl[b], Origin(f"the return at line {t.loc.line}, reached under non-uniform "
                                                  f"control flow", t.loc)))
        return worst(facts)

    def member_result(self, index: int) -> Fact:
        """:meth:`_result` for member ``index`` of a returned tuple (a struct built just before each return)."""
        facts = []
        for b in self.cfg.blocks:
            t = b.terminator
            assert t is not None
            if t.kind == "return" and t.operands:
                v = t.operands[0]
                part = v.operands[index] if isinstance(v, Op) and v.kind == "construct" else v
                facts.append(self.fact_at(part, b))
                facts.append((self.ctl[b], Origin(f"the return at line {t.loc.line}, reached under non-uniform "
                                                  f"control flow", t.loc)))
        return worst(facts)

    def requirement(self, op: Op) -> Need | None:
        """What ``op`` needs of the control flow reaching it (None: nothing); computed once per op."""
        known = self._requirements
        if id(op) not in known:
            known[id(op)] = self._requirement(op)
        return known[id(op)]

    def _requirement(self, op: Op) -> Need | None:
        if op.kind == "call":
            callee = self.analysis.function(op.attrs["func"], self.argument_levels(op))
            n = callee.need
            return None if n is None else Need(n.level, n.op, (op,) + n.via)
        return _static_requirement(op)

    def _need(self) -> Need | None:
        """The most demanding requirement of the function's ops (the first one on a tie)."""
        best = None
        known = self._requirements  # (every op's but calls', where it has one: found by solve())
        for op in self._ops:
            n = self.requirement(op) if op.kind == "call" else known.get(id(op))
            if n is not None and (best is None or n.level > best.level):
                best = n
        return best

    def errors(self, calls: tuple[Op, ...] = ()) -> Iterator[UniformityError]:
        """UniformityErrors of this function's ops: first those of control flow, in program order (callees'
        before their calls), then those of operands (a matrix made under non-uniform control is a
        non-uniform operand later: the control is the cause to report); ``calls`` are the call ops that lead
        here from the kernel."""
        yield from self._control_errors(calls)
        yield from self._operand_errors(calls)

    def _control_errors(self, calls: tuple[Op, ...]) -> Iterator[UniformityError]:
        if not self._has_calls and all(n is None or self.ctl[cast(Block, n.op.block)] >= n.level
                                       for n in self._requirements.values()):
            return  # no op needs control more uniform than reaches it, and no callee to look into (the usual)
        reachable = set(self.cfg.blocks)
        known = self._requirements  # (every reachable op's that has one, made by solve() and _need())
        for b in self.func.blocks:
            if b not in reachable:
                continue
            for op in b.all_ops():
                if op.kind == "call":
                    callee = self.analysis.function(op.attrs["func"], self.argument_levels(op))
                    yield from callee._control_errors(calls + (op,))
                    n = self.requirement(op)
                else:
                    n = known.get(id(op))
                if n is not None and self.ctl[b] < n.level:
                    from .uniformity_report import error  # (the messages: only a kernel in error needs them)

                    yield error(self, b, n, calls)

    def _operand_errors(self, calls: tuple[Op, ...]) -> Iterator[UniformityError]:
        operands = self.nonuniform_operands()
        if not self._has_calls and not operands:
            return
        for op in self._ops:
            if op.kind == "call":
                callee = self.analysis.function(op.attrs["func"], self.argument_levels(op))
                yield from callee._operand_errors(calls + (op,))
            bad = operands.get(id(op))
            if bad is not None:
                from .uniformity_report import operand_error

                index, fact, level = bad
                yield operand_error(self, op, index, fact, level, calls)

    def nonuniform_operands(self) -> dict[int, tuple[int, Fact, Level]]:
        """The matrix ops with an operand less uniform than their matrices' scope needs: id(op) ->
        (operand index, the operand's fact, the level needed); the first such operand of each op."""
        out = {}
        for op in self._matrix_ops:
            need = self._requirements[id(op)]
            assert need is not None  # (listed with their requirement)
            for i, v in enumerate(op.operands):
                fact = self.fact_at(v, op.block)
                # only what certainly differs: a value that is merely read from memory the kernel writes is
                # often uniform in fact (a shared value after a barrier); the interpreter checks it at run time
                if fact[0] < need.level and not (fact[1] is not None and fact[1].maybe):
                    out[id(op)] = (i, fact, need.level)
                    break
        return out


def _whole_matrix(mode: object) -> bool:
    """Whether a reduction in ``mode`` leaves every element the same (cd.Row | cd.Column)."""
    from ..ir.ops.coopmat2 import ReduceMode  # (loaded: the reduction being looked at is one of its ops)

    return mode == ReduceMode.Row | ReduceMode.Column


def _matrix_of(ptr: Value) -> Value | None:
    """The pointer to the cooperative matrix ``ptr`` points into an element of (None: it does not)."""
    while isinstance(ptr, Op) and ptr.kind == "access":
        ptr = ptr.operands[0]
        if isinstance(ptr.type, T.PointerType) and isinstance(ptr.type.pointee, T.CoopMatType):
            return ptr
    return None


def _into_matrix(ptr: Value) -> bool:
    """Whether ``ptr`` is an access chain through a cooperative matrix (to one of its elements)."""
    while isinstance(ptr, Op) and ptr.kind == "access":
        ptr = ptr.operands[0]
        if isinstance(ptr.type, T.PointerType) and isinstance(ptr.type.pointee, T.CoopMatType):
            return True
    return False


# a transfer function: the fact of an op's result, from its operands' (a FunctionUniformity method)
_Transfer = Callable[[FunctionUniformity, Op], Fact]
_TRANSFER: dict[str, _Transfer] = {
    "phi": FunctionUniformity._phi, "load": FunctionUniformity._load,
    "extract": FunctionUniformity._extract, "extract_dyn": FunctionUniformity._extract,
    "div": FunctionUniformity._divide, "shr": FunctionUniformity._divide,
    "call": FunctionUniformity._call, "assume_uniform": lambda self, op: UNIFORM,
    "coop_to_array": lambda self, op: (DIVERGENT, Origin("a row or column of a cooperative matrix "
                                                         "(each invocation gets its own)", op.loc)),
    "variable": lambda self, op: UNIFORM,
    # an element put into a matrix (per invocation by nature) leaves it one matrix, and a matrix
    # built from each invocation's row or column is one matrix
    "insert": lambda self, op: self.fact_at(op.operands[1], op.block)
    if isinstance(op.type, T.CoopMatType) else self._operands(op),
    "coop_from_array": lambda self, op: UNIFORM}


_CALL = FunctionUniformity._call
# op kind -> (its transfer function, whether it writes memory, whether it is tangled by its execution scope,
# whether no matrix scope's uniformity is needed of it by its types: phis, element access and calls, whose
# requirement is their callee's): what the sweep asks of every op, found once per kind
_KIND_ROWS: dict[str, tuple[_Transfer, bool, bool, bool]] = {}


def _kind_row(kind: str) -> tuple[_Transfer, bool, bool, bool]:
    d = OPS[kind]
    transfer = _TRANSFER.get(kind) or (_subgroup if d.tangled == "subgroup" else None)
    if transfer is None:
        transfer = _atomic if d.atomic else FunctionUniformity._operands
    row = _KIND_ROWS[kind] = (transfer, d.writes, d.tangled == "execution",
                              kind in ("phi", "call") or d.element_access)
    return row


def _has_matrix(op: Op) -> bool:
    """Whether ``op`` makes or takes a cooperative matrix."""
    if isinstance(op.type, T.CoopMatType):
        return True
    for v in op.operands:
        if isinstance(v.type, T.CoopMatType):
            return True
    return False


def _static_requirement(op: Op) -> Need | None:
    """What ``op`` (not a call) needs of the control flow reaching it (None: nothing)."""
    if OPS[op.kind].tangled == "execution":
        level = scope_level(op.attrs["exec_scope"])
    else:
        level = matrix_scope_level(op)
    return Need(level, op) if level > DIVERGENT else None


def _atomic(self: FunctionUniformity, op: Op) -> Fact:
    return DIVERGENT, Origin("the result of an atomic operation", op.loc)


def _subgroup(self: FunctionUniformity, op: Op) -> Fact:
    """Subgroup ops: the same in every active invocation of the subgroup, unless per-invocation by nature."""
    k, loc, name = op.kind, op.loc, _SUBGROUP_NAMES.get(op.kind, op.kind)
    if k == "subgroup_ballot_bits":   # about the ballot's bits alone, or this invocation's place among them
        per_invocation = _PER_INVOCATION_BALLOT.get(op.attrs["query"])
        if per_invocation:
            return DIVERGENT, Origin(f"{per_invocation}, which differs between invocations", loc)
        return self._operands(op)
    if k == "subgroup_quad":
        return DIVERGENT, Origin("a quad operation, which differs between quads", loc)
    if k == "subgroup_reduce" and op.attrs["mode"] == "clustered_reduce":
        return DIVERGENT, Origin("a clustered subgroup reduction, which differs between clusters", loc)
    if k == "subgroup_reduce" and op.attrs["mode"] != "reduce":
        return DIVERGENT, Origin("a subgroup scan, which differs between invocations", loc)
    if k == "subgroup_elect" or k == "subgroup_shuffle" and (
            op.attrs["mode"] != "index" or self.fact_at(op.operands[1], op.block)[0] < SUBGROUP):
        return DIVERGENT, Origin(f"{name}, which differs between invocations", loc)
    value = self.fact_at(op.operands[0], op.block)
    if value[0] == WORKGROUP and k not in ("subgroup_reduce", "subgroup_ballot"):
        return UNIFORM  # broadcasting or voting on a workgroup-uniform value gives it back
    return SUBGROUP, Origin(name, loc)


_PER_INVOCATION_BALLOT = {"inclusive_count": "cd.subgroup_ballot_inclusive_bit_count()",
                          "exclusive_count": "cd.subgroup_ballot_exclusive_bit_count()",
                          "inverse": "cd.subgroup_inverse_ballot()"}
_SUBGROUP_NAMES = {"subgroup_elect": "cd.subgroup_elect()", "subgroup_reduce": "a subgroup reduction",
                   "subgroup_shuffle": "a subgroup shuffle", "subgroup_ballot": "cd.subgroup_ballot()",
                   "subgroup_all": "cd.subgroup_all()", "subgroup_any": "cd.subgroup_any()",
                   "subgroup_all_equal": "cd.subgroup_all_equal()", "subgroup_broadcast": "cd.subgroup_broadcast()",
                   "subgroup_broadcast_first": "cd.subgroup_broadcast_first()"}


def _builtin_of(v: Value) -> str | None:
    """The SPIR-V BuiltIn ``v`` is a load of (None if it is not)."""
    if isinstance(v, Op) and v.kind == "load" and isinstance(v.operands[0], GlobalVar) \
            and v.operands[0].role == "builtin":
        return v.operands[0].info.get("builtin")
    return None


def _is_unsigned(t: T.Type) -> bool:
    return isinstance(t, T.ScalarType) and t.is_unsigned_int


def _memory_name(root: MemoryRoot) -> str:
    if isinstance(root, GlobalVar):
        return {"buffer": f"buffer '{root.name}'", "shared": f"shared array '{root.name}'",
                "private": f"private array '{root.name}'"}.get(
            root.role, f"'{root.name}'")
    return "device memory through a pointer" if root == DEVICE_MEMORY else "memory through a pointer"


def _loop_line(header: Block) -> int:
    return header.last_op.loc.line


class Uniformity:
    """The uniformity analysis of a module: its kernel, and each device function in every context it is called in."""

    def __init__(self, module: Module):
        self.module = module
        self.written = {memory_root(op.operands[0]) for f in module.functions for op in f.ops()
                        if OPS[op.kind].writes}
        # Private variables only the kernel itself uses: per invocation, like its Function variables, so
        # tracked as they are (what was stored to them); one a device function uses is not tracked
        elsewhere = {v for f in module.functions if f is not module.entry for op in f.ops() for v in op.operands
                     if isinstance(v, GlobalVar) and v.role == "private"}
        self.kernel_private = {v for op in module.entry.ops() for v in op.operands
                               if isinstance(v, GlobalVar) and v.role == "private"} - elsewhere
        self.contexts: dict[tuple[int, tuple[Level, ...]], FunctionUniformity] = {}
        self.function(module.entry, ())  # the kernel's analysis, made now

    @property
    def kernel(self) -> FunctionUniformity:
        """The analysis of the kernel (the module's entry function, which takes no arguments)."""
        return self.function(self.module.entry, ())

    def function(self, func: Function, params: tuple[Level, ...]) -> FunctionUniformity:
        """The (memoised) analysis of ``func`` with parameters of uniformity ``params``."""
        key = (id(func), params)
        fu = self.contexts.get(key)
        if fu is None:
            fu = self.contexts[key] = FunctionUniformity(self, func, params)
            fu.solve()
        return fu

    def extent(self, axis: int | None) -> int | None:
        """The workgroup size along ``axis`` (None: the whole workgroup), when it is a compile-time number."""
        size = self.module.workgroup_size
        sizes = size if axis is None else size[axis:axis + 1]
        if not sizes or not all(isinstance(s, int) for s in sizes):
            return None
        return math.prod(cast("tuple[int, ...]", sizes))  # (all ints: checked above)

    def _writer(self, root: MemoryRoot) -> MemoryRoot | None:
        """The written memory that makes ``root`` not read-only (None: nothing does): ``root`` itself, memory
        behind a pointer that cannot be followed, or, since a device pointer may point into any storage buffer
        (an address is any buffer's), a written storage buffer for device memory and device memory for a storage
        buffer."""
        if root == UNKNOWN_MEMORY or root in self.written:
            return root
        if UNKNOWN_MEMORY in self.written:
            return UNKNOWN_MEMORY
        if root == DEVICE_MEMORY:
            return min((w for w in self.written if _storage_buffer(w)), key=lambda w: getattr(w, "name", ""),
                       default=None)
        return DEVICE_MEMORY if _storage_buffer(root) and DEVICE_MEMORY in self.written else None

    def read_only(self, root: MemoryRoot) -> bool:
        """Whether no op of the module writes the memory ``root`` (or memory that may be the same: :meth:`_writer`)."""
        return self._writer(root) is None

    def writer_of(self, root: MemoryRoot) -> str:
        """Why memory ``root`` is not read-only, as the end of a message: the kernel writes it, or writes memory
        that may be the same (a storage buffer and device memory through a pointer)."""
        if isinstance(root, GlobalVar) and root.role == "private" and root not in self.kernel_private:
            return ("which the kernel writes and a @cd.func uses (such an array is not followed store by store, as "
                    "one only the kernel uses is; a cd.local_array in the function is)")
        other = self._writer(root)
        if other in (root, UNKNOWN_MEMORY):
            return "which the kernel also writes"
        if root == DEVICE_MEMORY:
            return f"which may point into {_memory_name(cast(MemoryRoot, other))}, which the kernel writes"
        return "which the kernel may write through a device pointer (a pointer may point into any buffer)"

    def _analyses(self, func: Function | None) -> list[FunctionUniformity]:
        return [fu for fu in self.contexts.values() if func is None or fu.func is func]

    def level(self, value: Value) -> Level:
        """How uniform ``value`` is (in a device function: in the least uniform context it is called in)."""
        func = _function_of(self.module, value.block) if isinstance(value, Op) and value.block else None
        return min((fu.fact(value)[0] for fu in self._analyses(func)), default=WORKGROUP)

    def block_level(self, block: Block) -> Level:
        """How uniformly control reaches ``block``, relative to its function's entry."""
        return min((fu.ctl[block] for fu in self.contexts.values() if block in fu.ctl), default=WORKGROUP)

    def check(self) -> None:
        """Raise the first UniformityError of the kernel (in program order), if any."""
        for e in self.kernel.errors():
            raise e


def _function_of(module: Module, block: Block) -> Function | None:
    return next((f for f in module.functions if block in f.blocks), None)


def analyze(module: Module) -> Uniformity:
    """The uniformity of every value and block of ``module``."""
    return Uniformity(module)


def run(module: Module) -> None:
    """The pass: reject cooperative-matrix ops and control barriers in non-uniform control flow."""
    analysis = analyze(module)
    try:
        analysis.check()
    finally:  # each function's analysis points back at the module's: freed now, not by the cyclic collector
        analysis.contexts.clear()
