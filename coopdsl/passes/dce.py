"""dce: remove pure operations whose results nobody uses (iterated to a fixed point)."""

from __future__ import annotations

from ..ir.core import Module
from ..ir.ops import OPS


def run(module: Module) -> bool:
    """Remove unused pure ops from every function; returns whether anything was removed."""
    removed = False
    for func in module.functions:
        changed = True
        while changed:
            used = {id(v) for op in func.ops() for v in op.operands}
            changed = False
            for blk in func.blocks:
                for seq in (blk.phis, blk.ops):
                    keep = [op for op in seq if not OPS[op.kind].pure or id(op) in used]
                    if len(keep) != len(seq):
                        seq[:] = keep
                        changed = removed = True
    return removed
