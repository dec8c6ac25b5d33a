"""IR -> SPIR-V words.

The IR is already structured SSA, so lowering is one walk: globals and
specialization constants, then each function block by block, writing
OpSelectionMerge / OpLoopMerge before a header's terminator and OpPhi first.
The SPIR-V opcode of a generic IR op (``add``, ``lt``, ``convert`` ...) is
chosen from its operand types here, in one table per family.
"""

from __future__ import annotations

from ..errors import InternalCompilerError
from ..ir import types as T
from ..ir.core import Const, GlobalVar, LoopMerge, Module, Op, Param, SpecConst, SpecOp, Value
from .module import ModuleBuilder

# (float, signed int, unsigned int) opcode per IR op
ARITH = {
    "add": ("OpFAdd", "OpIAdd", "OpIAdd"), "sub": ("OpFSub", "OpISub", "OpISub"),
    "mul": ("OpFMul", "OpIMul", "OpIMul"), "div": ("OpFDiv", "OpSDiv", "OpUDiv"),
    "rem": ("OpFRem", "OpSRem", "OpUMod"), "neg": ("OpFNegate", "OpSNegate", "OpSNegate"),
    "lt": ("OpFOrdLessThan", "OpSLessThan", "OpULessThan"),
    "le": ("OpFOrdLessThanEqual", "OpSLessThanEqual", "OpULessThanEqual"),
    "gt": ("OpFOrdGreaterThan", "OpSGreaterThan", "OpUGreaterThan"),
    "ge": ("OpFOrdGreaterThanEqual", "OpSGreaterThanEqual", "OpUGreaterThanEqual"),
    "eq": ("OpFOrdEqual", "OpIEqual", "OpIEqual"), "ne": ("OpFUnordNotEqual", "OpINotEqual", "OpINotEqual"),
    "and": (None, "OpBitwiseAnd", "OpBitwiseAnd"), "or": (None, "OpBitwiseOr", "OpBitwiseOr"),
    "xor": (None, "OpBitwiseXor", "OpBitwiseXor"), "not": (None, "OpNot", "OpNot"),
    "shl": (None, "OpShiftLeftLogical", "OpShiftLeftLogical"),
    "shr": (None, "OpShiftRightArithmetic", "OpShiftRightLogical"),
}
BOOL_OPS = {"eq": "OpLogicalEqual", "ne": "OpLogicalNotEqual", "not": "OpLogicalNot",
            "land": "OpLogicalAnd", "lor": "OpLogicalOr"}
SIMPLE = {
    "select": "OpSelect", "mat_times_scalar": "OpMatrixTimesScalar", "bitcast": "OpBitcast",
    "construct": "OpCompositeConstruct", "splat": "OpCompositeConstruct", "access": "OpAccessChain",
    "extract_dyn": "OpVectorExtractDynamic", "insert_dyn": "OpVectorInsertDynamic",
    "ptr_to_u64": "OpConvertPtrToU", "u64_to_ptr": "OpConvertUToPtr",
    "dot": "OpDot", "fmod": "OpFMod", "isnan": "OpIsNan", "isinf": "OpIsInf", "any": "OpAny", "all": "OpAll",
}


def _family(t: T.Type) -> int:
    e = T.elem_of(t)
    if not isinstance(e, T.ScalarType):
        raise InternalCompilerError(f"no arithmetic on {t}")
    return 0 if e.kind == "float" else (1 if e.signed else 2)


def convert_opcode(src: T.Type, dst: T.Type) -> list[tuple[str, T.Type]]:
    """The conversion instruction(s) from ``src`` to ``dst`` (one or two steps)."""
    s, d = T.elem_of(src), T.elem_of(dst)
    if s.kind == "float" and d.kind == "float":
        return [("OpFConvert", dst)]
    if s.kind == "float":
        return [("OpConvertFToS" if d.signed else "OpConvertFToU", dst)]
    if d.kind == "float":
        return [("OpConvertSToF" if s.signed else "OpConvertUToF", dst)]
    if s.width == d.width:
        return [("OpBitcast", dst)]
    if s.signed:
        return [("OpSConvert", dst)]
    # OpUConvert's result must be unsigned (SPIR-V 3.42.11); reinterpret afterwards.
    mid = T.with_elem(dst, T.ScalarType("int", d.width, False))
    return [("OpUConvert", mid)] + ([("OpBitcast", dst)] if d.signed else [])


class Writer:
    def __init__(self, module: Module, version: tuple[int, int]):
        self.m = module
        self.b = ModuleBuilder(version)
        self.b.resolve_symbolic = self._symbolic
        self.ids: dict[int, int] = {}
        self.labels: dict[int, int] = {}
        self.used_globals: list[GlobalVar] = []

    # -- values ---------------------------------------------------------------------
    def id(self, v: Value) -> int:
        if isinstance(v, Const):
            return self.b.const_id(v.type, v.value)
        key = id(v)
        if key not in self.ids:
            if isinstance(v, GlobalVar):
                self._global(v)
            else:
                raise InternalCompilerError(f"value {v!r} used before it was given an id")
        return self.ids[key]

    def _symbolic(self, d: T.SymDim) -> int:
        try:
            return self.ids[id(self.m.symbolic_value(d))]
        except (StopIteration, KeyError):
            raise InternalCompilerError(f"cannot lower symbolic dimension {d}") from None

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
            if s.type.kind == "bool":
                b.emit("global", "OpSpecConstantTrue" if s.default else "OpSpecConstantFalse", tid, sid)
            else:
                from .module import scalar_words

                b.emit("global", "OpSpecConstant", tid, sid, scalar_words(s.type, s.default))
            b.emit("annotation", "OpDecorate", sid, "SpecId", s.spec_id)
            b.emit("debug_name", "OpName", sid, s.name)
        for op in self.m.spec_ops:
            self._spec_op(op)

    def _spec_op(self, op: SpecOp) -> None:
        """OpSpecConstantOp: the opcode literal is the instruction the op would lower to."""
        from .grammar import opcode

        b = self.b
        args = [self.id(v) for v in op.operands]
        src = op.operands[0].type
        if op.kind in BOOL_OPS and T.elem_of(src) == T.boolean:
            name = BOOL_OPS[op.kind]
        elif op.kind == "select":
            name = "OpSelect"
        else:
            name = ARITH[op.kind][_family(src)]
        rid = b.new_id()
        self.ids[id(op)] = rid
        b.emit("global", "OpSpecConstantOp", b.type_id(op.type), rid, opcode(name), *args)

    # -- module ---------------------------------------------------------------------
    def write(self) -> list[int]:
        b = self.b
        b.capability("Shader")
        b.capability("VulkanMemoryModel")
        for cap in sorted(self.m.required_capabilities):
            b.capability(cap)
        addressing = "PhysicalStorageBuffer64" if "PhysicalStorageBufferAddresses" in self.m.required_capabilities \
            else "Logical"
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
            interface = [self.ids[id(g)] for g in self.used_globals if g.type.storage in ("Input", "Output")]
        b.emit("entry_point", "OpEntryPoint", "GLCompute", entry_id, entry.name, *interface)
        if wg_ids is None:
            b.emit("execution_mode", "OpExecutionMode", entry_id, "LocalSize", *self.m.workgroup_size)
        else:
            b.emit("execution_mode", "OpExecutionModeId", entry_id, "LocalSizeId", *wg_ids)
        return b.finish()

    def _workgroup_size_ids(self) -> list[int] | None:
        size = self.m.workgroup_size
        if all(isinstance(s, int) for s in size):
            return None
        return [self.id(s) if isinstance(s, Value) else self.b.const_id(T.u32, s) for s in size]

    def _function(self, f) -> int:
        b = self.b
        fid = self.ids[id(f)]
        ftype = b.type_id(f.type)
        b.emit("debug_name", "OpName", fid, f.name)
        body: list = []
        for blk in f.blocks:
            self.labels[id(blk)] = b.new_id()
            for op in blk.all_ops():
                if op.has_result:
                    self.ids[id(op)] = b.new_id()
        words = b.sections["function"]
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
            for op in blk.ops:
                self._op(op)
            if blk.merge is not None:
                if isinstance(blk.merge, LoopMerge):
                    control = blk.merge.control or ("None",)
                    b.emit("function", "OpLoopMerge", self.labels[id(blk.merge.merge)],
                           self.labels[id(blk.merge.cont)], control, *blk.merge.control_args)
                else:
                    b.emit("function", "OpSelectionMerge", self.labels[id(blk.merge.merge)], "None")
            self._terminator(blk.terminator)
        b.emit("function", "OpFunctionEnd")
        del body, words
        return fid

    def _terminator(self, op: Op) -> None:
        b = self.b
        t = op.attrs.get("targets", [])
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
        lower = LOWERINGS.get(op.kind)
        if lower is None:
            raise InternalCompilerError(f"no SPIR-V lowering for op {op.kind}", op.loc)
        b = self.b
        rid = self.ids.get(id(op))
        ty = b.type_id(op.type) if op.has_result else None
        lower(self, op, ty, rid, [self.id(v) for v in op.operands])

    def emit(self, opname: str, *operands) -> None:
        """Emit one instruction into the function section."""
        self.b.emit("function", opname, *operands)


# -- lowerings: IR op kind -> function(writer, op, result type id, result id, operand ids) ----------
LOWERINGS: dict = {}


def lowering(*kinds: str):
    """Register a lowering for IR op ``kinds`` (modules add their own ops this way)."""
    def deco(fn):
        for k in kinds:
            LOWERINGS[k] = fn
        return fn
    return deco


@lowering(*ARITH, *BOOL_OPS)
def _arith(w, op, ty, rid, args):
    k = op.kind
    if k in BOOL_OPS and T.elem_of(op.operands[0].type) == T.boolean:
        return w.emit(BOOL_OPS[k], ty, rid, *args)
    name = ARITH[k][_family(op.operands[0].type)]
    if name is None:
        raise InternalCompilerError(f"{k} on {op.operands[0].type}", op.loc)
    w.emit(name, ty, rid, *args)


@lowering("ext_inst")
def _ext_inst(w, op, ty, rid, args):
    w.emit("OpExtInst", ty, rid, w.b.ext_inst_import("GLSL.std.450"), _glsl(op.attrs["name"]), *args)


@lowering(*SIMPLE)
def _simple(w, op, ty, rid, args):
    w.emit(SIMPLE[op.kind], ty, rid, *args)


@lowering("convert")
def _convert(w, op, ty, rid, args):
    steps = convert_opcode(op.operands[0].type, op.type)
    src = args[0]
    for i, (name, t) in enumerate(steps):
        out = rid if i == len(steps) - 1 else w.b.new_id()
        w.emit(name, w.b.type_id(t), out, src)
        src = out


@lowering("extract")
def _extract(w, op, ty, rid, args):
    w.emit("OpCompositeExtract", ty, rid, args[0], op.attrs["index"])


@lowering("shuffle")
def _shuffle(w, op, ty, rid, args):
    w.emit("OpVectorShuffle", ty, rid, args[0], args[1], *op.attrs["components"])


@lowering("insert")
def _insert(w, op, ty, rid, args):
    w.emit("OpCompositeInsert", ty, rid, args[0], args[1], op.attrs["index"])


@lowering("load")
def _load(w, op, ty, rid, args):
    w.emit("OpLoad", ty, rid, args[0], *_memory(op, w))


@lowering("store")
def _store(w, op, ty, rid, args):
    w.emit("OpStore", args[0], args[1], *_memory(op, w))


@lowering("coop_load")
def _coop_load(w, op, ty, rid, args):
    layout = w.b.const_id(T.u32, _layout_value(op.attrs["layout"]))
    w.emit("OpCooperativeMatrixLoadKHR", ty, rid, args[0], layout, *args[1:], *_memory(op, w))


@lowering("coop_store")
def _coop_store(w, op, ty, rid, args):
    layout = w.b.const_id(T.u32, _layout_value(op.attrs["layout"]))
    w.emit("OpCooperativeMatrixStoreKHR", args[0], args[1], layout, *args[2:], *_memory(op, w))


@lowering("coop_muladd")
def _coop_muladd(w, op, ty, rid, args):
    flags = op.attrs.get("matrix_operands") or ()
    w.emit("OpCooperativeMatrixMulAddKHR", ty, rid, *args, *((flags,) if flags else ()))


@lowering("coop_length")
def _coop_length(w, op, ty, rid, args):
    w.emit("OpCooperativeMatrixLengthKHR", ty, rid, w.b.type_id(op.attrs["mat_type"]))


@lowering("barrier")
def _barrier(w, op, ty, rid, args):
    w.emit("OpControlBarrier", scope_id(w, op.attrs["exec_scope"]), scope_id(w, op.attrs["mem_scope"]),
           semantics_id(w, op.attrs["semantics"]))


@lowering("memory_barrier")
def _memory_barrier(w, op, ty, rid, args):
    w.emit("OpMemoryBarrier", scope_id(w, op.attrs["mem_scope"]), semantics_id(w, op.attrs["semantics"]))


@lowering("variable")
def _variable(w, op, ty, rid, args):
    w.emit("OpVariable", ty, rid, "Function")


@lowering("subgroup")
def _subgroup(w, op, ty, rid, args):
    group = (op.attrs["group_op"],) if op.attrs.get("group_op") else ()
    w.emit(op.attrs["spirv"], ty, rid, scope_id(w, "Subgroup"), *group, *args)


@lowering("atomic")
def _atomic(w, op, ty, rid, args):
    sem = semantics_id(w, op.attrs["semantics"])
    scope = scope_id(w, op.attrs["scope"])
    name = op.attrs["spirv"]
    if name == "OpAtomicStore":
        w.emit(name, args[0], scope, sem, *args[1:])
    elif name == "OpAtomicCompareExchange":
        w.emit(name, ty, rid, args[0], scope, sem, sem, *args[1:])
    else:
        w.emit(name, ty, rid, args[0], scope, sem, *args[1:])


@lowering("call")
def _call(w, op, ty, rid, args):
    if rid is None:  # a void call still has a result id and type
        ty, rid = w.b.type_id(op.type), w.b.new_id()
    w.emit("OpFunctionCall", ty, rid, w.ids[id(op.attrs["func"])], *args)


def scope_id(w, name: str) -> int:
    """The id of a Scope constant; Device scope under the Vulkan memory model needs its capability."""
    from .grammar import enum_value

    if name == "Device":
        w.b.capability("VulkanMemoryModelDeviceScope")
    return w.b.const_id(T.u32, enum_value("Scope", name))


def semantics_id(w, names) -> int:
    """The id of a MemorySemantics constant OR-ing the named bits."""
    from .grammar import enum_value

    return w.b.const_id(T.u32, sum(enum_value("MemorySemantics", s) for s in names))


def _glsl(name: str) -> int:
    from ._tables import GLSL_STD_450

    return GLSL_STD_450[name][0]


def _layout_value(name: str) -> int:
    from .grammar import enum_value

    return enum_value("CooperativeMatrixLayout", name)


def _memory(op: Op, w: Writer) -> tuple:
    """Memory-access operands from ``op.attrs['memory']``: a tuple of names plus values."""
    mem = op.attrs.get("memory")
    if not mem:
        return ()
    names, values = mem
    out = [tuple(names)]
    for v in values:
        out.append(scope_id(w, v[1]) if isinstance(v, tuple) and v[0] == "scope" else v)
    return tuple(out)


def write(module: Module, version: tuple[int, int]) -> list[int]:
    """SPIR-V words of ``module`` for SPIR-V ``version``."""
    return Writer(module, version).write()


__all__ = ["write", "convert_opcode", "Param", "SpecConst"]
