"""SSA construction while the AST is walked (Braun et al., CC 2013, simplified).

Variables are written per block; reading a variable in a block with several
predecessors creates a phi of the values reaching it.  Every block is read
from only once all its predecessors are known (if-merges, loop merges and
continue blocks are started after everything that branches to them), so phis
are complete when created.  Loop headers are the exception: the code
generator pre-scans the loop body for assigned names and gives each a phi up
front (:meth:`SSA.loop_phi`); names the body does not assign are read through
the loop's pre-header.  Trivial phis (all operands the same) are removed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CompileError, SourceLoc
from ..ir import types as T
from ..ir.core import Block, Const, Op, Value
from ..lang.arith import default_type
from ..lang.values import BufferRef

if TYPE_CHECKING:
    from ..ir.builder import Emitter


class Undefined:
    """The value of a variable on a path where it was never assigned."""

    def __init__(self, name: str) -> None:
        self.name = name


class SSA:
    """Variables' values per block.  A variable written once, outside every branch and loop (a kernel's
    parameters, and sizes and offsets computed up front) has that one value in every block the code
    generator reaches after the write, which all come after the block of the write in a chain nothing
    branches around: it is read without walking up to that block."""

    def __init__(self, emitter: Emitter) -> None:
        self.em = emitter
        self.defs: dict[str, dict[Block, object]] = {}
        self.read_through: dict[Block, Block] = {}  # loop header -> pre-header
        self.nested = 0  # runtime branches and loops the code generator is inside (0: the function's own chain)
        self.once: dict[str, object] = {}  # variables written once so far, while nested was 0 -> the value
        self.more: set[str] = set()  # variables written again, or while nested was not 0
        # (name, id of a value written to it, or to an element of a compile-time list in it) -> the line of the write
        self.lines: dict[tuple[str, int], int] = {}
        # a removed trivial phi -> (it, the value that replaced it): for values held outside the IR and these
        # tables (a device function's returns, kept until the function ends), :meth:`resolve`
        self.forward: dict[int, tuple[Op, Value]] = {}
        # a loop header -> {name: the shape of the compile-time list it holds when the loop starts}
        self.loop_shapes: dict[Block, dict[str, Any]] = {}

    def write(self, name: str, block: Block, value: Any) -> None:
        self.defs.setdefault(name, {})[block] = value
        self._note_lines(name, value)
        if name not in self.more:
            if self.nested or name in self.once:
                self.once.pop(name, None)
                self.more.add(name)
            else:
                self.once[name] = value

    def _note_lines(self, name: str, value: Any) -> None:
        """The line of this write for each runtime value it gives ``name`` (an element of a compile-time list
        keeps the line that first gave it: ``t[0] = v`` notes v alone)."""
        if isinstance(value, Value):
            self.lines.setdefault((name, id(value)), self.em.loc.line)
        elif isinstance(value, tuple):
            for v in value:
                self._note_lines(name, v)

    def read(self, name: str, block: Block) -> Any:
        """The value of ``name`` at the end of ``block`` (may be Undefined)."""
        if name in self.once:
            return self.once[name]
        table = self.defs.get(name)
        if table is None:
            table = self.defs[name] = {}
        elif block in table:
            return table[block]
        # Up through single predecessors (and loop headers to their pre-headers) without recursing: every
        # block passed on the way gets the value found, as the recursive definition writes it.
        passed = [block]
        while True:
            up = self.read_through.get(block)
            if up is None:
                preds = block.preds
                if not preds:
                    value: Any = Undefined(name)
                    break
                if len(preds) > 1:
                    value = self._merge(name, block, [self.read(name, p) for p in preds])
                    break
                up = preds[0]
            if up in table:
                value = table[up]
                break
            block = up
            passed.append(block)
        for b in reversed(passed):
            table[b] = value
        return value

    def _merge(self, name: str, block: Block, values: list[Any], path: tuple[int, ...] = ()) -> Any:
        if all(isinstance(v, tuple) for v in values) and len({len(v) for v in values}) == 1:
            # a compile-time container of values: merge element by element
            return tuple(self._merge(name, block, [v[i] for v in values], path + (i,))
                         for i in range(len(values[0])))
        distinct: list[Any] = []
        for v in values:
            if not any(v is d for d in distinct):
                distinct.append(v)
        if len(distinct) == 1:
            return distinct[0]
        if any(isinstance(v, Undefined) for v in values):
            return Undefined(name)
        typed = [v for v in values if isinstance(v, Value)]
        ty: T.Type
        if not typed and all(_is_number(v) for v in values):
            ty = default_type(values[0])
        elif typed:
            ty = typed[0].type
        elif any(isinstance(v, BufferRef) for v in distinct):
            raise CompileError(
                f"'{name}' names different memory on the paths that meet here: a name bound to memory "
                f"(a buffer, a shared or local array, an array inside a struct in memory) is a reference, not a "
                f"copy, and must name the same memory on every path; index the memory inside each branch, or "
                f"copy its elements into one cd.local_array", self.em.loc)
        else:
            raise CompileError(
                f"'{name}' holds different compile-time values on the paths that meet here", self.em.loc)
        first = typed[0] if typed else None
        operands = [self._as_value(name, v, ty, first, path) for v in values]
        return self.em.phi(block, ty, operands, list(block.preds), var=name, path=path)

    def _where(self, name: str, v: Any) -> str:
        line = self.lines.get((name, id(v))) if isinstance(v, Value) else None
        return f" (assigned on line {line})" if line else ""

    def _as_value(self, name: str, v: Any, ty: T.Type, first: Value | None, path: tuple[int, ...] = ()) -> Value:
        """``v`` as an operand of a phi of type ``ty`` (``first``: the value that gave the phi its type; ``path``:
        the indices of the element of a compile-time list the phi is for)."""
        what = _element(name, path)
        if isinstance(v, Value):
            if v.type is not ty and v.type != ty:
                raise CompileError(
                    f"'{what}' is {ty} on one path{self._where(name, first)} and {v.type} on another"
                    f"{self._where(name, v)}; convert one of them so both have the same type", self.em.loc)
            return v
        if _is_number(v):
            try:
                return self.em.literal(v, ty)
            except CompileError as e:   # (a float literal on one path, an integer on the other)
                raise type(e)(f"'{what}' is {ty} on one path{self._where(name, first)} and the literal {v!r} on "
                              f"another, which {ty} cannot hold: {e.message}", self.em.loc) from None
        raise CompileError(f"'{what}' mixes a compile-time value with a runtime one here", self.em.loc)

    # -- loops ------------------------------------------------------------------
    def loop_phi(self, name: str, header: Block, preheader: Block, loc: SourceLoc) -> None:
        """Give ``name`` a phi in ``header`` fed from ``preheader`` (latch added later)."""
        if name not in self.once and name not in self.more:
            return  # never written yet: Undefined in every block, as read() would find walking up to the entry
        entry = self.read(name, preheader)
        if isinstance(entry, Undefined):
            return
        if isinstance(entry, tuple):   # (its length must be the same after every iteration: close_loop)
            self.loop_shapes.setdefault(header, {})[name] = _shape(entry)
        value = self._loop_phis(name, entry, header, preheader, loc, ())
        if value is not entry:  # (a compile-time object the loop does not carry: read through the pre-header)
            self.write(name, header, value)

    def _loop_phis(self, name: str, entry: Any, header: Block, preheader: Block, loc: SourceLoc,
                   path: tuple[int, ...]) -> Any:
        if isinstance(entry, tuple):  # one phi per runtime element of a compile-time container
            return tuple(self._loop_phis(name, e, header, preheader, loc, path + (i,)) for i, e in enumerate(entry))
        if _is_number(entry):
            entry = self.em.literal(entry, default_type(entry))
        elif not isinstance(entry, Value):
            return entry  # a compile-time object: not carried by the loop
        return self.em.phi(header, entry.type, [entry], [preheader], loc, var=name, path=path)

    def close_loop(self, header: Block, latch_blocks: list[Block]) -> None:
        """Add the back-edge operands of the header's phis, then drop trivial ones."""
        for name, shape in self.loop_shapes.pop(header, {}).items():
            for latch in latch_blocks:   # a compile-time list the loop grows or shrinks: no phi can carry that
                after = self.read(name, latch) if latch.preds else None
                if latch.preds and not isinstance(after, Undefined) and _shape(after) != shape:
                    raise CompileError(
                        f"'{name}' changes its shape (a compile-time list) inside the loop: {_described_shape(shape)} "
                        f"when the loop starts, {_described_shape(_shape(after))} after an iteration (_ an item); a "
                        f"runtime loop "
                        f"cannot change a list's length (give it its final length before the loop, or unroll with "
                        f"cd.static_range)", self.em.loc)
        for phi in list(header.phis):
            name = phi.attrs["var"]
            for latch in latch_blocks:
                # A latch nothing reaches (every path broke out) feeds the phi itself.
                v = _at_path(self.read(name, latch), phi.attrs.get("path", ()), name, phi.loc) \
                    if latch.preds else phi
                if isinstance(v, Undefined):
                    raise CompileError(f"'{name}' may be unassigned when the loop repeats", phi.loc)
                if isinstance(v, Value) and v.type != phi.type:
                    # at the value the iteration leaves (the assignment that changes the type), where it is in
                    # the loop's own file; else at the loop
                    at = v.loc if isinstance(v, Op) and v.loc is not None and v.loc.file == phi.loc.file \
                        and v.loc.line > phi.loc.line else None
                    loop = f" (the loop at line {phi.loc.line})" if at is not None else ""
                    what = _element(name, phi.attrs.get("path", ()))
                    raise CompileError(
                        f"'{what}' is {phi.type} when the loop starts but {v.type} after an iteration{loop}; "
                        f"give it one type before the loop (e.g. {what} = {v.type}(...))", at or phi.loc)
                phi.operands.append(self._as_value(name, v, phi.type, None))
                phi.attrs["incoming"].append(latch)
        for phi in list(header.phis):
            self._remove_if_trivial(phi)

    def _remove_if_trivial(self, phi: Op) -> None:
        assert phi.block is not None  # phis are made in their block
        if not any(p is phi for p in phi.block.phis):
            return  # (removed already, as a user of another trivial phi of the same header)
        others = [v for v in phi.operands if v is not phi]
        same = others[0] if others else None
        if same is None or any(v is not same for v in others):
            return
        phi.block.phis.remove(phi)
        self.forward[id(phi)] = (phi, same)
        users = self._replace_uses(phi, same)
        for u in users:
            if u.kind == "phi" and u.block is not None and u in u.block.phis:
                self._remove_if_trivial(u)

    def _replace_uses(self, old: Op, new: Value) -> list[Op]:
        users = []
        for op in self.em.func.ops():
            if any(v is old for v in op.operands):
                op.operands = [new if v is old else v for v in op.operands]
                users.append(op)
        for table in self.defs.values():
            for b, v in table.items():
                table[b] = _replace_leaf(v, old, new)
        for name, v in self.once.items():
            self.once[name] = _replace_leaf(v, old, new)
        return users


    def resolve(self, v: Any) -> Any:
        """``v`` (a value, or a tuple of them) with each removed trivial phi replaced by what replaced it."""
        if isinstance(v, tuple):
            return tuple(self.resolve(x) for x in v)
        while isinstance(v, Op):
            seen = self.forward.get(id(v))
            if seen is None or seen[0] is not v:
                break
            v = seen[1]
        return v


def _shape(v: Any) -> Any:
    """The nesting of a compile-time list (a tuple of its items' shapes), None for anything else."""
    return tuple(_shape(e) for e in v) if isinstance(v, tuple) else None


def _described_shape(shape: Any) -> str:
    """A shape as a message gives it: ``[_, [_, _]]`` (an item that is no list is ``_``)."""
    if not isinstance(shape, tuple):
        return "_"
    return "[" + ", ".join(_described_shape(e) for e in shape) + "]"


def _at_path(v: Any, path: tuple[int, ...], name: str, loc: SourceLoc) -> Any:
    for i in path:
        if not isinstance(v, tuple) or i >= len(v):
            raise CompileError(f"'{name}' changes its shape (a compile-time list) inside the loop", loc)
        v = v[i]
    return v


def _element(name: str, path: tuple[int, ...]) -> str:
    """How an error names the element at ``path`` of the compile-time list ``name`` (``t[1][0]``), or ``name``."""
    return name + "".join(f"[{i}]" for i in path)


def _replace_leaf(v: Any, old: Op, new: Value) -> Any:
    if v is old:
        return new
    if isinstance(v, tuple):
        return tuple(_replace_leaf(x, old, new) for x in v)
    return v


def _is_number(v: object) -> bool:
    return isinstance(v, (bool, int, float)) and not isinstance(v, Const)


