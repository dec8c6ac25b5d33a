"""AST -> IR for one kernel: statements, control flow and name resolution.

``CodeGen.visit`` is the single choke point: it stamps the location of the
node being compiled on everything emitted beneath it, dispatches through the
explicit :data:`STATEMENTS` / expression tables in :mod:`.expr` (the supported
Python subset is exactly their keys), and turns any unexpected exception into
an :class:`InternalCompilerError` that names the user's line.

Values are either IR values (runtime) or plain Python objects (compile time:
numbers, types, tuples, builtins...).  Operations on compile-time values are
evaluated by Python, which is how constants fold and ``static_range`` unrolls.
"""

from __future__ import annotations

import ast
import builtins as py_builtins
import types as py_types

from ..errors import (CoopDSLError, InternalCompilerError, NameResolutionError, TypeMismatchError,
                      UnsupportedSyntaxError)
from ..ir import types as T
from ..ir.attrs import LoopHint
from ..ir.core import Function, LoopMerge, Module, SelectionMerge, Value
from . import arith
from .emitter import Emitter
from .params import build_params
from .scan import assigned_names
from .source import Source
from .ssa import SSA, Undefined
from .values import BufferRef, BuiltinVar


class CodeGen:
    def __init__(self, fn, src: Source, module: Module, func: Function | None = None):
        self.fn = fn
        self.src = src
        self.module = module
        if func is None:
            func = Function(src.tree.name, T.FunctionType(T.void, ()), [], is_entry=True, loc=src.loc(src.tree))
        module.functions.append(func)
        self.em = Emitter(module, func, src.loc(src.tree))
        self.ssa = SSA(self.em)
        self.loops: list[tuple] = []  # (continue block, merge block)
        self.written = module.written_buffers
        self.scope = _closure_vars(fn)
        self.locals = assigned_names(src.tree.body)
        self._iv = 0

    # -- the choke point --------------------------------------------------------------
    def visit(self, node: ast.AST):
        from .expr import EXPRESSIONS

        stmt = STATEMENTS.get(type(node))
        handler = getattr(self, stmt.__name__) if stmt else EXPRESSIONS.get(type(node))
        loc = self.src.loc(node)
        if handler is None:
            raise UnsupportedSyntaxError(f"{_describe(node)} is not supported in coopdsl kernels", loc)
        prev, self.em.loc = self.em.loc, loc
        try:
            return handler(node) if stmt else handler(self, node)
        except CoopDSLError:
            raise
        except RecursionError:
            raise UnsupportedSyntaxError("expression nested too deeply", loc) from None
        except Exception as e:  # a bug in coopdsl, reported with the user's line
            raise InternalCompilerError(f"{type(e).__name__}: {e}", loc) from e
        finally:
            self.em.loc = prev

    def run(self, consts: dict | None = None):
        params, bindings = build_params(self.fn, self.src, self.module, consts)
        self.params = params
        entry = self.em.new_block("entry")
        self.em.start(entry)
        for name, value in bindings.items():
            self.ssa.write(name, entry, value)
        self.locals |= set(bindings) | {name for name, _, _ in params.push}
        self._load_push_constants(entry)
        self.body(self.src.tree.body)
        if self.em.block is not None:
            self.em.terminate("return")
        for ref in params.buffers:
            ref.var.info["readonly"] = ref.name not in self.written
        return self.em.func

    def _load_push_constants(self, entry) -> None:
        p = self.params
        for name, var, st in p.uniforms:  # uniform blocks: read once, members by extraction
            block = var.type.pointee
            parts = [self.em.op("load", t, [self.em.op("access", T.PointerType(t, "Uniform"),
                                                       [var, self.em.const(T.u32, i)])])
                     for i, (_, t) in enumerate(block.members)]
            self.ssa.write(name, entry, self.em.op("construct", st, parts))
            self.locals.add(name)
        for index, (name, t, _) in enumerate(p.push):
            ptr = self.em.op("access", T.PointerType(t, "PushConstant"),
                             [p.push_var, self.em.const(T.u32, index)])
            self.ssa.write(name, entry, self.em.op("load", t, [ptr]))

    def body(self, stmts) -> None:
        for s in stmts:
            if self.em.block is None:
                return  # the rest is unreachable (after return/break/continue)
            self.visit(s)

    # -- names ------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST):
        if name in self.locals:
            if self.em.block is None:
                raise InternalCompilerError("reading a variable in unreachable code", self.em.loc)
            value = self.ssa.read(name, self.em.block)
            if isinstance(value, Undefined):
                raise NameResolutionError(f"'{name}' may be used before it is assigned", self.em.loc)
            return value
        if name in self.scope:
            return self.classify_global(name, self.scope[name])
        if name in self.fn.__globals__:
            return self.classify_global(name, self.fn.__globals__[name])
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        raise NameResolutionError(f"name '{name}' is not defined", self.em.loc)

    def classify_global(self, name: str, value):
        if isinstance(value, (bool, int, float, str, type(None), py_types.ModuleType)):
            return value
        if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float)) for v in value):
            return tuple(value)
        if _is_coopdsl_object(value):
            return value
        raise NameResolutionError(
            f"global '{name}' is a {type(value).__name__}, which kernels cannot use "
            f"(use numbers, tuples of numbers, coopdsl types and builtins)", self.em.loc)

    def assign(self, name: str, value) -> None:
        if isinstance(value, BuiltinVar):
            value = self.as_runtime(value)
        if isinstance(value, BufferRef) and value.storage == "Workgroup" and value.name.startswith("shared"):
            value.name = value.var.name = name  # name shared arrays after their variable
        elif isinstance(value, BufferRef) and value.storage == "Function" and value.name == "local":
            value.name = name
        self.ssa.write(name, self.em.block, value)

    # -- helpers builtins use -------------------------------------------------------------
    def as_runtime(self, v) -> Value:
        if isinstance(v, BuiltinVar):
            return self.load_builtin(v)
        if isinstance(v, Value):
            return v
        raise TypeMismatchError(f"expected a runtime value, got {self.describe(v)}", self.em.loc)

    def as_operand(self, v):
        """A value usable in arithmetic: IR values and Python numbers."""
        if isinstance(v, BuiltinVar):
            return self.load_builtin(v)
        return v

    def as_index(self, v, what: str) -> Value:
        v = self.as_operand(v)
        if isinstance(v, bool) or isinstance(v, float):
            raise TypeMismatchError(f"{what} must be an integer, got {v!r}", self.em.loc)
        if isinstance(v, int):
            return self.em.literal(v, T.u32 if v >= 0 else T.i32)
        if not isinstance(v, Value) or not (isinstance(v.type, T.ScalarType) and v.type.kind == "int"):
            raise TypeMismatchError(f"{what} must be an integer, got {self.describe(v)}", self.em.loc)
        return v

    def compile_time(self, v, what: str, kind):
        if not isinstance(v, kind):
            raise TypeMismatchError(f"{what} must be a compile-time {kind.__name__}, got {self.describe(v)}",
                                    self.em.loc)
        return v

    def describe(self, v) -> str:
        if isinstance(v, Value):
            return f"a runtime {v.type}"
        if isinstance(v, BufferRef):
            return f"{v.kind} '{v.name}'"
        return f"{type(v).__name__} {v!r}"

    def load_builtin(self, b: BuiltinVar) -> Value:
        var = self.module_builtin(b)
        return self.em.op("load", b.type, [var])

    def module_builtin(self, b: BuiltinVar):
        from ..ir.core import GlobalVar

        for g in self.module.globals:
            if g.role == "builtin" and g.info["builtin"] == b.spirv:
                return g
        g = GlobalVar(T.PointerType(b.type, "Input"), b.name, "builtin", builtin=b.spirv)
        self.module.globals.append(g)
        return g

    def element_pointer(self, buf: BufferRef, index) -> Value:
        idx = self.as_index(index, f"a {buf.kind} index")
        prefix = [self.em.const(T.u32, i) for i in buf.prefix]
        return self.em.op("access", T.PointerType(buf.elem, buf.storage), [buf.var, *prefix, idx])

    def function_variable(self, ptr: T.PointerType):
        """An OpVariable in Function storage; SPIR-V wants these first in the entry block."""
        from ..ir.core import Op

        entry = self.em.func.entry
        op = Op("variable", ptr, [], self.em.loc)
        op.block = entry
        at = sum(1 for o in entry.ops if o.kind == "variable")
        entry.ops.insert(at, op)
        return op

    def note_buffer_write(self, buf: BufferRef) -> None:
        self.written.add(buf.name)

    def condition(self, node: ast.AST):
        c = self.as_operand(self.visit(node))
        if isinstance(c, (bool, int, float)):
            return bool(c)
        if not isinstance(c, Value) or c.type != T.boolean:
            raise TypeMismatchError(
                f"a condition must be a bool, got {self.describe(c)}; compare explicitly (e.g. x != 0)",
                self.src.loc(node))
        return c

    # -- statements -----------------------------------------------------------------------
    def stmt_expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.visit(node.value)

    def stmt_pass(self, node):
        return

    def stmt_assign(self, node: ast.Assign):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign_target(target, value)

    def stmt_annassign(self, node: ast.AnnAssign):
        if node.value is None or not isinstance(node.target, ast.Name):
            raise UnsupportedSyntaxError("annotated assignments need a simple name and a value", self.em.loc)
        ty = self.visit(node.annotation)
        value = self.as_operand(self.visit(node.value))
        if not isinstance(ty, T.Type):
            raise TypeMismatchError(f"annotation {ty!r} is not a type", self.src.loc(node.annotation))
        if isinstance(value, (bool, int, float)):
            value = self.em.literal(value, ty)
        elif not isinstance(value, Value) or value.type != ty:
            raise TypeMismatchError(f"'{node.target.id}' is declared {ty} but the value is {self.describe(value)}",
                                    self.src.loc(node.value))
        self.assign(node.target.id, value)

    def assign_target(self, target: ast.AST, value) -> None:
        if isinstance(target, ast.Name):
            self.assign(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise TypeMismatchError(
                    f"cannot unpack {self.describe(value)} into {len(target.elts)} names", self.src.loc(target))
            for t, v in zip(target.elts, value):
                self.assign_target(t, v)
        elif isinstance(target, ast.Subscript):
            from .expr import store_subscript

            store_subscript(self, target, value)
        else:
            raise UnsupportedSyntaxError(f"cannot assign to {_describe(target)}", self.src.loc(target))

    def stmt_augassign(self, node: ast.AugAssign):
        from .expr import BINOPS

        op = BINOPS.get(type(node.op))
        if op is None:
            raise UnsupportedSyntaxError(f"operator {type(node.op).__name__} is not supported", self.em.loc)
        load = ast.copy_location(ast.fix_missing_locations(_as_load(node.target)), node.target)
        current = self.as_operand(self.visit(load))
        rhs = self.as_operand(self.visit(node.value))
        self.assign_target(node.target, arith.binary(self.em, op, current, rhs))

    def stmt_if(self, node: ast.If):
        cond = self.condition(node.test)
        if isinstance(cond, bool):  # compile-time if: only the taken branch exists
            self.body(node.body if cond else node.orelse)
            return
        em = self.em
        then_b = em.new_block("then")
        else_b = em.new_block("else") if node.orelse else None
        merge = em.new_block("endif")
        em.block.merge = SelectionMerge(merge)
        em.terminate("cond_br", [cond], [then_b, else_b or merge])
        em.start(then_b)
        self.body(node.body)
        em.branch(merge)
        if else_b is not None:
            em.start(else_b)
            self.body(node.orelse)
            em.branch(merge)
        self._start_merge(merge)

    def _start_merge(self, merge) -> None:
        self.em.start(merge)
        if not merge.preds:
            self.em.terminate("unreachable")

    def stmt_for(self, node: ast.For):
        from .expr import call_parts

        if node.orelse:
            raise UnsupportedSyntaxError("'for ... else' is not supported", self.em.loc)
        if not isinstance(node.target, ast.Name):
            raise UnsupportedSyntaxError("a for loop needs a single name as its target", self.src.loc(node.target))
        it = node.iter
        func = self.visit(it.func) if isinstance(it, ast.Call) else None
        from ..lang.builtins import BUILTINS

        if func is BUILTINS.get("static_range"):
            args, kwargs = call_parts(self, it)
            return self._static_for(node, args, kwargs)
        if func is not range and func is not BUILTINS.get("range"):
            raise UnsupportedSyntaxError(
                "for loops iterate over range(...), coopdsl.range(...) or coopdsl.static_range(...)",
                self.src.loc(it))
        args, kwargs = call_parts(self, it)
        control = self._loop_control(kwargs, func is range, it)
        if not 1 <= len(args) <= 3:
            raise UnsupportedSyntaxError("range takes 1 to 3 positional arguments", self.src.loc(it))
        self._range_for(node, *_range_args(args), control=control)

    def _loop_control(self, kwargs, plain: bool, it) -> LoopHint:
        if plain and kwargs or set(kwargs) - {"unroll"}:
            raise UnsupportedSyntaxError("range takes no keyword arguments (coopdsl.range takes unroll=)",
                                         self.src.loc(it))
        u = kwargs.get("unroll")
        if u is None or isinstance(u, bool):
            return LoopHint(unroll=u)
        if isinstance(u, int) and u > 0:
            if self.module.target_version < (1, 4):
                raise UnsupportedSyntaxError("unroll=<count> (PartialCount) needs SPIR-V 1.4 (vulkan1.2 or newer)",
                                             self.src.loc(it))
            return LoopHint(partial=u)
        raise TypeMismatchError(f"unroll must be True, False or a positive int, got {u!r}", self.src.loc(it))

    def _static_for(self, node, args, kwargs):
        if kwargs or not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            raise TypeMismatchError("static_range needs compile-time integer arguments", self.src.loc(node.iter))
        for v in range(*args):
            if self.em.block is None:
                return
            self.assign(node.target.id, v)
            self.loops.append(None)
            try:
                self.body(node.body)
            finally:
                self.loops.pop()

    def _range_for(self, node, start, stop, step, control=LoopHint()):
        em = self.em
        step = self.as_operand(step)
        if isinstance(step, bool) or isinstance(step, int) and step == 0 or \
                not isinstance(step, (int, Value)):
            raise TypeMismatchError("the step of range(...) must be a non-zero integer", self.src.loc(node.iter))
        typed = [v for v in (start, stop, step) if isinstance(v, Value)]
        ty = typed[0].type if typed else T.i32
        if not isinstance(ty, T.ScalarType) or ty.kind != "int":
            raise TypeMismatchError(f"range(...) bounds must be integers, got {ty}", self.src.loc(node.iter))
        if isinstance(step, Value):
            if step.type.kind != "int" or step.type.signed:
                raise TypeMismatchError(
                    "a runtime step of range(...) must be unsigned (its sign decides the loop test); "
                    "use a literal or an unsigned value", self.src.loc(node.iter))
            step = self._as_type(step, ty, "range step")
        start, stop = (self._as_type(v, ty, "range bound") for v in (start, stop))
        iv = f"$iv{self._iv}"
        self._iv += 1
        self.ssa.write(iv, em.block, start)
        self._loop(node, node.body, iv=(iv, stop, step, ty, node.target.id), control=control)

    def _as_type(self, v, ty, what):
        v = self.as_operand(v)
        if isinstance(v, (int, float, bool)):
            return em_literal(self.em, v, ty)
        if v.type != ty:
            a, b = arith.unify(self.em, "lt", v, self.em.literal(0, ty))
            if a.type != ty:
                raise TypeMismatchError(f"{what} is {v.type} but the loop counts in {ty}", self.em.loc)
            return a
        return v

    def stmt_while(self, node: ast.While):
        if node.orelse:
            raise UnsupportedSyntaxError("'while ... else' is not supported", self.em.loc)
        self._loop(node, node.body, test=node.test)

    def _loop(self, node, body, iv=None, test=None, control=LoopHint()):
        em = self.em
        pre = em.block
        header, body_b = em.new_block("loop"), em.new_block("body")
        cont, merge = em.new_block("continue"), em.new_block("endloop")
        em.branch(header)
        em.start(header)
        self.ssa.read_through[header] = pre
        names = sorted(assigned_names(body, loop_carried=True))
        if iv is not None:
            names = [iv[0]] + names
        for name in names:
            if name in self.locals or name.startswith("$"):
                self.ssa.loop_phi(name, header, pre, em.loc)
        header.merge = LoopMerge(merge, cont, control)
        if iv is not None:
            iv_name, stop, step, ty, target = iv
            counter = self.ssa.read(iv_name, header)
            down = isinstance(step, int) and step < 0
            cond = em.op("gt" if down else "lt", T.boolean, [counter, stop])
        else:
            # the header holds only the phis and OpLoopMerge; the test gets its own block,
            # since a short-circuit 'and'/'or' in it is a selection construct of its own
            check = em.new_block("while")
            em.branch(check)
            em.start(check)
            cond = self.condition(test)
            if cond is False:
                cond = em.const(T.boolean, False)
            elif cond is True:
                cond = em.const(T.boolean, True)
        em.terminate("cond_br", [cond], [body_b, merge])
        em.start(body_b)
        if iv is not None:
            self.assign(target, counter)
        self.loops.append((cont, merge))
        try:
            self.body(body)
        finally:
            self.loops.pop()
        em.branch(cont)
        em.start(cont)
        if iv is not None and cont.preds:
            nxt = arith.binary(em, "add", self.ssa.read(iv_name, cont), step)
            self.ssa.write(iv_name, cont, nxt)
        em.branch(header)
        self.ssa.close_loop(header, [cont])
        em.start(merge)

    def stmt_break(self, node):
        loop = self._innermost("break")
        self.em.branch(loop[1])

    def stmt_continue(self, node):
        loop = self._innermost("continue")
        self.em.branch(loop[0])

    def _innermost(self, what: str):
        if not self.loops:
            raise UnsupportedSyntaxError(f"'{what}' outside a loop", self.em.loc)
        if self.loops[-1] is None:
            raise UnsupportedSyntaxError(
                f"'{what}' inside static_range is not supported (the loop is unrolled at compile time)",
                self.em.loc)
        return self.loops[-1]

    def stmt_return(self, node: ast.Return):
        if node.value is not None:
            raise TypeMismatchError("a kernel returns nothing; write results to a buffer", self.em.loc)
        self.em.terminate("return")


def em_literal(em, v, ty):
    return em.literal(v, ty)


def _range_args(args):
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    return tuple(args)


def _as_load(target: ast.AST) -> ast.AST:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    raise UnsupportedSyntaxError(f"cannot update {_describe(target)} in place")


def _describe(node: ast.AST) -> str:
    names = {
        ast.Lambda: "lambda", ast.ListComp: "a list comprehension", ast.DictComp: "a dict comprehension",
        ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator expression",
        ast.With: "'with'", ast.Try: "'try'", ast.Raise: "'raise'", ast.Global: "'global'",
        ast.Nonlocal: "'nonlocal'", ast.Import: "'import'", ast.ImportFrom: "'import'",
        ast.FunctionDef: "a nested function", ast.ClassDef: "a class definition", ast.Yield: "'yield'",
        ast.Await: "'await'", ast.Dict: "a dict", ast.Set: "a set", ast.JoinedStr: "an f-string",
        ast.Starred: "'*' unpacking", ast.Delete: "'del'", ast.Assert: "'assert'", ast.NamedExpr: "':='",
        ast.Match: "'match'", ast.AsyncFunctionDef: "an async function", ast.Slice: "a slice",
    }
    return names.get(type(node), f"'{type(node).__name__}'")


def _closure_vars(fn) -> dict:
    out = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                out[name] = cell.cell_contents
            except ValueError:
                pass
    return out


def _is_coopdsl_object(value) -> bool:
    mod = getattr(type(value), "__module__", "") or ""
    return mod.startswith("coopdsl.") or mod == "coopdsl"


PY_BUILTINS = {name: getattr(py_builtins, name) for name in
               ("range", "min", "max", "abs", "int", "float", "bool", "len", "True", "False", "None")
               if hasattr(py_builtins, name)}

STATEMENTS = {
    ast.Expr: CodeGen.stmt_expr,
    ast.Pass: CodeGen.stmt_pass,
    ast.Assign: CodeGen.stmt_assign,
    ast.AnnAssign: CodeGen.stmt_annassign,
    ast.AugAssign: CodeGen.stmt_augassign,
    ast.If: CodeGen.stmt_if,
    ast.For: CodeGen.stmt_for,
    ast.While: CodeGen.stmt_while,
    ast.Break: CodeGen.stmt_break,
    ast.Continue: CodeGen.stmt_continue,
    ast.Return: CodeGen.stmt_return,
}
