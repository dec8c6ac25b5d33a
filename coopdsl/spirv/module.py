"""A SPIR-V module under construction, written in the spec's logical layout.

:class:`ModuleBuilder` owns the id counter, one word list per logical-layout
section (SPIR-V spec 2.4), and caches that give every type and constant one id
(SPIR-V 2.8 uniqueness: the cache keys are IR types, whose equality is that
rule).  Capabilities and extensions are collected while instructions are
encoded (from the grammar tables) and written first in :meth:`finish`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._numbers import float_pattern
from ..errors import InternalCompilerError
from ..ir import types as T
from ..ir.core import const_key
from ..ir.vocab import ScalarKind, StorageClass
from ._tables import ENUMS
from .grammar import Operand, Requirements, encode, encode_into
from .words import header

SECTIONS = (
    "capability", "extension", "ext_inst_import", "memory_model", "entry_point",
    "execution_mode", "debug_string", "debug_name", "annotation", "global", "function",
)

SCALAR_CAPS = {  # declaring these scalar types needs a capability (SPIR-V 2.16.1)
    (ScalarKind.FLOAT, 16): "Float16", (ScalarKind.FLOAT, 64): "Float64",
    (ScalarKind.INT, 8): "Int8", (ScalarKind.INT, 16): "Int16", (ScalarKind.INT, 64): "Int64",
}
STORAGE_CAPS = {  # 8/16-bit data in these storage classes (SPV_KHR_16bit_storage, _8bit_storage)
    (StorageClass.StorageBuffer, 16): "StorageBuffer16BitAccess",
    (StorageClass.StorageBuffer, 8): "StorageBuffer8BitAccess",
    (StorageClass.PhysicalStorageBuffer, 16): "StorageBuffer16BitAccess",
    (StorageClass.PhysicalStorageBuffer, 8): "StorageBuffer8BitAccess",
    (StorageClass.Uniform, 16): "UniformAndStorageBuffer16BitAccess",
    (StorageClass.Uniform, 8): "UniformAndStorageBuffer8BitAccess",
    (StorageClass.PushConstant, 16): "StoragePushConstant16",
    (StorageClass.PushConstant, 8): "StoragePushConstant8",
}


def _version_tuple(v: str | None) -> tuple[int, int] | None:
    if v is None:
        return None
    major, minor = v.split(".")
    return int(major), int(minor)


class ModuleBuilder:
    """Collects a module's instructions; :meth:`finish` returns its words."""

    def __init__(self, version: tuple[int, int]):
        self.version = version
        self.resolve_symbolic: Callable[[T.SymDim], int] | None = None  # set by the writer
        self.bound = 1
        self.sections: dict[str, list[int]] = {s: [] for s in SECTIONS}
        self.req = Requirements()
        self._caps: list[str] = []
        self.reasons: dict[str, str] = {}
        self.counts: dict[str, int] = {s: 0 for s in SECTIONS}  # instructions per section
        self.function_base = 0  # instructions before the function section (set by finish)
        self._exts: list[str] = []
        self._types: dict[T.Type, int] = {}
        self._type_objects: dict[int, tuple[T.Type, int]] = {}  # id(type) -> (the type, kept alive; its id)
        self._consts: dict[tuple[T.Type, Any], int] = {}
        self._imports: dict[str, int] = {}
        self._strings: dict[str, int] = {}

    # -- ids and raw emission -------------------------------------------------
    def new_id(self) -> int:
        self.bound += 1
        return self.bound - 1

    def emit(self, section: str, opname: str, *operands: Operand) -> None:
        """Encode ``opname`` (grammar-checked) into ``section``."""
        encode_into(self.sections[section], opname, operands, self.req)
        self.counts[section] += 1

    def require(self, capability: str, reason: str) -> None:
        """Declare ``capability`` because of ``reason`` (kept in :attr:`reasons` for diagnostics).

        Capabilities an instruction, operand or enumerant needs by the grammar
        are collected while encoding; this is for the ones only the meaning of
        the module implies (types, addressing, memory model).
        """
        if capability not in self._caps:
            self._caps.append(capability)
        self.reasons.setdefault(capability, reason)

    def extension(self, name: str) -> None:
        if name not in self._exts:
            self._exts.append(name)

    def string_id(self, text: str) -> int:
        """The id of an OpString holding ``text`` (one per text)."""
        if text not in self._strings:
            rid = self._strings[text] = self.new_id()
            self.emit("debug_string", "OpString", rid, text)
        return self._strings[text]

    def ext_inst_import(self, name: str) -> int:
        if name not in self._imports:
            rid = self._imports[name] = self.new_id()
            self.emit("ext_inst_import", "OpExtInstImport", rid, name)
        return self._imports[name]

    # -- types ----------------------------------------------------------------
    def type_id(self, t: T.Type) -> int:
        """The id of ``t``, declaring it (and what it is made of) on first use."""
        known = self._type_objects.get(id(t))  # this very object again: no hashing of the type
        if known is not None:
            return known[1]
        tid = self._types.get(t)
        if tid is None:
            tid = self._declare_type(t)
            self._types[t] = tid
        self._type_objects[id(t)] = (t, tid)
        return tid

    def _declare_type(self, t: T.Type) -> int:
        if isinstance(t, T.VoidType):
            return self._simple("OpTypeVoid")
        if isinstance(t, T.ScalarType):
            return self._scalar(t)
        if isinstance(t, T.VectorType):
            return self._simple("OpTypeVector", self.type_id(t.elem), t.count)
        if isinstance(t, T.CoopMatType):
            return self._coopmat(t)
        if isinstance(t, T.ArrayType):
            elem = self.type_id(t.elem)
            length = self.dim_id(t.length)
            tid = self._simple("OpTypeArray", elem, length)
            if t.stride is not None:
                self.emit("annotation", "OpDecorate", tid, "ArrayStride", t.stride)
            return tid
        if isinstance(t, T.RuntimeArrayType):
            tid = self._simple("OpTypeRuntimeArray", self.type_id(t.elem))
            self.emit("annotation", "OpDecorate", tid, "ArrayStride", t.stride)
            return tid
        if isinstance(t, T.StructType):
            return self._struct(t)
        if isinstance(t, T.PointerType):
            self._storage_caps(t.space, t.pointee)
            if t.space.is_physical:
                # A pointer to PhysicalStorageBuffer may be declared before its
                # pointee (forward pointer) so recursive structs work.
                tid = self.new_id()
                self._types[t] = tid
                pointee = self.type_id(t.pointee)
                self.emit("global", "OpTypePointer", tid, t.storage, pointee)
                return tid
            return self._simple("OpTypePointer", t.storage, self.type_id(t.pointee))
        if isinstance(t, T.TensorLayoutType):
            return self._simple("OpTypeTensorLayoutNV", self.dim_id(t.dim), self.dim_id(t.clamp))
        if isinstance(t, T.TensorViewType):
            return self._simple("OpTypeTensorViewNV", self.dim_id(t.dim), self.const_id(T.boolean, t.has_dims),
                                *[self.dim_id(p) for p in t.perm])
        if isinstance(t, T.FunctionType):
            return self._simple("OpTypeFunction", self.type_id(t.ret),
                                *[self.type_id(p) for p in t.params])
        raise InternalCompilerError(f"cannot declare type {t}")

    def _simple(self, opname: str, *operands: Operand) -> int:
        tid = self.new_id()
        self.emit("global", opname, tid, *operands)
        return tid

    def _scalar(self, t: T.ScalarType) -> int:
        if t.is_bool:
            return self._simple("OpTypeBool")
        cap = SCALAR_CAPS.get((t.kind, t.width))
        if cap and t.encoding is None:
            self.require(cap, f"the module declares {t}")
        if t.is_int:
            return self._simple("OpTypeInt", t.width, int(t.signed))
        if t.encoding is not None:
            return self._simple("OpTypeFloat", t.width, t.encoding)
        return self._simple("OpTypeFloat", t.width)

    def _coopmat(self, t: T.CoopMatType) -> int:
        enc = t.elem.encoding
        if enc is not None and enc.is_bfloat:
            self.require("BFloat16CooperativeMatrixKHR", f"the module declares {t}")
        elif enc is not None and enc.is_fp8:
            self.require("Float8CooperativeMatrixEXT", f"the module declares {t}")
        operands = [self.type_id(t.elem)] + [self.dim_id(d) for d in (t.scope, t.rows, t.cols, t.use)]
        return self._simple("OpTypeCooperativeMatrixKHR", *operands)

    def _struct(self, t: T.StructType) -> int:
        tid = self._simple("OpTypeStruct", *[self.type_id(m) for _, m in t.members])
        self.emit("debug_name", "OpName", tid, t.name)
        for i, (name, _) in enumerate(t.members):
            self.emit("debug_name", "OpMemberName", tid, i, name)
        for i, off in enumerate(t.offsets):
            self.emit("annotation", "OpMemberDecorate", tid, i, "Offset", off)
        if t.block:
            self.emit("annotation", "OpDecorate", tid, "Block")
        return tid

    def _storage_caps(self, storage: StorageClass, pointee: T.Type) -> None:
        for width in sorted(_small_widths(pointee)):
            cap = STORAGE_CAPS.get((storage, width))
            if cap:
                self.require(cap, f"{width}-bit data in {storage} memory")

    # -- constants ------------------------------------------------------------
    def dim_id(self, d: T.Dim) -> int:
        """Id of a type operand that is an int literal (as u32) or a symbolic Dim."""
        if isinstance(d, int):
            return self.const_id(T.u32, d)
        resolver = self.resolve_symbolic
        if resolver is None:
            raise InternalCompilerError(f"symbolic dimension {d} with no resolver")
        return resolver(d)

    def const_id(self, t: T.Type, value: Any) -> int:
        """The id of the constant ``value`` of type ``t`` (splat for composites)."""
        key = (t, const_key(value))
        cid = self._consts.get(key)
        if cid is not None:
            return cid
        if isinstance(t, (T.CoopMatType, T.VectorType)):
            part = self.const_id(t.elem, value)
            count = 1 if isinstance(t, T.CoopMatType) else t.count
            tid = self.type_id(t)
            cid = self.new_id()
            self.emit("global", "OpConstantComposite", tid, cid, *([part] * count))
        elif isinstance(t, T.ArrayType):  # zeros: OpConstantNull (any length); else a splat of a known length
            tid = self.type_id(t)
            if value == 0 and str(value)[:1] != "-":
                cid = self.new_id()
                self.emit("global", "OpConstantNull", tid, cid)
            elif isinstance(t.length, int):
                part = self.const_id(t.elem, value)
                cid = self.new_id()
                self.emit("global", "OpConstantComposite", tid, cid, *([part] * t.length))
            else:
                raise InternalCompilerError(f"no splat constant of {t}: its length is not known")
        elif isinstance(t, T.ScalarType) and t.is_bool:
            tid = self.type_id(t)
            cid = self.new_id()
            self.emit("global", "OpConstantTrue" if value else "OpConstantFalse", tid, cid)
        elif isinstance(t, T.ScalarType):
            tid = self.type_id(t)
            cid = self.new_id()
            self.emit("global", "OpConstant", tid, cid, scalar_words(t, value))
        else:
            raise InternalCompilerError(f"no constants of type {t}")
        self._consts[key] = cid
        return cid

    # -- finishing ------------------------------------------------------------
    def resolved_capabilities(self) -> list[str]:
        """Explicit capabilities plus one per unmet any-of requirement, sorted by value."""
        caps = list(self._caps)
        closure = _closure(caps)
        for group in self.req.capabilities:
            if not any(c in closure for c in group):
                # Vulkan has no OpenCL (Kernel) capabilities: take the first shader-side one, one that is core at
                # this module's version before one that needs an extension (BuiltIn SubgroupEqMask: the core
                # GroupNonUniformBallot, as glslang declares it, not SPV_KHR_shader_ballot's SubgroupBallotKHR)
                shader_side = [c for c in group if "Kernel" not in _closure([c])] or list(group)
                caps.append(min(shader_side, key=lambda c: (self._needs_extension(c), shader_side.index(c))))
                closure = _closure(caps)
        # Declare implied capabilities too (as glslang does), so a host enabling
        # device features from the capability list sees every one; only what
        # Shader itself implies (Matrix) is left implicit.
        full = _closure(caps) - _closure(["Shader"], include_self=False) if "Shader" in caps else _closure(caps)
        return sorted(full, key=lambda c: (ENUMS["Capability"][c][0], c))

    def _needs_extension(self, capability: str) -> bool:
        """Whether declaring ``capability`` in this module needs an OpExtension (it is not core at its version)."""
        row = ENUMS["Capability"][capability]
        v = _version_tuple(row[4])
        return bool(row[3]) and (v is None or self.version < v)

    def resolved_extensions(self, caps: list[str]) -> list[str]:
        exts = list(self._exts)
        rows = [ENUMS["Capability"][c] for c in caps]
        needs = [(row[3], row[4]) for row in rows] + list(self.req.extensions)
        for names, version in needs:
            v = _version_tuple(version)
            if names and (v is None or self.version < v):
                exts.extend(n for n in names[:1] if n not in exts)
        return sorted(set(exts))

    def finish(self) -> list[int]:
        caps = self.resolved_capabilities()
        exts = self.resolved_extensions(caps)
        head_req = Requirements()  # capability/extension words need no tracking
        words: list[int] = []
        for c in caps:
            words += encode("OpCapability", c, req=head_req)
        for e in exts:
            words += encode("OpExtension", e, req=head_req)
        self.function_base = len(caps) + len(exts) + sum(self.counts[s] for s in SECTIONS[2:-1])
        for s in SECTIONS[2:]:
            words += self.sections[s]
        return header(self.version, self.bound) + words


def _closure(caps: Iterable[str], include_self: bool = True) -> set[str]:
    seen: set[str] = set()
    stack = list(caps)
    while stack:
        c = stack.pop()
        for dep in ENUMS["Capability"][c][2]:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    if include_self:
        seen |= set(caps)
    return seen


def _small_widths(t: T.Type, depth: int = 0) -> set[int]:
    if depth > 8:
        return set()
    if isinstance(t, T.ScalarType):
        return {t.width} if t.width in (8, 16) else set()
    if isinstance(t, (T.VectorType, T.CoopMatType, T.ArrayType, T.RuntimeArrayType)):
        return _small_widths(t.elem, depth + 1)
    if isinstance(t, T.StructType):
        out: set[int] = set()
        for _, m in t.members:
            out |= _small_widths(m, depth + 1)
        return out
    return set()  # pointers inside structs are 64-bit addresses


def scalar_words(t: T.ScalarType, value: Any) -> list[int]:
    """Literal words of a scalar constant (SPIR-V 2.2.1: low-order word first)."""
    if t.is_int:
        v = int(value) & ((1 << t.width) - 1)
        if t.signed and t.width < 32 and v >> (t.width - 1):
            v |= 0xFFFFFFFF ^ ((1 << t.width) - 1)  # sign-extend narrow literals
        return [v & 0xFFFFFFFF] if t.width <= 32 else [v & 0xFFFFFFFF, v >> 32]
    bits = float_bits(t, float(value))
    return [bits & 0xFFFFFFFF] if t.width <= 32 else [bits & 0xFFFFFFFF, bits >> 32]


def float_bits(t: T.ScalarType, value: float) -> int:
    """The bit pattern of ``value`` in the float format of ``t`` (round to nearest even, once):
    :func:`coopdsl._numbers.float_pattern`, which the runtime's specialization data use too."""
    return float_pattern(value, t.width, t.encoding)
