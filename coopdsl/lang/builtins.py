"""The builtins kernels call, each declared once with its doc and type rule.

A :class:`Builtin` is what ``coopdsl.muladd`` (or ``MatA[...].load``) *is*:
calling it from ordinary Python raises, and the front end dispatches calls in
kernels to its ``impl(cg, args, kwargs)``.  ``impl`` checks types (raising
CompileError subclasses at the call's location) and emits IR through the code
generator ``cg``.  ``METHODS`` maps (receiver kind, name) to builtins: the
receiver kinds are "mattype" (a cooperative-matrix *type*, e.g.
``Acc[f32, 16, 16].splat``) and "mat" (a cooperative-matrix *value*).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import ArgumentError, TypeMismatchError
from ..frontend.values import BufferRef, BuiltinVar
from ..ir import types as T
from ..ir.attrs import MATRIX_OPERANDS, Layout, MemoryAccess, Scope, Semantics
from ..ir.core import Value
from .types import ColumnMajor, Enumerant, RowMajor


@dataclass(frozen=True)
class Builtin:
    name: str
    impl: Callable
    doc: str
    signature: str

    def __call__(self, *args, **kwargs):
        raise TypeError(f"coopdsl.{self.name} can only be called inside a @coopdsl.kernel function")

    def __repr__(self) -> str:
        return f"<coopdsl builtin {self.name}{self.signature}>"


BUILTINS: dict[str, Builtin] = {}
METHODS: dict[tuple[str, str], Builtin] = {}


def builtin(signature: str, method_of: str | None = None):
    """Register ``fn`` (named after it) as a builtin; doc = its docstring."""
    def deco(fn):
        name = fn.__name__.rstrip("_")
        b = Builtin(name, fn, (fn.__doc__ or "").strip(), signature)
        if method_of:
            METHODS[(method_of, name)] = b
        else:
            BUILTINS[name] = b
        return b
    return deco


def bind_args(cg, b: Builtin, args: list, kwargs: dict, names: list[str], required: int,
              keyword_only: tuple[str, ...] = ()) -> dict:
    """Match positional/keyword arguments to ``names``; ArgumentError otherwise."""
    out: dict = {}
    positional = [n for n in names if n not in keyword_only]
    if len(args) > len(positional):
        raise ArgumentError(f"{b.name}{b.signature} takes at most {len(positional)} positional "
                            f"arguments, got {len(args)}", cg.em.loc)
    out.update(zip(positional, args))
    for k, v in kwargs.items():
        if k not in names:
            raise ArgumentError(f"{b.name}{b.signature} has no argument '{k}'", cg.em.loc)
        if k in out:
            raise ArgumentError(f"{b.name}: argument '{k}' given twice", cg.em.loc)
        out[k] = v
    for n in names[:required]:
        if n not in out:
            raise ArgumentError(f"{b.name}{b.signature}: missing argument '{n}'", cg.em.loc)
    return out


# -- cooperative matrices ---------------------------------------------------------
@builtin("(a, b, c, *, saturate=False, signed=None)")
def muladd(cg, args, kwargs):
    """A x B + C with cooperative matrices (OpCooperativeMatrixMulAddKHR).

    ``a`` is MatA[T, M, K], ``b`` MatB[T, K, N], ``c`` Acc[R, M, N], all of one
    scope; the result has ``c``'s type.  Float A/B need a float accumulator
    (f16 x f16 -> f16/f32), integer A/B an integer one at least as wide
    (i8 x i8 -> i32).  Signed integer components set the matching
    MatrixASigned/MatrixBSigned/... operands.  ``saturate=True`` sets
    SaturatingAccumulationKHR (integer accumulators only).  ``signed`` overrides
    the inferred signedness: a tuple naming the operands to treat as signed
    from ``"a"``, ``"b"``, ``"c"``, ``"result"`` (``()`` for none), e.g. u8
    data holding signed values.
    """
    from ..frontend.coopcheck import check_muladd

    p = bind_args(cg, muladd, args, kwargs, ["a", "b", "c", "saturate", "signed"], 3, ("saturate", "signed"))
    a, b, c = (cg.as_runtime(p[k]) for k in "abc")
    signed = check_muladd(cg.em, a, b, c)
    if p.get("signed") is not None:
        signed = _signedness(cg, p["signed"], c.type)
    saturate = cg.compile_time(p.get("saturate", False), "saturate", bool)
    if saturate and c.type.elem.kind != "int":
        raise TypeMismatchError("saturate=True needs an integer accumulator", cg.em.loc)
    return cg.em.op("coop_muladd", c.type, [a, b, c], signed=signed, saturate=saturate)


def _signedness(cg, value, acc_type) -> frozenset:
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, tuple) or any(n not in MATRIX_OPERANDS for n in names):
        raise ArgumentError(f"signed= takes a tuple of operand names from {sorted(MATRIX_OPERANDS)}, "
                            f"got {value!r}", cg.em.loc)
    if names and acc_type.elem.kind != "int":
        raise TypeMismatchError("signedness operands apply to integer matrices only (SPV_KHR_cooperative_matrix)",
                                cg.em.loc)
    return frozenset(names)


@builtin("(value, type)")
def bitcast(cg, args, kwargs):
    """Reinterpret bits as ``type`` (OpBitcast): a scalar/vector type of the same total width, or, for a
    cooperative matrix, an integer component type of the same width (e.g. i32 -> u32)."""
    p = bind_args(cg, bitcast, args, kwargs, ["value", "type"], 2)
    v, t = cg.as_runtime(p["value"]), p["type"]
    if not isinstance(t, T.ScalarType) and not isinstance(t, T.VectorType):
        raise TypeMismatchError(f"bitcast target must be a scalar or vector type, got {t!r}", cg.em.loc)
    if isinstance(v.type, T.CoopMatType):
        src = v.type.elem
        if not isinstance(t, T.ScalarType) or src.kind != "int" or t.kind != "int" or src.width != t.width:
            raise TypeMismatchError(f"a cooperative matrix bitcasts between integer component types of one width; "
                                    f"{src} -> {t} is not allowed", cg.em.loc)
        return cg.em.op("bitcast", T.with_elem(v.type, t), [v])
    if T.size_of(v.type) != T.size_of(t) or T.elem_of(v.type).is_bool or T.elem_of(t).is_bool:
        raise TypeMismatchError(f"cannot bitcast {v.type} ({T.size_of(v.type)} bytes) to {t} ({T.size_of(t)} bytes)",
                                cg.em.loc)
    return cg.em.op("bitcast", t, [v])


def _layout(cg, value) -> Layout:
    if not isinstance(value, Enumerant) or value.kind != "CooperativeMatrixLayout":
        raise ArgumentError(f"layout must be coopdsl.RowMajor or coopdsl.ColumnMajor, got {value!r}", cg.em.loc)
    return Layout(value.value)


def _memory_pointer(cg, buf, offset, what: str):
    from .structs import is_data_ptr

    if isinstance(buf, Value) and is_data_ptr(buf.type):
        from ..frontend.expr import _ptr_element

        return _ptr_element(cg, buf, offset)
    if not isinstance(buf, BufferRef):
        raise TypeMismatchError(f"{what} needs a buffer parameter, got {cg.describe(buf)}", cg.em.loc)
    return cg.element_pointer(buf, offset)


def _psb_aligned(ptr, mem: MemoryAccess | None) -> MemoryAccess | None:
    """Accesses through PhysicalStorageBuffer pointers carry Aligned (natural alignment unless given)."""
    if ptr.type.storage != "PhysicalStorageBuffer":
        return mem
    return (mem or MemoryAccess()).with_alignment(T.align_of(ptr.type.pointee))


def _stride(cg, p, b: Builtin):
    if "stride" not in p:
        raise ArgumentError(
            f"{b.name}: missing argument 'stride' (elements between consecutive rows for RowMajor, "
            f"columns for ColumnMajor; required by SPIR-V for these layouts)", cg.em.loc)
    return cg.as_index(p["stride"], "stride")


MEMORY_KW = ("aligned", "nontemporal", "volatile", "available", "visible")


def memory_operands(cg, p: dict, is_store: bool):
    """The Memory Operands of a load/store from keyword arguments (None when there are none).

    ``aligned=N`` (a power of two, bytes) -> Aligned N; ``nontemporal=True``;
    ``volatile=True``; ``available=scope`` (stores) / ``visible=scope`` (loads)
    -> MakePointerAvailable/MakePointerVisible + NonPrivatePointer with the
    scope (Vulkan memory model).
    """
    fields: dict = {}
    aligned = p.get("aligned")
    if aligned is not None:
        if isinstance(aligned, bool) or not isinstance(aligned, int) or aligned <= 0 or aligned & (aligned - 1):
            raise ArgumentError(f"aligned must be a power-of-two number of bytes, got {aligned!r}", cg.em.loc)
        fields["aligned"] = aligned
    for flag in ("nontemporal", "volatile"):
        if p.get(flag) is not None and cg.compile_time(p[flag], flag, bool):
            fields[flag] = True
    wrong, right = ("visible", "available") if is_store else ("available", "visible")
    if p.get(wrong) is not None:
        raise ArgumentError(f"{wrong}= applies to {'loads' if is_store else 'stores'}; a "
                            f"{'store' if is_store else 'load'} takes {right}=", cg.em.loc)
    if p.get(right) is not None:
        scope = p[right]
        if not isinstance(scope, Enumerant) or scope.kind != "Scope":
            raise ArgumentError(f"{right}= takes a scope (coopdsl.Device, Workgroup, Subgroup, QueueFamily), "
                                f"got {cg.describe(scope)}", cg.em.loc)
        fields[right] = Scope[scope.name]
    return MemoryAccess(**fields) if fields else None


@builtin("(buffer, offset, *, stride, layout=RowMajor, aligned=None, nontemporal=None, volatile=None, "
         "visible=None)", method_of="mattype")
def load(cg, mat_type, args, kwargs):
    """Load a cooperative matrix from ``buffer`` starting at element ``offset``.

    ``buffer`` is a buffer parameter, a shared array or a local array; its
    element type may differ from the matrix component type (e.g. f16 data in a
    ``vec4[u32]`` shared array), and ``offset``/``stride`` count its elements.
    ``stride`` counts elements between rows (RowMajor) or columns
    (ColumnMajor).  Memory operands: see ``memory_operands``.  Emits
    OpCooperativeMatrixLoadKHR.
    """
    p = bind_args(cg, load, args, kwargs, ["buffer", "offset", "stride", "layout", *MEMORY_KW], 2,
                  ("stride", "layout", *MEMORY_KW))
    layout = _layout(cg, p.get("layout", RowMajor))
    ptr = _memory_pointer(cg, p["buffer"], p["offset"], "load")
    stride = _stride(cg, p, load)
    mem = _psb_aligned(ptr, memory_operands(cg, p, is_store=False))
    return cg.em.op("coop_load", mat_type, [ptr, stride], layout=layout, **({"memory": mem} if mem else {}))


@builtin("(value)", method_of="mattype")
def splat(cg, mat_type, args, kwargs):
    """A matrix with every element equal to ``value`` (a constant or a runtime scalar)."""
    p = bind_args(cg, splat, args, kwargs, ["value"], 1)
    v = p["value"]
    if isinstance(v, (bool, int, float)):
        return cg.em.literal(v, mat_type)
    v = cg.as_runtime(v)
    if v.type != mat_type.elem:
        raise TypeMismatchError(f"splat of {mat_type} needs a {mat_type.elem} value, got {v.type}", cg.em.loc)
    return cg.em.op("splat", mat_type, [v])


@builtin("()", method_of="mattype")
def length(cg, mat_type, args, kwargs):
    """Number of elements each invocation holds (OpCooperativeMatrixLengthKHR), a u32."""
    bind_args(cg, length, args, kwargs, [], 0)
    return cg.em.op("coop_length", T.u32, [], mat_type=mat_type)


@builtin("(buffer, offset, *, stride, layout=RowMajor, aligned=None, nontemporal=None, volatile=None, "
         "available=None)", method_of="mat")
def store(cg, mat, args, kwargs):
    """Store the matrix into ``buffer`` from element ``offset`` (OpCooperativeMatrixStoreKHR).

    ``stride`` counts buffer elements between rows (RowMajor) or columns
    (ColumnMajor) and must not be 0.
    """
    p = bind_args(cg, store, args, kwargs, ["buffer", "offset", "stride", "layout", *MEMORY_KW], 2,
                  ("stride", "layout", *MEMORY_KW))
    layout = _layout(cg, p.get("layout", RowMajor))
    ptr = _memory_pointer(cg, p["buffer"], p["offset"], "store")
    stride = _stride(cg, p, store)
    if isinstance(p["stride"], int) and p["stride"] == 0:
        raise ArgumentError("store: stride must be greater than 0 (SPV_KHR_cooperative_matrix)", cg.em.loc)
    if isinstance(p["buffer"], BufferRef):
        cg.note_buffer_write(p["buffer"])
    mem = _psb_aligned(ptr, memory_operands(cg, p, is_store=True))
    cg.em.op("coop_store", T.void, [ptr, mat, stride], layout=layout, **({"memory": mem} if mem else {}))
    return None


@builtin("(buffer, index, *, aligned=None, nontemporal=None, volatile=None, visible=None)")
def load_element(cg, args, kwargs):
    """``buffer[index]`` with explicit memory operands (OpLoad ... Aligned/Nontemporal/Volatile/MakePointerVisible)."""
    p = bind_args(cg, load_element, args, kwargs, ["buffer", "index", *MEMORY_KW], 2, MEMORY_KW)
    ptr = _memory_pointer(cg, p["buffer"], p["index"], "load_element")
    mem = memory_operands(cg, p, is_store=False)
    return cg.em.op("load", p["buffer"].elem, [ptr], **({"memory": mem} if mem else {}))


@builtin("(buffer, index, value, *, aligned=None, nontemporal=None, volatile=None, available=None)")
def store_element(cg, args, kwargs):
    """``buffer[index] = value`` with explicit memory operands (OpStore ... MakePointerAvailable etc.)."""
    p = bind_args(cg, store_element, args, kwargs, ["buffer", "index", "value", *MEMORY_KW], 3, MEMORY_KW)
    buf = p["buffer"]
    ptr = _memory_pointer(cg, buf, p["index"], "store_element")
    value = cg.as_operand(p["value"])
    if isinstance(value, (bool, int, float)):
        value = cg.em.literal(value, buf.elem)
    if not isinstance(value, Value) or value.type != buf.elem:
        raise TypeMismatchError(f"cannot store {cg.describe(value)} into {buf.kind} '{buf.name}' of {buf.elem}",
                                cg.em.loc)
    cg.note_buffer_write(buf)
    mem = memory_operands(cg, p, is_store=True)
    cg.em.op("store", T.void, [ptr, value], **({"memory": mem} if mem else {}))


METHODS[("mat", "length")] = Builtin(
    "length", lambda cg, mat, a, k: length.impl(cg, mat.type, a, k), length.doc, "()")


# -- synchronisation ------------------------------------------------------------
@builtin("()")
def barrier(cg, args, kwargs):
    """Workgroup execution and shared-memory barrier (GLSL ``barrier()``).

    OpControlBarrier Workgroup Workgroup AcquireRelease|WorkgroupMemory.
    """
    bind_args(cg, barrier, args, kwargs, [], 0)
    cg.em.op("control_barrier", T.void, [], exec_scope=Scope.Workgroup, mem_scope=Scope.Workgroup,
             semantics=Semantics(("AcquireRelease", "WorkgroupMemory")))
    return None


# -- builtin inputs -----------------------------------------------------------------
_UVEC3 = T.VectorType(T.u32, 3)
BUILTIN_VARS = {v.name: v for v in (
    BuiltinVar("workgroup_id", "WorkgroupId", _UVEC3, "Index of this workgroup in the dispatch (gl_WorkGroupID)."),
    BuiltinVar("local_invocation_id", "LocalInvocationId", _UVEC3, "Index within the workgroup (gl_LocalInvocationID)."),
    BuiltinVar("global_invocation_id", "GlobalInvocationId", _UVEC3, "gl_GlobalInvocationID."),
    BuiltinVar("num_workgroups", "NumWorkgroups", _UVEC3, "Workgroups in the dispatch (gl_NumWorkGroups)."),
    BuiltinVar("local_invocation_index", "LocalInvocationIndex", T.u32, "Flattened local index."),
    BuiltinVar("subgroup_id", "SubgroupId", T.u32, "Index of this subgroup in the workgroup (gl_SubgroupID)."),
    BuiltinVar("subgroup_size", "SubgroupSize", T.u32, "Invocations per subgroup (gl_SubgroupSize)."),
    BuiltinVar("subgroup_invocation_id", "SubgroupLocalInvocationId", T.u32,
               "Index within the subgroup (gl_SubgroupInvocationID)."),
    BuiltinVar("num_subgroups", "NumSubgroups", T.u32, "Subgroups in the workgroup (gl_NumSubgroups)."),
)}


@builtin("(start, stop[, step])")
def static_range(cg, args, kwargs):
    """Like ``range`` with compile-time ints, but the loop is unrolled at compile time.

    The loop variable is a Python int in each copy of the body, so it can
    index compile-time tuples/lists and choose tiles: ``for i in static_range(4):``.
    """
    from ..errors import UnsupportedSyntaxError

    raise UnsupportedSyntaxError("static_range(...) can only be iterated by a for loop", cg.em.loc)


@builtin("(start, stop[, step], *, unroll=None)")
def range_(cg, args, kwargs):
    """A runtime loop like ``range`` with a loop-control hint for the driver's compiler.

    ``unroll=True`` -> OpLoopMerge Unroll, ``unroll=False`` -> DontUnroll,
    ``unroll=n`` (int) -> PartialCount n (SPIR-V 1.4+).  Useful for loops whose
    trip count is a specialization constant, known only at pipeline creation.
    Only valid as the iterable of a ``for`` loop.
    """
    from ..errors import UnsupportedSyntaxError

    raise UnsupportedSyntaxError("cd.range(...) can only be iterated by a for loop", cg.em.loc)
