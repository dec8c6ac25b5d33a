"""IR passes, run in PIPELINE order with the verifier between them."""

from __future__ import annotations

from ..ir.core import Module
from ..ir.verifier import verify
from . import dce, uniformity

PIPELINE = [("dce", dce.run), ("uniformity", uniformity.run)]


def run_pipeline(module: Module) -> None:
    verify(module)
    for _, p in PIPELINE:
        p(module)
        verify(module)
