"""The code generator's state and the services every construct uses.

:class:`Context` holds the kernel being compiled (function, emitter, SSA
builder, loop stack, names in scope) and the choke point :meth:`Context.visit`:
it stamps the location of the node being compiled on everything emitted
beneath it, dispatches through the ``STATEMENTS`` / ``EXPRESSIONS`` tables of
the concrete code generator (the supported Python subset is exactly their
keys), gives a location-less user error the node's location, and turns any
unexpected exception into an :class:`InternalCompilerError` naming the
user's line.  Its public helper methods are the narrow interface builtins in
``coopdsl.lang`` receive (:class:`coopdsl.lang.context.Builder`).
"""

from __future__ import annotations

import ast
import builtins as py_builtins
import enum
import types as py_types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import (
    UNKNOWN_LOC,
    CompileError,
    CoopDSLError,
    InternalCompilerError,
    NameResolutionError,
    SourceLoc,
    TypeMismatchError,
    UnsupportedSyntaxError,
    with_article,
)
from ..ir import types as T
from ..ir.builder import Emitter
from ..ir.core import Block, FuncRef, Function, GlobalVar, Module, Op, Value
from ..ir.literals import python_value
from ..ir.vocab import StorageClass
from ..lang.arith import index_literal
from ..lang.arrays import known_index
from ..lang.types import CoopMatFamily, Enumerant
from ..lang.values import BufferRef, BuiltinVar
from .source import Source
from .ssa import SSA, Undefined

if TYPE_CHECKING:
    from ..lang.functions import DeviceFunction


class Context:
    """State and services of one function's code generation (see the module docstring)."""

    STATEMENTS: ClassVar[dict[type, Any]] = {}
    EXPRESSIONS: ClassVar[dict[type, Any]] = {}
    _handler_table: ClassVar[dict[type, Any]]  # node type -> handler, made once per class (see _handlers)

    def __init__(self, fn: Callable[..., Any], src: Source, module: Module, func: Function | None = None,
                 device_call: Callable[[Context, DeviceFunction, list[Any], dict[str, Any]], Any] | None = None,
                 operand_compiler: Callable[[Context, DeviceFunction, Sequence[T.Type], dict[str, Any] | None],
                                            FuncRef] | None = None) -> None:
        self.fn = fn
        self.src = src
        self.module = module
        if func is None:
            func = Function(src.tree.name, T.FunctionType(T.void, ()), [], is_entry=True, loc=src.loc(src.tree))
        module.functions.append(func)
        self.em = NodeLocEmitter(module, func, src)
        self.ssa = SSA(self.em)
        self.loops: list[tuple[Block, Block] | None] = []  # (continue block, merge block); None: static_range
        self.written = module.written_buffers
        self.scope = _closure_vars(fn)
        self.locals = set(src.body_names())
        self.comprehension: dict[str, Any] = {}   # the names list comprehensions bind while their element is compiled
        self._globals_seen: dict[str, object] = {}  # global or closure name -> what lookup() made of it
        # id(buffer) -> (buffer, access prefix, element pointer type)
        self._access_parts: dict[int, tuple[BufferRef, list[Value], T.PointerType]] = {}
        self._handler_of = type(self)._handlers().get  # node type -> handler, looked up once per node
        self._iv = 0
        # kernel parameter name -> (the value it holds on entry, what it is): a uniform block or push constant,
        # read-only (its members are not assigned while the name still holds it)
        self.read_only: dict[str, tuple[Value, str]] = {}
        # id -> the tuple a tuple display ``(a, b)`` made (kept alive): its items are not assigned, as in Python
        self.tuple_displays: dict[int, tuple[Any, ...]] = {}
        self.device_call = device_call  # compiles and calls a @cd.func (injected by the front end)
        self.operand_compiler = operand_compiler  # compiles a @cd.func as an operand (likewise)


    # -- the choke point --------------------------------------------------------------
    def visit(self, node: ast.AST) -> Any:
        handler = self._handler_of(type(node))
        if handler is None:
            raise UnsupportedSyntaxError(f"{describe_node(node)} is not supported in coopdsl kernels",
                                         self.src.loc(node))
        em = self.em
        prev = em.node, em.known_loc
        em.node, em.known_loc = node, None  # the node's location is made when something reads em.loc
        try:
            return handler(self, node)
        except CompileError as e:
            if e.loc == UNKNOWN_LOC:  # raised where no location was known: this node is the best one
                e.loc = em.loc
            raise
        except CoopDSLError:
            raise
        except RecursionError:
            raise UnsupportedSyntaxError("expression nested too deeply", em.loc) from None
        except Exception as e:  # a bug in coopdsl, reported with the user's line
            raise InternalCompilerError(f"{type(e).__name__}: {e}", em.loc) from e
        finally:
            em.node, em.known_loc = prev

    @classmethod
    def _handlers(cls) -> dict[type, Callable[..., Any]]:
        """Node type -> handler(self, node): the statement methods (as this class defines them) and the
        expression functions; built once per class."""
        table = cls.__dict__.get("_handler_table")
        if table is None:
            table = dict(cls.EXPRESSIONS)
            table.update({t: getattr(cls, fn.__name__) for t, fn in cls.STATEMENTS.items()})
            cls._handler_table = table
        return table

    def body(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if self.em.block is None:
                return  # the rest is unreachable (after return/break/continue)
            self.visit(s)

    # -- names ------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Any:
        if name in self.comprehension:   # (inside a comprehension its target hides the body's name)
            return self.comprehension[name]
        if name in self.locals:
            block = self.em.block
            if block is None:
                raise InternalCompilerError("reading a variable in unreachable code", self.em.loc)
            value = self.ssa.read(name, block)
            if not isinstance(value, Undefined):
                return value
            if name not in self.src.element_only_names():
                raise NameResolutionError(f"'{name}' may be used before it is assigned", self.em.loc)
            # bound only by element assignments (f32[i] = x): as in Python, the name is still the global one
        found = self._globals_seen.get(name, _UNSEEN)  # (closures and globals hold still while compiling)
        if found is not _UNSEEN:
            return found
        if name in self.scope:
            found = self.classify_global(name, self.scope[name], "closure variable")
        elif name in self.fn.__globals__:
            found = self.classify_global(name, self.fn.__globals__[name])
        elif name in PY_BUILTINS:
            return PY_BUILTINS[name]
        else:
            raise NameResolutionError(f"name '{name}' is not defined", self.em.loc)
        self._globals_seen[name] = found
        return found

    def classify_global(self, name: str, value: Any, kind: str = "global") -> Any:
        """What a kernel sees of a global (or closure, ``kind``) value: numbers, strings, None, modules and coopdsl
        objects as they are; tuples and lists of those (nested too) as tuples, as the same tuple written in the
        kernel would be; anything else is refused at its first use."""
        if isinstance(value, py_types.ModuleType) or isinstance(value, type) and issubclass(value, enum.Enum):
            return value   # (a module or an enum: a namespace its attributes are read from)
        frozen = _frozen(value)
        if frozen is not _UNSEEN:
            return frozen
        if isinstance(value, py_types.FunctionType):   # a helper the kernel meant to call on the device
            raise NameResolutionError(f"{kind} '{name}' is a plain Python function, which kernels cannot call; "
                                      f"decorate it with @cd.func to make it a device function", self.em.loc)
        what = with_article(type(value).__name__)
        if isinstance(value, (tuple, list)):   # the element that is not a constant, however deep
            path, bad = _unusable_element(value)
            what += f" whose element {path} is {with_article(type(bad).__name__)}"
        raise NameResolutionError(
            f"{kind} '{name}' is {what}, which kernels cannot use "
            f"(use numbers, strings, coopdsl types and builtins, and tuples or lists of them)", self.em.loc)

    def assign(self, name: str, value: Any) -> None:
        if isinstance(value, BuiltinVar):
            value = self.as_runtime(value)
        if isinstance(value, BufferRef) and isinstance(value.var, GlobalVar) and (
                value.storage == StorageClass.Workgroup and value.name.startswith("shared")
                or value.storage == StorageClass.Private and value.name.startswith("private")):
            value.name = value.var.name = name  # name shared and private arrays after their variable
        elif isinstance(value, BufferRef) and value.storage == StorageClass.Function and value.name == "local":
            value.name = name
            if isinstance(value.var, Op):   # (the interpreter's reports name a local array by it)
                value.var.attrs.setdefault("array_name", name)
        if self.em.block is not None:  # values bound in unreachable code are never read
            self.ssa.write(name, self.em.block, value)

    # -- helpers builtins use -------------------------------------------------------------
    def as_runtime(self, v: Any) -> Value:
        if isinstance(v, BuiltinVar):
            return self.load_builtin(v)
        if isinstance(v, Value):
            return v
        raise TypeMismatchError(f"expected a runtime value, got {self.describe(v)}", self.em.loc)

    def as_operand(self, v: Any) -> Any:
        """A value usable in arithmetic: IR values and Python numbers."""
        if isinstance(v, BuiltinVar):
            return self.load_builtin(v)
        return v

    def as_index(self, v: Any, what: str) -> Value:
        v = self.as_operand(v)
        if isinstance(v, bool) or isinstance(v, float):
            raise TypeMismatchError(f"{what} must be an integer, got {v!r}", self.em.loc)
        if isinstance(v, int):
            return index_literal(self.em, v)
        if not isinstance(v, Value) or not (isinstance(v.type, T.ScalarType) and v.type.is_int):
            raise TypeMismatchError(f"{what} must be an integer, got {self.describe(v)}", self.em.loc)
        return v

    def compile_time(self, v: Any, what: str, kind: type) -> Any:
        if not isinstance(v, kind):
            raise TypeMismatchError(f"{what} must be a compile-time {kind.__name__}, got {self.describe(v)}",
                                    self.em.loc)
        return v

    def describe(self, v: Any) -> str:
        """How an error message names ``v``, in the words kernels are written in."""
        if isinstance(v, Value):
            return f"a runtime {v.type}"
        if isinstance(v, BufferRef):
            return f"{v.kind} '{v.name}'"
        if isinstance(v, BuiltinVar):
            return f"coopdsl.{v.name} ({v.type})"
        if isinstance(v, bool):
            return f"the bool {v}"
        if isinstance(v, (int, float)):
            return f"the number {v!r}"
        if isinstance(v, str):
            return f"the string {v!r}"
        if isinstance(v, T.Type):
            return f"the type {v}"
        if isinstance(v, Enumerant):
            return f"coopdsl.{v!r}"
        if isinstance(v, CoopMatFamily):
            return f"the matrix type {v.name} (without [component, rows, cols])"
        if isinstance(v, tuple):
            return f"a compile-time tuple of {len(v)}"
        if v is None:
            return "None (what a call of a function that returns nothing gives)"
        return f"{type(v).__name__} {v!r}"

    def load_builtin(self, b: BuiltinVar) -> Value:
        var = self.module_builtin(b)
        return self.em.op("load", b.type, [var])

    def module_builtin(self, b: BuiltinVar) -> GlobalVar:
        for g in self.module.globals:
            if g.role == "builtin" and g.info["builtin"] == b.spirv:
                return g
        g = GlobalVar(T.PointerType(b.type, StorageClass.Input), b.name, "builtin", builtin=b.spirv)
        self.module.globals.append(g)
        return g

    def element_pointer(self, buf: BufferRef, index: Any) -> Value:
        known = known_index(index)
        if known is not None:
            # (a length that is a specialization constant is not checked at its values: a branch on the
            # constants, which the compiler keeps, may guard the index, as 'if i < N: r[i]' in an unrolled loop)
            length = buf.length if isinstance(buf.length, int) else None
            if known < 0 or length is not None and known >= length:
                size = f" of {length} elements" if length is not None else ""
                derived = not isinstance(buf.var, GlobalVar) and getattr(buf.var, "kind", None) != "variable"
                what = f"an array member in {buf.kind} '{buf.name}'" if derived else f"{buf.kind} '{buf.name}'"
                raise TypeMismatchError(f"index {known} is out of bounds for {what}{size} "
                                        f"(indices count from 0; Python's negative indices are not supported)",
                                        self.em.loc)
        if isinstance(index, Value) and isinstance(index.type, T.ScalarType) and index.type.is_int:
            idx = index  # (what as_index() returns for it, without making its message)
        elif type(index) is int:
            idx = index_literal(self.em, index)  # (likewise)
        else:
            idx = self.as_index(index, f"a {buf.kind} index")
        made = self._access_parts.get(id(buf))
        if made is None or made[0] is not buf:  # the chain's prefix and the element pointer type, once per buffer
            made = self._access_parts[id(buf)] = (buf, [self.em.const(T.u32, i) for i in buf.prefix],
                                                  T.PointerType(buf.elem, StorageClass(buf.storage)))
        _, prefix, ptr = made
        return self.em.op("access", ptr, [buf.var, *prefix, idx])

    def function_variable(self, ptr: T.PointerType) -> Op:
        """An OpVariable in Function storage; SPIR-V wants these first in the entry block."""
        return self.em.function_variable(ptr)

    def note_buffer_write(self, buf: BufferRef) -> None:
        self.written.add(buf.name)

    def function_operand(self, dfn: Any, param_types: Sequence[T.Type],
                         consts: dict[str, Any] | None = None) -> FuncRef:
        """``dfn`` compiled for leading parameters of ``param_types``, the others bound to ``consts``."""
        if self.operand_compiler is None:
            raise InternalCompilerError("functions as operands need the front end's operand compiler", self.em.loc)
        return self.operand_compiler(self, dfn, param_types, consts)

    def condition(self, node: ast.AST) -> Value | bool:
        c = self.as_operand(self.visit(node))
        if isinstance(c, (bool, int, float)):
            return bool(c)
        if not isinstance(c, Value) or c.type is not T.boolean and c.type != T.boolean:
            if isinstance(c, Value) and isinstance(c.type, T.VectorType) and T.elem_of(c.type) == T.boolean:
                hint = ("a vector of bools chooses per component with cd.select(cond, a, b) (GLSL's mix with a "
                        "bvec); cd.any(c) or cd.all(c) make one bool of it")
            else:
                hint = "compare explicitly (e.g. x != 0)"
            raise TypeMismatchError(f"a condition must be a bool, got {self.describe(c)}; {hint}", self.src.loc(node))
        return c


class NodeLocEmitter(Emitter):
    """The front end's Emitter: ``loc``, stamped on every op, is the location of the AST node being
    compiled (``node``), made only when read; most nodes emit no op, and making a location for every
    node visited cost a fifth of the front end.  Assigning ``loc`` sets it outright."""

    def __init__(self, module: Module, func: Function, src: Source):
        self.src = src
        self.node: ast.AST = src.tree
        self.known_loc: SourceLoc | None = None
        super().__init__(module, func, src.loc(src.tree))

    @property
    def loc(self) -> SourceLoc:
        if self.known_loc is None:
            self.known_loc = self.src.loc(self.node)
        return self.known_loc

    @loc.setter
    def loc(self, value: SourceLoc) -> None:
        self.known_loc = value


def describe_node(node: ast.AST) -> str:
    names = {
        ast.Lambda: "lambda", ast.ListComp: "a list comprehension", ast.DictComp: "a dict comprehension",
        ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator expression",
        ast.With: "'with'", ast.Try: "'try'", ast.Raise: "'raise'", ast.Global: "'global'",
        ast.Nonlocal: "'nonlocal'", ast.Import: "'import'", ast.ImportFrom: "'import'",
        ast.FunctionDef: "a nested function", ast.ClassDef: "a class definition", ast.Yield: "'yield'",
        ast.Await: "'await'", ast.Dict: "a dict", ast.Set: "a set", ast.JoinedStr: "an f-string",
        ast.Starred: "'*' unpacking", ast.Delete: "'del'", ast.Assert: "'assert'", ast.NamedExpr: "':='",
        ast.AsyncFunctionDef: "an async function", ast.Slice: "a slice", ast.YieldFrom: "'yield from'",
        ast.AsyncFor: "'async for'", ast.AsyncWith: "'async with'",
    }
    return names.get(type(node), f"'{type(node).__name__}'")


def _closure_vars(fn: Callable[..., Any]) -> dict[str, Any]:
    out = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                out[name] = cell.cell_contents
            except ValueError:
                pass
    return out


def _frozen(value: Any) -> Any:
    """``value`` as a compile-time constant: numbers, strings, None and coopdsl objects as they are, a numpy scalar
    as its Python value (``np.float32(0.5)``, as a launch takes it), tuples and lists of them (nested too) as
    tuples; ``_UNSEEN`` for anything else."""
    value = python_value(value)
    if isinstance(value, (bool, int, float, str, type(None))) or _is_coopdsl_object(value):
        return value
    if isinstance(value, (tuple, list)):
        items = tuple(_frozen(v) for v in value)
        return _UNSEEN if any(v is _UNSEEN for v in items) else items
    return _UNSEEN


def _unusable_element(value: tuple[Any, ...] | list[Any]) -> tuple[str, Any]:
    """(``[i][j]...``, the element) of the first element of a nested tuple or list that is no constant."""
    for i, v in enumerate(value):
        if _frozen(v) is _UNSEEN:
            if isinstance(v, (tuple, list)):
                path, bad = _unusable_element(v)
                return f"[{i}]{path}", bad
            return f"[{i}]", v
    return "", value   # (not reached: some element is not a constant)


def _is_coopdsl_object(value: object) -> bool:
    mod = getattr(type(value), "__module__", "") or ""
    return mod.startswith("coopdsl.") or mod == "coopdsl"


_UNSEEN = object()  # a name lookup() has not resolved as a global yet

PY_BUILTINS = {name: getattr(py_builtins, name) for name in
               ("range", "min", "max", "abs", "int", "float", "bool", "len", "print", "True", "False", "None")
               if hasattr(py_builtins, name)}
