"""Calls: builtins, methods, device functions, type constructors, Python's min/max/abs,
and compile-time lists."""

from __future__ import annotations

import ast
import builtins as py_builtins
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, SourceLoc, TypeMismatchError, UnsupportedSyntaxError
from ..ir import types as T
from ..ir.core import Value
from ..ir.layout import unlaid
from ..lang import arith
from ..lang import registry as B
from ..lang.arrays import buffer_length, construct_array, length_of, relaid
from ..lang.debug import kernel_print
from ..lang.functions import DeviceFunction, Partial
from ..lang.values import BoundMethod, BufferRef, BuiltinVar

if TYPE_CHECKING:
    from .context import Context


def spliced(cg: Context, elts: list[ast.expr]) -> list[Any]:
    """The values of ``elts`` (a list or tuple display's items, a call's arguments) in order, a starred item
    ``*xs`` giving the items of the compile-time list or tuple ``xs``, as Python splices an iterable."""
    out: list[Any] = []
    for e in elts:
        if not isinstance(e, ast.Starred):
            out.append(cg.visit(e))
            continue
        items = cg.visit(e.value)
        if not isinstance(items, tuple):
            hint = " (a vector's components are v.x, v.y, ...)" if isinstance(getattr(items, "type", None),
                                                                            T.VectorType) else ""
            raise TypeMismatchError(f"'*' unpacks a list or tuple known at compile time, got "
                                    f"{cg.describe(items)}{hint}", cg.src.loc(e))
        out.extend(items)
    return out


def call_parts(cg: Context, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
    args = spliced(cg, node.args)
    kwargs: dict[str, Any] = {}
    for k in node.keywords:
        if k.arg is None:
            raise UnsupportedSyntaxError("'**kwargs' in calls is not supported", cg.src.loc(k))
        kwargs[k.arg] = cg.visit(k.value)
    return args, kwargs


def expr_call(cg: Context, node: ast.Call) -> Any:
    func = cg.visit(node.func)
    args, kwargs = call_parts(cg, node)
    if isinstance(func, B.Builtin):
        return B.call(cg, func, args, kwargs)
    if isinstance(func, DeviceFunction):
        assert cg.device_call is not None  # (the front end gives every code generator one)
        return cg.device_call(cg, func, args, kwargs)
    if isinstance(func, Partial):  # cd.partial(f, x=...)(...) is f(..., x=...)
        assert cg.device_call is not None
        return cg.device_call(cg, func.func, args, {**dict(func.bound), **kwargs})
    if isinstance(func, BoundMethod):
        return B.call_method(cg, func.builtin, func.receiver, args, kwargs)
    if isinstance(func, (T.ScalarType, T.VectorType, T.CoopMatType, T.ArrayType)):
        return construct(cg, func, args, kwargs)
    if isinstance(func, T.StructType):
        at: dict[int | str, ast.expr] = dict(enumerate(node.args))
        at.update({k.arg: k.value for k in node.keywords if k.arg})
        return construct_struct(cg, func, args, kwargs, at)
    if func in (py_builtins.min, py_builtins.max):
        return _minmax(cg, "min" if func is py_builtins.min else "max", args, kwargs)
    if func is py_builtins.abs and (len(args) != 1 or kwargs):
        raise ArgumentError(f"abs() takes exactly one argument ({len(args) + len(kwargs)} given)", cg.em.loc)
    if func is py_builtins.abs and not arith.is_number(cg.as_operand(args[0])):
        return B.call(cg, B.BUILTINS["abs"], args, kwargs)  # FAbs / SAbs
    if func is py_builtins.float and len(args) == 1 and isinstance(args[0], str) and not kwargs:
        try:  # float("inf"), float("-inf"), float("nan"): compile-time constants
            return float(args[0])
        except ValueError:
            raise TypeMismatchError(f"float({args[0]!r}) is not a number", cg.em.loc) from None
    if func is py_builtins.int and args and isinstance(args[0], str) and not kwargs:
        shown = ", ".join(map(repr, args))   # int("12"), int("ff", 16): compile-time numbers
        try:
            return int(*args)
        except ValueError:
            base = f" in base {args[1]}" if len(args) > 1 else ""
            raise TypeMismatchError(f"int({shown}): {args[0]!r} is not a number{base}", cg.em.loc) from None
        except TypeError as e:
            raise TypeMismatchError(f"int({shown}): {e}", cg.em.loc) from None
    if func is py_builtins.len and len(args) == 1 and isinstance(getattr(args[0], "type", None), T.ArrayType):
        return length_of(cg, args[0])
    if func is py_builtins.len and len(args) == 1 and not kwargs and isinstance(args[0], BufferRef):
        return buffer_length(cg, args[0])
    if func is py_builtins.print:
        kernel_print(cg, args, kwargs)
        return None
    if func is py_builtins.len and (len(args) != 1 or kwargs):
        raise TypeMismatchError(f"len() takes exactly one argument ({len(args) + len(kwargs)} given)", cg.em.loc)
    if func is py_builtins.len and not isinstance(args[0], (bool, int, float, tuple)):
        raise TypeMismatchError(f"len() takes a compile-time list or tuple, an array (cd.array, shared, local or "
                                f"private) or a storage buffer; got {cg.describe(args[0])}", cg.em.loc)
    if func in (py_builtins.int, py_builtins.float, py_builtins.bool, py_builtins.abs, py_builtins.len):
        if kwargs or not all(isinstance(a, (bool, int, float, tuple)) for a in args):
            raise TypeMismatchError(
                f"{func.__name__}() works on compile-time values only; for runtime values use "
                f"coopdsl types (e.g. i32(x), f32(x))", cg.em.loc)
        try:
            return func(*args)
        except (TypeError, ValueError, OverflowError) as e:  # int((1.0, 2.0)), int(float("inf")), ...
            raise TypeMismatchError(f"{func.__name__}() of compile-time {', '.join(map(repr, args))}: {e}",
                                    cg.em.loc) from None
    if func is range:
        raise UnsupportedSyntaxError("range(...) can only be iterated by a for loop", cg.em.loc)
    raise TypeMismatchError(f"{cg.describe(func)} cannot be called in a kernel", cg.em.loc)


def construct(cg: Context, t: T.ScalarType | T.VectorType | T.CoopMatType | T.ArrayType, args: list[Any],
              kwargs: dict[str, Any]) -> Any:
    if kwargs:
        raise ArgumentError(f"{t}(...) takes no keyword arguments", cg.em.loc)
    if isinstance(t, T.ArrayType):
        return construct_array(cg, t, args)
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
            return arith.literal(cg.em, a, t)
        if isinstance(a, Value) and isinstance(a.type, T.ScalarType):
            return B.call_method(cg, B.TYPE_METHODS[(T.CoopMatType, "splat")], t, [a], {})
        if not isinstance(a, Value) or not isinstance(a.type, T.CoopMatType):
            raise TypeMismatchError(f"{t}(x) needs a cooperative matrix or a scalar, got {cg.describe(a)}",
                                    cg.em.loc)
        return arith.convert(cg.em, a, t)
    # vectors: one scalar (splat), or components/vectors adding up to the size
    if len(args) == 1 and isinstance(args[0], Value) and isinstance(args[0].type, T.VectorType):
        return arith.convert(cg.em, args[0], t)
    parts = []
    for a in args:
        a = arith.operand(cg.em, a, f"{t}(...)")
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
        return arith.literal(cg.em, parts[0], t)
    return cg.em.op("construct", t, values)


def construct_struct(cg: Context, t: T.StructType, args: list[Any], kwargs: dict[str, Any],
                     at: dict[int | str, ast.expr] | None = None) -> Value:
    """``S(a, b)`` / ``S(a=..., b=...)`` for a ``@cd.struct`` S, as GLSL's struct constructor: every member, in
    order or by name (OpCompositeConstruct); a number becomes a constant of its member's type (checked as a
    store checks it), a value must already have that type.  ``at``: the argument nodes, by position or
    keyword, where a member's mistake is reported."""
    names = [n for n, _ in t.members]
    if len(args) > len(names):
        raise ArgumentError(f"{t.name}(...) takes its {len(names)} members ({', '.join(names)}), got {len(args)} "
                            f"values", cg.em.loc)
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise ArgumentError(f"{t.name} has no member '{k}'; its members are {', '.join(names)}", cg.em.loc)
        if k in given:
            raise ArgumentError(f"{t.name}(...) got member '{k}' twice", cg.em.loc)
        given[k] = v
    missing = [n for n in names if n not in given]
    if missing:
        raise ArgumentError(f"{t.name}(...) needs every member (as GLSL's constructor): missing "
                            f"{', '.join(missing)}", cg.em.loc)
    values = []
    where = {**{names[i]: node for i, node in (at or {}).items() if isinstance(i, int) and i < len(names)},
             **{k: node for k, node in (at or {}).items() if isinstance(k, str)}}
    call_loc = cg.em.loc
    for n, mt in t.members:
        if n in where:
            cg.em.loc = cg.src.loc(where[n])   # (a member's mistake at its argument)
        v = cg.as_operand(given[n])
        if arith.is_number(v) and isinstance(mt, (T.ScalarType, T.VectorType)):
            v = arith.literal(cg.em, v, mt)
        if isinstance(v, Value) and isinstance(mt, (T.ArrayType, T.StructType)) and v.type != mt and \
                unlaid(v.type) == unlaid(mt):
            v = relaid(cg, v, mt)   # an array (or struct) value of the member's shape, laid out for the struct
        if not isinstance(v, Value) or v.type != mt:
            hint = f"; convert it first (e.g. {mt}(x))" if isinstance(mt, (T.ScalarType, T.VectorType)) else ""
            raise TypeMismatchError(f"member '{n}' of {t.name} is {mt}, got {cg.describe(v)}{hint}", cg.em.loc)
        values.append(v)
    cg.em.loc = call_loc
    return cg.em.op("construct", t, values)


def _minmax(cg: Context, kind: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
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
        out = B.call(cg, builtin, [out, a], {})
    return out


def expr_list(cg: Context, node: ast.List) -> tuple[Any, ...]:
    # compile-time containers are immutable tuples: element assignment rebinds the name
    return tuple(spliced(cg, node.elts))


MAX_UNROLLED = 65536  # iterations one static_range may unroll (each is compiled: a bound, not a hang)


def static_steps(args: list[int], loc: SourceLoc) -> range:
    """The values of ``static_range(*args)`` (compile-time ints), for a ``for`` loop and a list comprehension
    alike: a located error for arguments range() refuses (a step of 0, four arguments) and for more than
    :data:`MAX_UNROLLED` values (each is compiled: a bound, not a hang or a MemoryError)."""
    try:
        steps = range(*args)
    except (TypeError, ValueError) as e:  # static_range(0, 4, 0), static_range(1, 2, 3, 4)
        raise TypeMismatchError(f"static_range{tuple(args)}: {e}", loc) from None
    count = max(0, (steps.stop - steps.start + steps.step - (1 if steps.step > 0 else -1)) // steps.step)
    if count > MAX_UNROLLED:   # (len() of a range past sys.maxsize is an OverflowError)
        raise ArgumentError(f"static_range{tuple(args)} unrolls {count} iterations; at most {MAX_UNROLLED} "
                            f"(each is compiled: use range(...) or cd.range(...) for a runtime loop)", loc)
    return steps


def expr_listcomp(cg: Context, node: ast.ListComp) -> tuple[Any, ...]:
    """``[e for i in static_range(n)]`` (or range/tuple with compile-time values), evaluated while compiling."""
    gen = node.generators[0]
    if len(node.generators) != 1 or gen.ifs or not isinstance(gen.target, ast.Name):
        raise UnsupportedSyntaxError("list comprehensions take one 'for name in ...' clause and no 'if'", cg.em.loc)
    name = gen.target.id
    it = gen.iter
    if isinstance(it, ast.Call):
        func = cg.visit(it.func)
        args, kwargs = call_parts(cg, it)
        if (func is range or func is B.BUILTINS["static_range"]) and not kwargs and \
                all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            items = static_steps(args, cg.src.loc(it))   # (the for loop's rules: step 0, the unroll limit)
        else:
            raise UnsupportedSyntaxError("a list comprehension must iterate over static_range(...) or range(...) "
                                         "with compile-time integers", cg.src.loc(it))
    else:
        items = cg.visit(it)
        if not isinstance(items, tuple):
            raise UnsupportedSyntaxError("a list comprehension must iterate over a compile-time sequence",
                                         cg.src.loc(it))
    out = []
    outer = cg.comprehension.get(name, _NOT_BOUND)
    try:   # the name is the comprehension's own: the body's (or a global) is untouched, as in Python 3
        for v in items:
            cg.comprehension[name] = cg.as_runtime(v) if isinstance(v, BuiltinVar) else v
            out.append(cg.visit(node.elt))
    finally:
        if outer is _NOT_BOUND:
            cg.comprehension.pop(name, None)
        else:
            cg.comprehension[name] = outer
    return tuple(out)


_NOT_BOUND = object()
