"""Per-invocation arrays as values: ``cd.array``.

``cd.array(f16, 16)`` is an array of 16 zeros, ``cd.array(f16, 16, x)`` one of 16 copies of ``x``, and
``cd.array[f16, 4](a, b, c, d)`` one of the given elements; ``cd.array[f16, 16]`` alone is the type
(written ``f16[16]`` in messages).  Arrays are values (SSA ``OpTypeArray`` values), like vectors:
``row[i]`` reads an element and ``row[i] = x`` rebinds ``row`` to the updated array
(``OpCompositeInsert`` for a constant index; a runtime index goes through a Function variable, as
glslang does).  They flow through ``if``/loops (phis), into and out of ``@cd.func`` helpers, and into
the SPV_QCOM_cooperative_matrix_conversion builtins (``coopdsl.lang.qcom``).  The length is a
compile-time int or an integer ``Spec`` expression; ``len(row)`` gives it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .._records import record
from ..errors import ArgumentError, DeclarationError, TypeMismatchError, caller_loc
from ..ir import types as T
from ..ir.core import Const, Op, SpecConst, SpecOp, Value, dim_of
from ..ir.layout import unlaid
from ..ir.vocab import StorageClass
from . import arith
from .registry import BUILTINS, Builtin, parse_signature
from .types import named
from .values import BufferRef

if TYPE_CHECKING:
    from .context import Builder

MAX_LENGTH = 1 << 16  # elements of one array (registers, or a struct member)


def array_type(elem: object, length: object) -> T.ArrayType | str:
    """The array type of ``length`` ``elem`` values, or what is wrong with the parameters.

    Elements are numeric scalars or vectors, or arrays of them (arrays of arrays are values only: struct
    members and the QCOM instructions take one-dimensional arrays).
    """
    ok_elem = isinstance(elem, (T.ScalarType, T.VectorType)) and T.elem_of(elem) != T.boolean or \
        isinstance(elem, T.ArrayType)
    if not ok_elem:
        return f"array elements are numeric scalars or vectors, not {named(elem)}"
    if isinstance(length, (SpecConst, SpecOp, Const)) and isinstance(length.type, T.ScalarType) and \
            length.type.is_int:
        length = dim_of(length)
    if isinstance(length, bool) or not isinstance(length, (int, T.SymDim)):
        got = f"a runtime {length.type}" if isinstance(length, Value) else repr(length)
        return f"an array length is an int from 1 to {MAX_LENGTH} or an integer Spec constant, got {got}"
    if isinstance(length, int) and not 0 < length <= MAX_LENGTH:
        return f"an array length is an int from 1 to {MAX_LENGTH}, got {length}"
    if isinstance(length, T.SymDim):
        problem = T.dim_problem(length, "an array length", MAX_LENGTH)
        if problem is not None:
            return problem
    return T.ArrayType(cast(T.Type, elem), length)


@record(frozen=True, repr=False)
class ArrayBuiltin(Builtin):
    """``cd.array``: called, it makes an array value; subscripted (``cd.array[f16, 16]``), it is the type."""

    def __getitem__(self, params: Any) -> T.ArrayType:
        params = params if isinstance(params, tuple) else (params,)
        if len(params) != 2:
            raise DeclarationError(f"array[...] takes [element type, length], got {len(params)} parameters",
                                   caller_loc("array["))
        t = array_type(*params)
        if isinstance(t, str):
            raise DeclarationError(t, caller_loc("array["))
        return t


def _array(cg: Builder, elem: Any, length: Any, fill: Any = 0) -> Value:
    t = array_type(elem, length)
    if isinstance(t, str):
        raise TypeMismatchError(t, cg.em.loc)
    return filled(cg, t, cg.as_operand(fill))


array = ArrayBuiltin("array", _array, """A per-invocation array value of ``length`` elements of ``elem``.

``cd.array(f16, 16)`` is 16 zeros (OpConstantNull), ``cd.array(f16, 16, x)`` 16 copies of ``x``;
``cd.array[f16, 4](a, b, c, d)`` lists the elements and ``cd.array[f16, 16]`` is the type.  ``elem`` is
a numeric scalar, vector or array type; ``length`` a compile-time int or an integer ``Spec`` expression
(such arrays start as zeros).  ``row[i]`` reads, ``row[i] = x`` updates (rebinding ``row``).""",
                     "(elem, length, fill=0)", parse_signature("(elem, length, fill=0)"), {})
BUILTINS["array"] = array


def filled(cg: Builder, t: T.ArrayType, fill: Any) -> Value:
    """``t`` with every element ``fill`` (a number or a runtime value)."""
    if not isinstance(t.length, int) and not (arith.is_number(fill) and fill == 0 and str(fill)[:1] != "-"):
        raise TypeMismatchError(f"an array of {t.length} elements (a specialization constant) starts as zeros; "
                                f"fill it element by element", cg.em.loc)
    if arith.is_number(fill):
        return arith.literal(cg.em, fill, t)
    assert isinstance(t.length, int)  # (a symbolic length was handled above)
    return construct_array(cg, t, [fill] * t.length)


def construct_array(cg: Builder, t: T.ArrayType, args: list[Any]) -> Value:
    """``cd.array[elem, n](...)``: one value (every element) or exactly ``n`` elements (OpCompositeConstruct)."""
    args = [cg.as_operand(a) for a in args]
    if len(args) == 1:
        return filled(cg, t, args[0])
    if not isinstance(t.length, int) or len(args) != t.length:
        raise ArgumentError(f"{t}(...) takes one value for every element or exactly {t.length} elements, got "
                            f"{len(args)}", cg.em.loc)
    return cg.em.op("construct", t, [_element(cg, t, a) for a in args])


def _element(cg: Builder, t: T.ArrayType, v: Any) -> Value:
    """``v`` as an element of ``t``, as ``row[i] = v`` takes it: a number becomes a constant (if it fits), a
    value must already have the element type (no conversion: ``i8`` would wrap an ``i32``)."""
    if arith.is_number(v):
        return arith.literal(cg.em, v, t.elem)
    if not isinstance(v, Value) or v.type != t.elem:
        raise TypeMismatchError(f"an element of {t} must be a {t.elem} value, got {cg.describe(v)}; convert it "
                                f"first (e.g. {t.elem}(x))", cg.em.loc)
    return v


def known_index(index: Any) -> int | None:
    """A compile-time int index (a Python int or an integer constant) as its value, else None (bools are no index
    here)."""
    known = index.value if isinstance(index, Const) else index
    return known if isinstance(known, int) and not isinstance(known, bool) else None


def _check_index(cg: Builder, t: T.ArrayType, index: int) -> None:
    """A constant index: not negative, and below the length where it is a constant (a specialization constant's
    length is not checked at its values: a branch on the constants may guard the index; the interpreter reports
    an index past the end at run time)."""
    if index < 0 or isinstance(t.length, int) and index >= t.length:
        last = f" (indices 0..{t.length - 1})" if isinstance(t.length, int) else ""
        raise TypeMismatchError(f"index {index} is out of range for {t}{last}; Python's negative indices are "
                                f"not supported", cg.em.loc)


def relaid(cg: Builder, v: Value, to: T.Type) -> Value:
    """``v`` as ``to``, the same shape with another layout (:func:`coopdsl.ir.layout.unlaid`'s type, or back):
    rebuilt from its components (OpCompositeExtract, OpCompositeConstruct); ``v`` itself when it has that type."""
    t = v.type
    if t == to:
        return v
    if isinstance(t, T.ArrayType) and isinstance(to, T.ArrayType):
        if not isinstance(t.length, int):
            raise TypeMismatchError(f"cannot index {t} at run time: its length is a specialization constant and "
                                    f"its elements are laid out for memory; index it with constants, or read the "
                                    f"elements into a cd.local_array first", cg.em.loc)
        parts = [relaid(cg, cg.em.op("extract", t.elem, [v], index=i), to.elem) for i in range(t.length)]
    else:
        assert isinstance(t, T.StructType) and isinstance(to, T.StructType)  # (unlaid keeps the shape)
        parts = [relaid(cg, cg.em.op("extract", m, [v], index=i), to.members[i][1])
                 for i, (_, m) in enumerate(t.members)]
    return cg.em.op("construct", to, parts)


def element_pointer(cg: Builder, v: Value, index: Any, what: str) -> Value:
    """Pointer to element ``index`` of array or matrix value ``v``, stored in a fresh Function variable (an
    array laid out for memory, read from a buffer or push-constant struct, is stored without its layout:
    Vulkan allows none in Function storage)."""
    t = v.type
    assert isinstance(t, (T.ArrayType, T.CoopMatType))  # the callers index arrays and matrices
    if isinstance(t, T.ArrayType):
        free = unlaid(t)
        assert isinstance(free, T.ArrayType)  # (unlaid keeps the shape)
        v, t = relaid(cg, v, free), free
    var = cg.function_variable(T.PointerType(t, StorageClass.Function))
    cg.em.op("store", T.void, [var, v])
    idx = cg.as_index(index, what)
    return cg.em.op("access", T.PointerType(t.elem, StorageClass.Function), [var, idx])


def read_element(cg: Builder, arr: Value, index: Any) -> Value:
    """``arr[index]``: OpCompositeExtract for a constant index, through a Function variable otherwise."""
    t = arr.type
    assert isinstance(t, T.ArrayType)  # the callers read arrays
    known = known_index(index)
    if known is not None:
        _check_index(cg, t, known)
        return cg.em.op("extract", t.elem, [arr], index=known)
    elem = unlaid(t.elem)
    return relaid(cg, cg.em.op("load", elem, [element_pointer(cg, arr, index, "an array index")]), t.elem)


def write_element(cg: Builder, arr: Value, index: Any, value: Any) -> Value:
    """The array ``arr`` with element ``index`` replaced by ``value`` (what ``arr[index] = value`` rebinds)."""
    t = arr.type
    assert isinstance(t, T.ArrayType)  # the callers update arrays
    value = cg.as_operand(value)
    if arith.is_number(value):
        value = arith.literal(cg.em, value, t.elem)
    if not isinstance(value, Value) or value.type != t.elem:
        raise TypeMismatchError(f"cannot store {cg.describe(value)} into an element of {t}; convert it first "
                                f"(e.g. {t.elem}(x))", cg.em.loc)
    known = known_index(index)
    if known is not None:
        _check_index(cg, t, known)
        return cg.em.op("insert", t, [value, arr], index=known)
    ptr = element_pointer(cg, arr, index, "an array index")
    cg.em.op("store", T.void, [ptr, relaid(cg, value, unlaid(t.elem))])
    assert isinstance(ptr, Op)
    return relaid(cg, cg.em.op("load", unlaid(t), [ptr.operands[0]]), t)


def length_of(cg: Builder, arr: Value) -> int | Value:
    """``len(arr)``: an int, or the specialization constant (expression) the length is."""
    t = arr.type
    assert isinstance(t, T.ArrayType)
    return dim_value(cg, t.length)


def buffer_length(cg: Builder, buf: BufferRef) -> int | Value:
    """``len(buf)``: a shared, local or private array's length (an int, or the specialization constant it is), or
    a storage buffer's element count, a runtime u32 (``OpArrayLength``, GLSL's ``buf.length()``) from the bytes
    of the array the launch binds."""
    if buf.length is not None:
        return dim_value(cg, buf.length)
    block = buf.var.type.pointee if isinstance(buf.var.type, T.PointerType) else None
    if isinstance(block, T.StructType) and len(buf.prefix) == 1 and \
            isinstance(block.members[buf.prefix[0]][1], T.RuntimeArrayType):
        return cg.em.op("array_length", T.u32, [buf.var], member=buf.prefix[0])
    raise TypeMismatchError(f"len() of {cg.describe(buf)}: only a storage buffer parameter's or an array's "
                            f"length is known", cg.em.loc)


def dim_value(cg: Builder, d: T.Dim) -> int | Value:
    """``d`` as a kernel value: an int, or the module's specialization constant (or OpSpecConstantOp) for it."""
    if isinstance(d, int):
        return d
    if d.op == "spec":
        return cg.module.symbolic_value(d)
    args = [dim_value(cg, a) for a in d.args]
    typed = next(a for a in args if isinstance(a, Value))
    # (the dimension's own integers, made constants of its type as they are: not a user's number)
    operands = [a if isinstance(a, Value) else cg.em.const(typed.type, a) for a in args]
    return cg.em.op(d.op, typed.type, operands)  # folded into an OpSpecConstantOp by the emitter
