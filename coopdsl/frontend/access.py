"""Attributes and subscripts: struct members, swizzles, methods, element reads and writes.

Reading ``x.attr`` / ``x[i]`` and assigning ``x[i] = v`` for buffers, shared
and local arrays, device pointers, vectors, structs, matrices and
compile-time containers.
"""

from __future__ import annotations

import ast
import enum
import types as py_types
from typing import TYPE_CHECKING, Any

from ..errors import (
    CompileError,
    NameResolutionError,
    SourceLoc,
    TypeMismatchError,
    UnsupportedSyntaxError,
    with_article,
)
from ..ir import types as T
from ..ir.attrs import MemoryAccess
from ..ir.core import Const, Op, SpecConst, SpecOp, Value, dim_of
from ..ir.layout import align_of, size_of, unlaid
from ..lang import arith, arrays
from ..lang import registry as B
from ..lang.blocks import block_member, device_access, is_block_ptr
from ..lang.pointers import ptr_element
from ..lang.structs import is_data_ptr, ptr_elem
from ..lang.values import BoundMethod, BufferRef, BuiltinVar

if TYPE_CHECKING:
    from .context import Context

SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def expr_attribute(cg: Context, node: ast.Attribute) -> Any:
    attr = node.attr
    if isinstance(node.value, ast.Subscript) and not isinstance(node.value.slice, ast.Slice):
        base = cg.visit(node.value.value)
        member = _element_member(cg, base, node.value, attr)
        if member is not None:
            return member
        obj = _subscript(cg, node.value, base)
    else:
        obj = cg.visit(node.value)
    if isinstance(obj, py_types.ModuleType):
        if not hasattr(obj, attr):
            raise NameResolutionError(f"module '{obj.__name__}' has no attribute '{attr}'", cg.em.loc)
        return cg.classify_global(f"{obj.__name__}.{attr}", getattr(obj, attr))
    if isinstance(obj, type) and issubclass(obj, enum.Enum):   # Op.ADD of an IntEnum: its int
        if attr not in obj.__members__:
            raise NameResolutionError(f"enum {obj.__name__} has no member '{attr}' (it has: "
                                      f"{', '.join(obj.__members__)})", cg.em.loc)
        return cg.classify_global(f"{obj.__name__}.{attr}", obj.__members__[attr])
    if isinstance(obj, enum.Enum) and attr in ("value", "name"):   # Op.ADD.value: the member's int (or name)
        return cg.classify_global(f"{type(obj).__name__}.{obj.name}.{attr}", getattr(obj, attr))
    if isinstance(obj, BuiltinVar):
        obj = cg.load_builtin(obj)
    if isinstance(obj, T.Type):
        m = B.method(obj, attr)  # (before listing the methods, which only the error message needs)
        if m is not None:
            return BoundMethod(m, obj)
        if B.method_names(obj):
            raise NameResolutionError(f"{obj} has no method '{attr}' (it has: {_methods(obj)})", cg.em.loc)
    if isinstance(obj, Value):
        t = obj.type
        if isinstance(t, T.VectorType) and all(c in SWIZZLE for c in attr):
            return swizzle(cg, obj, attr)
        if is_block_ptr(t):
            return block_member(cg, obj, attr)
        if isinstance(t, T.StructType):
            index = _member_index(t, attr, cg.em.loc)
            return cg.em.op("extract", t.members[index][1], [obj], index=index)
        m = B.method(obj, attr)
        if m is not None:
            return BoundMethod(m, obj)
        if B.method_names(obj):
            raise NameResolutionError(f"{t} has no attribute '{attr}' (it has: {_methods(obj)})", cg.em.loc)
        raise NameResolutionError(f"{with_article(t)} value has no attribute '{attr}'", cg.em.loc)
    if isinstance(obj, tuple) and attr in dir(list):   # xs = []; xs.append(v)
        raise NameResolutionError(
            f"{cg.describe(obj)} has no attribute '{attr}': a list in a kernel is a compile-time tuple of its "
            f"items, built whole ([f(i) for i in cd.static_range(n)], xs = xs + [v]), not changed in place",
            cg.em.loc)
    raise NameResolutionError(f"{cg.describe(obj)} has no attribute '{attr}'", cg.em.loc)


def _member_index(t: T.StructType, name: str, loc: SourceLoc) -> int:
    """The index of member ``name`` of struct ``t`` (read, assigned in a value or in memory), or the error
    listing the members it has."""
    try:
        return t.member_index(name)
    except KeyError:
        raise NameResolutionError(f"struct {t.name} has no member '{name}' (it has: "
                                  f"{', '.join(n for n, _ in t.members)})", loc) from None


def _methods(receiver: Any) -> str:
    return ", ".join(B.method_names(receiver))


def _swizzle_indices(t: T.VectorType, attr: str, loc: SourceLoc, store: bool = False) -> list[int]:
    """The component indices ``attr`` names in ``t``; a store names each component once."""
    if not (set(attr) <= set("xyzw") or set(attr) <= set("rgba")):   # (GLSL: one set per swizzle)
        raise TypeMismatchError(f"swizzle '.{attr}' mixes the component names xyzw and rgba; use one set", loc)
    idx = [SWIZZLE[c] for c in attr]
    if any(i >= t.count for i in idx):
        raise TypeMismatchError(f"swizzle '.{attr}' reaches past the {t.count} components of {t}", loc)
    if store and len(set(idx)) != len(idx):
        raise TypeMismatchError(f"cannot assign to '.{attr}': it names a component twice", loc)
    return idx


def _swizzle_value(cg: Context, t: T.VectorType, attr: str, n: int, value: Any, loc: SourceLoc) -> Value:
    """``value`` as what a store to ``n`` components ``attr`` of ``t`` takes: a component, or a vector of ``n``."""
    value = cg.as_operand(value)
    if n == 1 and arith.is_number(value):
        value = cg.em.literal(value, t.elem)
    want = t.elem if n == 1 else T.VectorType(t.elem, n)
    if not isinstance(value, Value) or value.type != want:
        raise TypeMismatchError(f"cannot assign {cg.describe(value)} to '.{attr}' of {t}; it takes a {want}", loc)
    return value


def swizzle(cg: Context, v: Value, attr: str) -> Value:
    t = v.type
    assert isinstance(t, T.VectorType)  # the caller checked
    idx = _swizzle_indices(t, attr, cg.em.loc)
    if len(idx) == 1:
        return cg.em.op("extract", t.elem, [v], index=idx[0])
    if len(idx) > 4:
        raise TypeMismatchError(f"swizzle '.{attr}' has more than 4 components", cg.em.loc)
    return cg.em.op("shuffle", T.VectorType(t.elem, len(idx)), [v, v], components=tuple(idx))


def _store_components(cg: Context, ptr: Value, indices: list[Value], t: T.VectorType, attr: str, value: Any,
                      target: ast.Attribute, base_align: int, offset: int) -> None:
    """Store ``value`` into components ``attr`` of the vector in memory at ``ptr`` + ``indices`` (``offset`` bytes
    into an object aligned to ``base_align``): one ``OpAccessChain`` and ``OpStore`` per component (GLSL's
    ``buf[i].xy = w``)."""
    loc = cg.src.loc(target)
    idx = _swizzle_indices(t, attr, loc, store=True)
    value = _swizzle_value(cg, t, attr, len(idx), value, loc)
    pt = ptr.type
    assert isinstance(pt, T.PointerType)  # (an element pointer)
    psb = pt.space.is_physical
    for k, i in enumerate(idx):
        part = value if len(idx) == 1 else cg.em.op("extract", t.elem, [value], index=k)
        at = cg.em.op("access", T.PointerType(t.elem, pt.storage), [ptr, *indices, cg.em.const(T.u32, i)])
        aligned = _aligned(align_of(t.elem), base_align, offset + i * size_of(t.elem))
        cg.em.op("store", T.void, [at, part], **({"memory": MemoryAccess(aligned)} if psb else {}))


def _as_layout_of(cg: Context, value: Any, t: T.Type) -> Any:
    """An array or struct value given for a member of type ``t`` that differs from it only by layout (a
    ``cd.array`` value for an array member laid out for memory, or the other way): rebuilt as ``t``."""
    if isinstance(value, Value) and isinstance(t, (T.ArrayType, T.StructType)) and value.type != t \
            and unlaid(value.type) == unlaid(t):
        return arrays.relaid(cg, value, t)
    return value


def _store_in_value(cg: Context, v: Value, chain: list[str], value: Any, target: ast.Attribute) -> Value:
    """``v`` (a struct or vector value) with the member or components ``chain`` names replaced by ``value``:
    ``s.alpha = 2.0``, ``s.pos.xy = w``, ``v.x += 1.0`` on values held by names, as in GLSL."""
    t = v.type
    name, rest = chain[0], chain[1:]
    if isinstance(t, T.VectorType) and not rest and all(c in SWIZZLE for c in name):
        return _store_swizzle(cg, v, name, value, target)
    if not isinstance(t, T.StructType):
        raise TypeMismatchError(f"{with_article(t)} has no member '{name}' to assign", cg.src.loc(target))
    i = _member_index(t, name, cg.src.loc(target))
    mt = t.members[i][1]
    if rest:
        inner = cg.em.op("extract", mt, [v], index=i)
        new = _store_in_value(cg, inner, rest, value, target)
    else:
        new = _as_layout_of(cg, cg.as_operand(value), mt)
        if arith.is_number(new) and isinstance(mt, T.ScalarType):
            new = cg.em.literal(new, mt)
        if not isinstance(new, Value) or new.type != mt:
            raise TypeMismatchError(f"cannot assign {cg.describe(new)} to member '{name}' of struct {t.name}, "
                                    f"which is {mt}", cg.src.loc(target))
    return cg.em.op("insert", t, [new, v], index=i)


def _store_swizzle(cg: Context, v: Value, attr: str, value: Any, target: ast.Attribute) -> Value:
    """``v`` with the components ``attr`` names (``.x``, ``.xy``, ``.zw`` ...) replaced by ``value``, as GLSL's
    ``v.xy = w`` (each component once; a scalar for one component, a vector of as many for several)."""
    t = v.type
    assert isinstance(t, T.VectorType)  # the caller checked
    loc = cg.src.loc(target)
    idx = _swizzle_indices(t, attr, loc, store=True)
    value = _swizzle_value(cg, t, attr, len(idx), value, loc)
    if len(idx) == 1:
        return cg.em.op("insert", t, [value, v], index=idx[0])
    for k, i in enumerate(idx):
        v = cg.em.op("insert", t, [cg.em.op("extract", t.elem, [value], index=k), v], index=i)
    return v


def _element_member(cg: Context, base: Any, node: ast.Subscript, name: str) -> Value | BufferRef | None:
    """``mem[i].name`` for memory of structs (a buffer, shared or local array, a ``Ptr`` to structs):
    only the member is read, through an access chain to it, as glslang does (loading the whole element
    and extracting the member makes the driver read every byte of it); an array member is the memory its
    elements are indexed in (``mem[i].qs[j]`` reads one element).  None for anything else."""
    if isinstance(base, BufferRef):
        elem = base.elem
    elif isinstance(base, Value) and is_data_ptr(base.type):
        elem = ptr_elem(base.type)
    else:
        return None
    if not isinstance(elem, T.StructType) or name not in (n for n, _ in elem.members):
        return None  # (the whole element is read and the attribute's own error or method applies)
    index = cg.visit(node.slice)
    if isinstance(base, BufferRef):  # writes through an array member mark the buffer written, by its name
        return block_member(cg, cg.element_pointer(base, index), name, owner=base.name)
    return block_member(cg, ptr_element(cg, base, cg.as_operand(index)), name)


def expr_subscript(cg: Context, node: ast.Subscript) -> Any:
    return _subscript(cg, node, cg.visit(node.value))


def _subscript(cg: Context, node: ast.Subscript, base: Any) -> Any:
    if isinstance(node.slice, ast.Slice):
        raise UnsupportedSyntaxError("slices are not supported", cg.src.loc(node.slice))
    index = cg.visit(node.slice)
    if isinstance(base, BuiltinVar):
        base = cg.load_builtin(base)
    if isinstance(base, BufferRef):
        ptr = cg.element_pointer(base, index)
        if isinstance(base.elem, T.ArrayType):   # tile[y] of shared float tile[16][17]: the row, in memory
            return BufferRef(base.name, ptr, base.elem.elem, base.storage, (), base.elem.length)
        return cg.em.op("load", base.elem, [ptr], **device_access(base.storage, base.elem))
    if isinstance(base, Value):
        return _value_index(cg, base, index)
    if isinstance(base, (tuple, list)):
        if not isinstance(index, int):
            raise TypeMismatchError(f"a compile-time tuple or list must be indexed with a compile-time int, "
                                    f"got {cg.describe(index)} (a runtime index needs a cd.local_array)", cg.em.loc)
        try:
            return base[index]
        except IndexError:
            raise TypeMismatchError(f"index {index} out of range for a tuple of {len(base)}", cg.em.loc) from None
    if hasattr(base, "__getitem__") and _is_type_family(base):
        params = index if isinstance(index, tuple) else (index,)
        params = tuple(_type_param(cg, p) for p in params)
        if not params:
            raise TypeMismatchError(f"{getattr(base, 'name', base)}[()] names no type parameters (e.g. vec2[f32])",
                                    cg.em.loc)
        try:
            return base[params if len(params) > 1 else params[0]]
        except CompileError as e:  # a declaration error: here, at the kernel's line
            raise TypeMismatchError(e.message, cg.em.loc) from None
        except TypeError as e:
            raise TypeMismatchError(str(e), cg.em.loc) from None
    raise TypeMismatchError(f"{cg.describe(base)} cannot be indexed", cg.em.loc)


def _is_type_family(obj: object) -> bool:
    return type(obj).__module__.startswith("coopdsl.lang")


def _type_param(cg: Context, p: Any) -> Any:
    if isinstance(p, (SpecConst, SpecOp)):
        if not (isinstance(p.type, T.ScalarType) and p.type.is_int and p.type.width == 32):
            name = p.name if isinstance(p, SpecConst) else str(p.sym)
            raise TypeMismatchError(f"specialization constant '{name}' used as a type parameter must be a 32-bit "
                                    f"integer (Spec[u32] or Spec[i32]), not {p.type}", cg.em.loc)
        return dim_of(p)
    if isinstance(p, Const) and isinstance(p.value, int):
        return p.value
    if isinstance(p, Value):
        raise TypeMismatchError(
            "type parameters must be compile-time constants or specialization constants, not runtime values",
            cg.em.loc)
    return p


def _value_index(cg: Context, base: Value, index: Any) -> Value:
    t = base.type
    index = cg.as_operand(index)
    if is_data_ptr(t):
        elem = ptr_elem(t)
        return cg.em.op("load", elem, [ptr_element(cg, base, index)], memory=MemoryAccess(align_of(elem)))
    if isinstance(t, T.VectorType):
        if isinstance(index, int) and not isinstance(index, bool):
            if not 0 <= index < t.count:
                raise TypeMismatchError(f"index {index} out of range for {t}", cg.em.loc)
            return cg.em.op("extract", t.elem, [base], index=index)
        return cg.em.op("extract_dyn", t.elem, [base, cg.as_index(index, "a vector index")])
    if isinstance(t, T.ArrayType):
        return arrays.read_element(cg, base, index)
    if isinstance(t, T.CoopMatType):
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0:
                raise TypeMismatchError("a matrix element index must not be negative", cg.em.loc)
            _check_matrix_index(cg, t, index)
            return cg.em.op("extract", t.elem, [base], index=index)
        ptr = _spill_element(cg, base, index)
        return cg.em.op("load", t.elem, [ptr])
    raise TypeMismatchError(f"{with_article(t)} value cannot be indexed", cg.em.loc)


def _check_matrix_index(cg: Context, t: T.CoopMatType, index: int) -> None:
    """A constant element index no invocation can hold: each holds ``m.length()`` elements, a share of the
    matrix's rows x cols that depends on the device, so any index from rows x cols on is out of range."""
    if isinstance(t.rows, int) and isinstance(t.cols, int) and index >= t.rows * t.cols:
        raise TypeMismatchError(f"element index {index} is out of range for {t}: an invocation holds m.length() "
                                f"of its {t.rows * t.cols} elements (fewer on a device with more than one "
                                f"invocation per scope)", cg.em.loc)


def _spill_element(cg: Context, m: Value, index: Any) -> Value:
    """Pointer to element ``index`` of matrix ``m`` stored in a fresh Function variable."""
    return arrays.element_pointer(cg, m, index, "a matrix element index")


def store_subscript(cg: Context, target: ast.Subscript, value: Any) -> None:
    base = cg.visit(target.value)
    index = cg.visit(target.slice)
    value = cg.as_operand(value)
    if isinstance(base, Value) and is_data_ptr(base.type):
        elem = ptr_elem(base.type)
        if arith.is_number(value):
            value = cg.em.literal(value, elem)
        if not isinstance(value, Value) or value.type != elem:
            raise TypeMismatchError(f"cannot store {cg.describe(value)} through a Ptr[{elem}]", cg.src.loc(target))
        cg.em.op("store", T.void, [ptr_element(cg, base, index), value], memory=MemoryAccess(align_of(elem)))
        return
    if isinstance(base, BufferRef):
        if arith.is_number(value):
            value = cg.em.literal(value, base.elem)
        if isinstance(value, Value) and isinstance(base.elem, (T.StructType, T.ArrayType)) and \
                value.type != base.elem and unlaid(value.type) == unlaid(base.elem):
            value = arrays.relaid(cg, value, base.elem)   # (a struct of a buffer into shared memory, and back)
        if not isinstance(value, Value) or value.type is not base.elem and value.type != base.elem:
            raise TypeMismatchError(
                f"cannot store {cg.describe(value)} into {base.kind} '{base.name}' of {base.elem}; convert it first",
                cg.src.loc(target))
        ptr = cg.element_pointer(base, index)
        cg.note_buffer_write(base)
        cg.em.op("store", T.void, [ptr, value], **device_access(base.storage, base.elem))
        return
    if isinstance(base, Value) and isinstance(base.type, T.ArrayType):
        updated = arrays.write_element(cg, base, index, value)
        if isinstance(target.value, ast.Attribute):   # s.arr[j] = x: the member replaced by the updated array
            store_attribute(cg, target.value, updated)
        elif isinstance(target.value, ast.Subscript):   # rows[i][j] = x: the element replaced, and so on up
            if any(isinstance(n, ast.Call) for n in ast.walk(target.value)):   # (it is read again below)
                raise UnsupportedSyntaxError("an inner array is updated element-wise through indices without calls "
                                             "(they would run twice); take the inner array into a name, update it "
                                             "and store it back", cg.src.loc(target))
            store_subscript(cg, target.value, updated)
        elif isinstance(target.value, ast.Name):
            cg.assign(target.value.id, updated)
        else:
            raise UnsupportedSyntaxError("only arrays held by a name, their elements and members of structs held "
                                         "by one can be updated element-wise; take the inner array, update it and "
                                         "store it back", cg.src.loc(target))
        return
    if isinstance(base, Value) and isinstance(target.value, ast.Name) and \
            isinstance(base.type, (T.VectorType, T.CoopMatType)):
        elem = base.type.elem
        if arith.is_number(value):
            value = cg.em.literal(value, elem)
        if not isinstance(value, Value) or value.type != elem:
            raise TypeMismatchError(f"cannot store {cg.describe(value)} into an element of {base.type}", cg.em.loc)
        index = cg.as_operand(index)
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0 or isinstance(base.type, T.VectorType) and index >= base.type.count:
                raise TypeMismatchError(f"element index {index} is out of range for {base.type}", cg.em.loc)
            if isinstance(base.type, T.CoopMatType):
                _check_matrix_index(cg, base.type, index)
            cg.assign(target.value.id, cg.em.op("insert", base.type, [value, base], index=index))
            return
        if isinstance(base.type, T.VectorType):
            idx = cg.as_index(index, "a vector index")
            cg.assign(target.value.id, cg.em.op("insert_dyn", base.type, [base, value, idx]))
            return
        # runtime index into a matrix: through a Function variable, as glslang does
        ptr = _spill_element(cg, base, index)
        assert isinstance(ptr, Op)  # (an access chain into the variable it made)
        cg.em.op("store", T.void, [ptr, value])
        cg.assign(target.value.id, cg.em.op("load", base.type, [ptr.operands[0]]))
        return
    if isinstance(base, tuple):
        if cg.tuple_displays.get(id(base)) is base:
            raise TypeMismatchError("a tuple's items cannot be assigned (as in Python); build a list ([a, b]) to "
                                    "update items by index, or build a new tuple", cg.src.loc(target))
        root, path = _container_path(cg, target)
        cg.assign(root, _set_path(cg.lookup(root, target), path, value, cg.src.loc(target)))
        return
    raise TypeMismatchError(f"cannot assign to an element of {cg.describe(base)}", cg.src.loc(target))


def store_attribute(cg: Context, target: ast.Attribute, value: Any) -> None:
    """``mem[i].member(.member...) = value``: a store into one member of a struct element in memory.

    ``mem`` is a buffer, a shared or local array, or a ``Ptr`` to structs.
    """
    chain: list[str] = []
    root: ast.expr = target
    while isinstance(root, ast.Attribute):
        chain.insert(0, root.attr)
        root = root.value
    if isinstance(root, ast.Name):
        held = cg.lookup(root.id, root)
        entry = cg.read_only.get(root.id)
        if entry is not None and entry[0] is held:
            raise TypeMismatchError(f"{entry[1]} is read-only (as in GLSL and HLSL): its members cannot be "
                                    f"assigned; copy what you change into a variable of your own",
                                    cg.src.loc(target))
        if isinstance(held, Value) and isinstance(held.type, (T.VectorType, T.StructType)):
            cg.assign(root.id, _store_in_value(cg, held, chain, value, target))
            return
    path: list[str] = []
    node: ast.expr = target
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Subscript):
        raise UnsupportedSyntaxError(
            "cannot assign to a member of a value; assign struct members of memory elements (buf[i].m = x) or "
            "build a new struct", cg.src.loc(target))
    base = cg.visit(node.value)
    index = cg.visit(node.slice)
    if isinstance(base, Value) and is_data_ptr(base.type):
        ptr = ptr_element(cg, base, index)
    elif isinstance(base, BufferRef):
        ptr = cg.element_pointer(base, index)
        cg.note_buffer_write(base)
    else:
        raise TypeMismatchError(f"cannot assign to a member of an element of {cg.describe(base)}", cg.src.loc(target))
    t: T.Type = ptr.type.pointee
    indices: list[Value] = []
    base_align, offset = align_of(t), 0   # (through a device pointer: what Aligned may promise)
    for n, name in enumerate(path):
        if isinstance(t, T.VectorType) and n == len(path) - 1 and all(c in SWIZZLE for c in name):
            _store_components(cg, ptr, indices, t, name, value, target,  # buf[i].x = v, buf[i].pos.xy = w
                              base_align, offset)
            return
        if not isinstance(t, T.StructType):
            raise TypeMismatchError(f"{with_article(t)} has no member '{name}'", cg.src.loc(target))
        i = _member_index(t, name, cg.src.loc(target))
        indices.append(cg.em.const(T.u32, i))
        offset += t.offsets[i] if t.offsets else 0
        t = t.members[i][1]
    value = _as_layout_of(cg, cg.as_operand(value), t)
    if arith.is_number(value):
        value = cg.em.literal(value, t)
    if not isinstance(value, Value) or value.type != t:
        raise TypeMismatchError(f"cannot store {cg.describe(value)} into member '{path[-1]}' of type {t}",
                                cg.src.loc(target))
    member = cg.em.op("access", T.PointerType(t, ptr.type.storage), [ptr, *indices])
    psb = ptr.type.space.is_physical
    cg.em.op("store", T.void, [member, value],
             **({"memory": MemoryAccess(_aligned(align_of(t), base_align, offset))} if psb else {}))


def _aligned(natural: int, base_align: int, offset: int) -> int:
    """The ``Aligned`` of an access at ``offset`` bytes into an object aligned to ``base_align``: the type's
    natural alignment, unless the member sits at an offset that promises less (a std430 struct inside a scalar
    one: ``inner`` at offset 4 is not 16-byte aligned)."""
    at = base_align if offset == 0 else min(base_align, offset & -offset)
    return min(natural, at)


def _container_path(cg: Context, target: ast.Subscript) -> tuple[str, tuple[int, ...]]:
    """For ``acc[i][j] = v``: the root name and the compile-time index path (i, j)."""
    path: list[int] = []
    node: ast.expr = target
    while isinstance(node, ast.Subscript):
        idx = cg.as_operand(cg.visit(node.slice))
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise TypeMismatchError("elements of a compile-time list are chosen with compile-time integers "
                                    "(use static_range)", cg.src.loc(node.slice))
        path.append(idx)
        node = node.value
    if not isinstance(node, ast.Name):
        raise UnsupportedSyntaxError("only lists held by a name can be updated element-wise", cg.src.loc(target))
    return node.id, tuple(reversed(path))


def _set_path(container: Any, path: tuple[int, ...], value: Any, loc: SourceLoc) -> tuple[Any, ...]:
    """``container`` with the item at ``path`` replaced by ``value``; an index past either end is the
    error reading it gives (``t[2] = v`` as ``t[2] += v``), at the target's ``loc``."""
    i = path[0]
    if not isinstance(container, tuple):
        raise TypeMismatchError(f"cannot assign to an element of a compile-time {type(container).__name__}", loc)
    if not -len(container) <= i < len(container):
        raise TypeMismatchError(f"index {i} out of range for a tuple of {len(container)}", loc)
    item = value if len(path) == 1 else _set_path(container[i], path[1:], value, loc)
    return container[:i] + (item,) + container[i + 1:]
