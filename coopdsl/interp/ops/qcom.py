"""SPV_QCOM_cooperative_matrix_conversion on the CPU.

Invocation *i* of a subgroup (SubgroupLocalInvocationId *i*) owns row *i* of a MatA or accumulator and
column *i* of a MatB.  Constructing a matrix ignores the arrays of invocations past its rows (columns);
extracting gives those invocations undefined values, which the interpreter makes NaN (floats) or the
bit pattern 0xA5 repeated (integers) so that a result depending on them shows.  A matrix with more rows
(columns for B) than the subgroup has invocations is undefined behaviour and an error.

u32 elements are the packed form: each word holds 4 / width-in-bytes components, the first in its low
bits (SPIR-V's bit-cast order).  Array values are lists of per-invocation elements (see
:mod:`coopdsl.interp.values`); here they become ``(slots, length)`` numpy arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...ir import types as T
from ...ir.core import Const, Op, Value
from ...ir.ops.qcom import line_name
from ...ir.vocab import MatrixUse
from ..values import value_dtype
from .registry import semantics

if TYPE_CHECKING:
    from ..machine import Machine

POISON_BYTE = 0xA5


def as_rows(m: Machine, elements: list[Any], elem: T.ScalarType) -> np.ndarray:
    """An array value as a (slots, length) numpy array of ``elem``'s dtype."""
    n = m.lanes.N
    return np.stack([np.broadcast_to(np.asarray(e, value_dtype(elem)), (n,)) for e in elements], axis=1)


def as_elements(rows: np.ndarray) -> list[np.ndarray]:
    """A (slots, length) numpy array as an array value."""
    return [np.ascontiguousarray(rows[:, j]) for j in range(rows.shape[1])]


def reinterpret(rows: np.ndarray, elem: T.ScalarType) -> np.ndarray:
    """The bytes of each row of ``rows`` as ``elem`` values (little-endian: the first one in the low bits)."""
    return np.ascontiguousarray(rows).view(value_dtype(elem))


def _line_shape(m: Machine, op: Op, t: T.CoopMatType) -> tuple[int, int, bool]:
    """(lines, elements per line, is B): the rows of an A/accumulator or the columns of a B."""
    rows, cols = m.layout.shape(t)
    is_b = m.spec.dim(t.use) == MatrixUse.B
    lines, per_line = (cols, rows) if is_b else (rows, cols)
    if lines > m.lanes.sgs:
        raise m.error(op, f"{t} has {lines} {'columns' if is_b else 'rows'}, one per invocation, but the subgroup "
                          f"has {m.lanes.sgs} invocations (undefined in SPV_QCOM_cooperative_matrix_conversion)")
    return lines, per_line, is_b


def _sub_array_source(v: Value) -> Op | None:
    """The ``sub_array`` op an array value was sliced by (through bit casts), if it is one in this function."""
    while isinstance(v, Op) and v.kind == "bitcast_array":
        v = v.operands[0]
    return v if isinstance(v, Op) and v.kind == "sub_array" else None


def _check_k_multiple(m: Machine, op: Op, t: T.CoopMatType) -> None:
    """A runtime sub-array start that becomes an A row or a B column must be a multiple of the slice's length
    (the matrix's K), as SPV_QCOM_cooperative_matrix_conversion requires (a constant one is refused when the
    kernel compiles)."""
    sub = _sub_array_source(op.operands[0])
    if sub is None or m.spec.dim(t.use) == MatrixUse.Acc or isinstance(sub.operands[1], Const):
        return
    assert isinstance(sub.type, T.ArrayType)  # (a sub_array's result)
    k = m.layout.length(sub.type)
    start = np.broadcast_to(np.asarray(m.value(sub.operands[1])).astype(np.int64), (m.lanes.N,))
    bad = m.mask & (start % k != 0)
    if bad.any():
        slot = int(np.argmax(bad))
        raise m.error(op, f"the sub-array that becomes a {line_name(t)} of {t} starts at {int(start[slot])} (line "
                          f"{sub.loc.line}), not a multiple of its length {k} (K): "
                          f"SPV_QCOM_cooperative_matrix_conversion requires the Start Index of a slice used by a "
                          f"cooperative matrix operation to be a multiple of K", slot)


def _array_elem(t: T.Type) -> T.ScalarType:
    """The scalar elements of array type ``t`` (the arrays these ops take and give hold scalars)."""
    assert isinstance(t, T.ArrayType) and isinstance(t.elem, T.ScalarType)
    return t.elem


@semantics("coop_from_array")
def _from_array(m: Machine, op: Op, args: list[Any]) -> Any:
    t, src = op.type, _array_elem(op.operands[0].type)
    assert isinstance(t, T.CoopMatType)
    lines, per_line, is_b = _line_shape(m, op, t)
    _check_k_multiple(m, op, t)
    rows = as_rows(m, args[0], src)
    if src != t.elem:
        rows = reinterpret(rows, t.elem)
    sgs = m.lanes.sgs
    mine = rows.reshape(-1, sgs, per_line)[:, :lines, :]  # (subgroups, lines, per line): the rest is ignored
    return np.ascontiguousarray(mine.transpose(0, 2, 1) if is_b else mine)


@semantics("coop_to_array")
def _to_array(m: Machine, op: Op, args: list[Any]) -> Any:
    t, dst = op.operands[0].type, _array_elem(op.type)
    assert isinstance(t, T.CoopMatType)
    lines, per_line, is_b = _line_shape(m, op, t)
    sgs = m.lanes.sgs
    mat = np.asarray(args[0])
    mat = np.broadcast_to(mat, (m.lanes.groups(m.layout.scope(t)),) + mat.shape[1:])
    mine = mat.transpose(0, 2, 1) if is_b else mat
    out = np.empty((len(mat), sgs, per_line), value_dtype(t.elem))
    out.view(np.uint8)[...] = POISON_BYTE
    if t.elem.is_float:
        out[...] = np.nan
    out[:, :lines, :] = mine
    rows = out.reshape(-1, per_line)
    if dst != t.elem:
        rows = reinterpret(rows, dst)
    return as_elements(rows)


@semantics("bitcast_array")
def _bitcast_array(m: Machine, op: Op, args: list[Any]) -> Any:
    src = op.operands[0].type
    return as_elements(reinterpret(as_rows(m, args[0], _array_elem(src)), _array_elem(op.type)))


@semantics("sub_array")
def _sub_array(m: Machine, op: Op, args: list[Any]) -> Any:
    src = op.operands[0].type
    rows = as_rows(m, args[0], _array_elem(src))
    assert isinstance(op.type, T.ArrayType)
    count = m.layout.length(op.type)
    start = np.broadcast_to(np.asarray(args[1]).astype(np.int64), (m.lanes.N,))
    bad = m.mask & ((start < 0) | (start + count > rows.shape[1]))
    if bad.any():
        slot = int(np.argmax(bad))
        raise m.error(op, f"sub-array {int(start[slot])}..{int(start[slot]) + count - 1} is out of range for "
                          f"{src} ({rows.shape[1]} elements; undefined in SPV_QCOM_cooperative_matrix_conversion)",
                      slot)
    index = np.clip(start[:, None] + np.arange(count), 0, rows.shape[1] - 1)
    return as_elements(np.take_along_axis(rows, index, axis=1))
