"""SPV_QCOM_cooperative_matrix_conversion builtins: per-invocation arrays to and from cooperative matrices.

* ``MatA[f16, 64, 16].from_rows(row)`` / ``Acc[...].from_rows(row)`` / ``MatB[...].from_cols(col)``:
  invocation *i*'s array becomes row *i* (column *i* of a MatB) of a subgroup matrix
  (OpCompositeConstructCoopMatQCOM); ``m.to_rows()`` / ``b.to_cols()`` give each invocation its row or
  column back (OpCompositeExtractCoopMatQCOM), ``m.to_rows(u32)`` in the packed u32 form.
* ``cd.bitcast_array(row, u32)``: the array's bytes as another element type (OpBitCastArrayQCOM).
* ``cd.sub_array(row, start, length)``: ``length`` elements from a runtime ``start`` (OpExtractSubArrayQCOM).

Every rule of the extension is checked here, at the user's line, by the rule functions of
:mod:`coopdsl.ir.ops.qcom` (the IR verifier applies the same ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import ShapeError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Const, Value
from ..ir.ops import qcom as rules
from ..ir.ops.base import Problem
from ..ir.vocab import MatrixUse
from . import arith
from .arrays import array_type, dim_value
from .conversions import Conversion
from .registry import Builtin, builtin

if TYPE_CHECKING:
    from .context import Builder


def _raise(cg: Builder, problem: Problem | None) -> None:
    if problem is not None:
        raise (ShapeError if problem.kind == "shape" else TypeMismatchError)(problem.message, cg.em.loc)


def _array_value(cg: Builder, v: Any, what: str) -> Value:
    v = cg.as_operand(v)
    if not isinstance(v, Value):
        raise TypeMismatchError(f"{what} must be an array (cd.array), got {cg.describe(v)}", cg.em.loc)
    _raise(cg, rules.array_problem(v.type, what))
    return v


@record(frozen=True)
class ArrayValue(Conversion):
    """A one-dimensional array value the QCOM instructions take (``what`` names it in messages)."""

    what: str

    def __call__(self, cg: Builder, v: Any, name: str, param: str) -> Value:
        return _array_value(cg, v, self.what)


@builtin("(array, type)", array=ArrayValue("the array bitcast_array converts"))
def bitcast_array(cg: Builder, array: Value, type: Any) -> Value:
    """The bytes of a one-dimensional array as another element type (OpBitCastArrayQCOM).

    ``type`` is an element type (the length follows from the byte size: ``f16[16]`` -> ``u32[8]``) or a
    whole array type (``cd.array[u32, 8]``, checked to have the same byte size).  Elements on both
    sides are i32, u32, f32 or f16.
    """
    src, target = array, type
    if isinstance(target, T.ScalarType):
        _raise(cg, rules.array_problem(src.type, "the array bitcast_array converts", rules.ARRAY_ELEMS))
        if target not in rules.ARRAY_ELEMS:
            raise TypeMismatchError(f"bitcast_array converts to i32, u32, f32 or f16 elements, not {target}",
                                    cg.em.loc)
        assert isinstance(src.type, T.ArrayType)  # array_problem checked it
        length = rules.bitcast_length(src.type, target)
        if isinstance(length, Problem):
            _raise(cg, length)
            raise AssertionError  # _raise raised
        dim_value(cg, length)  # a symbolic length needs its OpSpecConstantOp in the module
        target = T.ArrayType(target, length)
    elif not isinstance(target, T.ArrayType):
        raise TypeMismatchError(f"bitcast_array converts to an element type (e.g. u32) or an array type "
                                f"(cd.array[u32, 8]), not {cg.describe(target)}", cg.em.loc)
    _raise(cg, rules.bitcast_problem(src.type, target))
    return cg.em.op("bitcast_array", target, [src])


@builtin("(array, start, length)", array=ArrayValue("the array sub_array slices"))
def sub_array(cg: Builder, array: Value, start: Any, length: Any) -> Value:
    """``length`` elements of a one-dimensional array from index ``start`` (OpExtractSubArrayQCOM).

    ``start`` may be a runtime integer (it becomes an i32); ``length`` is a compile-time int or an integer
    ``Spec`` expression.  Elements are i32, u32, f32 or f16.  A constant slice must lie inside the array;
    a runtime one past its end is undefined behaviour.  Fed to ``from_rows``/``from_cols`` of a MatA or
    MatB, a constant ``start`` must be a multiple of ``length`` (the K of the matrix).
    """
    src = array
    _raise(cg, rules.array_problem(src.type, "the array sub_array slices", rules.ARRAY_ELEMS))
    assert isinstance(src.type, T.ArrayType)  # array_problem checked it
    t = array_type(src.type.elem, length)
    if isinstance(t, str):
        raise TypeMismatchError(f"sub_array: {t}", cg.em.loc)
    first = _start_index(cg, start)
    _raise(cg, rules.sub_array_problem(src.type, t, first.value if isinstance(first, Const) else None))
    return cg.em.op("sub_array", t, [src, first])


def _start_index(cg: Builder, v: Any) -> Value:
    """The start of a slice as the signed 32-bit integer the instruction takes."""
    v = cg.as_operand(v)
    if isinstance(v, Const) and isinstance(v.value, int):
        v = v.value
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 0:
            raise ShapeError(f"the start of a sub-array must not be negative, got {v}", cg.em.loc)
        return arith.literal(cg.em, v, T.i32)
    if not isinstance(v, Value) or not isinstance(v.type, T.ScalarType) or not v.type.is_int:
        raise TypeMismatchError(f"the start of a sub-array must be an integer, got {cg.describe(v)}", cg.em.loc)
    return v if v.type == T.i32 else arith.convert(cg.em, v, T.i32)


def _from_array(cg: Builder, mat_type: T.CoopMatType, array: Any, line: str) -> Value:
    _check_direction(cg, mat_type, line, "from")
    arr = _array_value(cg, array, f"the array for a {rules.line_name(mat_type)} of {mat_type}")
    _raise(cg, rules.conversion_problem(mat_type, arr.type, extract=False))
    _check_k_multiple(cg, mat_type, arr)
    return cg.em.op("coop_from_array", mat_type, [arr])


def _check_direction(cg: Builder, m: T.CoopMatType, line: str, verb: str) -> None:
    """``from_rows``/``to_rows`` for A and accumulators, ``from_cols``/``to_cols`` for B."""
    _raise(cg, rules.matrix_problem(m))
    want = "cols" if m.use == MatrixUse.B else "rows"
    if line != want:
        whose = "each invocation's array is a column" if want == "cols" else "each invocation's array is a row"
        raise ShapeError(f"{m}: {whose}; use {verb}_{want}", cg.em.loc)


def _check_k_multiple(cg: Builder, m: T.CoopMatType, arr: Value) -> None:
    """A constant sub-array start fed to an A or B matrix must be a multiple of its K (the slice length)."""
    _raise(cg, rules.k_multiple_problem(m, arr))


@builtin("(array)", method_of=T.CoopMatType, typed=True)
def from_rows(cg: Builder, mat_type: T.CoopMatType, array: Any) -> Value:
    """A subgroup MatA or accumulator whose row *i* is invocation *i*'s array (OpCompositeConstructCoopMatQCOM).

    The array holds the row: the matrix's component type with one element per column, or u32 packing
    it (``u32[8]`` for a MatA; ``u32[cols // 2]`` for an f16 accumulator, ``u32[cols]`` for f32/i32).
    MatA components are f32, f16, i8 or u8 with 256 bits per row (8, 16, 32, 32 columns); accumulator
    components i32, u32, f16 or f32.  Invocations past the matrix's rows are ignored.
    """
    return _from_array(cg, mat_type, array, "rows")


@builtin("(array)", method_of=T.CoopMatType, typed=True)
def from_cols(cg: Builder, mat_type: T.CoopMatType, array: Any) -> Value:
    """A subgroup MatB whose column *i* is invocation *i*'s array (OpCompositeConstructCoopMatQCOM).

    As ``from_rows`` with rows and columns swapped: f32, f16, i8 or u8 components with 256 bits per
    column (8, 16, 32, 32 rows); the array holds the column, or ``u32[8]`` packing it.
    """
    return _from_array(cg, mat_type, array, "cols")


def _to_array(cg: Builder, b: Builtin, mat: Value, elem: Any, line: str) -> Value:
    m = mat.type
    assert isinstance(m, T.CoopMatType)  # a method of matrix values
    _check_direction(cg, m, line, "to")
    elem = elem or m.elem
    if not isinstance(elem, T.ScalarType):
        raise TypeMismatchError(f"{b.name}(elem) takes an element type ({m.elem} or u32), not "
                                f"{cg.describe(elem)}", cg.em.loc)
    length = rules.line_length(m, elem, extract=True)
    if isinstance(length, Problem):
        _raise(cg, length)
        raise AssertionError  # _raise raised
    dim_value(cg, length)  # a symbolic length needs its OpSpecConstantOp in the module
    t = T.ArrayType(elem, length)
    _raise(cg, rules.conversion_problem(m, t, extract=True))
    return cg.em.op("coop_to_array", t, [mat])


@builtin("(elem=None)", method_of=T.CoopMatType, on_values=True, typed=True)
def to_rows(cg: Builder, mat: Value, elem: Any = None) -> Value:
    """Row *i* of a subgroup MatA or accumulator as invocation *i*'s array (OpCompositeExtractCoopMatQCOM).

    ``elem`` None gives the component type (one element per column); ``u32`` the packed form
    (``u32[8]`` for a MatA, ``u32[cols // 2]`` for an f16 accumulator, ``u32[cols]`` for f32).
    Invocations past the matrix's rows get undefined values.
    """
    return _to_array(cg, to_rows, mat, elem, "rows")


@builtin("(elem=None)", method_of=T.CoopMatType, on_values=True, typed=True)
def to_cols(cg: Builder, mat: Value, elem: Any = None) -> Value:
    """Column *i* of a subgroup MatB as invocation *i*'s array (OpCompositeExtractCoopMatQCOM); ``u32``
    gives the packed ``u32[8]`` form."""
    return _to_array(cg, to_cols, mat, elem, "cols")
