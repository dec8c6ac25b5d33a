"""Syntactic pre-scans of a kernel body (assigned names, used locals)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any


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


_ASSIGNS = (ast.Assign, ast.AugAssign, ast.AnnAssign)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # node type -> its fields that can hold nodes
# fields of AST classes that hold names, numbers or flags, never nodes (nor lists of them)
_LEAF_FIELDS = frozenset({"ctx", "type_comment", "attr", "id", "arg", "name", "asname", "module", "level",
                          "conversion", "kind", "is_async"})


def _child_fields(t: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(t)
    if fields is None:
        leaves = _LEAF_FIELDS if t.__module__ == "ast" else {"ctx", "type_comment"}
        fields = _CHILD_FIELDS[t] = tuple(f for f in getattr(t, "_fields", ()) if f not in leaves)
    return fields


def _store_names(node: ast.AST, into: set[str]) -> None:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            into.add(n.id)


def plainly_bound_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names bound as names anywhere in ``nodes`` (assignment, loop and ``with`` targets): what makes a name local
    in Python. The root of an element assignment (``a[i] = v``) is not among them, nor a comprehension's target
    (local to the comprehension)."""
    out: set[str] = set()
    stack = list(nodes)
    while stack:   # (ast.walk, but a comprehension's target binds its name in the comprehension only, as in Python 3)
        n = stack.pop()
        if type(n) is ast.Name and type(n.ctx) is ast.Store:
            out.add(n.id)
        elif type(n) is ast.MatchAs and n.name:   # case ... as n / case n: binds n
            out.add(n.name)
            stack.extend(ast.iter_child_nodes(n))
        elif type(n) is ast.comprehension:
            stack.append(n.iter)
            stack.extend(n.ifs)
        else:
            stack.extend(ast.iter_child_nodes(n))
    return out


def assigned_names(nodes: Iterable[ast.AST], loop_carried: bool = False) -> set[str]:
    """Names bound anywhere in ``nodes``: assignment and loop targets, and the root
    name of element assignments (``acc[i][j] = v`` rebinds ``acc``).

    With ``loop_carried``, leave out names bound only as compile-time loop
    variables (``static_range`` targets): they never carry a runtime value
    around a loop.  A comprehension's target is not the body's name at all (it
    is local to the comprehension, as in Python 3).

    One walk over the nodes with a stack (``ast.walk`` costs about three times
    as much: this runs over every statement of a kernel).
    """
    out: set[str] = set()
    compile_time: set[str] = set()
    others: set[str] = set()  # bound other than as a compile-time loop variable
    stack = list(nodes)
    child_fields = _CHILD_FIELDS.get
    name, constant, store = ast.Name, ast.Constant, ast.Store
    while stack:
        node: Any = stack.pop()  # dispatch on the exact node type (faster than isinstance chains)
        t = type(node)
        if t is name:
            if type(node.ctx) is store:
                out.add(node.id)
            continue
        if t is constant:
            continue
        fields = child_fields(t)
        if fields is None:
            if not issubclass(t, ast.AST):
                continue
            fields = _child_fields(t)
        if t in _ASSIGNS:
            for target in (node.targets if t is ast.Assign else (node.target,)):
                root = _root_name(target) if isinstance(target, ast.Subscript) else None
                if root:
                    out.add(root)
                    others.add(root)
                if loop_carried:
                    _store_names(target, others)
        elif t is ast.MatchAs and node.name:   # case ... as n / case n: binds n
            out.add(node.name)
            others.add(node.name)
        elif t is ast.For and isinstance(node.target, ast.Name):
            (compile_time if _is_static_range(node.iter) else others).add(node.target.id)
        elif t is ast.comprehension:   # its target is the comprehension's own name (Python 3), not the body's
            stack.append(node.iter)
            stack.extend(node.ifs)
            continue
        for f in fields:
            value = getattr(node, f)
            if type(value) is list:
                stack.extend(value)
            elif value is not None:
                stack.append(value)
    if loop_carried:
        out -= compile_time - others
    return out
