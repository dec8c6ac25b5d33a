"""Control-flow facts of one function: order, dominators, post-dominators, control dependence, loops, joins.

Everything here is structural (it does not look at values), so it is computed
once per function and shared by the analyses that need it.  Only blocks
reachable from the entry are considered.  Post-dominance is taken with respect
to a virtual exit that every ``return`` and ``unreachable`` block branches to;
``None`` stands for that exit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..errors import SourceLoc
from ..ir.core import Block, Function, Op

EXITS = ("return", "unreachable")


class CFG:
    """The control-flow graph of ``func`` and the facts derived from it.

    * ``blocks``: reachable blocks in reverse post-order (definitions before uses, loops headers first);
    * ``succs`` / ``preds``: distinct successors / reachable predecessors;
    * ``idom`` / ``ipdom``: immediate (post-)dominator (``ipdom`` is ``None`` for the virtual exit);
    * ``control_deps[b]``: the branch blocks whose decision controls whether ``b`` runs
      (Ferrante et al.: ``b`` post-dominates one successor of the branch but not the branch);
    * ``loops[h]``: the blocks of the natural loop headed by ``h``; ``loops_of[b]``: headers of the loops holding ``b``;
    * ``sync_deps[j]``: the branches whose two sides meet again at ``j`` (phis in ``j`` depend on them);
    * ``exits_into[b]``: headers of the loops that ``b`` is an exit of (a predecessor inside, ``b`` outside).
    """

    def __init__(self, func: Function):
        self.func = func
        found: dict[Block, list[Block]] = {}  # each block's successors, listed once

        def successors(b: Block) -> list[Block]:
            s = found.get(b)
            if s is None:
                s = found[b] = self._successors(b)
            return s

        self.blocks = _reverse_postorder(func.entry, successors)
        order = {b: i for i, b in enumerate(self.blocks)}
        self.succs = {b: found[b] for b in self.blocks}
        self.preds: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for b in self.blocks:
            for s in self.succs[b]:
                self.preds[s].append(b)
        self.idom = _immediate_dominators(self.blocks, lambda b: self.preds[b], order)
        self.ipdom = self._post_dominators()
        # s dominates b only if s comes first in reverse post-order: forward edges need no dominator walk
        self.back_edges = {(b, s) for b in self.blocks for s in self.succs[b]
                           if order[s] <= order[b] and self.dominates(s, b)}
        self.control_deps = self._control_dependence()
        self.loops = self._natural_loops()
        self.loops_of: dict[Block, set[Block]] = {b: set() for b in self.blocks}
        for h, body in self.loops.items():
            for b in body:
                self.loops_of[b].add(h)
        self._forward: dict[Block, list[Block]] | None = None
        self.sync_deps = self._sync_dependence()
        self.exits_into: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for h, body in self.loops.items():  # per loop (each list keeps the loops' order), not per block and loop
            for b in {s for x in body for s in self.succs[x] if s not in body}:
                self.exits_into[b].append(h)

    @staticmethod
    def _successors(b: Block) -> list[Block]:
        out: list[Block] = []
        t = b.terminator
        if t is not None:  # (Block.successors(), without its copy of the targets)
            for s in t.attrs.get("targets", ()):
                if s not in out:
                    out.append(s)
        return out

    def branches(self) -> Iterable[Block]:
        """Blocks ending in a conditional branch with two distinct targets."""
        return (b for b in self.blocks if len(self.succs[b]) > 1)

    def dominates(self, a: Block, b: Block) -> bool:
        """Whether every path from the entry to ``b`` passes through ``a``."""
        while True:
            if b is a:
                return True
            parent = self.idom.get(b)
            if parent is None or parent is b:
                return False
            b = parent

    # -- post-dominance and control dependence ---------------------------------------------
    def _post_dominators(self) -> dict[Block, Block | None]:
        exit_node = _Exit()
        exits = [b for b in self.blocks if b.terminator is not None and b.terminator.kind in EXITS]
        # the reverse graph: exit -> exiting blocks, and each block -> its predecessors
        rsuccs: dict[Any, list[Any]] = {exit_node: exits}
        rsuccs.update(self.preds)
        rpreds: dict[Any, list[Any]] = dict(self.succs)  # (the lists are only read)
        for b in exits:
            rpreds[b] = rpreds[b] + [exit_node]
        order_list = _reverse_postorder(exit_node, lambda n: rsuccs[n])
        order = {n: i for i, n in enumerate(order_list)}
        ipdom = _immediate_dominators(order_list, lambda n: rpreds.get(n, ()), order)
        # blocks that cannot reach an exit (an infinite loop) get none: walks stop there
        return {b: (None if ipdom.get(b) is exit_node else ipdom.get(b)) for b in self.blocks}

    def _control_dependence(self) -> dict[Block, list[Block]]:
        deps: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for x in self.branches():
            stop = self.ipdom[x]
            for s in self.succs[x]:
                runner: Block | None = s
                seen: set[Block] = set()
                while runner is not None and runner is not stop and runner not in seen:
                    seen.add(runner)
                    if x not in deps[runner]:
                        deps[runner].append(x)
                    runner = self.ipdom[runner]
        return deps

    # -- loops and joins -------------------------------------------------------------------
    def _natural_loops(self) -> dict[Block, set[Block]]:
        loops: dict[Block, set[Block]] = {}
        for latch, header in self.back_edges:
            body = loops.setdefault(header, {header})
            stack = [latch]
            while stack:
                b = stack.pop()
                if b in body:
                    continue
                body.add(b)
                stack.extend(self.preds[b])
        return loops

    def joins(self, x: Block) -> set[Block]:
        """Blocks with several predecessors that forward paths from two different successors of ``x`` reach
        before ``x``'s immediate post-dominator (inclusive): where the two sides of the branch meet."""
        stop = self.ipdom[x]
        forward = self._forward
        if forward is None:  # each block's successors along forward edges, listed once per CFG
            back = self.back_edges
            forward = self._forward = {b: [t for t in self.succs[b] if (b, t) not in back] for b in self.blocks}
        once: set[Block] = set()  # reached from one successor of x so far
        twice: set[Block] = set()  # from two or more
        for s in self.succs[x]:
            stack, seen = [s], set()
            while stack:
                b = stack.pop()
                if b in seen:
                    continue
                seen.add(b)
                if b is not stop:
                    stack.extend(forward[b])
            twice |= once & seen
            once |= seen
        return {b for b in twice if len(self.preds[b]) > 1}

    def _sync_dependence(self) -> dict[Block, list[Block]]:
        deps: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for x in self.branches():
            for j in self.joins(x):
                deps[j].append(x)
        return deps


class _Exit:
    """The virtual exit node of the reverse graph."""

    def __repr__(self) -> str:
        return "<exit>"


N = TypeVar("N")


def _reverse_postorder(root: N, successors: Callable[[N], Iterable[N]]) -> list[N]:
    seen, post = {root}, []
    stack = [(root, iter(successors(root)))]
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            post.append(node)
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(successors(nxt))))
    return post[::-1]


def _immediate_dominators(order: list[Any], preds: Callable[[Any], Iterable[Any]],
                          index: dict[Any, int]) -> dict[Any, Any]:
    """Cooper, Harvey and Kennedy's iterative algorithm; ``order`` is a reverse post-order from the root."""
    root = order[0]
    idom = {root: root}

    def intersect(a: object, b: object) -> object:
        while a is not b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            new = None
            for p in preds(n):
                if p in idom and p in index:
                    new = p if new is None else intersect(p, new)
            if new is not None and idom.get(n) is not new:
                idom[n] = new
                changed = True
    return idom


def cond_loc(branch: Block) -> SourceLoc:
    """Where the condition of ``branch`` is in the user's code: the expression computing it when that is on the
    branch's own line (``if a > b:``), else the branch (``if e:`` of a variable assigned earlier)."""
    cond = branch.last_op.operands[0]
    at = branch.last_op.loc
    if isinstance(cond, Op) and cond.loc is not None and (at is None or cond.loc.line == at.line):
        return cond.loc
    return at
