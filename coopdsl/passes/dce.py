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
            used = {id(v) for b in func.blocks for op in b.all_ops() for v in op.operands}
            changed = False
            for blk in func.blocks:
                for seq in (blk.phis, blk.ops):
                    for op in seq:  # (a list is rebuilt only when one of its ops goes: seldom)
                        if id(op) not in used and OPS[op.kind].pure:
                            seq[:] = [op for op in seq if not OPS[op.kind].pure or id(op) in used]
                            changed = removed = True
                            break
    return removed
