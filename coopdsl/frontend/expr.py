"""Expressions: the AST expression kinds kernels may use, and what each does."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, TypeMismatchError, UnsupportedSyntaxError
from ..ir import types as T
from ..ir.core import Value
from ..lang import arith
from ..lang.pointers import ptr_offset
from ..lang.structs import is_data_ptr
from ..lang.types import Enumerant
from .access import expr_attribute, expr_subscript
from .calls import MAX_UNROLLED, expr_call, expr_list, expr_listcomp, spliced

if TYPE_CHECKING:
    from .codegen import CodeGen

BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
    ast.Mod: "rem", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "shl",
    ast.RShift: "shr", ast.Pow: "pow",
}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
UNSUPPORTED_CMPOPS = {ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
MATMUL_HINT = "multiply cooperative matrices with cd.muladd(a, b, c) (A x B + C)"

MAX_SEQUENCE = MAX_UNROLLED  # items a compile-time sequence may have (each is compiled, as a static_range's steps)


def expr_constant(cg: CodeGen, node: ast.Constant) -> Any:
    if isinstance(node.value, (bool, int, float, str)) or node.value is None:
        return node.value
    raise UnsupportedSyntaxError(f"constant {node.value!r} is not supported", cg.em.loc)


def expr_name(cg: CodeGen, node: ast.Name) -> Any:
    return cg.lookup(node.id, node)


def expr_tuple(cg: CodeGen, node: ast.Tuple) -> Any:
    made = tuple(spliced(cg, node.elts))
    if made:   # (not the empty tuple: Python shares it with an empty list's)
        cg.tuple_displays[id(made)] = made
    return made


def expr_binop(cg: CodeGen, node: ast.BinOp) -> Any:
    op = BINOPS.get(type(node.op))
    if op is None:
        if isinstance(node.op, ast.MatMult):
            raise UnsupportedSyntaxError(f"'@' is not supported; {MATMUL_HINT}", cg.em.loc)
        raise UnsupportedSyntaxError(f"operator {type(node.op).__name__} is not supported", cg.em.loc)
    a = cg.as_operand(cg.visit(node.left))
    b = cg.as_operand(cg.visit(node.right))
    if op in ("add", "sub") and isinstance(a, Value) and isinstance(a.type, T.PointerType) and is_data_ptr(a.type):
        return ptr_offset(cg, a, b, op)
    if isinstance(a, tuple) and isinstance(b, tuple) and op == "add":
        return a + b
    if op == "or" and isinstance(a, Enumerant) and isinstance(b, Enumerant):
        from ..lang.coopmat2 import ReduceEnumerant  # (cd.Row and cd.Column come from it: loaded already)

        if isinstance(a, ReduceEnumerant) and isinstance(b, ReduceEnumerant):
            return a | b  # cd.Row | cd.Column
    if op == "mul" and (isinstance(a, tuple) and isinstance(b, int) or isinstance(a, int) and isinstance(b, tuple)):
        seq, n = (a, b) if isinstance(a, tuple) else (b, a)
        assert isinstance(seq, tuple) and isinstance(n, int)
        if len(seq) * max(n, 0) > MAX_SEQUENCE:   # (10**12 copies: a MemoryError, not an answer)
            raise ArgumentError(f"a compile-time sequence of {len(seq)} repeated {n} times has "
                                f"{len(seq) * n} items; at most {MAX_SEQUENCE}", cg.em.loc)
        return seq * n
    return arith.binary(cg.em, op, a, b)


def expr_unaryop(cg: CodeGen, node: ast.UnaryOp) -> Any:
    v = cg.as_operand(cg.visit(node.operand))
    if isinstance(node.op, ast.Not):
        return arith.logical_not(cg.em, v)
    op = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}[type(node.op)]
    return arith.unary(cg.em, op, v)


def expr_boolop(cg: CodeGen, node: ast.BoolOp) -> Any:
    """``and`` / ``or`` with C/GLSL short-circuit semantics.

    Operands that only combine names, constants and arithmetic are evaluated
    eagerly (OpLogicalAnd/Or); an operand that reads memory or calls something
    (``i < n and a[i] > 0``) is evaluated only when needed, through a
    selection construct and an OpPhi, so it cannot read out of bounds.
    """
    kind = "land" if isinstance(node.op, ast.And) else "lor"
    word = "and" if kind == "land" else "or"
    result = None
    for sub in node.values:
        if result is not None and arith.is_number(result):
            if (kind == "land") != bool(result):  # decided at compile time (False and ..., True or ...)
                return result
            result = None
        if result is not None and not _trivial(sub):
            result = _short_circuit(cg, kind, result, sub, word)
            continue
        v = cg.as_operand(cg.visit(sub))
        if not arith.is_number(v) and (not isinstance(v, Value) or v.type != T.boolean):
            raise TypeMismatchError(f"'{word}' needs bools, got {cg.describe(v)}", cg.src.loc(sub))
        if result is not None:
            _check_bool_after_runtime(cg, v, word, sub)
        if result is None:
            result = v
        elif arith.is_number(v):
            if (kind == "land") != bool(v):
                return cg.em.const(T.boolean, bool(v)) if isinstance(result, Value) else bool(v)
        else:
            result = cg.em.op(kind, T.boolean, [result, v])
    return result


def _check_bool_after_runtime(cg: CodeGen, v: Any, word: str, node: ast.AST) -> None:
    """After a runtime operand, ``and`` / ``or`` gives a runtime bool: a number operand there must be a bool
    (Python's ``c and 3`` is 3 or False, which no one type holds). Numbers before every runtime operand
    are combined as Python does."""
    if arith.is_number(v) and not isinstance(v, bool):
        raise TypeMismatchError(f"'{word}' needs bools, got {cg.describe(v)} after a runtime operand (the "
                                f"result is a runtime bool; a number keeps Python's meaning only where the operands "
                                f"before it are known at compile time)",
                                cg.src.loc(node))


def _trivial(node: ast.AST) -> bool:
    """Cheap and free of memory reads and calls: safe to evaluate even when not needed."""
    return all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp,
                              ast.Attribute, ast.Load, ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
               for n in ast.walk(node))


def _short_circuit(cg: CodeGen, kind: str, left: Value, node: ast.AST, word: str,
                   rest: Callable[[], Any] | None = None) -> Value:
    """``left and <node>`` (``kind`` "land") or ``left or <node>``, the right side evaluated only when needed: in
    its own block, the result an OpPhi.  ``rest`` computes the right side instead of visiting ``node`` (the rest
    of a comparison chain; ``node`` then only locates its errors)."""
    em = cg.em
    header = em.current
    rhs, merge = em.new_block(word), em.new_block(f"end{word}")
    em.selection_merge(header, merge)
    em.terminate("cond_br", [left], [rhs, merge] if kind == "land" else [merge, rhs])
    em.start(rhs)
    cg.ssa.nested += 1  # (a comprehension on the right binds its name in a block the merge does not follow)
    try:
        v = cg.as_operand(rest() if rest is not None else cg.visit(node))
    finally:
        cg.ssa.nested -= 1
    _check_bool_after_runtime(cg, v, word, node)
    if arith.is_number(v):
        v = em.const(T.boolean, bool(v))
    if not isinstance(v, Value) or v.type != T.boolean:
        raise TypeMismatchError(f"'{word}' needs bools, got {cg.describe(v)}", cg.src.loc(node))
    rhs_end = em.block
    assert rhs_end is not None  # (an expression cannot return)
    em.branch(merge)
    em.start(merge)
    skipped = em.const(T.boolean, kind == "lor")  # the value when the right side is not evaluated
    return em.phi(merge, T.boolean, [skipped, v], [header, rhs_end])


def expr_compare(cg: CodeGen, node: ast.Compare) -> Any:
    """``a < b``, and chains ``a < b <= c`` as Python reads them: ``a < b and b <= c`` with ``b`` evaluated once
    and each later comparison only when the ones before hold (a compile-time False ends the chain; a runtime
    scalar one skips the rest through a branch where it reads memory or calls something, as ``and`` does).
    Comparisons of vectors give vectors of bools, combined component by component."""
    left = cg.as_operand(cg.visit(node.left))
    return _chain(cg, left, list(zip(node.ops, node.comparators)))


def _chain(cg: CodeGen, left: Any, pairs: list[tuple[ast.cmpop, ast.expr]]) -> Any:
    """The value of the comparison chain ``left op1 c1 op2 c2 ...`` (``pairs``), ``left`` already evaluated."""
    result = None
    for i, (op_node, right_node) in enumerate(pairs):
        op = CMPOPS.get(type(op_node))
        if op is None:
            raise UnsupportedSyntaxError(f"'{UNSUPPORTED_CMPOPS[type(op_node)]}' is not supported; kernels compare "
                                         "numbers with <, <=, >, >=, == and !=", cg.em.loc)
        if result is not None and arith.is_number(result):
            if not result:
                return result          # Python stops at the first false comparison
            result = None              # true: the chain is the rest's value
        if isinstance(result, Value) and result.type == T.boolean and not _trivial(right_node):
            return _short_circuit(cg, "land", result, right_node, "and", functools.partial(_chain, cg, left, pairs[i:]))
        right = cg.as_operand(cg.visit(right_node))
        r = arith.binary(cg.em, op, left, right)
        if isinstance(result, Value) and isinstance(r, Value) and result.type != r.type and \
                T.VectorType in (type(result.type), type(r.type)):
            raise TypeMismatchError(f"the comparisons of a chain give {result.type} and {r.type}: compare values "
                                    f"of one size (a chain of vectors is combined component by component)",
                                    cg.em.loc)
        result = r if result is None else arith.binary(cg.em, "and", _as_bool(cg, result), _as_bool(cg, r))
        left = right
    return result


def _as_bool(cg: CodeGen, v: Any) -> Any:
    return cg.em.const(T.boolean, bool(v)) if arith.is_number(v) else v


def expr_ifexp(cg: CodeGen, node: ast.IfExp) -> Any:
    cond = cg.condition(node.test)
    if isinstance(cond, bool):
        return cg.visit(node.body if cond else node.orelse)
    a = cg.as_operand(cg.visit(node.body))
    b = cg.as_operand(cg.visit(node.orelse))
    if arith.is_number(a) and arith.is_number(b):
        a = cg.em.literal(a, arith.default_type(a))
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise TypeMismatchError("both sides of a runtime 'x if c else y' must be values", cg.em.loc)
    a, b = arith.unify(cg.em, "select", a, b)
    return cg.em.op("select", a.type, [cond, a, b])


EXPRESSIONS = {
    ast.Constant: expr_constant,
    ast.Name: expr_name,
    ast.Tuple: expr_tuple,
    ast.List: expr_list,
    ast.ListComp: expr_listcomp,
    ast.BinOp: expr_binop,
    ast.UnaryOp: expr_unaryop,
    ast.BoolOp: expr_boolop,
    ast.Compare: expr_compare,
    ast.IfExp: expr_ifexp,
    ast.Attribute: expr_attribute,
    ast.Subscript: expr_subscript,
    ast.Call: expr_call,
}
