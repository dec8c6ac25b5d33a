"""Device functions (``@coopdsl.func``): compiled once per argument signature to a real
OpFunction and called with OpFunctionCall.

Runtime arguments (scalars, vectors, cooperative matrices) become
OpFunctionParameters; compile-time arguments (numbers, types, buffers, shared
arrays, tuples) are baked into the specialisation, like C++ template
arguments.  The return type is the type of the values the function returns;
every ``return`` must agree.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, CompileError, SourceLoc, TypeMismatchError, UnsupportedSyntaxError
from ..ir import types as T
from ..ir.core import FuncRef, Function, Module, Op, Param, SpecConst, SpecOp, Value, dim_of
from ..lang import arith
from ..lang.types import BufferParam, ConstParam, PushParam, SpecParam
from ..lang.values import BufferRef
from .calls import construct
from .captures import Captured, capture, check_memory_argument
from .codegen import CodeGen
from .source import Source, parse_function

if TYPE_CHECKING:
    from ..lang.functions import DeviceFunction
    from .context import Context

_compiling: list[DeviceFunction] = []  # device functions being compiled (to catch recursion)


class HelperGen(CodeGen):
    """Code generation of one specialisation of a device function."""

    def __init__(self, dfn: DeviceFunction, src: Source, module: Module, func: Function,
                 bindings: dict[str, Any]) -> None:
        super().__init__(dfn.fn, src, module, func, device_call=call, operand_compiler=function_operand)
        self.bindings = bindings
        self.returns: list[tuple[Op, Any]] = []   # (the return, its value: a Value, a number, a tuple or None)

    def run_helper(self) -> None:
        entry = self.em.new_block("entry")
        self.em.start(entry)
        for name, value in self.bindings.items():
            if isinstance(value, Captured):
                value = value.materialize(self.em)
            self.ssa.write(name, entry, value)
        self.locals |= set(self.bindings)
        self.body(self.src.tree.body)
        if self.em.block is not None:
            self.stmt_return(ast.Return(value=None))
        self._finish_returns()

    def stmt_return(self, node: ast.Return) -> None:
        value: Any = None if node.value is None else self.visit(node.value)
        if isinstance(value, tuple):   # several values: one struct, unpacked at the call into a tuple
            value = tuple(self.as_operand(v) for v in value)
            if not value or any(not isinstance(v, (Value, bool, int, float)) for v in value):
                raise TypeMismatchError(f"a device function returns a tuple of runtime values or numbers, not "
                                        f"{self.describe(value)}", self.em.loc)
        elif value is not None:
            value = self.as_operand(value)
            if not isinstance(value, (Value, bool, int, float)):
                raise TypeMismatchError(f"a device function returns runtime values or numbers, or a tuple of "
                                        f"them, not {self.describe(value)}", self.em.loc)
        block = self.em.current
        self.em.terminate("return")
        self.returns.append((block.last_op, value))

    def _finish_tuple_returns(self) -> T.StructType:
        """Every ``return`` gives a tuple of the same length: each position takes the type of its first runtime
        value (a number's default type where every return gives a number there); a struct of them is built
        before each return, and :func:`call` unpacks it into a tuple of values."""
        counts = {len(v) if isinstance(v, tuple) else None for _, v in self.returns}
        if len(counts) != 1:
            n = next(len(v) for _, v in self.returns if isinstance(v, tuple))   # (the first tuple returned)
            op, other = next((op, v) for op, v in self.returns if not isinstance(v, tuple) or len(v) != n)
            what = ("nothing" if other is None else f"a tuple of {len(other)} values" if isinstance(other, tuple)
                    else self.describe(other))
            raise TypeMismatchError(f"{self.fn.__name__} returns a tuple of {n} values on one path and {what} on "
                                    f"another", op.loc)
        n = len(self.returns[0][1])
        types: list[T.Type] = []
        for i in range(n):
            given = [v[i] for _, v in self.returns if isinstance(v[i], Value)]
            types.append(given[0].type if given else arith.default_type(self.returns[0][1][i]))
        for op, values in self.returns:
            parts = []
            for i, (v, t) in enumerate(zip(values, types)):
                if not isinstance(v, Value):
                    prev, self.em.loc = self.em.loc, op.loc
                    v = self.em.literal(v, t)
                    self.em.loc = prev
                if v.type != t:
                    raise TypeMismatchError(f"{self.fn.__name__} returns {t} as value {i} of its tuple on one path "
                                            f"and {v.type} on another", op.loc)
                parts.append(v)
            struct = T.StructType(f"{self.fn.__name__}_values", tuple((f"v{i}", t) for i, t in enumerate(types)))
            block = op.block
            assert block is not None   # (a return terminates its block)
            build = Op("construct", struct, parts, op.loc)
            build.block = block
            block.ops.append(build)   # (the return is the block's terminator: the struct comes just before it)
            op.operands = [build]
        return struct

    def _finish_returns(self) -> None:
        # (a return inside a loop may hold a phi the loop's end found trivial and removed)
        self.returns = [(op, self.ssa.resolve(v)) for op, v in self.returns]
        if any(isinstance(v, tuple) for _, v in self.returns):
            ret_struct = self._finish_tuple_returns()
            f = self.em.func
            f.type = T.FunctionType(ret_struct, tuple(p.type for p in f.params))
            f.returns_tuple = True
            return
        typed = [v for _, v in self.returns if isinstance(v, Value)]
        nones = [op for op, v in self.returns if v is None]
        if nones and len(nones) != len(self.returns):
            raise CompileError(f"{self.fn.__name__} returns a value on some paths and nothing on others",
                               nones[0].loc)
        ret: T.Type
        if nones:
            ret = T.void
        else:
            ret = typed[0].type if typed else arith.default_type(self.returns[0][1])
        for op, v in self.returns:
            if v is None:
                continue
            if not isinstance(v, Value):
                prev, self.em.loc = self.em.loc, op.loc
                v = self.em.literal(v, ret)
                self.em.loc = prev
            if v.type != ret:
                raise TypeMismatchError(f"{self.fn.__name__} returns {ret} on one path and {v.type} on another",
                                        op.loc)
            op.operands = [v]
        f = self.em.func
        f.type = T.FunctionType(ret, tuple(p.type for p in f.params))



def _is_runtime(v: object) -> bool:
    """Runtime arguments become parameters; specialization constants stay module-level constants
    (so a ``Spec`` passed to a device function can size its matrices there)."""
    return isinstance(v, Value) and not isinstance(v, (SpecConst, SpecOp))


def _signature_part(v: Any) -> tuple[Any, ...]:
    if isinstance(v, (SpecConst, SpecOp)):
        return ("spec", dim_of(v))
    if isinstance(v, Value):
        return ("value", v.type)
    if isinstance(v, BufferRef):
        return ("memory", id(v.var))
    if isinstance(v, Captured):
        return ("captured", v.key)
    if isinstance(v, (bool, int, float, str, T.Type)) or v is None:
        return ("const", type(v).__name__, v)
    if isinstance(v, tuple):
        return ("tuple", tuple(_signature_part(x) for x in v))
    return ("object", id(v))


def call(cg: Context, dfn: DeviceFunction, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Emit a call of device function ``dfn``; returns its result (None for void)."""
    sig = inspect.signature(dfn.fn)
    takes_any = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    unknown = [k for k in kwargs if k not in sig.parameters or
               sig.parameters[k].kind == inspect.Parameter.POSITIONAL_ONLY]
    if unknown and not takes_any:   # (said first: Python's bind would report a missing argument instead)
        raise ArgumentError(f"{dfn.fn.__name__}(): unexpected keyword argument '{unknown[0]}'; its parameters are "
                            f"{', '.join(sig.parameters) or 'none'}", cg.em.loc)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentError(f"{dfn.fn.__name__}(): {e}", cg.em.loc) from None
    given = set(bound.arguments)
    bound.apply_defaults()
    for k in set(bound.arguments) - given:   # a default is a Python value, taken as a global is (numpy scalars too)
        if sig.parameters[k].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            bound.arguments[k] = cg.classify_global(k, bound.arguments[k], f"the default of {dfn.fn.__name__}()'s "
                                                                           f"parameter")
    values = {k: cg.as_operand(v) for k, v in bound.arguments.items()}
    try:   # (mistakes of the def itself are located there; the message names this call)
        _check_signature(dfn)
        values = _annotated(cg, dfn, values, set(bound.arguments) - given)
    except CompileError as e:
        _note_call(cg, dfn, values, e)
        raise
    for name, v in values.items():
        if isinstance(v, tuple) and any(isinstance(x, Value) for x in _flat(v)):
            if sig.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL:
                raise TypeMismatchError(f"{dfn.fn.__name__}(): '*{name}' collects its arguments into a tuple, and a "
                                        f"device function takes runtime values one parameter each; name the "
                                        f"parameters", cg.em.loc)
            raise TypeMismatchError(f"{dfn.fn.__name__}(): argument '{name}' is a tuple or list holding runtime "
                                    f"values; pass its elements as separate arguments", cg.em.loc)
    for name, v in values.items():
        check_memory_argument(cg, f"{dfn.fn.__name__}(): argument '{name}'", v)
    if dfn in _compiling:
        chain = [f.fn.__name__ for f in _compiling[_compiling.index(dfn) + 1:]]
        through = f" through {' -> '.join(chain)}" if chain else ""
        raise UnsupportedSyntaxError(f"{dfn.fn.__name__} calls itself{through} (recursion is not supported on "
                                     f"GPUs)", cg.em.loc)
    key = (dfn, tuple((k, _signature_part(v)) for k, v in values.items()))
    func = cg.module.helpers.get(key)
    if func is None:
        try:
            func = _compile(cg.module, dfn, values, key)
        except CompileError as e:
            _note_call(cg, dfn, values, e)
            raise
    runtime_args = [v for v in values.values() if _is_runtime(v)]
    return_type = func.type.ret
    want = _annotations(dfn).get("return")
    if isinstance(want, (T.ScalarType, T.VectorType, T.CoopMatType)) and return_type != want:
        what = "nothing" if return_type is T.void else \
            f"a tuple of {len(return_type.members)} values ({', '.join(str(t) for _, t in return_type.members)})" \
            if func.returns_tuple and isinstance(return_type, T.StructType) else str(return_type)
        returns = [op.loc for op in func.ops() if op.kind == "return" and op.loc is not None]
        raise TypeMismatchError(f"{dfn.fn.__name__}() returns {what}, but is annotated -> {want}",
                                returns[0] if returns else func.loc or cg.em.loc)
    result = cg.em.op("call", return_type, runtime_args, func=func)
    if func.returns_tuple:   # several values returned: a tuple of them
        assert isinstance(return_type, T.StructType)
        return tuple(cg.em.op("extract", t, [result], index=i) for i, (_, t) in enumerate(return_type.members))
    return None if return_type is T.void else result


def _note_call(cg: Context, dfn: DeviceFunction, values: dict[str, Any], e: CompileError) -> None:
    """An error inside a device function's body names the call that compiled it (the innermost one: a generic
    helper's mistake may be its caller's arguments), as "in f(f32, u32), called at file:line:col"; for a
    callback, the instruction's call (m.map, m.reduce, load_tensor's decode=) that passes its arguments."""
    if getattr(e, "coopdsl_call_noted", False) or e.loc == cg.em.loc:
        return
    args = ", ".join(str(v.type) if isinstance(v, Value) else repr(v) if isinstance(v, (bool, int, float))
                     else cg.describe(v) for v in values.values())
    e.message += f" (in {dfn.fn.__name__}({args}), called at {cg.em.loc})"
    e.args = (e.message,)
    e.coopdsl_call_noted = True   # type: ignore[attr-defined]


def _annotations(dfn: DeviceFunction) -> dict[str, Any]:
    """The parameter and return annotations of ``dfn`` that name coopdsl value types or parameter kinds
    (``Const[...]``, ``Buffer[...]``, ``Spec[...]``, ``Push[...]``); others (Python types) are ignored."""
    cached: dict[str, Any] | None = dfn.__dict__.get("_coopdsl_annotations")
    if cached is not None:
        return cached
    out: dict[str, Any] = {}
    for name, ann in getattr(dfn.fn, "__annotations__", {}).items():
        if isinstance(ann, str):
            try:
                ann = eval(ann, dfn.fn.__globals__, {})  # noqa: S307 - the user's own annotation
            except Exception:
                continue
        if isinstance(ann, (T.ScalarType, T.VectorType, T.CoopMatType, T.StructType, T.ArrayType, ConstParam,
                            BufferParam, SpecParam, PushParam)):
            out[name] = ann   # (structs and arrays: only a tuple given for them is refused, at the call)
    dfn.__dict__["_coopdsl_annotations"] = out
    return out


def _parameter_nodes(src: Source) -> dict[str, tuple[ast.arg, ast.expr | None]]:
    """Each parameter of the parsed ``def``: its node and its default's (None without one)."""
    a = src.tree.args
    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = {p.arg: (p, d) for p, d in zip(positional, defaults)}
    out.update((p.arg, (p, d)) for p, d in zip(a.kwonlyargs, a.kw_defaults))
    return out


def _check_signature(dfn: DeviceFunction) -> None:
    """Mistakes in a device function's own ``def``, located there: ``**kw`` (keywords would be collected into a
    dict the body cannot use) and parameters annotated ``Spec[...]`` or ``Push[...]`` (kernel parameters)."""
    src = parse_function(dfn.fn)
    name = dfn.fn.__name__
    kwarg = src.tree.args.kwarg
    if kwarg is not None:
        at = src.loc(kwarg)   # (the name's column: the mark goes to its '**')
        stars = at.source_line().rfind("**", 0, at.col - 1)
        raise UnsupportedSyntaxError(f"{name}(): '**{kwarg.arg}' would collect keyword arguments into a dict, "
                                     f"which a device function does not take; name the parameters",
                                     SourceLoc(at.file, at.line, stars + 1) if stars >= 0 else at)
    nodes = _parameter_nodes(src)
    for pname, ann in _annotations(dfn).items():
        if isinstance(ann, (SpecParam, PushParam)) and pname in nodes:
            kind = "Spec" if isinstance(ann, SpecParam) else "Push"
            raise TypeMismatchError(f"{name}(): parameter '{pname}': {kind}[{ann.type}] declares a kernel "
                                    f"parameter; a device function's parameter takes a value: annotate it "
                                    f"{ann.type}", src.loc(nodes[pname][0]))


def _check_kind(cg: Context, dfn: DeviceFunction, name: str, ann: Any, v: Any) -> None:
    """An argument against a parameter annotated with a kernel parameter's kind: ``Const[T]`` takes a
    compile-time value (of T), ``Buffer[E]`` a buffer of E (``Spec[...]`` and ``Push[...]``, kernel parameters
    only, are refused at the def: :func:`_check_signature`)."""
    where = f"{dfn.fn.__name__}(): argument '{name}'"
    if isinstance(ann, ConstParam):
        want = ann.type
        if isinstance(v, Value) or not ann.accepts(v):
            kind = f"Const[{want.__name__}]" if want is not None else "Const"
            need = f"a compile-time {want.__name__}" if want is not None else "a compile-time value"
            raise TypeMismatchError(f"{where} is {kind} and needs {need}, got {cg.describe(v)}", cg.em.loc)
    elif isinstance(ann, BufferParam):
        if not isinstance(v, BufferRef) or v.elem != ann.elem:
            of = f" of {v.elem}" if isinstance(v, BufferRef) else ""
            raise TypeMismatchError(f"{where} is annotated Buffer[{ann.elem}], got {cg.describe(v)}{of}", cg.em.loc)


def _annotated(cg: Context, dfn: DeviceFunction, values: dict[str, Any], defaulted: set[str]) -> dict[str, Any]:
    """Arguments checked against the parameters' coopdsl type annotations (``def f(x: f32)``): a Python
    number takes the annotated type; a runtime value of another type is a located error, as a typed
    parameter is in GLSL, HLSL and Slang (before, annotations were ignored).  A default (the ``defaulted``
    parameters) that does not fit its type is located at the default, in the ``def``."""
    anns = _annotations(dfn)
    if not anns:
        return values
    out = dict(values)
    for name, t in anns.items():
        if name not in values or name == "return":
            continue
        v = values[name]
        if isinstance(t, (ConstParam, BufferParam, SpecParam, PushParam)):
            _check_kind(cg, dfn, name, t, v)
        elif isinstance(v, (bool, int, float)) and not isinstance(t, T.CoopMatType):
            src = parse_function(dfn.fn) if name in defaulted else None
            default = _parameter_nodes(src).get(name, (None, None))[1] if src is not None else None
            prev = cg.em.loc
            if src is not None and default is not None:
                cg.em.loc = src.loc(default)
            try:
                out[name] = cg.em.literal(v, t)
            except TypeMismatchError as e:
                if default is None:
                    raise
                raise TypeMismatchError(f"{dfn.fn.__name__}(): the default of parameter '{name}': {e.message}",
                                        e.loc) from None
            finally:
                cg.em.loc = prev
        elif isinstance(v, tuple) and isinstance(t, T.VectorType) and len(v) == t.count:
            out[name] = construct(cg, t, list(v), {})   # (1.0, 2.0, x) for a vec3[f32]: as vec3[f32](1.0, 2.0, x)
        elif isinstance(v, tuple):
            build = f"; build it: {t.name}(...)" if isinstance(t, T.StructType) else \
                f"; build it: {t}(...)" if isinstance(t, T.ArrayType) else ""
            raise TypeMismatchError(f"{dfn.fn.__name__}(): argument '{name}' is {cg.describe(v)}, but the parameter "
                                    f"is annotated {t.name if isinstance(t, T.StructType) else t}{build}", cg.em.loc)
        elif isinstance(t, (T.StructType, T.ArrayType)):
            continue   # (a value: its layout may differ from the annotation's; the body takes it as it comes)
        elif isinstance(v, Value) and v.type != t:
            raise TypeMismatchError(f"{dfn.fn.__name__}(): argument '{name}' is {cg.describe(v)}, but the parameter "
                                    f"is annotated {t}; convert it ({t}(x))", cg.em.loc)
    return out


def _flat(t: tuple[Any, ...]) -> Iterator[Any]:
    for x in t:
        if isinstance(x, tuple):
            yield from _flat(x)
        else:
            yield x


def compile_function(module: Module, dfn: DeviceFunction, param_types: dict[str, T.Type],
                     consts: dict[str, Any] | None = None) -> Function:
    """Compile device function ``dfn`` for runtime parameters of ``param_types`` (by name) without a call site.

    ``consts`` binds its compile-time parameters.  This is how a function
    becomes an operand (the callback of a reduction, a per-element operation
    or a decoder): the caller refers to the returned function with a
    :class:`~coopdsl.ir.core.FuncRef`.  The same signature gives the same function.
    """
    _check_signature(dfn)
    sig = inspect.signature(dfn.fn)
    values: dict[str, Any] = {}
    for name, p in sig.parameters.items():
        if name in param_types:
            values[name] = Param(param_types[name], name)
        elif consts is not None and name in consts:
            values[name] = consts[name]
        elif p.default is not inspect.Parameter.empty:
            values[name] = p.default
        else:
            raise ArgumentError(f"{dfn.fn.__name__}: no type or value for parameter '{name}'")
    key = (dfn, tuple((k, _signature_part(v)) for k, v in values.items()))
    func = module.helpers.get(key)
    return func if func is not None else _compile(module, dfn, values, key)


def _compile(module: Module, dfn: DeviceFunction, values: dict[str, Any], key: tuple[Any, ...]) -> Function:
    src = parse_function(dfn.fn)
    params: list[Param] = []
    bindings: dict[str, Any] = {}
    for name, v in values.items():
        if _is_runtime(v):
            p = Param(v.type, name)
            params.append(p)
            bindings[name] = p
        else:
            bindings[name] = v
    n = sum(1 for k in module.helpers if k[0] is dfn)
    func = Function(dfn.fn.__name__ if n == 0 else f"{dfn.fn.__name__}_{n}", T.FunctionType(T.void, ()), params,
                    loc=src.loc(src.tree))
    module.helpers[key] = func
    _compiling.append(dfn)
    try:
        gen = HelperGen(dfn, src, module, func, bindings)
        gen.run_helper()
    finally:
        _compiling.pop()
    return func


def function_operand(cg: Context, dfn: DeviceFunction, param_types: Sequence[T.Type],
                     consts: dict[str, Any] | None = None) -> FuncRef:
    """``dfn`` compiled with its leading parameters of ``param_types`` (in order) and the rest bound to
    ``consts`` (captured as :mod:`.captures` describes), as an operand naming the function."""
    names = list(inspect.signature(dfn.fn).parameters)
    if len(names) < len(param_types):
        raise ArgumentError(f"{dfn.fn.__name__} takes {len(names)} parameters, {len(param_types)} are passed")
    bound = {name: capture(cg, name, v) for name, v in (consts or {}).items()}
    passed = dict(zip(names, param_types))
    try:
        return FuncRef(compile_function(cg.module, dfn, passed, bound))
    except CompileError as e:   # (what the instruction passes may be the mistake: name the call that passes it)
        values: dict[str, Any] = {name: Param(t, name) for name, t in passed.items()}
        values.update((name, v.value if isinstance(v, Captured) else v) for name, v in bound.items())
        _note_call(cg, dfn, values, e)
        raise
