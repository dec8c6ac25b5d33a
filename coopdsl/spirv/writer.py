"""IR -> SPIR-V words.

The IR is already structured SSA, so lowering is one walk: globals and
specialization constants, then each function block by block, writing
OpSelectionMerge / OpLoopMerge before a header's terminator and OpPhi first.
Each op is lowered by its family's function in :mod:`coopdsl.spirv.lower`,
which alone chooses opcodes; a failure there names the op's source line.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import InternalCompilerError, SourceLoc
from ..ir import types as T
from ..ir.attrs import LoopHint
from ..ir.core import Const, FuncRef, Function, GlobalVar, LoopMerge, Module, Op, SpecConst, SpecOp, Value
from .grammar import Operand, encode_into, opcode
from .lower import LOWERINGS
from .lower.arith import arith_opcode, spec_divide
from .lower.hints import ALIASES
from .module import ModuleBuilder, scalar_words

LOCAL_SIZE_ID = (1, 6)   # the SPIR-V version from which Vulkan (1.3) takes OpExecutionModeId LocalSizeId


class Writer:
    def __init__(self, module: Module, version: tuple[int, int]):
        self.m = module
        self.b = ModuleBuilder(version)
        self.ids: dict[int, int] = {}
        # (a partial, not a bound method: the builder holding the writer would make the two a cycle,
        # left to the cyclic collector to free with every word list of the module)
        self.b.resolve_symbolic = functools.partial(_symbolic, module, self.ids)
        self.labels: dict[int, int] = {}
        self.used_globals: list[GlobalVar] = []
        # (first, end, location): the op lowered into instructions first..end-1 of the function section
        self.op_spans: list[tuple[int, int, SourceLoc]] = []
        self.memo: dict[Any, Any] = {}  # what lowerings work out once per (op kind, type object) while writing
        self.function_words = self.b.sections["function"]  # (the section lowerings emit into)

    def function_id(self, f: Function) -> int:
        """The id of function ``f`` (functions may be named before they are written)."""
        return self.ids[id(f)]

    # -- values ---------------------------------------------------------------------
    def id(self, v: Value) -> int:
        rid = self.ids.get(id(v))  # ops, parameters, globals, spec constants (constants and aliases have none)
        if rid is not None:
            return rid
        if isinstance(v, Const):
            cid = self.ids[id(v)] = self.b.const_id(v.type, v.value)  # the same id for it from now on
            return cid
        if isinstance(v, FuncRef):
            return self.function_id(v.func)
        if isinstance(v, Op) and v.kind in ALIASES:
            return self.id(v.operands[0])
        key = id(v)
        if key not in self.ids:
            if isinstance(v, GlobalVar):
                self._global(v)
            else:
                raise InternalCompilerError(f"value {v!r} used before it was given an id")
        return self.ids[key]

    def _global(self, g: GlobalVar) -> None:
        b = self.b
        gid = b.new_id()
        self.ids[id(g)] = gid
        b.emit("global", "OpVariable", b.type_id(g.type), gid, g.type.storage)
        b.emit("debug_name", "OpName", gid, g.name)
        if g.role in ("buffer", "uniform"):
            b.emit("annotation", "OpDecorate", gid, "DescriptorSet", g.info["set"])
            b.emit("annotation", "OpDecorate", gid, "Binding", g.info["binding"])
            if g.info.get("readonly"):
                b.emit("annotation", "OpDecorate", gid, "NonWritable")
        elif g.role == "builtin":
            b.emit("annotation", "OpDecorate", gid, "BuiltIn", g.info["builtin"])
        self.used_globals.append(g)

    def _spec_consts(self) -> None:
        b = self.b
        for s in self.m.spec_consts:
            sid = b.new_id()
            self.ids[id(s)] = sid
            tid = b.type_id(s.type)
            if s.type.is_bool:
                b.emit("global", "OpSpecConstantTrue" if s.default else "OpSpecConstantFalse", tid, sid)
            else:
                b.emit("global", "OpSpecConstant", tid, sid, scalar_words(s.type, s.default))
            b.emit("annotation", "OpDecorate", sid, "SpecId", s.spec_id)
            b.emit("debug_name", "OpName", sid, s.name)
        for op in self.m.spec_ops:
            self._spec_op(op)

    def _spec_op(self, op: SpecOp) -> None:
        """OpSpecConstantOp: the opcode literal is the instruction the op would lower to."""
        b = self.b
        args = [self.id(v) for v in op.operands]
        t = op.operands[0].type
        rid = b.new_id()
        self.ids[id(op)] = rid
        if op.kind in ("div", "rem") and T.elem_of(t) != T.boolean:   # (defined for every value: spec_divide)
            y = op.operands[1]
            spec_divide(b, self.memo, op.kind, t, b.type_id(op.type), rid, args[0], args[1],
                        divisor=int(y.value) if isinstance(y, Const) else None)
            return
        name = arith_opcode(op.kind, t)
        b.emit("global", "OpSpecConstantOp", b.type_id(op.type), rid, opcode(name), *args)

    # -- module ---------------------------------------------------------------------
    def write(self) -> list[int]:
        b = self.b
        b.require("Shader", "a compute shader")
        b.require("VulkanMemoryModel", "coopdsl writes the Vulkan memory model")
        addressing = "Logical"
        if self.m.uses_device_addresses():
            b.require("PhysicalStorageBufferAddresses", "the kernel uses buffer device addresses")
            addressing = "PhysicalStorageBuffer64"
        b.emit("memory_model", "OpMemoryModel", addressing, "Vulkan")
        self._spec_consts()
        # LocalSizeId operands must be defined before any Workgroup-scope matrix type.
        wg_ids = self._workgroup_size_ids()
        for g in self.m.globals:  # every parameter gets its binding, used or not
            if g.role in ("buffer", "push", "uniform"):
                self.id(g)
        entry_id = None
        for f in self.m.functions:  # calls may name functions defined later
            self.ids[id(f)] = b.new_id()
        for f in self.m.functions:
            fid = self._function(f)
            if f.is_entry:
                entry_id = fid
        entry = self.m.entry
        if b.version >= (1, 4):
            interface = [self.ids[id(g)] for g in self.used_globals]
        else:
            interface = [self.ids[id(g)] for g in self.used_globals if g.type.space.is_interface]
        b.emit("entry_point", "OpEntryPoint", "GLCompute", entry_id, entry.name, *interface)
        if wg_ids is None:
            b.emit("execution_mode", "OpExecutionMode", entry_id, "LocalSize", *self.m.workgroup_size)
        elif b.version >= LOCAL_SIZE_ID:
            b.emit("execution_mode", "OpExecutionModeId", entry_id, "LocalSizeId", *wg_ids)
        else:  # (the WorkgroupSize constant decides; LocalSize gives the defaults, as glslang writes it)
            defaults = [s if isinstance(s, int) else s.default if isinstance(s, SpecConst) else 1
                        for s in self.m.workgroup_size]
            b.emit("execution_mode", "OpExecutionMode", entry_id, "LocalSize", *defaults)
        return b.finish()

    def _workgroup_size_ids(self) -> list[int] | None:
        """The ids of a workgroup size with specialization constants in it (None: all literal). Vulkan takes
        them as ``LocalSizeId`` from SPIR-V 1.6 (Vulkan 1.3); before, as a spec-constant uvec3 decorated
        ``BuiltIn WorkgroupSize``, which overrides the ``LocalSize`` mode (glslang's ``local_size_x_id``)."""
        size = self.m.workgroup_size
        if all(isinstance(s, int) for s in size):
            return None
        ids = [self.id(s) if isinstance(s, Value) else self.b.const_id(T.u32, s) for s in size]
        if self.b.version < LOCAL_SIZE_ID:
            cid = self.b.new_id()
            self.b.emit("global", "OpSpecConstantComposite", self.b.type_id(T.VectorType(T.u32, 3)), cid, *ids)
            self.b.emit("annotation", "OpDecorate", cid, "BuiltIn", "WorkgroupSize")
        return ids

    def _function(self, f: Function) -> int:
        b = self.b
        fid = self.ids[id(f)]
        ftype = b.type_id(f.type)
        b.emit("debug_name", "OpName", fid, f.name)
        ids, labels, void, counts, type_id, spans = self.ids, self.labels, T.void, b.counts, b.type_id, self.op_spans
        bound = b.bound  # (b.new_id(), inlined: a label per block, an id per op with a result)
        for blk in f.blocks:
            labels[id(blk)] = bound
            bound += 1
            for op in blk.all_ops():
                if op.type is not void and op.kind not in ALIASES:
                    ids[id(op)] = bound
                    bound += 1
        b.bound = bound
        b.emit("function", "OpFunction", b.type_id(f.type.ret), fid, "None", ftype)
        for p in f.params:
            pid = self.ids.setdefault(id(p), b.new_id())
            b.emit("function", "OpFunctionParameter", b.type_id(p.type), pid)
        for blk in f.blocks:
            b.emit("function", "OpLabel", self.labels[id(blk)])
            for op in blk.phis:
                pairs = []
                for v, pred in zip(op.operands, op.attrs["incoming"]):
                    pairs.append((self.id(v), self.labels[id(pred)]))
                b.emit("function", "OpPhi", b.type_id(op.type), self.ids[id(op)], *pairs)
            for op in blk.ops:  # (_op(), inlined for the kinds whose lowering is loaded: every op goes here)
                lower = dict.get(LOWERINGS, op.kind)  # (the registry's get() is a Python call)
                if lower is None:
                    self._op(op)  # a family loaded on first need, or the error
                    continue
                first = counts["function"]
                try:
                    t = op.type
                    lower(self, op, None if t is void else type_id(t), ids.get(id(op)),
                          [ids.get(id(v)) or self.id(v) for v in op.operands])  # (ids are >= 1)
                except (InternalCompilerError, KeyError, ValueError, TypeError) as e:
                    raise _lowering_error(op, e) from None
                spans.append((first, counts["function"], op.loc))
            if blk.merge is not None:
                if isinstance(blk.merge, LoopMerge):
                    b.emit("function", "OpLoopMerge", self.labels[id(blk.merge.merge)],
                           self.labels[id(blk.merge.cont)], *_loop_control(blk.merge.hint))
                else:
                    b.emit("function", "OpSelectionMerge", self.labels[id(blk.merge.merge)], "None")
            assert blk.terminator is not None  # (the verifier checked that every block ends)
            self._terminator(blk.terminator)
        b.emit("function", "OpFunctionEnd")
        return fid

    def _terminator(self, op: Op) -> None:
        b = self.b
        t = op.attrs.get("targets", ())
        if op.kind == "br":
            b.emit("function", "OpBranch", self.labels[id(t[0])])
        elif op.kind == "cond_br":
            b.emit("function", "OpBranchConditional", self.id(op.operands[0]),
                   self.labels[id(t[0])], self.labels[id(t[1])])
        elif op.kind == "return":
            if op.operands:
                b.emit("function", "OpReturnValue", self.id(op.operands[0]))
            else:
                b.emit("function", "OpReturn")
        elif op.kind == "unreachable":
            b.emit("function", "OpUnreachable")
        else:
            raise InternalCompilerError(f"bad terminator {op.kind}", op.loc)

    # -- ops ------------------------------------------------------------------------
    def _op(self, op: Op) -> None:
        try:
            lower = LOWERINGS[op.kind]  # (a dict lookup; the registry's get() is a Python call)
        except KeyError:
            raise InternalCompilerError(f"no SPIR-V lowering for op {op.kind}", op.loc) from None
        b = self.b
        ids = self.ids
        counts = b.counts
        first = counts["function"]
        try:
            t = op.type
            lower(self, op, None if t is T.void else b.type_id(t), ids.get(id(op)),
                  [ids.get(id(v)) or self.id(v) for v in op.operands])  # (ids are >= 1)
        except (InternalCompilerError, KeyError, ValueError, TypeError) as e:
            raise _lowering_error(op, e) from None
        self.op_spans.append((first, counts["function"], op.loc))

    def emit(self, opname: str, *operands: Operand) -> None:
        """Emit one instruction into the function section (what ``self.b.emit("function", ...)`` does)."""
        encode_into(self.function_words, opname, operands, self.b.req)
        self.b.counts["function"] += 1


def _lowering_error(op: Op, e: Exception) -> InternalCompilerError:
    """A lowering's failure, at the op's source line (an internal error keeps the location it has)."""
    if isinstance(e, InternalCompilerError):
        return InternalCompilerError(e.message, e.loc if e.loc is not None else op.loc)
    return InternalCompilerError(f"cannot lower {op.kind}: {type(e).__name__}: {e}", op.loc)


def _symbolic(module: Module, ids: dict[int, int], d: T.SymDim) -> int:
    """The id of the module value the symbolic dimension ``d`` stands for."""
    try:
        return ids[id(module.symbolic_value(d))]
    except (StopIteration, KeyError):
        raise InternalCompilerError(f"cannot lower symbolic dimension {d}") from None


def _loop_control(hint: LoopHint) -> tuple[object, ...]:
    """LoopControl operands for a loop-control hint."""
    if hint.partial is not None:
        return (("PartialCount",), hint.partial)
    if hint.unroll is None:
        return (("None",),)
    return (("Unroll",) if hint.unroll else ("DontUnroll",),)


def write(module: Module, version: tuple[int, int]) -> list[int]:
    """SPIR-V words of ``module`` for SPIR-V ``version``."""
    return Writer(module, version).write()


def write_with_locations(module: Module, version: tuple[int, int]) -> tuple[list[int], dict[int, SourceLoc]]:
    """The words, and a map from each instruction's 1-based position in the module (how spirv-val's
    "line N" counts) to the source location of the op it was lowered from."""
    w = Writer(module, version)
    words = w.write()
    base = w.b.function_base + 1
    return words, {base + i: loc for first, end, loc in w.op_spans for i in range(first, end)}


__all__ = ["write"]
