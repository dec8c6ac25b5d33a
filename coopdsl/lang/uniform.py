"""``cd.assume_uniform``: the escape hatch of the uniformity analysis (docs/uniformity.md).

The analysis (:mod:`coopdsl.passes.uniformity`) rejects cooperative-matrix
operations and control barriers under conditions it cannot prove uniform.  A
kernel whose author knows better wraps the condition (or any scalar or vector
it is computed from) in ``cd.assume_uniform(...)``: the value is then treated
as the same in every invocation of the workgroup.  It compiles to nothing; if
the assumption is false the kernel has undefined behaviour (wrong results or
a hang), exactly as without the check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, TypeMismatchError
from ..ir import types as T
from ..ir.core import Const, SpecConst, SpecOp, Value
from .registry import BUILTINS, Builtin, bind, make_builtin

if TYPE_CHECKING:
    from .context import Builder


def _bind_one(cg: Builder, b: Builtin, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The binder of assume_uniform: exactly one positional argument (a condition is wrapped, not named)."""
    if kwargs or len(args) != 1:
        raise ArgumentError("assume_uniform(value) takes exactly one argument", cg.em.loc)
    return bind(cg, b, args, kwargs)


def _assume_uniform(cg: Builder, value: Any) -> Any:
    v = cg.as_operand(value)
    if isinstance(v, (bool, int, float)):
        return v  # compile-time numbers are uniform already
    if not isinstance(v, Value) or not isinstance(v.type, (T.ScalarType, T.VectorType)):
        raise TypeMismatchError(f"assume_uniform() takes a runtime scalar or vector (a condition, an index ...), "
                                f"got {cg.describe(v)}", cg.em.loc)
    if isinstance(v, (Const, SpecConst, SpecOp)):
        return v  # so are constants
    return cg.em.op("assume_uniform", v.type, [v])


assume_uniform = make_builtin(
    "assume_uniform", _assume_uniform,
    "The value, which the caller asserts is the same in every invocation of the workgroup: the uniformity "
    "check then accepts cooperative-matrix operations and barriers under conditions built from it. Emits no "
    "instruction; a false assumption is undefined behaviour (wrong results or a hang).", "(value)", {}, _bind_one)
BUILTINS[assume_uniform.name] = assume_uniform
