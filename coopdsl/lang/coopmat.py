"""Cooperative-matrix builtins: mul-add, loads, stores, splats and lengths.

``cd.muladd`` is a function; ``MatA[...].load``/``.splat``/``.length`` are
methods of cooperative-matrix *types* and ``m.store``/``m.length`` methods of
matrix *values*, registered by IR type (:class:`~coopdsl.ir.types.CoopMatType`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import MATRIX_OPERANDS, Layout
from ..ir.core import Const, SpecConst, SpecOp, Value, dim_of
from ..ir.ops import coopmat as rules
from . import arith
from .access import LOAD_OPERANDS, STORE_OPERANDS, bind_load, bind_store, memory_operands, memory_pointer, psb_aligned
from .conversions import CompileTime, Conversion
from .coopcheck import check_muladd, raise_problem
from .registry import VALUE_METHODS, Builtin, builtin, make_builtin
from .types import Enumerant, RowMajor
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder


@builtin("(a, b, c, *, saturate=False, signed=None)", saturate=CompileTime(bool, "saturate"))
def muladd(cg: Builder, **p: Any) -> Value:
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
    a, b, c = cg.as_operand(p["a"]), cg.as_operand(p["b"]), cg.as_operand(p["c"])
    signed = check_muladd(cg.em, a, b, c)
    if p.get("signed") is not None:
        signed = _signedness(cg, p["signed"], c.type)
    saturate = p.get("saturate", False)
    raise_problem(cg.em, rules.muladd_operands_problem(c.type, signed, saturate))
    return cg.em.op("coop_muladd", c.type, [a, b, c], signed=signed, saturate=saturate)


def _signedness(cg: Builder, value: Any, acc_type: T.CoopMatType) -> frozenset[str]:
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, tuple) or any(n not in MATRIX_OPERANDS for n in names):
        raise ArgumentError(f"signed= takes a tuple of operand names from {sorted(MATRIX_OPERANDS)}, "
                            f"got {value!r}", cg.em.loc)
    raise_problem(cg.em, rules.muladd_operands_problem(acc_type, frozenset(names), False))
    return frozenset(names)


def _layout(cg: Builder, value: Any) -> Layout | Value:
    """A Layout, or a 32-bit integer specialization constant holding one (0 RowMajor, 1 ColumnMajor)."""
    if isinstance(value, (SpecConst, SpecOp)) and value.type in (T.u32, T.i32):
        if isinstance(value, SpecConst) and isinstance(value.default, int) and value.default not in _LAYOUTS:
            # (its default, or the value compile(spec=...), specialize() or launch() gave it)
            raise ArgumentError(f"layout: specialization constant '{value.name}' holds {value.default}; a matrix "
                                f"load or store's layout is 0 (RowMajor) or 1 (ColumnMajor)", cg.em.loc)
        return value
    if not isinstance(value, Enumerant) or value.kind != "CooperativeMatrixLayout":
        raise ArgumentError(f"layout must be coopdsl.RowMajor, coopdsl.ColumnMajor or a Spec[u32] holding one, "
                            f"got {cg.describe(value)}", cg.em.loc)
    layout = _LAYOUTS.get(value.value)
    return layout if layout is not None else Layout(value.value)


_LAYOUTS = {layout.value: layout for layout in Layout}  # (calling the Enum is a slow way to the same member)
ROW_MAJOR = _LAYOUTS[RowMajor.value]  # layout= left out


class LayoutArg(Conversion):
    """The ``layout=`` of a matrix load or store (:func:`_layout`)."""

    __slots__ = ()

    def __call__(self, cg: Builder, value: Any, name: str, param: str) -> Layout | Value:
        return _layout(cg, value)


LOAD = {"layout": LayoutArg(), **LOAD_OPERANDS}
STORE = {"layout": LayoutArg(), **STORE_OPERANDS}


def _stride(cg: Builder, p: dict[str, Any], b: Builtin, is_store: bool) -> Value:
    if "stride" not in p:
        raise ArgumentError(
            f"{b.name}: missing argument 'stride' (elements between consecutive rows for RowMajor, "
            f"columns for ColumnMajor; required by SPIR-V for these layouts)", cg.em.loc)
    stride = p["stride"]
    known = stride.value if isinstance(stride, Const) else stride
    if isinstance(stride, (SpecConst, SpecOp)) and isinstance(stride.type, T.ScalarType) and stride.type.is_int:
        known = dim_of(stride)   # (checked at the values a compile or launch gives, as a constant)
    raise_problem(cg.em, rules.stride_problem(known, is_store), f"{b.name}: ")
    return cg.as_index(stride, "stride")


def _matrix_pointer(cg: Builder, buf: Any, offset: Any, what: str) -> Value:
    """Pointer to the first element of a matrix in a buffer, shared array or ``Ptr`` (not a local array)."""
    if isinstance(buf, BufferRef) and buf.storage.is_invocation_local:
        raise TypeMismatchError(
            f"cannot {what} a cooperative matrix {'into' if what == 'store' else 'from'} {buf.kind} "
            f"'{buf.name}': Vulkan allows matrix loads and stores only on buffers, shared arrays and Ptr[...] "
            f"(StorageBuffer, Workgroup, PhysicalStorageBuffer memory); keep matrices in variables or a "
            f"local_array or private_array of matrices instead", cg.em.loc)
    ptr = memory_pointer(cg, buf, offset, what, "a buffer, a shared array or a Ptr[...]")
    raise_problem(cg.em, rules.memory_problem(ptr.type.pointee, what))
    return cast(Value, ptr)


@builtin("(buffer, offset, *, stride, layout=RowMajor, aligned=None, nontemporal=None, volatile=None, "
         "visible=None)", method_of=T.CoopMatType, binder=bind_load, conversions=LOAD)
def load(cg: Builder, mat_type: T.CoopMatType, **p: Any) -> Value:
    """Load a cooperative matrix from ``buffer`` starting at element ``offset``.

    ``buffer`` is a buffer parameter, a shared array or a ``Ptr[T]`` (not a local array: Vulkan loads
    and stores matrices only there); its element type may differ from the matrix component type (e.g. f16 data in a
    ``vec4[u32]`` shared array), and ``offset``/``stride`` count its elements.
    ``stride`` counts elements between rows (RowMajor) or columns
    (ColumnMajor).  Memory operands: see ``memory_operands``.  Emits
    OpCooperativeMatrixLoadKHR.
    """
    layout = p.get("layout", ROW_MAJOR)
    ptr = _matrix_pointer(cg, p["buffer"], p["offset"], "load")
    stride = _stride(cg, p, load, is_store=False)
    mem = psb_aligned(ptr, memory_operands(p, is_store=False))
    return cg.em.op("coop_load", mat_type, [ptr, stride], layout=layout, **({"memory": mem} if mem else {}))


@builtin("(value)", method_of=T.CoopMatType, typed=True)
def splat(cg: Builder, mat_type: T.CoopMatType, value: Any) -> Value:
    """A matrix with every element equal to ``value`` (a constant or a runtime scalar)."""
    if isinstance(value, (bool, int, float)):
        cg.em.module.const_locs.setdefault(mat_type, cg.em.loc)   # (where the matrix type is first written)
        return arith.literal(cg.em, value, mat_type)
    v = cg.as_runtime(value)
    if v.type != mat_type.elem:
        raise TypeMismatchError(f"splat of {mat_type} needs a {mat_type.elem} value, got {v.type}", cg.em.loc)
    return cg.em.op("splat", mat_type, [v])


@builtin("()", method_of=T.CoopMatType, typed=True)
def length(cg: Builder, mat_type: T.CoopMatType) -> Value:
    """Number of elements each invocation holds (OpCooperativeMatrixLengthKHR), a u32."""
    return cg.em.op("coop_length", T.u32, [], mat_type=mat_type)


@builtin("(buffer, offset, *, stride, layout=RowMajor, aligned=None, nontemporal=None, volatile=None, "
         "available=None)", method_of=T.CoopMatType, on_values=True, binder=bind_store, conversions=STORE)
def store(cg: Builder, mat: Value, **p: Any) -> None:
    """Store the matrix into ``buffer`` from element ``offset`` (OpCooperativeMatrixStoreKHR).

    ``stride`` counts buffer elements between rows (RowMajor) or columns
    (ColumnMajor) and must not be 0.
    """
    layout = p.get("layout", ROW_MAJOR)
    ptr = _matrix_pointer(cg, p["buffer"], p["offset"], "store")
    stride = _stride(cg, p, store, is_store=True)
    if isinstance(p["buffer"], BufferRef):
        cg.note_buffer_write(p["buffer"])
    mem = psb_aligned(ptr, memory_operands(p, is_store=True))
    cg.em.op("coop_store", T.void, [ptr, mat, stride], layout=layout, **({"memory": mem} if mem else {}))
    return None


VALUE_METHODS[(T.CoopMatType, "length")] = make_builtin(
    "length", lambda cg, mat: length.impl(cg, mat.type), length.doc, "()", {})

