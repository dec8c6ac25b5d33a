"""Tensor layouts and views, and cooperative-matrix loads and stores through them (SPV_NV_tensor_addressing,
SPV_NV_cooperative_matrix2).

A layout says how a tensor of 1 to 5 dimensions lies in memory (dimensions,
strides, block size) and which region of it a load or store touches (a slice:
offsets and spans), and what happens outside the tensor (the clamp mode); a
view reorders (``perm``), reshapes and clips the region.  Both are immutable
values: every method returns a *new* layout or view with part of the state
replaced, exactly as the SPIR-V instructions copy their operand, so they can be
kept in variables, changed in loops and chosen by branches::

    L = cd.tensor_layout(2, clamp=cd.ClampConstant).dimension(M, K).stride(K, 1)
    a = MatA[f16, 64, 32, cd.Workgroup].load_tensor(buf, 0, L.slice(row0, 64, k0, 32))

Every method and both instructions are documented on their builtins below;
docs/lang/nv2.md has the rules and a worked GEMM.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, cast

from .._records import record
from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.attrs import MemoryAccess
from ..ir.core import Const, SpecConst, SpecOp, Value, dim_of
from ..ir.literals import LiteralError, fit
from ..ir.ops import tensor as rules
from ..ir.ops.tensor import SETTERS, is_int32
from ..ir.vocab import StorageClass
from . import arith
from .access import LOAD_OPERANDS, STORE_OPERANDS, bind_load, bind_store, memory_operands, memory_pointer
from .callbacks import callback_operand, parameter_annotation
from .conversions import CompileTime, Conversion
from .coopcheck import raise_problem
from .registry import VALUE_METHODS, Builtin, builtin, make_builtin
from .structs import is_data_ptr, ptr_elem
from .types import ClampUndefined, Enumerant
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder

MAX_DIM = 5
TENSOR_ALIGNMENT = rules.TENSOR_ALIGNMENT


@record(frozen=True)
class Rank(Conversion):
    """The dimension count of a new layout or view (``what``): a compile-time int from 1 to 5."""

    what: str

    def __call__(self, cg: Builder, dim: Any, name: str, param: str) -> int:
        if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= MAX_DIM:
            raise ArgumentError(f"{self.what} has 1 to {MAX_DIM} dimensions (a compile-time int), got "
                                f"{cg.describe(dim)}", cg.em.loc)
        return dim


@record(frozen=True)
class ClampMode(Conversion):
    """A TensorClampMode enumerant's value, or the symbolic value of a 32-bit integer spec constant."""

    def __call__(self, cg: Builder, clamp: Any, name: str, param: str) -> T.Dim:
        if isinstance(clamp, Enumerant) and clamp.kind == "TensorClampMode":
            return clamp.value
        if isinstance(clamp, (SpecConst, SpecOp)) and is_int32(clamp.type):
            if isinstance(clamp, SpecConst) and not 0 <= clamp.default <= 4:
                raise ArgumentError(f"clamp mode: specialization constant '{clamp.name}' holds {clamp.default}; clamp "
                                    f"modes are 0 to 4 (Undefined, Constant, ClampToEdge, Repeat, RepeatMirrored)",
                                    cg.em.loc)
            return dim_of(clamp)
        raise ArgumentError(f"clamp must be cd.ClampUndefined, cd.ClampConstant, cd.ClampToEdge, cd.ClampRepeat, "
                            f"cd.ClampRepeatMirrored or a Spec[u32] holding one, got {cg.describe(clamp)}", cg.em.loc)


@builtin("(dim, *, clamp=ClampUndefined)", dim=Rank("a tensor layout"), clamp=ClampMode())
def tensor_layout(cg: Builder, dim: int, clamp: T.Dim = ClampUndefined.value) -> Value:
    """A new tensor layout of ``dim`` (1 to 5) dimensions (OpCreateTensorLayoutNV).

    ``clamp`` says what a load reads outside the tensor's dimensions:
    ``cd.ClampUndefined`` (the default: undefined), ``cd.ClampConstant`` (the
    clamp value, 0 unless set), ``cd.ClampToEdge``, ``cd.ClampRepeat`` or
    ``cd.ClampRepeatMirrored``; stores outside are dropped with any mode but
    Undefined.  A ``Spec[u32]`` holding a mode makes it a specialization
    constant.  The new layout has dimensions, strides, offsets and spans 0,
    block size 1 and clamp value 0: set them with the methods.
    """
    return cg.em.op("tensor_layout", T.TensorLayoutType(dim, clamp), [])


@builtin("(dim, *, has_dims=False, perm=None)", dim=Rank("a tensor view"), has_dims=CompileTime(bool, "has_dims"))
def tensor_view(cg: Builder, dim: int, has_dims: bool = False, perm: Any = None) -> Value:
    """A new tensor view of ``dim`` (1 to 5) dimensions (OpCreateTensorViewNV).

    ``perm`` (a tuple of 0 .. dim-1 in some order; default in order) permutes
    the view's dimensions: ``perm=(1, 0)`` reads a 2-D region transposed.
    ``has_dims=True`` gives the view its own dimensions and strides
    (``.dimension``/``.stride``); otherwise it uses the layout's spans.
    ``.clip`` limits the rows and columns of the matrix that are loaded or
    stored.
    """
    perm = tuple(range(dim)) if perm is None else perm
    if not isinstance(perm, tuple) or any(isinstance(x, bool) or not isinstance(x, int) for x in perm) or \
            sorted(perm) != list(range(dim)):   # (the types first: sorted() of a runtime value is a TypeError)
        got = cg.describe(perm) if not isinstance(perm, tuple) else \
            "(" + ", ".join(str(x) if isinstance(x, int) else cg.describe(x) for x in perm) + ")"
        raise ArgumentError(f"perm must be a permutation of 0 .. {dim - 1} (each once, a compile-time tuple), "
                            f"got {got}", cg.em.loc)
    return cg.em.op("tensor_view", T.TensorViewType(dim, has_dims, perm), [])


# -- setters ------------------------------------------------------------------------------------------
def _value32(cg: Builder, v: Any, what: str) -> Value:
    """An argument of a setter as a 32-bit integer value (Python ints: u32, or i32 when negative)."""
    v = cg.as_operand(v)
    if isinstance(v, int) and not isinstance(v, bool) and not -(1 << 31) <= v < (1 << 32):
        raise ArgumentError(f"{what} must fit in 32 bits, got {v}", cg.em.loc)
    v = cg.as_index(v, what)
    if not is_int32(v.type):
        raise TypeMismatchError(f"{what} must be a 32-bit integer (u32 or i32), got {cg.describe(v)}", cg.em.loc)
    return cast(Value, v)


def _clamp_bits(cg: Builder, value: Any, as_type: Any) -> Value:
    """The clamp value: an integer bit pattern, or a number encoded as ``as_type`` (f16, f32 or an integer type)."""
    if as_type is None:
        if isinstance(value, float):
            raise ArgumentError(f"clamp_value takes a bit pattern; for the number {value!r} say which type it is, "
                                f"e.g. clamp_value({value!r}, f16) (f16 -inf is 0xFC00)", cg.em.loc)
        return _value32(cg, value, "the clamp value")
    if not isinstance(as_type, T.ScalarType) or as_type.is_bool or as_type.width > 32 or \
            as_type.encoding is not None or not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ArgumentError(f"clamp_value(value, type) encodes a compile-time number as f16, f32 or an integer "
                            f"type of up to 32 bits; got {cg.describe(value)} as {cg.describe(as_type)}", cg.em.loc)
    try:
        number = fit(value, as_type)   # (the literal rule: 300 does not fit in i8, nor -1 in u8, nor 2.5 in i32)
    except LiteralError as e:
        raise ArgumentError(str(e), cg.em.loc) from None
    if as_type.is_float:
        fmt = {16: ("<e", "<H"), 32: ("<f", "<I")}[as_type.width]
        bits = struct.unpack(fmt[1], struct.pack(fmt[0], float(number)))[0]
    else:
        bits = int(number) & ((1 << as_type.width) - 1)   # (a negative number's two's complement)
    return cg.em.const(T.u32, bits)


@record(frozen=True)
class SetterValues(Conversion):
    """A setter's values (its ``*values`` parameter; one compile-time tuple may stand for all of them): each a
    number or a 32-bit runtime integer, checked by the setter's value rule (``setter_value_problem``) and made
    a 32-bit value."""

    kind: str

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> list[Value]:
        values = v[0] if len(v) == 1 and isinstance(v[0], tuple) else v
        return [_setter_value(cg, self.kind, name, i, a) for i, a in enumerate(values)]


def _setter(kind: str, name: str, signature: str, doc: str) -> None:
    """Register method ``name`` of layouts or views (``SETTERS[kind].on``): emit op ``kind`` on a copy."""
    s = SETTERS[kind]

    def emit(cg: Builder, receiver: Value, values: list[Value]) -> Value:
        raise_problem(cg.em, rules.setter_problem(kind, receiver, values))
        return cg.em.op(kind, receiver.type, [receiver, *values])

    if kind == "tensor_layout_clamp_value":
        def clamp(cg: Builder, receiver: Value, value: Any, type: Any = None) -> Value:
            return emit(cg, receiver, [_clamp_bits(cg, value, type)])

        VALUE_METHODS[(s.on, name)] = make_builtin(name, clamp, doc, signature, {})
        return
    if not signature.startswith("(*"):  # named values (a view's clip): matched in order, or one tuple of them
        names = [n.strip() for n in signature.strip("()").split(",")]

        def bind_named(cg: Builder, b: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
            if kwargs:
                raise ArgumentError(f"{name}{signature} takes no keyword arguments", cg.em.loc)
            if len(args) == 1 and isinstance(args[0], tuple):  # the values as one compile-time tuple
                args = list(args[0])
            if len(args) != len(names):
                raise ArgumentError(f"{name}{signature} takes {len(names)} values ({s.values}), got {len(args)}",
                                    cg.em.loc)
            return dict(zip(names, args))

        def named(cg: Builder, receiver: Value, **values: Any) -> Value:
            return emit(cg, receiver, [_setter_value(cg, kind, name, i, values[n]) for i, n in enumerate(names)])

        VALUE_METHODS[(s.on, name)] = make_builtin(name, named, doc, signature, {}, bind_named)
        return
    var = signature.strip("()*")

    def impl(cg: Builder, receiver: Value, **p: Any) -> Value:
        t: Any = receiver.type  # (a TensorLayoutType or TensorViewType: the receiver's class chose the method)
        values = p[var]
        want = s.count(t.dim)
        if len(values) != want:
            raise ArgumentError(f"{name} of {_describe(t)} takes {want} values ({s.values}), got {len(values)}",
                                cg.em.loc)
        return emit(cg, receiver, values)

    VALUE_METHODS[(s.on, name)] = make_builtin(name, impl, doc, signature, {var: SetterValues(kind)})


def _setter_value(cg: Builder, kind: str, name: str, i: int, v: Any) -> Value:
    """Value ``i`` of a setter: 32 bits; negative only as a slice's offset (which is signed: a number must fit
    in i32), and no block size of 0."""
    v = cg.as_operand(v)
    raise_problem(cg.em, rules.setter_value_problem(kind, i, v.value if isinstance(v, Const) else v))
    if kind == "tensor_layout_slice" and i % 2 == 0 and isinstance(v, int) and not isinstance(v, bool):
        try:
            fit(v, T.i32)   # (2**32 - 1 would be the offset -1)
        except LiteralError as e:
            raise ArgumentError(f"{name}'s value {i}, an offset, is a signed 32-bit value: {e}", cg.em.loc) from None
    return _value32(cg, v, f"{name}'s value {i}")


def _describe(t: T.TensorLayoutType | T.TensorViewType) -> str:
    return f"a {t.dim}-dimensional {'layout' if isinstance(t, T.TensorLayoutType) else 'view'} ({t})"


_setter("tensor_layout_dimension", "dimension", "(*dims)",
        "A copy with the tensor's dimensions set, outermost first (OpTensorLayoutSetDimensionNV). Also sets the "
        "span to the dimensions, the offsets to 0 and the strides to those of a packed tensor (counting blocks), "
        "so set the block size first and strides after.")
_setter("tensor_layout_stride", "stride", "(*strides)",
        "A copy with the strides set, in elements (in blocks with a block size), outermost first "
        "(OpTensorLayoutSetStrideNV): e.g. .stride(row_stride, 1).")
_setter("tensor_layout_block_size", "block_size", "(*sizes)",
        "A copy with the block size set, outermost first (OpTensorLayoutSetBlockSizeNV): the tensor is made of "
        "blocks a decode function reads; set it before the dimensions. Loads only.")
_setter("tensor_layout_slice", "slice", "(*offsets_and_spans)",
        "A copy whose region is moved by offset and sized to span in each dimension: "
        ".slice(o0, s0, o1, s1, ...) (OpTensorLayoutSliceNV). Offsets add to the current ones and may be negative.")
_setter("tensor_layout_clamp_value", "clamp_value", "(value, type=None)",
        "A copy with the value ClampConstant loads read outside the tensor (OpTensorLayoutSetClampValueNV): a "
        "32-bit bit pattern, or a number encoded as ``type`` (clamp_value(float('-inf'), f16) is 0xFC00).")
_setter("tensor_view_dimension", "dimension", "(*dims)",
        "A copy with the view's dimensions (and packed strides) set, outermost first (OpTensorViewSetDimensionNV); "
        "for views created with has_dims=True.")
_setter("tensor_view_stride", "stride", "(*strides)",
        "A copy with the view's strides set, outermost first (OpTensorViewSetStrideNV).")
_setter("tensor_view_clip", "clip", "(row_offset, row_span, col_offset, col_span)",
        "A copy that loads or stores only the matrix rows row_offset .. +row_span and columns col_offset .. "
        "+col_span (OpTensorViewSetClipNV); clipped elements keep the load's fill value and are not stored. The "
        "elements inside are numbered row by row within the clip, so slice the layout to the clip's size.")


# -- loads and stores --------------------------------------------------------------------------------
def _layout_and_view(cg: Builder, p: dict[str, Any], b: Builtin) -> list[Value]:
    layout = cg.as_operand(p["layout"])
    if not isinstance(layout, Value) or not isinstance(layout.type, T.TensorLayoutType):
        raise TypeMismatchError(f"{b.name}: layout must be a tensor layout (cd.tensor_layout(...)), got "
                                f"{cg.describe(layout)}", cg.em.loc)
    view = p.get("view")
    if view is None:
        return [layout]
    view = cg.as_operand(view)
    if not isinstance(view, Value) or not isinstance(view.type, T.TensorViewType):
        raise TypeMismatchError(f"{b.name}: view must be a tensor view (cd.tensor_view(...)), got "
                                f"{cg.describe(view)}", cg.em.loc)
    raise_problem(cg.em, rules.view_problem(layout.type, view.type), f"{b.name}: ")
    raise_problem(cg.em, rules.view_dims_problem(view), f"{b.name}: ")
    return [layout, view]


def _tensor_pointer(cg: Builder, p: dict[str, Any], b: Builtin, decode: Any) -> tuple[Any, T.Type | None]:
    """Pointer to element ``offset`` of the memory a tensor load/store addresses, and the block type its
    decode function ``decode`` reads (None without one), with their rules checked."""
    buf, offset = p["buffer"], cg.as_operand(p["offset"])
    if isinstance(buf, BufferRef) and buf.storage.is_invocation_local:
        raise TypeMismatchError(f"{b.name}: cannot address {buf.kind} '{buf.name}'; tensor loads and stores take "
                                f"buffers, shared arrays and Ptr[...]", cg.em.loc)
    if decode is not None and isinstance(buf, BufferRef) and buf.storage.is_shared:
        raise TypeMismatchError(f"{b.name}: a decode function reads device memory (a buffer or a Ptr[...]), not "
                                f"shared array '{buf.name}' (SPV_NV_cooperative_matrix2)", cg.em.loc)
    ptr = memory_pointer(cg, buf, offset, b.name, "a buffer, a shared array or a Ptr[...]")
    elem = ptr.type.pointee
    block = None if decode is None else _decode_block(cg, decode, elem)
    raise_problem(cg.em, rules.memory_problem(elem, block), f"{b.name}: ")
    raise_problem(cg.em, rules.offset_problem(offset.value if isinstance(offset, Const) else offset, elem),
                  f"{b.name}: ")
    return ptr, block


def _decode_block(cg: Builder, fn: Any, elem: T.Type) -> T.Type:
    """The block struct decode function ``fn`` reads: its first parameter's annotation when it has one (as a
    GLSL decode function declares its buffer_reference block type, ``def fn(block: BlockQ4_0Packed16, ...)``),
    else the memory's element type."""
    ann = parameter_annotation(cg, fn, 0)
    if ann is None:
        return elem
    if is_data_ptr(ann):
        raise TypeMismatchError(f"load_tensor: the decode function's first parameter is annotated "
                                f"Ptr[{ptr_elem(ann)}], a pointer to an array; it receives a pointer to one block: "
                                f"annotate it with the block struct itself (block: {ptr_elem(ann)})", cg.em.loc)
    if not isinstance(ann, T.StructType):
        what = cg.describe(ann) if isinstance(ann, Value) else repr(ann)
        raise TypeMismatchError(f"load_tensor: the decode function's first parameter is annotated {what}; it "
                                f"receives a pointer to one block, so annotate it with the block's @cd.struct "
                                f"(or leave it unannotated to read the memory's element type, {elem})", cg.em.loc)
    return ann


def _memory(cg: Builder, p: dict[str, Any], ptr: Any, is_store: bool) -> dict[str, Any]:
    """Memory operands; through a device pointer ``Aligned 16`` (the alignment the instruction requires)."""
    mem = memory_operands(p, is_store=is_store)
    if ptr.type.storage.is_physical:
        mem = (mem or MemoryAccess()).with_alignment(TENSOR_ALIGNMENT)
    return {"memory": mem} if mem else {}


def _fill(cg: Builder, fill: Any, mat_type: T.CoopMatType) -> Value:
    fill = cg.as_operand(fill)
    if fill is None:
        return arith.literal(cg.em, 0, mat_type)
    if isinstance(fill, (int, float)) and not isinstance(fill, bool):
        return arith.literal(cg.em, fill, mat_type)
    if isinstance(fill, Value) and fill.type == mat_type.elem:  # a runtime scalar (f16(1.0)): every element
        return cg.em.op("splat", mat_type, [fill])
    if not isinstance(fill, Value) or fill.type != mat_type:
        raise TypeMismatchError(f"load_tensor: fill must be a number, a runtime {mat_type.elem} or a {mat_type}, "
                                f"got {cg.describe(fill)}", cg.em.loc)
    return fill


def _decoder(cg: Builder, fn: Any, block_type: T.Type, layout: Value, mat_type: T.CoopMatType) -> Value:
    """The decode function as an operand: (device pointer to one block, block_coords, coord_in_block) -> the
    matrix component (spirv-val aborts on some wrong signatures: checked here first)."""
    assert isinstance(layout.type, T.TensorLayoutType)  # the addressing starts with the layout
    coords = T.ArrayType(T.u32, layout.type.dim)
    block = T.PointerType(block_type, StorageClass.PhysicalStorageBuffer)
    passes = [("block", block), ("block_coords", coords), ("coord_in_block", coords)]
    ref = callback_operand(cg, fn, "the decode function", passes, mat_type.elem)
    raise_problem(cg.em, rules.decode_signature_problem(ref.type, layout.type.dim, mat_type.elem), "load_tensor: ")
    return ref


@builtin("(buffer, offset, layout, *, view=None, decode=None, fill=None, aligned=None, nontemporal=None, "
         "volatile=None, visible=None)", method_of=T.CoopMatType, binder=bind_load, conversions=LOAD_OPERANDS)
def load_tensor(cg: Builder, mat_type: T.CoopMatType, **p: Any) -> Value:
    """Load a matrix through a tensor layout (OpCooperativeMatrixLoadTensorNV).

    ``buffer`` is a buffer, a shared array or a ``Ptr[T]``; ``offset`` counts its
    elements to where the tensor starts (16-byte aligned); the ``layout``
    (and ``view``) then address matrix elements in units of the matrix
    component.  Elements the view clips keep ``fill`` (a number or a matrix of
    this type; 0 by default).  ``decode=fn`` makes every element the result of
    ``fn(block, block_coords, coord_in_block)`` (a ``@cd.func``, or a
    ``cd.partial`` of one binding its further parameters): the memory holds
    block structs, ``block`` points at the one holding the element and the
    coordinates are ``cd.u32`` arrays of the layout's dimension count.  A
    first parameter annotated with a ``@cd.struct`` (``block: Q4_0Packed16``)
    reads blocks of that type, whatever the memory's elements (their sizes
    must divide one another).  Memory
    operands as for ``load``; through a ``Ptr`` the load carries ``Aligned 16``.
    """
    addressing = _layout_and_view(cg, p, load_tensor)
    fn = p.get("decode")
    ptr, block = _tensor_pointer(cg, p, load_tensor, decode=fn)
    fill = _fill(cg, p.get("fill"), mat_type)
    if fn is not None:
        assert block is not None  # a decode function reads blocks of a type
        addressing.append(_decoder(cg, fn, block, addressing[0], mat_type))
    return cg.em.op("coop_load_tensor", mat_type, [ptr, fill, *addressing], **_memory(cg, p, ptr, False))


def _bind_tensor_store(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The binder of store_tensor: a decode function (a load's keyword) is explained, as a wrong visibility is."""
    if "decode" in kwargs:
        raise ArgumentError("store_tensor takes no decode function: decode functions apply to loads only "
                            "(SPV_NV_cooperative_matrix2)", cg.em.loc)
    return bind_store(cg, b, args, kwargs)


@builtin("(buffer, offset, layout, *, view=None, aligned=None, nontemporal=None, volatile=None, available=None)",
         method_of=T.CoopMatType, on_values=True, binder=_bind_tensor_store, conversions=STORE_OPERANDS)
def store_tensor(cg: Builder, mat: Value, **p: Any) -> None:
    """Store the matrix through a tensor layout (OpCooperativeMatrixStoreTensorNV).

    Arguments as for ``load_tensor`` (no decode function or fill).  With any
    clamp mode but ClampUndefined, elements outside the tensor are not
    stored; a view's clip region limits the stored rows and columns.  The
    layout must not have a block size above 1.
    """
    addressing = _layout_and_view(cg, p, store_tensor)
    raise_problem(cg.em, rules.store_layout_problem(addressing[0]), "store_tensor: ")
    ptr, _ = _tensor_pointer(cg, p, store_tensor, decode=None)
    if isinstance(p["buffer"], BufferRef):
        cg.note_buffer_write(p["buffer"])
    cg.em.op("coop_store_tensor", T.void, [ptr, mat, *addressing], **_memory(cg, p, ptr, True))
    return None
