"""Control flow and calls: phis, branches, returns, function calls."""

from __future__ import annotations

from .. import types as T
from ..core import Op
from .base import define, fail


def _phi(op: Op) -> None:  # (the verifier matches the incoming blocks with the block's predecessors)
    for v in op.operands:
        if v.type is not op.type and v.type != op.type:
            fail(op, f"operand {v.type} differs from the phi's type {op.type}")


def _cond_br(op: Op) -> None:
    if op.operands[0].type is not T.boolean and op.operands[0].type != T.boolean or len(op.attrs["targets"]) != 2:
        fail(op, "needs a bool condition and two targets")


def _br(op: Op) -> None:
    if len(op.attrs["targets"]) != 1:
        fail(op, "needs one target")


def _call(op: Op) -> None:
    f = op.attrs["func"]
    params = [p.type for p in f.params]
    if [v.type for v in op.operands] != params:
        fail(op, f"arguments do not match the parameters of {f.name}")
    if op.type != f.type.ret:
        fail(op, f"result {op.type} differs from {f.name}'s return type {f.type.ret}")


define("phi", (0, None), attrs={"incoming": (list, True), "var": (str, False), "path": (tuple, False)},
       verify=_phi, doc="SSA phi: one operand per predecessor in ``incoming``")
define("call", (0, None), attrs={"func": (object, True)}, verify=_call, pure=False,
       doc="call a device function with its runtime arguments")
define("br", 0, attrs={"targets": (list, True)}, verify=_br, pure=False, terminator=True, doc="branch")
define("cond_br", 1, attrs={"targets": (list, True)}, verify=_cond_br, pure=False, terminator=True,
       doc="conditional branch to targets [true, false]")
define("return", (0, 1), pure=False, terminator=True, doc="return, with a value in functions that have one")
define("unreachable", 0, pure=False, terminator=True, doc="control never reaches here")
