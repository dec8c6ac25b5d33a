"""``print(...)`` in a kernel: GLSL's ``debugPrintfEXT`` (an ``OpExtInst`` of ``NonSemantic.DebugPrintf``, which a
driver ignores unless a layer such as the Khronos validation layer's printf collects it), printed by the CPU
interpreter once per active invocation, in invocation order.  The arguments are joined as Python joins them
(``sep`` a compile-time string, default one space): strings and Python numbers as text, runtime scalars and vectors
of 2 to 4 components as printf conversions: ``%f`` for floats (f16 and f64 converted to f32), ``%d`` / ``%u`` for
32-bit and narrower integers, ``%ld`` / ``%lu`` for 64-bit ones, ``%v4f`` and the like for vectors, bools as 1 or 0
(``%u``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Value
from . import arith

if TYPE_CHECKING:
    from .context import Builder


def _spec(cg: Builder, v: Value) -> tuple[str, Value]:
    """(the printf conversion, the value it prints) for a runtime scalar or vector."""
    t = v.type
    elem = T.elem_of(t) if isinstance(t, T.VectorType) else t
    count = t.count if isinstance(t, T.VectorType) else 1
    if not isinstance(t, (T.ScalarType, T.VectorType)) or not isinstance(elem, T.ScalarType) or \
            elem.is_float and not elem.is_ieee:
        raise TypeMismatchError(f"print() takes strings, numbers and runtime scalars or vectors, got "
                                f"{cg.describe(v)}", cg.em.loc)
    vec = f"v{count}" if count > 1 else ""
    if elem.is_bool:
        if count > 1:
            raise TypeMismatchError("print() takes a bool scalar (printed 1 or 0), not a bool vector: print "
                                    "its components", cg.em.loc)
        return "%u", cg.em.op("select", T.u32, [v, cg.em.const(T.u32, 1), cg.em.const(T.u32, 0)])
    if elem.is_float:
        wide = T.VectorType(T.f32, count) if count > 1 else T.f32
        return f"%{vec}f", v if elem == T.f32 else arith.convert(cg.em, v, wide)
    if elem.width == 64:
        if count > 1:
            raise TypeMismatchError(f"print() takes 64-bit integer scalars, not {t}: print its components",
                                    cg.em.loc)
        return ("%ld" if elem.signed else "%lu"), v
    int32 = T.i32 if elem.signed else T.u32
    wide = T.VectorType(int32, count) if count > 1 else int32
    return f"%{vec}{'d' if elem.signed else 'u'}", v if elem.width == 32 else arith.convert(cg.em, v, wide)


def kernel_print(cg: Builder, args: list[Any], kwargs: dict[str, Any]) -> None:
    """``print(*values, sep=" ")`` in a kernel: one debug_printf op (see the module's docstring)."""
    sep = kwargs.pop("sep", " ")
    if kwargs:
        raise ArgumentError(f"print() in a kernel takes sep= only, not {', '.join(sorted(kwargs))}= (each call "
                            f"prints one line per active invocation)", cg.em.loc)
    if not isinstance(sep, str):
        raise TypeMismatchError(f"print()'s sep must be a compile-time string, got {cg.describe(sep)}", cg.em.loc)
    parts: list[str] = []
    values: list[Value] = []
    for a in args:
        a = cg.as_operand(a)
        if isinstance(a, str) or arith.is_number(a):
            parts.append(str(a).replace("%", "%%"))
        elif isinstance(a, Value):
            spec, v = _spec(cg, a)
            parts.append(spec)
            values.append(v)
        else:
            raise TypeMismatchError(f"print() takes strings, numbers and runtime scalars or vectors, got "
                                    f"{cg.describe(a)}", cg.em.loc)
    cg.em.op("debug_printf", T.void, values, format=sep.replace("%", "%%").join(parts))
