"""Expressions: the AST expression kinds kernels may use, and what each does."""

from __future__ import annotations

import ast
import builtins as py_builtins
import types as py_types

from ..errors import (ArgumentError, NameResolutionError, TypeMismatchError, UnsupportedSyntaxError)
from ..ir import types as T
from ..ir.attrs import MemoryAccess
from ..ir.core import Const, SpecConst, SpecOp, Value, dim_of
from ..lang import builtins as B
from ..lang.types import CoopMatFamily
from . import arith
from ..lang.structs import is_data_ptr, ptr_elem
from .values import BoundMethod, BufferRef, BuiltinVar

BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
    ast.Mod: "rem", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "shl",
    ast.RShift: "shr", ast.Pow: "pow",
}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def expr_constant(cg, node: ast.Constant):
    if isinstance(node.value, (bool, int, float, str)) or node.value is None:
        return node.value
    raise UnsupportedSyntaxError(f"constant {node.value!r} is not supported", cg.em.loc)


def expr_name(cg, node: ast.Name):
    return cg.lookup(node.id, node)


def expr_tuple(cg, node):
    return tuple(cg.visit(e) for e in node.elts)


def expr_binop(cg, node: ast.BinOp):
    op = BINOPS.get(type(node.op))
    if op is None:
        raise UnsupportedSyntaxError(f"operator {type(node.op).__name__} is not supported", cg.em.loc)
    a = cg.as_operand(cg.visit(node.left))
    b = cg.as_operand(cg.visit(node.right))
    if op in ("add", "sub") and isinstance(a, Value) and is_data_ptr(a.type):
        return _ptr_offset(cg, a, b, op)
    if isinstance(a, tuple) and isinstance(b, tuple) and op == "add":
        return a + b
    if op == "mul" and (isinstance(a, tuple) and isinstance(b, int) or isinstance(b, tuple) and isinstance(a, int)):
        return a * b
    return arith.binary(cg.em, op, a, b)


def expr_unaryop(cg, node: ast.UnaryOp):
    v = cg.as_operand(cg.visit(node.operand))
    if isinstance(node.op, ast.Not):
        return arith.logical_not(cg.em, v)
    op = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}[type(node.op)]
    return arith.unary(cg.em, op, v)


def expr_boolop(cg, node: ast.BoolOp):
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
        if result is None:
            result = v
        elif arith.is_number(v):
            if (kind == "land") != bool(v):
                return cg.em.const(T.boolean, bool(v)) if isinstance(result, Value) else bool(v)
        else:
            result = cg.em.op(kind, T.boolean, [result, v])
    return result


def _trivial(node: ast.AST) -> bool:
    """Cheap and free of memory reads and calls: safe to evaluate even when not needed."""
    return all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp,
                              ast.Attribute, ast.Load, ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
               for n in ast.walk(node))


def _short_circuit(cg, kind: str, left: Value, node: ast.AST, word: str) -> Value:
    from ..ir.core import Op, SelectionMerge

    em = cg.em
    header = em.block
    rhs, merge = em.new_block(word), em.new_block(f"end{word}")
    header.merge = SelectionMerge(merge)
    em.terminate("cond_br", [left], [rhs, merge] if kind == "land" else [merge, rhs])
    em.start(rhs)
    v = cg.as_operand(cg.visit(node))
    if arith.is_number(v):
        v = em.const(T.boolean, bool(v))
    if not isinstance(v, Value) or v.type != T.boolean:
        raise TypeMismatchError(f"'{word}' needs bools, got {cg.describe(v)}", cg.src.loc(node))
    rhs_end = em.block
    em.branch(merge)
    em.start(merge)
    skipped = em.const(T.boolean, kind == "lor")  # the value when the right side is not evaluated
    phi = Op("phi", T.boolean, [skipped, v], em.loc, incoming=[header, rhs_end])
    phi.block = merge
    merge.phis.append(phi)
    return phi


def expr_compare(cg, node: ast.Compare):
    left = cg.as_operand(cg.visit(node.left))
    result = None
    for op_node, right_node in zip(node.ops, node.comparators):
        op = CMPOPS.get(type(op_node))
        if op is None:
            raise UnsupportedSyntaxError(f"comparison {type(op_node).__name__} is not supported", cg.em.loc)
        right = cg.as_operand(cg.visit(right_node))
        r = arith.binary(cg.em, op, left, right)
        if result is None:
            result = r
        elif arith.is_number(result) and arith.is_number(r):
            result = result and r
        else:
            result = arith.binary(cg.em, "and", _as_bool(cg, result), _as_bool(cg, r))
        left = right
    return result


def _as_bool(cg, v):
    return cg.em.const(T.boolean, bool(v)) if arith.is_number(v) else v


def expr_ifexp(cg, node: ast.IfExp):
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



def expr_attribute(cg, node: ast.Attribute):
    obj = cg.visit(node.value)
    attr = node.attr
    if isinstance(obj, py_types.ModuleType):
        if not hasattr(obj, attr):
            raise NameResolutionError(f"module '{obj.__name__}' has no attribute '{attr}'", cg.em.loc)
        return cg.classify_global(f"{obj.__name__}.{attr}", getattr(obj, attr))
    if isinstance(obj, BuiltinVar):
        obj = cg.load_builtin(obj)
    if isinstance(obj, T.CoopMatType):
        m = B.METHODS.get(("mattype", attr))
        if m is None:
            raise NameResolutionError(f"{obj} has no method '{attr}' (it has: {_methods('mattype')})", cg.em.loc)
        return BoundMethod(m, obj)
    if isinstance(obj, Value):
        t = obj.type
        if isinstance(t, T.VectorType) and all(c in SWIZZLE for c in attr):
            return swizzle(cg, obj, attr)
        if isinstance(t, T.StructType):
            try:
                index = t.member_index(attr)
            except KeyError:
                raise NameResolutionError(f"struct {t.name} has no member '{attr}' (it has: "
                                          f"{', '.join(n for n, _ in t.members)})", cg.em.loc) from None
            return cg.em.op("extract", t.members[index][1], [obj], index=index)
        if isinstance(t, T.CoopMatType):
            m = B.METHODS.get(("mat", attr))
            if m is None:
                raise NameResolutionError(f"{t} has no attribute '{attr}' (it has: {_methods('mat')})", cg.em.loc)
            return BoundMethod(m, obj)
        raise NameResolutionError(f"a {t} value has no attribute '{attr}'", cg.em.loc)
    raise NameResolutionError(f"{cg.describe(obj)} has no attribute '{attr}'", cg.em.loc)


def _methods(kind: str) -> str:
    return ", ".join(sorted(n for k, n in B.METHODS if k == kind))


def swizzle(cg, v: Value, attr: str):
    t = v.type
    idx = [SWIZZLE[c] for c in attr]
    if any(i >= t.count for i in idx):
        raise TypeMismatchError(f"swizzle '.{attr}' reaches past the {t.count} components of {t}", cg.em.loc)
    if len(idx) == 1:
        return cg.em.op("extract", t.elem, [v], index=idx[0])
    if len(idx) > 4:
        raise TypeMismatchError(f"swizzle '.{attr}' has more than 4 components", cg.em.loc)
    return cg.em.op("shuffle", T.VectorType(t.elem, len(idx)), [v, v], components=tuple(idx))


def expr_subscript(cg, node: ast.Subscript):
    base = cg.visit(node.value)
    if isinstance(node.slice, ast.Slice):
        raise UnsupportedSyntaxError("slices are not supported", cg.src.loc(node.slice))
    index = cg.visit(node.slice)
    if isinstance(base, BuiltinVar):
        base = cg.load_builtin(base)
    if isinstance(base, BufferRef):
        ptr = cg.element_pointer(base, index)
        return cg.em.op("load", base.elem, [ptr])
    if isinstance(base, Value):
        return _value_index(cg, base, index)
    if isinstance(base, (tuple, list)):
        if not isinstance(index, int):
            raise TypeMismatchError("a compile-time tuple is indexed with a compile-time int", cg.em.loc)
        try:
            return base[index]
        except IndexError:
            raise TypeMismatchError(f"index {index} out of range for a tuple of {len(base)}", cg.em.loc) from None
    if hasattr(base, "__getitem__") and _is_type_family(base):
        params = index if isinstance(index, tuple) else (index,)
        params = tuple(_type_param(cg, p) for p in params)
        try:
            return base[params if len(params) > 1 else params[0]]
        except TypeError as e:
            raise TypeMismatchError(str(e), cg.em.loc) from None
    raise TypeMismatchError(f"{cg.describe(base)} cannot be indexed", cg.em.loc)


def _is_type_family(obj) -> bool:
    return type(obj).__module__.startswith("coopdsl.lang")


def _type_param(cg, p):
    if isinstance(p, (SpecConst, SpecOp)):
        if p.type.kind != "int":
            name = p.name if isinstance(p, SpecConst) else str(p.sym)
            raise TypeMismatchError(f"specialization constant '{name}' used as a dimension must be an integer",
                                    cg.em.loc)
        return dim_of(p)
    if isinstance(p, Const) and isinstance(p.value, int):
        return p.value
    if isinstance(p, Value):
        raise TypeMismatchError(
            "type parameters must be compile-time constants or specialization constants, not runtime values",
            cg.em.loc)
    return p


def _value_index(cg, base: Value, index):
    t = base.type
    index = cg.as_operand(index)
    if is_data_ptr(t):
        elem = ptr_elem(t)
        return cg.em.op("load", elem, [_ptr_element(cg, base, index)], memory=MemoryAccess(T.align_of(elem)))
    if isinstance(t, T.VectorType):
        if isinstance(index, int) and not isinstance(index, bool):
            if not 0 <= index < t.count:
                raise TypeMismatchError(f"index {index} out of range for {t}", cg.em.loc)
            return cg.em.op("extract", t.elem, [base], index=index)
        return cg.em.op("extract_dyn", t.elem, [base, cg.as_index(index, "a vector index")])
    if isinstance(t, T.CoopMatType):
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0:
                raise TypeMismatchError("a matrix element index must not be negative", cg.em.loc)
            return cg.em.op("extract", t.elem, [base], index=index)
        ptr = _spill_element(cg, base, index)
        return cg.em.op("load", t.elem, [ptr])
    raise TypeMismatchError(f"a {t} value cannot be indexed", cg.em.loc)


def _ptr_offset(cg, p: Value, n, op: str):
    """``p + n`` / ``p - n`` in elements: through a 64-bit address (OpConvertPtrToU / OpConvertUToPtr)."""
    size = T.size_of(ptr_elem(p.type))
    n = cg.as_index(n, "a pointer offset")
    addr = cg.em.op("ptr_to_u64", T.u64, [p])
    n64 = arith.convert(cg.em, n, T.u64 if not n.type.signed else T.i64)
    if n64.type != T.u64:
        n64 = cg.em.op("bitcast", T.u64, [n64])
    delta = cg.em.op("mul", T.u64, [n64, cg.em.literal(size, T.u64)])
    return cg.em.op("u64_to_ptr", p.type, [cg.em.op(op, T.u64, [addr, delta])])


def _ptr_element(cg, p: Value, index):
    """Pointer to element ``index`` of the array a ``Ptr[T]`` points at."""
    elem = ptr_elem(p.type)
    idx = cg.as_index(index, "a pointer index")
    return cg.em.op("access", T.PointerType(elem, "PhysicalStorageBuffer"), [p, cg.em.const(T.u32, 0), idx])


def _spill_element(cg, m: Value, index):
    """Pointer to element ``index`` of matrix ``m`` stored in a fresh Function variable."""
    var = cg.function_variable(T.PointerType(m.type, "Function"))
    cg.em.op("store", T.void, [var, m])
    idx = cg.as_index(index, "a matrix element index")
    return cg.em.op("access", T.PointerType(m.type.elem, "Function"), [var, idx])


def store_subscript(cg, target: ast.Subscript, value) -> None:
    base = cg.visit(target.value)
    index = cg.visit(target.slice)
    value = cg.as_operand(value)
    if isinstance(base, Value) and is_data_ptr(base.type):
        elem = ptr_elem(base.type)
        if arith.is_number(value):
            value = cg.em.literal(value, elem)
        if not isinstance(value, Value) or value.type != elem:
            raise TypeMismatchError(f"cannot store {cg.describe(value)} through a Ptr[{elem}]", cg.src.loc(target))
        cg.em.op("store", T.void, [_ptr_element(cg, base, index), value], memory=MemoryAccess(T.align_of(elem)))
        return
    if isinstance(base, BufferRef):
        if arith.is_number(value):
            value = cg.em.literal(value, base.elem)
        if not isinstance(value, Value) or value.type != base.elem:
            raise TypeMismatchError(
                f"cannot store {cg.describe(value)} into {base.kind} '{base.name}' of {base.elem}; convert it first",
                cg.src.loc(target))
        ptr = cg.element_pointer(base, index)
        cg.note_buffer_write(base)
        cg.em.op("store", T.void, [ptr, value])
        return
    if isinstance(base, Value) and isinstance(target.value, ast.Name) and \
            isinstance(base.type, (T.VectorType, T.CoopMatType)):
        elem = base.type.elem
        if arith.is_number(value):
            value = cg.em.literal(value, elem)
        if not isinstance(value, Value) or value.type != elem:
            raise TypeMismatchError(f"cannot store {cg.describe(value)} into an element of {base.type}", cg.em.loc)
        index = cg.as_operand(index)
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0 or isinstance(base.type, T.VectorType) and index >= base.type.count:
                raise TypeMismatchError(f"element index {index} is out of range for {base.type}", cg.em.loc)
            cg.assign(target.value.id, cg.em.op("insert", base.type, [value, base], index=index))
            return
        if isinstance(base.type, T.VectorType):
            idx = cg.as_index(index, "a vector index")
            cg.assign(target.value.id, cg.em.op("insert_dyn", base.type, [base, value, idx]))
            return
        # runtime index into a matrix: through a Function variable, as glslang does
        ptr = _spill_element(cg, base, index)
        cg.em.op("store", T.void, [ptr, value])
        cg.assign(target.value.id, cg.em.op("load", base.type, [ptr.operands[0]]))
        return
    if isinstance(base, tuple):
        root, path = _container_path(cg, target)
        cg.assign(root, _set_path(cg.lookup(root, target), path, value))
        return
    raise TypeMismatchError(f"cannot assign to an element of {cg.describe(base)}", cg.src.loc(target))


def _container_path(cg, target: ast.Subscript):
    """For ``acc[i][j] = v``: the root name and the compile-time index path (i, j)."""
    path = []
    node = target
    while isinstance(node, ast.Subscript):
        idx = cg.as_operand(cg.visit(node.slice))
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise TypeMismatchError("elements of a compile-time list are chosen with compile-time integers "
                                    "(use static_range)", cg.src.loc(node.slice))
        path.append(idx)
        node = node.value
    if not isinstance(node, ast.Name):
        raise UnsupportedSyntaxError("only lists held by a name can be updated element-wise", cg.src.loc(target))
    return node.id, tuple(reversed(path))


def _set_path(container, path, value):
    i = path[0]
    if not isinstance(container, tuple) or not -len(container) <= i < len(container):
        raise IndexError(i)
    item = value if len(path) == 1 else _set_path(container[i], path[1:], value)
    return container[:i] + (item,) + container[i + 1:]


def call_parts(cg, node: ast.Call):
    args = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise UnsupportedSyntaxError("'*args' in calls is not supported", cg.src.loc(a))
        args.append(cg.visit(a))
    kwargs = {}
    for k in node.keywords:
        if k.arg is None:
            raise UnsupportedSyntaxError("'**kwargs' in calls is not supported", cg.src.loc(k))
        kwargs[k.arg] = cg.visit(k.value)
    return args, kwargs


def expr_call(cg, node: ast.Call):
    func = cg.visit(node.func)
    args, kwargs = call_parts(cg, node)
    if isinstance(func, B.Builtin):
        return func.impl(cg, args, kwargs)
    from ..lang.functions import DeviceFunction

    if isinstance(func, DeviceFunction):
        from .helpers import call

        return call(cg, func, args, kwargs)
    if isinstance(func, BoundMethod):
        return func.builtin.impl(cg, func.receiver, args, kwargs)
    if isinstance(func, (T.ScalarType, T.VectorType, T.CoopMatType)):
        return construct(cg, func, args, kwargs)
    if func in (py_builtins.min, py_builtins.max):
        return _minmax(cg, "min" if func is py_builtins.min else "max", args, kwargs)
    if func is py_builtins.abs and len(args) == 1 and not kwargs and not arith.is_number(cg.as_operand(args[0])):
        return B.BUILTINS["abs"].impl(cg, args, kwargs)  # FAbs / SAbs
    if func in (py_builtins.int, py_builtins.float, py_builtins.bool, py_builtins.abs, py_builtins.len):
        if kwargs or not all(isinstance(a, (bool, int, float, tuple)) for a in args):
            raise TypeMismatchError(
                f"{func.__name__}() works on compile-time values only; for runtime values use "
                f"coopdsl types (e.g. i32(x), f32(x))", cg.em.loc)
        return func(*args)
    if func is range:
        raise UnsupportedSyntaxError("range(...) can only be iterated by a for loop", cg.em.loc)
    raise TypeMismatchError(f"{cg.describe(func)} cannot be called in a kernel", cg.em.loc)


def construct(cg, t, args, kwargs):
    if kwargs:
        raise ArgumentError(f"{t}(...) takes no keyword arguments", cg.em.loc)
    args = [cg.as_operand(a) for a in args]
    if isinstance(t, T.ScalarType):
        if len(args) != 1:
            raise ArgumentError(f"{t}(x) converts exactly one value, got {len(args)}", cg.em.loc)
        return arith.convert(cg.em, args[0], t)
    if isinstance(t, T.CoopMatType):
        if len(args) != 1:
            raise ArgumentError(f"{t}(x) takes one matrix (to convert) or one scalar (to splat)", cg.em.loc)
        a = args[0]
        if arith.is_number(a):
            return cg.em.literal(a, t)
        if isinstance(a, Value) and isinstance(a.type, T.ScalarType):
            return B.METHODS[("mattype", "splat")].impl(cg, t, [a], {})
        if not isinstance(a, Value) or not isinstance(a.type, T.CoopMatType):
            raise TypeMismatchError(f"{t}(x) needs a cooperative matrix or a scalar, got {cg.describe(a)}",
                                    cg.em.loc)
        return arith.convert(cg.em, a, t)
    # vectors: one scalar (splat), or components/vectors adding up to the size
    if len(args) == 1 and isinstance(args[0], Value) and isinstance(args[0].type, T.VectorType):
        return arith.convert(cg.em, args[0], t)
    parts = []
    for a in args:
        if isinstance(a, Value) and isinstance(a.type, T.VectorType):
            parts += [cg.em.op("extract", a.type.elem, [a], index=i) for i in range(a.type.count)]
        else:
            parts.append(a)
    if len(parts) == 1:
        parts = parts * t.count
    if len(parts) != t.count:
        raise ArgumentError(f"{t}(...) needs {t.count} components, got {len(parts)}", cg.em.loc)
    values = [arith.convert(cg.em, p, t.elem) if arith.is_number(p) or p.type != t.elem else p for p in parts]
    if all(isinstance(p, (bool, int, float)) for p in parts) and len(set(parts)) == 1:
        return cg.em.literal(parts[0], t)
    return cg.em.op("construct", t, values)


def _minmax(cg, kind, args, kwargs):
    """Python's min/max: folded for numbers, else the GLSL.std.450 builtin applied pairwise."""
    if kwargs or len(args) < 2:
        raise ArgumentError(f"{kind}(a, b, ...) takes two or more values", cg.em.loc)
    args = [cg.as_operand(a) for a in args]
    if all(arith.is_number(a) for a in args):
        return (min if kind == "min" else max)(args)
    builtin = B.BUILTINS[kind]
    out = args[0]
    for a in args[1:]:
        if not (arith.is_number(out) and arith.is_number(a)):
            out, a = arith.unify(cg.em, kind, out, a)  # e.g. i32 with u32, as for operators
        out = builtin.impl(cg, [out, a], {})
    return out


def expr_list(cg, node: ast.List):
    # compile-time containers are immutable tuples: element assignment rebinds the name
    return tuple(cg.visit(e) for e in node.elts)


def expr_listcomp(cg, node: ast.ListComp):
    """``[e for i in static_range(n)]`` (or range/tuple with compile-time values), evaluated while compiling."""
    if len(node.generators) != 1 or node.generators[0].ifs or not isinstance(node.generators[0].target, ast.Name):
        raise UnsupportedSyntaxError("list comprehensions take one 'for name in ...' clause and no 'if'", cg.em.loc)
    gen = node.generators[0]
    it = gen.iter
    if isinstance(it, ast.Call):
        func = cg.visit(it.func)
        args, kwargs = call_parts(cg, it)
        if (func is range or func is B.BUILTINS["static_range"]) and not kwargs and \
                all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            items = range(*args)
        else:
            raise UnsupportedSyntaxError("a list comprehension must iterate over static_range(...) or range(...) "
                                         "with compile-time integers", cg.src.loc(it))
    else:
        items = cg.visit(it)
        if not isinstance(items, tuple):
            raise UnsupportedSyntaxError("a list comprehension must iterate over a compile-time sequence",
                                         cg.src.loc(it))
    out = []
    for v in items:
        cg.assign(gen.target.id, v)
        out.append(cg.visit(node.elt))
    return tuple(out)


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
