"""Specialization constants at launch: their values, derived constants, symbolic dimensions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import types as T
from ..ir.core import Const, Module, SpecConst, SpecOp, Value
from .values import scalar_constant


class SpecValues:
    """The values of a module's specialization constants for one launch (defaults where not given)."""

    def __init__(self, module: Module, given: dict[str, Any]):
        self.module = module
        by_name = {s.name: s for s in module.spec_consts}
        unknown = sorted(set(given) - set(by_name))
        if unknown:
            from .errors import LaunchArgumentError

            raise LaunchArgumentError(f"unknown specialization constant(s) {unknown}; "
                                      f"the kernel has {sorted(by_name)}")
        self._values: dict[int, np.ndarray] = {}
        for s in module.spec_consts:
            value = given.get(s.name, s.default)
            self._values[id(s)] = _checked(s, value)

    def value(self, v: Value) -> np.ndarray:
        """The 0-d value of a SpecConst, a SpecOp or a Const operand of one."""
        key = id(v)
        if key not in self._values:
            if isinstance(v, Const):
                return scalar_constant(T.scalar_of(v.type), v.value)
            if not isinstance(v, SpecOp):
                raise KeyError(v)
            from .ops.arith import apply_arith

            args = [self.value(o) for o in v.operands]
            self._values[key] = np.asarray(apply_arith(v.kind, v.operands[0].type, v.type, args))
        return self._values[key]

    def dim(self, d: T.Dim) -> int:
        """The integer a (possibly symbolic) dimension or array length stands for."""
        if isinstance(d, int):
            return d
        return int(self.value(self.module.symbolic_value(d)))

    def by_name(self) -> dict[str, Any]:
        """Every specialization constant's value by name (Python numbers)."""
        return {s.name: self.value(s).item() for s in self.module.spec_consts}


def _checked(s: SpecConst, value: Any) -> np.ndarray:
    """The launch's value of ``s``, checked as the GPU runtime checks it (coopdsl._packing.fitted: the one place
    that decides whether a number fits a type, with the same words): a float beyond the type's range was
    rounded to infinity here (with numpy's overflow warning) where the runtime refuses it."""
    from .._packing import fitted
    from .errors import LaunchArgumentError

    return scalar_constant(s.type, fitted(value, s.type.name, f"specialization constant {s.name}",
                                          LaunchArgumentError))
