"""Syntactic pre-scans of a kernel body (assigned names, used locals)."""

from __future__ import annotations

import ast


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_static_range(it: ast.AST) -> bool:
    if not isinstance(it, ast.Call):
        return False
    f = it.func
    return (isinstance(f, ast.Name) and f.id == "static_range") or \
        (isinstance(f, ast.Attribute) and f.attr == "static_range")


def assigned_names(nodes, loop_carried: bool = False) -> set[str]:
    """Names bound anywhere in ``nodes``: assignment and loop targets, and the root
    name of element assignments (``acc[i][j] = v`` rebinds ``acc``).

    With ``loop_carried``, leave out names bound only as compile-time loop
    variables (``static_range`` targets, comprehension targets): they never
    carry a runtime value around a loop.
    """
    out: set[str] = set()
    compile_time: set[str] = set()
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    if isinstance(t, ast.Subscript) and (root := _root_name(t)):
                        out.add(root)
            if isinstance(node, ast.For) and _is_static_range(node.iter) and isinstance(node.target, ast.Name):
                compile_time.add(node.target.id)
            elif isinstance(node, ast.comprehension) and isinstance(node.target, ast.Name):
                compile_time.add(node.target.id)
    if loop_carried:
        others = set()
        for stmt in nodes:
            for node in ast.walk(stmt):
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                                others.add(n.id)
                        if isinstance(t, ast.Subscript) and (root := _root_name(t)):
                            others.add(root)
                elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and \
                        not _is_static_range(node.iter):
                    others.add(node.target.id)
        out -= compile_time - others
    return out
