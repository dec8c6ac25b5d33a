"""Statements and structured control flow: assignments, if/elif/else, for and while loops,
break/continue and return, written as structured SSA (merge blocks, loop headers, phis)."""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING, Any, cast

from ..errors import CompileError, SourceLoc, TypeMismatchError, UnsupportedSyntaxError
from ..ir import types as T
from ..ir.attrs import LoopHint
from ..ir.core import Block, Value
from ..lang import arith
from ..lang.registry import BUILTINS
from .access import store_attribute, store_subscript
from .calls import call_parts, static_steps
from .context import Context, describe_node
from .expr import BINOPS, MATMUL_HINT

if TYPE_CHECKING:
    from ..ir.builder import Emitter

# a range loop's counter: (its SSA name, the stop value, the step, the type it counts in, the loop's target)
LoopCounter = tuple[str, Value, Any, T.ScalarType, str]



class ControlFlow(Context):
    """The statement handlers of the code generator (mixed into :class:`~.codegen.CodeGen`)."""

    def stmt_expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and (isinstance(node.value.value, str) or node.value.value is ...):
            return  # a docstring, or ``...`` (a statement that does nothing, as ``pass``)
        v = node.value
        if isinstance(v, ast.UnaryOp) and isinstance(v.operand, ast.UnaryOp) and \
                type(v.op) is type(v.operand.op) and isinstance(v.op, (ast.UAdd, ast.USub)):
            sign = "+" if isinstance(v.op, ast.UAdd) else "-"
            name = ast.unparse(v.operand.operand)
            raise UnsupportedSyntaxError(
                f"'{sign}{sign}{name}' is not {'an in' if sign == '+' else 'a de'}crement in Python: it is "
                f"{sign}({sign}{name}), which does nothing; write {name} {sign}= 1", self.src.loc(v))
        self.visit(node.value)

    def stmt_pass(self, node: ast.Pass) -> None:
        return

    def stmt_assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign_target(target, value)

    def stmt_annassign(self, node: ast.AnnAssign) -> None:
        if node.value is None or not isinstance(node.target, ast.Name):
            raise UnsupportedSyntaxError("annotated assignments need a simple name and a value", self.em.loc)
        ty = self.visit(node.annotation)
        value = self.as_operand(self.visit(node.value))
        if not isinstance(ty, T.Type):
            raise TypeMismatchError(f"annotation {self.describe(ty)} is not a type", self.src.loc(node.annotation))
        if isinstance(value, (bool, int, float)):
            value = self.em.literal(value, ty)
        elif not isinstance(value, Value) or value.type != ty:
            raise TypeMismatchError(f"'{node.target.id}' is declared {ty} but the value is {self.describe(value)}",
                                    self.src.loc(node.value))
        self.assign(node.target.id, value)

    def assign_target(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.assign(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            stars = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            if len(stars) > 1:   # (Python refuses it as it parses: a kernel's source was parsed by Python)
                raise UnsupportedSyntaxError("one '*name' at most in the names assigned", self.src.loc(target))
            n = len(target.elts)
            if not isinstance(value, (tuple, list)) or (len(value) < n - 1 if stars else len(value) != n):
                want = f"{n - 1} or more" if stars else f"{n}"
                raise TypeMismatchError(
                    f"cannot unpack {self.describe(value)} into {want} names", self.src.loc(target))
            if not stars:
                for t, v in zip(target.elts, value):
                    self.assign_target(t, v)
                return
            i = stars[0]   # a, *rest, z = items: rest is a list of the items between (as in Python)
            after = n - 1 - i
            for t, v in zip(target.elts[:i], value[:i]):
                self.assign_target(t, v)
            starred = target.elts[i]
            assert isinstance(starred, ast.Starred)
            self.assign_target(starred.value, tuple(value[i:len(value) - after]))
            for t, v in zip(target.elts[i + 1:], value[len(value) - after:]):
                self.assign_target(t, v)
        elif isinstance(target, ast.Subscript):
            store_subscript(self, target, value)
        elif isinstance(target, ast.Attribute):
            store_attribute(self, target, value)
        else:
            raise UnsupportedSyntaxError(f"cannot assign to {describe_node(target)}", self.src.loc(target))

    def stmt_augassign(self, node: ast.AugAssign) -> None:
        op = BINOPS.get(type(node.op))
        if op is None:  # only @= has no entry
            raise UnsupportedSyntaxError(f"'@=' is not supported; {MATMUL_HINT}", self.em.loc)
        load = ast.copy_location(ast.fix_missing_locations(_as_load(node.target)), node.target)
        current = self.as_operand(self.visit(load))
        rhs = self.as_operand(self.visit(node.value))
        self.assign_target(node.target, arith.binary(self.em, op, current, rhs))

    def stmt_if(self, node: ast.If) -> None:
        cond = self.condition(node.test)
        if isinstance(cond, bool):  # compile-time if: only the taken branch exists
            self.body(node.body if cond else node.orelse)
            return
        em = self.em
        then_b = em.new_block("then")
        else_b = em.new_block("else") if node.orelse else None
        merge = em.new_block("endif")
        em.selection_merge(em.current, merge)
        em.terminate("cond_br", [cond], [then_b, else_b or merge])
        self.ssa.nested += 1
        try:
            em.start(then_b)
            self.body(node.body)
            em.branch(merge)
            if else_b is not None:
                em.start(else_b)
                self.body(node.orelse)
                em.branch(merge)
        finally:
            self.ssa.nested -= 1
        self._start_merge(merge)

    def stmt_match(self, node: ast.Match) -> None:
        """``match``/``case`` on a scalar, GLSL's ``switch`` in Python's words, as an ``if``/``elif`` chain (each
        case's test ``subject == value``, the subject evaluated once): value patterns (``case 1:``, ``case -2:``,
        ``case K.NAME:``, ``case True:``), alternatives (``case 1 | 2:``), ``case _:`` and captures (``case n:``,
        ``case 1 | 2 as n:``), each with an optional guard (``case 0 if k > 3:``); the first case that matches
        runs, none falls through (Python's semantics).  A compile-time subject keeps only the case it takes."""
        subject = self.as_operand(self.visit(node.subject))
        if not (arith.is_number(subject) or isinstance(subject, Value) and isinstance(subject.type, T.ScalarType)):
            raise TypeMismatchError(f"match takes a scalar (an integer, a bool or a float), got "
                                    f"{self.describe(subject)}", self.src.loc(node.subject))
        key = f"match subject {id(node)}"   # (a name no source can write: the subject, evaluated once)
        self.comprehension[key] = subject    # (_case_test reads it for True/False patterns)
        try:
            chain: list[ast.stmt] = []
            for case in reversed(node.cases):
                test, bound = self._case_test(case.pattern, key)
                body = list(case.body)
                binding: list[ast.stmt] = []
                if bound is not None:   # case n: / case ... as n: n = subject once the pattern matched
                    at = case.pattern
                    assign = ast.copy_location(ast.Assign(targets=[ast.copy_location(ast.Name(bound, ast.Store()), at)],
                                                          value=ast.copy_location(ast.Name(key, ast.Load()), at)), at)
                    body = [assign, *body]
                    if case.guard is not None:   # as Python: bound once the pattern matched, before the guard runs,
                        binding = [assign] if test is None else \
                            [ast.copy_location(ast.If(test=test, body=[assign], orelse=[]), at)]   # kept if it fails
                if case.guard is not None:   # (the captured name in the guard is the subject: the binding above
                    guard = case.guard if bound is None else _renamed(case.guard, bound, key)   # is conditional)
                    test = guard if test is None else ast.copy_location(ast.BoolOp(ast.And(), [test, guard]),
                                                                        case.pattern)
                chain = binding + (body if test is None else [ast.copy_location(ast.If(test=test, body=body,
                                                                                       orelse=chain), case.pattern)])
            self.body(chain)
        finally:
            del self.comprehension[key]

    def _case_test(self, pattern: ast.pattern, key: str) -> tuple[ast.expr | None, str | None]:
        """(the test of a case's pattern on the subject named ``key``, None when any value matches; the name it
        binds, or None)."""
        def subject() -> ast.expr:
            return ast.copy_location(ast.Name(key, ast.Load()), pattern)

        if isinstance(pattern, ast.MatchValue):
            if isinstance(pattern.value, ast.Constant) and not isinstance(pattern.value.value, (int, float)):
                raise UnsupportedSyntaxError(f"a kernel's case matches numbers; {type(pattern.value.value).__name__} "
                                             f"patterns are not supported", self.src.loc(pattern))
            return ast.copy_location(ast.Compare(subject(), [ast.Eq()], [pattern.value]), pattern), None
        if isinstance(pattern, ast.MatchSingleton) and isinstance(pattern.value, bool):
            # Python matches True and False by identity: a bool subject only
            value = ast.copy_location(ast.Constant(pattern.value), pattern)
            given = self.comprehension[key]
            if not isinstance(given, Value):
                return ast.copy_location(ast.Constant(given is pattern.value), pattern), None
            if given.type != T.boolean:
                raise TypeMismatchError(f"case {pattern.value} matches a bool subject only (Python compares with "
                                        f"'is'), and this one is {self.describe(given)}", self.src.loc(pattern))
            return ast.copy_location(ast.Compare(subject(), [ast.Eq()], [value]), pattern), None
        if isinstance(pattern, ast.MatchOr):
            tests = []
            for p in pattern.patterns:
                test, bound = self._case_test(p, key)
                if test is None or bound is not None:
                    raise UnsupportedSyntaxError("an alternative of '|' is a value (case 1 | 2:); bind the whole "
                                                 "with 'as' (case 1 | 2 as n:)", self.src.loc(p))
                tests.append(test)
            return ast.copy_location(ast.BoolOp(ast.Or(), tests), pattern), None
        if isinstance(pattern, ast.MatchAs):
            if pattern.pattern is None:
                return None, pattern.name        # case _: / case n:
            test, bound = self._case_test(pattern.pattern, key)
            if bound is not None:
                raise UnsupportedSyntaxError("one name a case: 'as' binds the whole value", self.src.loc(pattern))
            return test, pattern.name
        kind = {ast.MatchSingleton: "None", ast.MatchSequence: "sequence", ast.MatchMapping: "mapping",
                ast.MatchClass: "class", ast.MatchStar: "'*'"}.get(type(pattern), type(pattern).__name__)
        raise UnsupportedSyntaxError(f"a kernel's case matches values (case 1:, case 1 | 2:, case K.NAME:, case _:, "
                                     f"case n:, with an optional 'if' guard); {kind} patterns are not supported",
                                     self.src.loc(pattern))

    def _start_merge(self, merge: Block) -> None:
        self.em.start(merge)
        if not merge.preds:
            self.em.terminate("unreachable")

    def stmt_for(self, node: ast.For) -> None:
        if node.orelse:
            raise UnsupportedSyntaxError("'for ... else' is not supported", self._else_loc(node))
        if not isinstance(node.target, ast.Name):
            raise UnsupportedSyntaxError("a for loop needs a single name as its target", self.src.loc(node.target))
        it = node.iter
        func = self.visit(it.func) if isinstance(it, ast.Call) else None
        if isinstance(it, ast.Call) and func is BUILTINS.get("static_range"):
            args, kwargs = call_parts(self, it)
            return self._static_for(node, args, kwargs)
        if not isinstance(it, ast.Call) or func is not range and func is not BUILTINS.get("range"):
            hidden = ""
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("range", "static_range"):
                hidden = f" ('{it.func.id}' here is {self.describe(func)}: a name of the kernel's hides it)"
            raise UnsupportedSyntaxError(
                "for loops iterate over range(...), coopdsl.range(...) or coopdsl.static_range(...)" + hidden,
                self.src.loc(it))
        args, kwargs = call_parts(self, it)
        control = self._loop_control(kwargs, func is range, it)
        if not 1 <= len(args) <= 3:
            raise UnsupportedSyntaxError("range takes 1 to 3 positional arguments", self.src.loc(it))
        self._range_for(node, *_range_args(args), control=control)

    def _loop_control(self, kwargs: dict[str, Any], plain: bool, it: ast.Call) -> LoopHint:
        if plain and kwargs or set(kwargs) - {"unroll"}:
            raise UnsupportedSyntaxError("range takes no keyword arguments (coopdsl.range takes unroll=)",
                                         self.src.loc(it))
        u = kwargs.get("unroll")
        if u is None or isinstance(u, bool):
            return LoopHint(unroll=u)
        if isinstance(u, int) and 0 < u <= 0xFFFFFFFF:   # (PartialCount is one 32-bit word)
            return LoopHint(partial=u)  # (the builder checks the target has it, where it places the loop merge)
        raise TypeMismatchError(f"unroll must be True, False or a positive int of at most 32 bits (4294967295), "
                                f"got {u!r}", self.src.loc(it))

    def _static_for(self, node: ast.For, args: list[Any], kwargs: dict[str, Any]) -> None:
        if kwargs or not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            raise TypeMismatchError("static_range needs compile-time integer arguments", self.src.loc(node.iter))
        steps = static_steps(args, self.src.loc(node.iter))
        assert isinstance(node.target, ast.Name)  # (stmt_for checked)
        for v in steps:
            if self.em.block is None:
                return
            self.assign(node.target.id, v)
            self.loops.append(None)
            try:
                self.body(node.body)
            finally:
                self.loops.pop()

    def _range_for(self, node: ast.For, start: Any, stop: Any, step: Any, control: LoopHint = LoopHint()) -> None:
        em = self.em
        start, stop, step = (self.as_operand(v) for v in (start, stop, step))
        for what, v in (("start", start), ("stop", stop), ("step", step)):
            is_int = isinstance(v, int) and not isinstance(v, bool)
            is_int_value = isinstance(v, Value) and isinstance(v.type, T.ScalarType) and v.type.is_int
            if not (is_int or is_int_value):
                raise TypeMismatchError(f"the {what} of range(...) must be an integer, got {self.describe(v)}",
                                        self.src.loc(node.iter))
        if isinstance(step, int) and step == 0:
            raise TypeMismatchError("the step of range(...) must be a non-zero integer", self.src.loc(node.iter))
        typed = [v for v in (start, stop, step) if isinstance(v, Value)]
        ty = typed[0].type if typed else T.i32
        if not isinstance(ty, T.ScalarType) or not ty.is_int:
            raise TypeMismatchError(f"range(...) bounds must be integers, got {ty}", self.src.loc(node.iter))
        if ty.is_unsigned_int and isinstance(step, int) and step < 0:
            it = node.iter
            at = it.args[2] if isinstance(it, ast.Call) and len(it.args) == 3 else it
            raise TypeMismatchError(
                f"range(...) counts down (step {step}) but its bounds are {ty}, which cannot hold a negative step "
                f"or count below 0: give it signed bounds, e.g. range(i32(n), 0, {step})", self.src.loc(at))
        if isinstance(step, Value):
            if not T.scalar_of(step.type).is_unsigned_int:
                raise TypeMismatchError(
                    "a runtime step of range(...) must be unsigned (its sign decides the loop test); "
                    "use a literal or an unsigned value", self.src.loc(node.iter))
            step = self._as_type(step, ty, "range step")
        start, stop = (self._as_type(v, ty, "range bound") for v in (start, stop))
        iv = f"$iv{self._iv}"
        self._iv += 1
        self.ssa.write(iv, em.current, start)
        assert isinstance(node.target, ast.Name)  # (stmt_for checked)
        self._loop(node, node.body, iv=(iv, stop, step, ty, node.target.id), control=control)

    def _as_type(self, v: Any, ty: T.ScalarType, what: str) -> Value:
        v = self.as_operand(v)
        if isinstance(v, (int, float, bool)):
            return em_literal(self.em, v, ty)
        if v.type is not ty and v.type != ty:
            a, b = arith.unify(self.em, "lt", v, self.em.literal(0, ty))
            if a.type != ty:
                raise TypeMismatchError(f"{what} is {v.type} but the loop counts in {ty}", self.em.loc)
            return a
        return cast(Value, v)

    def _else_loc(self, node: ast.For | ast.While) -> SourceLoc:
        """Where a loop's ``else:`` is (Python's tree keeps no position for it): the line between the body's end
        and the first statement of the else block that starts with ``else``; the loop itself if none does."""
        import linecache

        first = node.orelse[0].lineno
        for line in range(first - 1, (node.body[-1].end_lineno or node.lineno), -1):
            text = linecache.getline(self.src.file, line)
            if text.lstrip().startswith("else"):
                return SourceLoc(self.src.file, line, len(text) - len(text.lstrip()) + 1)
            if first - line > 1000:
                break
        return self.src.loc(node)

    def stmt_while(self, node: ast.While) -> None:
        if node.orelse:
            raise UnsupportedSyntaxError("'while ... else' is not supported", self._else_loc(node))
        self._loop(node, node.body, test=node.test)

    def _loop(self, node: ast.For | ast.While, body: list[ast.stmt], iv: LoopCounter | None = None,
              test: ast.expr | None = None, control: LoopHint = LoopHint()) -> None:
        self.ssa.nested += 1
        try:
            self._loop_blocks(node, body, iv, test, control)
        finally:
            self.ssa.nested -= 1

    def _loop_blocks(self, node: ast.For | ast.While, body: list[ast.stmt], iv: LoopCounter | None,
                     test: ast.expr | None, control: LoopHint) -> None:
        em = self.em
        pre = em.current
        header, body_b = em.new_block("loop"), em.new_block("body")
        cont, merge = em.new_block("continue"), em.new_block("endloop")
        em.branch(header)
        em.start(header)
        self.ssa.read_through[header] = pre
        names = list(self.src.loop_names(node))
        if iv is not None:
            names = [iv[0]] + names
            if iv[4] not in names and self._carry_target(iv[4], iv[3], pre):
                names.append(iv[4])
        for name in names:
            if name in self.locals or name.startswith("$"):
                self.ssa.loop_phi(name, header, pre, em.loc)
        # a hint the target lacks is reported at the loop's range call
        em.loop_merge(header, merge, cont, control, self.src.loc(node.iter) if isinstance(node, ast.For) else None)
        cond: Value
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
            assert test is not None  # (a while loop's)
            c = self.condition(test)
            cond = em.const(T.boolean, c) if isinstance(c, bool) else c
        if iv is None and c is True:   # `while True:` leaves only by break (or return): no edge to the merge
            em.branch(body_b)
        else:
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
        self._start_merge(merge)   # (a `while True:` without a break: nothing after it runs)

    def _carry_target(self, target: str, ty: T.ScalarType, pre: Block) -> bool:
        """Carry a range loop's target around the loop (a phi in its header) where it can, and say whether it
        does: then after the loop it holds the last value the loop gave it or, if the loop never ran, the value it
        had before, as in Python. It can where the target names a variable from before the loop holding a value
        of the counter's type, or a Python int that fits that type (made that type's constant before the loop).
        Otherwise a target read after the loop is its value from before the loop."""
        if target not in self.locals:
            return False
        v = self.ssa.read(target, pre)
        if isinstance(v, Value):
            return v.type == ty
        if isinstance(v, int) and not isinstance(v, bool):
            try:
                literal = self.em.literal(v, ty)
            except CompileError:   # (does not fit the counter's type)
                return False
            self.ssa.write(target, pre, literal)
            return True
        return False

    def stmt_break(self, node: ast.Break) -> None:
        loop = self._innermost("break")
        self.em.branch(loop[1])

    def stmt_continue(self, node: ast.Continue) -> None:
        loop = self._innermost("continue")
        self.em.branch(loop[0])

    def _innermost(self, what: str) -> tuple[Block, Block]:
        if not self.loops:
            raise UnsupportedSyntaxError(f"'{what}' outside a loop", self.em.loc)
        if self.loops[-1] is None:
            raise UnsupportedSyntaxError(
                f"'{what}' inside static_range is not supported (the loop is unrolled at compile time)",
                self.em.loc)
        return self.loops[-1]

    def stmt_return(self, node: ast.Return) -> None:
        if node.value is not None:
            raise TypeMismatchError("a kernel returns nothing; write results to a buffer", self.em.loc)
        self.em.terminate("return")


def em_literal(em: Emitter, v: Any, ty: T.Type) -> Value:
    return em.literal(v, ty)


def _range_args(args: list[Any]) -> tuple[Any, Any, Any]:
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    return args[0], args[1], args[2]


def _as_load(target: ast.AST) -> ast.AST:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(target.value, target.attr, ast.Load())
    raise UnsupportedSyntaxError(f"cannot update {describe_node(target)} in place")


def _renamed(expr: ast.expr, name: str, to: str) -> ast.expr:
    """A copy of ``expr`` reading ``to`` wherever it reads ``name`` (a guard reads the captured name, which is the
    subject once the pattern matched)."""
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            return ast.copy_location(ast.Name(to, node.ctx), node) if node.id == name else node

    return cast(ast.expr, Rename().visit(copy.deepcopy(expr)))
