"""``cd.bitcast``: reinterpret the bits of a scalar, vector or integer matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from ..ir.layout import size_of
from .conversions import RUNTIME, TypeObject
from .registry import builtin

if TYPE_CHECKING:
    from .context import Builder


@builtin("(value, type)", value=RUNTIME,
         type=TypeObject((T.ScalarType, T.VectorType), "bitcast target must be a scalar or vector type, got {got}"))
def bitcast(cg: Builder, value: Value, type: T.ScalarType | T.VectorType) -> Value:
    """Reinterpret bits as ``type`` (OpBitcast): a scalar/vector type of the same total width, or, for a
    cooperative matrix, an integer component type of the same width (e.g. i32 -> u32)."""
    v, t = value, type
    if isinstance(v.type, T.CoopMatType):
        src = v.type.elem
        if not isinstance(t, T.ScalarType) or not src.is_int or not t.is_int or src.width != t.width:
            raise TypeMismatchError(f"a cooperative matrix bitcasts between integer component types of one width; "
                                    f"{src} -> {t} is not allowed", cg.em.loc)
        return cg.em.op("bitcast", T.with_elem(v.type, t), [v])
    if not isinstance(v.type, (T.ScalarType, T.VectorType)):
        raise TypeMismatchError(f"bitcast takes a scalar, vector or cooperative-matrix value, got {v.type}", cg.em.loc)
    if T.scalar_of(v.type).is_bool or T.scalar_of(t).is_bool:
        hint = f"convert it instead ({t}(x))" if T.scalar_of(v.type).is_bool else "compare instead (x != 0)"
        raise TypeMismatchError(f"cannot bitcast {v.type} to {t}: bool has no bit pattern to reinterpret (OpBitcast "
                                f"takes numeric types); {hint}", cg.em.loc)
    if size_of(v.type) != size_of(t):
        raise TypeMismatchError(f"cannot bitcast {v.type} ({size_of(v.type)} bytes) to {t} ({size_of(t)} bytes)",
                                cg.em.loc)
    return cg.em.op("bitcast", t, [v])

