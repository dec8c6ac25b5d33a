"""Syntactic pre-scans of a kernel body (assigned names, used locals)."""

from __future__ import annotations

import ast


def assigned_names(nodes) -> set[str]:
    """Names bound (assigned, aug-assigned, loop targets) anywhere in ``nodes``."""
    out: set[str] = set()
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out
