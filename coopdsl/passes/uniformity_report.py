"""The messages of uniformity errors: what the op is in the user's terms, which condition makes control
non-uniform there, why that condition is not uniform, and how to fix it."""

from __future__ import annotations

import io
import tokenize
from typing import TYPE_CHECKING

from ..errors import SourceLoc, UniformityError
from ..ir import types as T
from ..ir.attrs import Scope, Semantics
from ..ir.core import Block, LoopMerge, Op, SelectionMerge
from .cfg import CFG, cond_loc

if TYPE_CHECKING:
    from .uniformity import Fact, FunctionUniformity, Level, Need

_BARRIER = (Scope.Workgroup, Scope.Workgroup, Semantics(("AcquireRelease", "WorkgroupMemory")))
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "neg": "unary -"}
_NAMES = {"coop_muladd": "cd.muladd", "coop_load": "the matrix load (.load)", "coop_store": "the matrix store (.store)",
          "splat": "the matrix .splat", "mat_times_scalar": "matrix * scalar",
          "convert": "the matrix conversion", "bitcast": "cd.bitcast of a matrix",
          "load": "reading a whole matrix from a local variable or a local or private array (as `m[i] = x` "
                  "with a runtime index also does after the write)",
          "store": "storing a whole matrix into a local variable or a local or private array (as `m[i] = x` "
                   "with a runtime index also does before the write)",
          "coop_from_array": "the matrix built from arrays (.from_rows / .from_cols)",
          "coop_to_array": "the matrix split into arrays (.to_rows / .to_cols)"}


def op_name(op: Op) -> str:
    """How the user wrote ``op`` (``cd.muladd``, ``the matrix load (.load)``, ``cd.barrier()`` ...)."""
    if op.kind == "control_barrier":
        a = op.attrs
        if (a["exec_scope"], a["mem_scope"], a["semantics"]) == _BARRIER:
            return "cd.barrier()"
        return f"cd.control_barrier(cd.{a['exec_scope']}, ...)"
    if op.kind in _SYMBOLS:
        return f"matrix arithmetic ({_SYMBOLS[op.kind]})"
    return _NAMES.get(op.kind, f"the cooperative-matrix operation {op.kind}")


def error(fu: FunctionUniformity, block: Block, need: Need, calls: tuple[Op, ...] = ()) -> UniformityError:
    """The UniformityError for ``need`` (an op in ``block`` of the analysed function ``fu``, which the kernel
    reaches through the call ops ``calls``)."""
    scope = need.level.name.lower()  # "subgroup" or "workgroup"
    what = op_name(need.op)
    if need.via:
        callee = need.via[0].attrs["func"].name
        head = f"this call of {callee}() runs {what} (line {need.op.loc.line}), which"
    else:
        head = what
    head += f" must be executed by every invocation of the {scope} together{_symbolic_note(need.op)}, " \
            f"but here control flow is not uniform across the {scope}"
    cause = _cause(fu, block, need.level)
    detail = "" if cause is None else ": " + _situation(fu, block, cause, scope) + _why(fu, cause, need.level)
    loc = need.via[0].loc if need.via else need.op.loc
    if calls:
        head += f" (in {fu.func.name}(), called at {_call_site(calls[-1], loc)})"
    advice = _ADVICE[scope]
    if need.op.kind in ("load", "store") and not need.via:
        advice += (". To change elements of a matrix under a condition, write them unconditionally: "
                   "m[i] = cd.select(condition, x, m[i]) (or max(m[i], 0.0) for a ReLU)")
    return UniformityError(f"{head}{detail}. {advice}", loc)


def _call_site(call: Op, reported: object) -> str:
    """Where ``call`` is, for a message located at ``reported``: its line, and its file where that differs (a
    device function from another module)."""
    at = call.loc
    if at is None:
        return "an unknown line"
    other = getattr(reported, "file", None)
    return f"line {at.line}" if other == at.file else f"{at.file}:{at.line}"


# what the operands of matrix ops are called in the user's terms (others: "operand N")
_OPERANDS = {"coop_load": ("the pointer (buffer and offset)", "the stride"),
             "coop_store": ("the pointer (buffer and offset)", "the matrix", "the stride"),
             "coop_muladd": ("the matrix A", "the matrix B", "the matrix C"),
             "splat": ("the value",), "mat_times_scalar": ("the matrix", "the scalar"),
             "select": ("the condition", "the first choice", "the second choice"),
             "coop_store_tensor": ("the pointer (buffer and offset)", "the matrix stored", "the tensor layout",
                                   "the tensor view")}


def _tensor_load_names(op: Op) -> tuple[str, ...]:
    """The operands of a tensor load by what they are: pointer, fill, layout, then the optional view and
    decode function (present or not, so named by type, not by position)."""
    rest = ["the tensor view" if isinstance(v.type, T.TensorViewType) else "the decode function"
            for v in op.operands[3:]]
    return ("the pointer (buffer and offset)", "the fill value", "the tensor layout", *rest)


def operand_error(fu: FunctionUniformity, op: Op, index: int, fact: Fact, level: Level,
                  calls: tuple[Op, ...] = ()) -> UniformityError:
    """The UniformityError for operand ``index`` of the matrix op ``op`` (in the analysed function ``fu``),
    which is only as uniform as ``fact`` where ``level`` is needed."""
    scope = level.name.lower()
    names = _tensor_load_names(op) if op.kind == "coop_load_tensor" else _OPERANDS.get(op.kind, ())
    v = op.operands[index]
    what = names[index] if index < len(names) else \
        "the matrix operand" if isinstance(v.type, T.CoopMatType) else f"operand {index + 1}"
    if op.kind in ("load", "store"):  # a whole matrix in a local variable, a local or a private array
        what = "the index into the array of matrices" if index == 0 else "the matrix stored into the array"
    else:
        what += f" of {op_name(op)}"
    text = f"{what} must be the same in every invocation of the {scope}{_symbolic_note(op)} " \
           f"(dynamically uniform, as SPIR-V requires of every operand of a cooperative-matrix operation)"
    if calls:
        text += f" (in {fu.func.name}(), called at {_call_site(calls[-1], op.loc)})"
    got, origin = fact
    text += ", but it is not"
    if origin is not None:
        at = f" (line {origin.loc.line})" if origin.loc is not None and origin.loc.line != op.loc.line \
            and f"line {origin.loc.line}" not in origin.what else ""
        text += f": it depends on {origin.what}{at}"
    if 0 < got < level:
        text += ", which is uniform within each subgroup only: not enough for an operation of workgroup scope"
    advice = (f"Compute it from values uniform across the {scope} (cd.workgroup_id, "
              + ("cd.subgroup_id, " if scope == "subgroup" else "")
              + "push or spec constants, loads of read-only buffers at such addresses), or, if you know it is "
              f"the same in every invocation of the {scope}, wrap it in cd.assume_uniform(...)")
    if op.kind in ("load", "store") and index == 0:
        advice = (f"Index arrays of matrices with values uniform across the {scope} (unrolled loop counters, "
                  "cd.subgroup_id, spec constants), or pick the matrix with a uniform choice")
    return UniformityError(f"{text}. {advice}", op.loc)


def _symbolic_note(op: Op) -> str:
    types = [op.type] + [v.type for v in op.operands]
    if any(isinstance(t, T.CoopMatType) and not isinstance(t.scope, int) for t in types):
        return " (its scope is a specialization constant, which may be Workgroup)"
    return ""


def _cause(fu: FunctionUniformity, block: Block, need: Level) -> Block | None:
    """The branch whose non-uniform condition keeps control from reaching ``block`` uniformly enough
    (the nearest one first), following control dependences back from ``block``."""
    seen, work = {block}, [block]
    while work:
        b = work.pop(0)
        deps = list(reversed(fu.cfg.control_deps[b]))
        for x in deps:
            if fu.cond_fact(x)[0] < need:
                return x
        for x in deps:
            if fu.ctl[x] < need and x not in seen:
                seen.add(x)
                work.append(x)
    return None


def _where(loc: SourceLoc) -> str:
    text = _without_comment(loc.source_line()).strip()
    return f"line {loc.line}, column {loc.col}" + (f" (`{text}`)" if text else "")


def _without_comment(line: str) -> str:
    """``line`` up to its ``#`` comment, if any (as Python's tokenizer sees it)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return line[:tok.start[1]]
    except (tokenize.TokenError, SyntaxError):
        pass
    return line


def _situation(fu: FunctionUniformity, block: Block, x: Block, scope: str) -> str:
    cfg = fu.cfg
    where = _where(cond_loc(x))
    uniform = f"not uniform across the {scope}"
    if _is_loop_test(cfg, x):
        return f"it is inside a loop whose condition at {where} is {uniform}, so invocations leave it " \
               f"at different iterations"
    merge = x.merge.merge if isinstance(x.merge, SelectionMerge) else None
    if merge is None or block is not x and cfg.dominates(x, block) and not cfg.dominates(merge, block):
        return f"it is inside the branch on the condition at {where}, which is {uniform}"
    exit_kind = _exit_kind(cfg, x, merge)
    if cfg.loops_of[x] & cfg.loops_of[block] and not cfg.dominates(merge, block):
        return f"it is inside a loop that invocations leave at different iterations (`{exit_kind}` under the " \
               f"condition at {where}, which is {uniform})"
    return f"some invocations left early (`{exit_kind}`) under the condition at {where}, which is {uniform}"


def _is_loop_test(cfg: CFG, x: Block) -> bool:
    """Whether ``x`` is the test of a loop (a branch straight to the merge of a loop holding ``x``)."""
    if isinstance(x.merge, LoopMerge):
        return True
    if x.merge is not None:
        return False
    return any(isinstance(h.merge, LoopMerge) and h.merge.merge in cfg.succs[x] for h in cfg.loops_of[x])


def _exit_kind(cfg: CFG, x: Block, merge: Block) -> str:
    """``return``, ``break`` or ``continue``: how control leaves the selection headed by ``x`` early."""
    loops = [h.merge for h in cfg.loops_of[x] if isinstance(h.merge, LoopMerge)]
    stack, seen = list(cfg.succs[x]), set()
    while stack:
        b = stack.pop()
        if b in seen or b is merge:
            continue
        seen.add(b)
        assert b.terminator is not None
        if b.terminator.kind == "return":
            return "return"
        for t in cfg.succs[b]:
            if any(t is m.merge for m in loops):
                return "break"
            if any(t is m.cont for m in loops) and t is not merge:
                return "continue"
            if (b, t) not in cfg.back_edges:
                stack.append(t)
    return "return"


def _why(fu: FunctionUniformity, x: Block, need: Level) -> str:
    level, origin = fu.cond_fact(x)
    text = ""
    if origin is not None:
        at = f" (line {origin.loc.line})" if origin.loc is not None and origin.loc.line != cond_loc(x).line else ""
        text = f"; it depends on {origin.what}{at}"
    if 0 < level < need:  # subgroup-uniform where workgroup uniformity is needed
        text += ", which is uniform within each subgroup only: not enough for an operation of workgroup scope"
    return text


_ADVICE = {
    "subgroup": "Move the operation out of the branch, make the condition uniform across the subgroup (build it "
                "from cd.workgroup_id, cd.subgroup_id, push or spec constants, or vote with cd.subgroup_all(...) / "
                "cd.subgroup_any(...)), or, if you know every invocation of the subgroup takes the same path, wrap "
                "the condition in cd.assume_uniform(...)",
    "workgroup": "Move the operation out of the branch, make the condition uniform across the workgroup (build it "
                 "from cd.workgroup_id, push or spec constants, or loads of read-only buffers at such addresses; "
                 "subgroup votes such as cd.subgroup_all(...) are not enough), or, if you know every invocation of "
                 "the workgroup takes the same path, wrap the condition in cd.assume_uniform(...)",
}
