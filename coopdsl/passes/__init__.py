"""IR passes, run in PIPELINE order with the verifier between them.

The verifier checks the front end's output, then the module again after each
pass that may have changed it: not after an analysis (``ANALYSES``), nor after
a transform that returns ``False`` (it changed nothing).  Verifying an
unchanged module again only repeated the same checks, at a fifth of a compile.
"""

from __future__ import annotations

from ..ir.core import Module
from ..ir.verifier import verify
from . import dce, uniformity

PIPELINE = [("dce", dce.run), ("uniformity", uniformity.run)]
ANALYSES = {"uniformity"}  # passes that only look at the module (they reject it or not)


def run_pipeline(module: Module) -> None:
    """Run every pass of PIPELINE on ``module``, verifying it between them."""
    verify(module)
    for name, p in PIPELINE:
        changed = p(module)
        if name not in ANALYSES and changed is not False:
            verify(module)
