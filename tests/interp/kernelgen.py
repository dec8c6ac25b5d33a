"""Random well-typed coopdsl kernels, each with a plain numpy model of what it computes.

Two families, both built from a small program tree that is printed as kernel
source *and* evaluated directly with numpy (all invocations in lockstep with
an active mask, independent of the IR and the interpreter):

* :func:`scalar_case`: scalar arithmetic (i32/u32/f32) with if/else, loops
  with constant or per-invocation trip counts and ``break``, early
  ``return``, subgroup reductions/scans/broadcasts in divergent code, shared
  memory round trips between barriers, and atomics;
* :func:`matrix_case`: cooperative-matrix programs over legal shapes,
  component types, scopes and layouts: loads with random strides and
  layouts, a chain of MulAdds (signedness from the types, optional
  saturation), element-wise ops, conversions, element access (through the
  documented element mapping), and a store.

Each can be made ill-typed (:func:`ill_typed`), which must raise a
CompileError at a known line.  Choices come from a :class:`Chooser`, backed
by Hypothesis in the tests and by ``random`` in ``scripts/fuzz_interp.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coopdsl.interp.floats import from_bits, round_float
from coopdsl.ir import types as T

SG_MAX = 64


class Chooser:
    """Where random choices come from (``int`` and ``choice``)."""

    def int(self, lo: int, hi: int) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def choice(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        return self.int(0, 99) < percent


class RandomChooser(Chooser):
    """Choices from a seeded ``random.Random``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class HypothesisChooser(Chooser):
    """Choices drawn from a Hypothesis ``data`` object (so failures shrink)."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def int(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))


@dataclass
class Case:
    """A generated kernel: its source, how to launch it, and what numpy says the outputs are."""

    source: str
    grid: tuple
    args: list                      # positional launch arguments (numpy arrays are copied per run)
    outputs: list[int]              # indices of args to compare
    expected: list[np.ndarray]
    subgroup_size: int
    exact: bool = True
    bad_line: int | None = None     # for ill-typed variants: the line the CompileError must point at
    kind: str = ""
    extra: dict = field(default_factory=dict)

    def fresh_args(self) -> list:
        return [a.copy() if isinstance(a, np.ndarray) else a for a in self.args]


# == scalar programs ================================================================================
NP = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}
INT_OPS = ["+", "-", "*", "&", "|", "^", "min", "max", "//", "%", ">>", "<<"]
FLOAT_OPS = ["+", "-", "*", "min", "max", "/"]
CMP = ["<", "<=", ">", ">=", "==", "!="]


class Ctx:
    """Model state: values per invocation slot, the active mask, the launch geometry."""

    def __init__(self, t: str, wg: int, sgs: int, groups: int):
        self.t, self.wg, self.sgs, self.groups = t, wg, sgs, groups
        self.n = wg * groups
        self.lid = np.arange(self.n) % wg
        self.gid = np.arange(self.n)
        self.env: dict[str, np.ndarray] = {}
        self.returned = np.zeros(self.n, bool)

    def cast(self, v) -> np.ndarray:
        return np.asarray(v).astype(NP[self.t])


# -- expressions ----------------------------------------------------------------------------------
@dataclass
class Expr:
    kind: str
    args: tuple = ()

    def src(self, t: str) -> str:
        k, a = self.kind, self.args
        if k == "var":
            return a[0]
        if k == "const":
            return f"{t}({a[0]})"
        if k == "conv":
            return f"{t}({a[0]})"
        if k == "neg":
            return f"(-{a[0].src(t)})"
        if k == "bin":
            op, x, y = a
            xs, ys = x.src(t), y.src(t)
            if op in ("min", "max"):
                return f"cd.{op}({xs}, {ys})"
            if op in ("//", "%"):
                return f"({xs} {op} (({ys} & {t}(7)) + {t}(1)))"
            if op in (">>", "<<"):
                return f"({xs} {op} ({ys} & {t}(7)))"
            if op == "/":
                return f"({xs} / (abs({ys}) + {t}(1.0)))"
            return f"({xs} {op} {ys})"
        if k == "select":
            c, x, y = a
            return f"cd.select({c.src(t)}, {x.src(t)}, {y.src(t)})"
        if k == "cmp":
            op, x, y = a
            return f"({x.src(t)} {op} {y.src(t)})"
        if k in ("and", "or"):
            return f"({a[0].src(t)} {k} {a[1].src(t)})"
        raise KeyError(k)

    def eval(self, c: Ctx, mask: np.ndarray) -> np.ndarray:
        k, a = self.kind, self.args
        if k == "var":
            return c.env[a[0]]
        if k == "const":
            return c.cast(np.full(c.n, a[0]))
        if k == "conv":
            return c.cast(c.env[a[0]].astype(np.int64) if c.t != "f32" else c.env[a[0]])
        if k == "neg":
            return -a[0].eval(c, mask)
        if k == "bin":
            return _binary(c, a[0], a[1].eval(c, mask), a[2].eval(c, mask))
        if k == "select":
            return np.where(a[0].eval(c, mask), a[1].eval(c, mask), a[2].eval(c, mask))
        if k == "cmp":
            x, y = a[1].eval(c, mask), a[2].eval(c, mask)
            return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                    "==": np.equal, "!=": np.not_equal}[a[0]](x, y)
        if k == "and":
            return a[0].eval(c, mask) & a[1].eval(c, mask)
        if k == "or":
            return a[0].eval(c, mask) | a[1].eval(c, mask)
        raise KeyError(k)


def _binary(c: Ctx, op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    t = NP[c.t]
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op in ("&", "|", "^"):
        return {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}[op](x, y)
    if op == "min":
        return np.minimum(x, y)
    if op == "max":
        return np.maximum(x, y)
    if op in ("//", "%"):
        d = (y & t(7)) + t(1)
        q = np.trunc(x.astype(np.float64) / d.astype(np.float64)).astype(np.int64)
        return (q if op == "//" else x.astype(np.int64) - q * d.astype(np.int64)).astype(t)
    if op in (">>", "<<"):
        s = y & t(7)
        return np.right_shift(x, s) if op == ">>" else np.left_shift(x, s)
    if op == "/":
        return x / (np.abs(y) + t(1.0))
    raise KeyError(op)


def gen_expr(ch: Chooser, t: str, names: list[str], depth: int) -> Expr:
    if depth <= 0 or ch.chance(30):
        r = ch.int(0, 9)
        if r < 6:
            return Expr("var", (ch.choice(names),))
        return Expr("const", (ch.int(0, 9) if t != "f32" else ch.choice([0.5, 1.0, 1.5, 2.0, -0.25, 3.0]),))
    r = ch.int(0, 9)
    if r < 7:
        op = ch.choice(FLOAT_OPS if t == "f32" else INT_OPS)
        return Expr("bin", (op, gen_expr(ch, t, names, depth - 1), gen_expr(ch, t, names, depth - 1)))
    if r < 8 and t != "u32":
        return Expr("neg", (gen_expr(ch, t, names, depth - 1),))
    return Expr("select", (gen_cond(ch, t, names, depth - 1), gen_expr(ch, t, names, depth - 1),
                           gen_expr(ch, t, names, depth - 1)))


def gen_cond(ch: Chooser, t: str, names: list[str], depth: int) -> Expr:
    c = Expr("cmp", (ch.choice(CMP), gen_expr(ch, t, names, max(depth - 1, 0)),
                     gen_expr(ch, t, names, max(depth - 1, 0))))
    if depth > 0 and ch.chance(25):
        return Expr(ch.choice(["and", "or"]), (c, gen_cond(ch, t, names, depth - 1)))
    return c


# -- statements -------------------------------------------------------------------------------------
SUBGROUP_INT = ["subgroup_add", "subgroup_min", "subgroup_max", "subgroup_inclusive_add",
                "subgroup_exclusive_max", "subgroup_broadcast_first", "subgroup_xor"]
SUBGROUP_FLOAT = ["subgroup_min", "subgroup_max", "subgroup_broadcast_first", "subgroup_inclusive_max"]


@dataclass
class Stmt:
    kind: str
    args: tuple = ()
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)

    def lines(self, t: str, indent: int, out: list[str]) -> None:
        pad = "    " * indent
        k, a = self.kind, self.args
        if k == "assign":
            self.line = len(out) + 1
            out.append(f"{pad}{a[0]} = {a[1].src(t)}")
        elif k == "if":
            out.append(f"{pad}if {a[0].src(t)}:")
            _block(self.body, t, indent + 1, out)
            if self.orelse:
                out.append(f"{pad}else:")
                _block(self.orelse, t, indent + 1, out)
        elif k == "for":
            var, count, brk = a
            bound = str(count) if isinstance(count, int) else f"cd.local_invocation_index % {count[1]}"
            out.append(f"{pad}for {var} in range({bound}):")
            _block(self.body, t, indent + 1, out)
            if brk is not None:
                out.append(f"{pad}    if {brk.src(t)}:")
                out.append(f"{pad}        break")
        elif k == "subgroup":
            name, src = a[1], a[2]
            out.append(f"{pad}{a[0]} = cd.{name}({src})")
        elif k == "shared":
            var, e, shift = a
            out.append(f"{pad}sh[cd.local_invocation_index] = {e.src(t)}")
            out.append(f"{pad}cd.barrier()")
            out.append(f"{pad}{var} = sh[(cd.local_invocation_index + {shift}) % {{WG}}]")
            out.append(f"{pad}cd.barrier()")
        elif k == "atomic":
            out.append(f"{pad}cd.atomic_add(acc, cd.local_invocation_index % 4, {a[0]})")
        elif k == "return":
            out.append(f"{pad}if {a[0].src(t)}:")
            out.append(f"{pad}    return")
        else:
            raise KeyError(k)

    def run(self, c: Ctx, mask: np.ndarray) -> None:
        k, a = self.kind, self.args
        if not mask.any():
            return
        if k == "assign":
            c.env[a[0]] = np.where(mask, a[1].eval(c, mask), c.env[a[0]])
        elif k == "if":
            cond = a[0].eval(c, mask)
            _run(self.body, c, mask & cond)
            _run(self.orelse, c, mask & ~cond)
        elif k == "for":
            var, count, brk = a
            trips = np.full(c.n, count) if isinstance(count, int) else c.lid % count[1]
            live = mask.copy()
            j = 0
            while (live & (j < trips)).any():
                live &= j < trips
                c.env[var] = np.full(c.n, j, np.uint32)
                _run(self.body, c, live)
                if brk is not None:
                    live &= ~brk.eval(c, live)
                j += 1
        elif k == "subgroup":
            c.env[a[0]] = np.where(mask, _subgroup(c, a[1], c.env[a[2]], mask), c.env[a[0]])
        elif k == "shared":
            var, e, shift = a
            v = e.eval(c, mask).reshape(c.groups, c.wg)
            got = np.roll(v, -shift, axis=1).reshape(-1)
            c.env[var] = np.where(mask, got, c.env[var])
        elif k == "atomic":
            np.add.at(c.env["@acc"], c.lid[mask] % 4, c.env[a[0]][mask])
        elif k == "return":
            c.returned |= mask & a[0].eval(c, mask)


def _block(stmts: list, t: str, indent: int, out: list[str]) -> None:
    if not stmts:
        out.append("    " * indent + "pass")
    for s in stmts:
        s.lines(t, indent, out)


def _run(stmts: list, c: Ctx, mask: np.ndarray) -> None:
    for s in stmts:
        s.run(c, mask & ~c.returned)


def _subgroup(c: Ctx, name: str, v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    g = v.reshape(-1, c.sgs)
    act = mask.reshape(-1, c.sgs)
    out = np.zeros_like(g)
    for s in range(len(g)):
        x, m = g[s], act[s]
        if not m.any():
            continue
        xs = x[m]
        if name == "subgroup_add":
            out[s] = xs.sum(dtype=x.dtype)
        elif name == "subgroup_min":
            out[s] = xs.min()
        elif name == "subgroup_max":
            out[s] = xs.max()
        elif name == "subgroup_xor":
            out[s] = np.bitwise_xor.reduce(xs)
        elif name == "subgroup_broadcast_first":
            out[s] = xs[0]
        elif name in ("subgroup_inclusive_add", "subgroup_inclusive_max"):
            fn = np.add if name.endswith("add") else np.maximum
            out[s][m] = fn.accumulate(xs, dtype=x.dtype)
        elif name == "subgroup_exclusive_max":
            lo = np.iinfo(x.dtype).min
            out[s][m] = np.r_[lo, np.maximum.accumulate(xs)[:-1]].astype(x.dtype)
    return out.reshape(-1)


def gen_stmts(ch: Chooser, t: str, names: list[str], depth: int, top: bool, state: dict) -> list[Stmt]:
    stmts = []
    for _ in range(ch.int(1, 4 if top else 2)):
        r = ch.int(0, 99)
        if r < 40 or depth <= 0:
            stmts.append(Stmt("assign", (ch.choice(names[:4]), gen_expr(ch, t, names, 3))))
        elif r < 55:
            stmts.append(Stmt("if", (gen_cond(ch, t, names, 2),), gen_stmts(ch, t, names, depth - 1, False, state),
                              gen_stmts(ch, t, names, depth - 1, False, state) if ch.chance(50) else []))
        elif r < 68:
            var = f"j{state['loops']}"
            state["loops"] += 1
            count = ch.int(1, 4) if ch.chance(50) else ("lid", ch.int(2, 5))
            inner = names + [f"{t}({var})"]
            body = gen_stmts(ch, t, inner, depth - 1, False, state)
            brk = gen_cond(ch, t, inner, 1) if ch.chance(40) else None
            stmts.append(Stmt("for", (var, count, brk), body))
        elif r < 80:
            ops = SUBGROUP_FLOAT if t == "f32" else SUBGROUP_INT
            stmts.append(Stmt("subgroup", (ch.choice(names[:4]), ch.choice(ops), ch.choice(names[:4]))))
        elif r < 88 and top and not state["returned"]:
            stmts.append(Stmt("shared", (ch.choice(names[:4]), gen_expr(ch, t, names, 2), ch.int(1, 40))))
        elif r < 94 and t != "f32":
            stmts.append(Stmt("atomic", (ch.choice(names[:4]),)))
            state["atomic"] = True
        elif top:
            stmts.append(Stmt("return", (gen_cond(ch, t, names, 1),)))
            state["returned"] = True
        else:
            stmts.append(Stmt("assign", (ch.choice(names[:4]), gen_expr(ch, t, names, 2))))
    return stmts


def _conv_leaves(stmts: list[Stmt]) -> None:
    """Turn the ``T(j)`` names offered inside loops into conversion leaves."""
    def fix(e):
        if isinstance(e, Expr):
            if e.kind == "var" and "(" in e.args[0]:
                e.kind, e.args = "conv", (e.args[0].split("(")[1][:-1],)
            for x in e.args:
                fix(x)

    for s in stmts:
        for x in s.args:
            fix(x)
        _conv_leaves(s.body)
        _conv_leaves(s.orelse)


def scalar_case(ch: Chooser, subgroup_size: int | None = None) -> Case:
    """A random scalar program over i32/u32/f32 and its numpy model (at ``subgroup_size``, else a random one)."""
    t = ch.choice(["i32", "u32", "f32"])
    wg = ch.choice([32, 64])
    sgs = subgroup_size or ch.choice([8, 16, 32])
    groups = ch.int(1, 2)
    names = ["v0", "v1", "v2", "v3"]
    state = {"loops": 0, "returned": False, "atomic": False}
    body = gen_stmts(ch, t, names, 2, True, state)
    _conv_leaves(body)
    lines = ["import coopdsl as cd", f"from coopdsl import {', '.join(sorted({t, 'u32'}))}", "", "",
             f"@cd.kernel(workgroup_size=({wg}, 1, 1))",
             f"def k(x: cd.Buffer[{t}], y: cd.Buffer[{t}], out: cd.Buffer[{t}], acc: cd.Buffer[{t}]):",
             f"    sh = cd.shared({t}, {wg})",
             "    g = cd.global_invocation_id.x",
             "    v0 = x[g]", "    v1 = y[g]", f"    v2 = {t}(cd.local_invocation_index)", "    v3 = x[g] - y[g]"]
    first = len(lines)
    for s in body:
        s.lines(t, 1, lines)
    for k in range(4):
        lines.append(f"    out[g * 4 + {k}] = v{k}")
    source = "\n".join(lines).replace("{WG}", str(wg)) + "\n"
    rng = np.random.default_rng(ch.int(0, 2**31))
    n = wg * groups
    if t == "f32":
        x = rng.uniform(-4, 4, n).astype(np.float32)
        y = rng.uniform(-4, 4, n).astype(np.float32)
    else:
        lo = -1000 if t == "i32" else 0
        x = rng.integers(lo, 1000, n).astype(NP[t])
        y = rng.integers(lo, 1000, n).astype(NP[t])
    c = Ctx(t, wg, sgs, groups)
    c.env.update(v0=x.copy(), v1=y.copy(), v2=c.cast(c.lid), v3=x - y)
    c.env["@acc"] = np.zeros(4, NP[t])
    with np.errstate(all="ignore"):
        _run(body, c, np.ones(n, bool))
    sentinel = np.full(4 * n, 7, NP[t])
    expected = sentinel.copy().reshape(n, 4)
    for k in range(4):
        expected[:, k] = np.where(c.returned, expected[:, k], c.env[f"v{k}"])
    case = Case(source, (groups, 1, 1), [x, y, sentinel, np.zeros(4, NP[t])], [2, 3],
                [expected.reshape(-1), c.env["@acc"]], sgs, kind="scalar")
    case.extra["assign_lines"] = [s.line for s in body if s.kind == "assign"]
    case.extra["type"] = t
    case.extra["first_line"] = first
    return case


# == cooperative-matrix programs ======================================================================
# (A/B component, accumulator component, M, N, K, scope, workgroup size)
CONFIGS = [
    ("f16", "f32", 16, 16, 16, "Subgroup", 32), ("f16", "f16", 16, 16, 16, "Subgroup", 32),
    ("f16", "f32", 16, 8, 16, "Subgroup", 64), ("f16", "f32", 16, 8, 8, "Subgroup", 32),
    ("bf16", "f32", 16, 16, 16, "Subgroup", 32), ("i8", "i32", 16, 16, 32, "Subgroup", 32),
    ("u8", "u32", 16, 16, 32, "Subgroup", 32), ("i8", "i32", 16, 8, 32, "Subgroup", 64),
    ("u8", "i32", 16, 16, 32, "Subgroup", 32), ("f16", "f32", 32, 32, 16, "Workgroup", 64),
    ("f16", "f32", 64, 64, 16, "Workgroup", 128),
]
STORAGE = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "i8": np.int8, "u8": np.uint8,
           "i32": np.int32, "u32": np.uint32}


def _tile(buf: np.ndarray, off: int, ld: int, row_major: bool, rows: int, cols: int) -> np.ndarray:
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    return buf[off + (r * ld + c if row_major else c * ld + r)]


def _footprint(ld: int, row_major: bool, rows: int, cols: int) -> int:
    return (rows - 1) * ld + cols if row_major else (cols - 1) * ld + rows


def _values(tname: str, buf: np.ndarray) -> np.ndarray:
    """Component values (float64 / int64) of a buffer's raw elements."""
    if tname == "bf16":
        return from_bits(buf, T.bf16).astype(np.float64)
    return buf.astype(np.float64 if tname.startswith("f") else np.int64)


def matrix_case(ch: Chooser, element_access: bool = True) -> Case:
    """A random cooperative-matrix program and its numpy model.

    ``element_access=False`` leaves out ``m[i]`` updates: which matrix elements an invocation holds is
    implementation-defined, so the model (the interpreter's documented mapping) only predicts a GPU's
    result for programs that do not depend on it.
    """
    ta, tc, M, N, K, scope, wg = ch.choice(CONFIGS)
    # at subgroup scope each 32-wide subgroup computes its own tile; a workgroup-scope matrix spans any size
    sgs = 32 if scope == "Subgroup" else ch.choice([16, 32])
    groups = ch.int(1, 2)
    per_wg = (wg // sgs) if scope == "Subgroup" else 1
    steps = ch.int(1, 3)
    la, lb, lc, lo = (ch.chance(50) for _ in range(4))   # RowMajor?
    lda = (K if la else M) + ch.int(0, 4)
    ldb = (N if lb else K) + ch.int(0, 4)
    ldc = (N if lc else M) + ch.int(0, 4)
    ldo = (N if lo else M) + ch.int(0, 4)
    a_step, b_step = _footprint(lda, la, M, K), _footprint(ldb, lb, K, N)
    a_tile, b_tile = steps * a_step, steps * b_step
    c_tile, o_tile = _footprint(ldc, lc, M, N), _footprint(ldo, lo, M, N)
    integer = tc[0] in "iu"
    saturate = integer and ch.chance(40)
    init = ch.choice(["splat", "load"])
    splat = ch.int(-3, 3) if tc != "u32" else ch.int(0, 3)
    posts = [ch.choice(["add_self", "neg", "scale", "element", "convert"]) for _ in range(ch.int(0, 2))]
    if not element_access:
        posts = [p for p in posts if p != "element"]
    if integer:
        posts = [p for p in posts if p not in ("convert", "neg")] if tc == "u32" else \
            [p for p in posts if p != "convert"]
    if saturate:
        posts = []  # keep the values the saturation produced
    sc = ", cd.Workgroup" if scope == "Workgroup" else ""
    unit = "cd.subgroup_id" if scope == "Subgroup" else "u32(0)"
    tile_id = f"(cd.workgroup_id.x * {per_wg} + {unit})"
    L = lambda row: "cd.RowMajor" if row else "cd.ColumnMajor"  # noqa: E731
    names = {ta, tc, "u32"} | ({"f16" if tc == "f32" else "f32"} if "convert" in posts else set())
    lines = ["import coopdsl as cd", f"from coopdsl import Acc, MatA, MatB, {', '.join(sorted(names))}", "", "",
             f"@cd.kernel(workgroup_size=({wg}, 1, 1))",
             f"def k(a: cd.Buffer[{ta}], b: cd.Buffer[{ta}], c: cd.Buffer[{tc}], out: cd.Buffer[{tc}]):",
             f"    t = {tile_id}"]
    if init == "splat":
        lines.append(f"    acc = Acc[{tc}, {M}, {N}{sc}].splat({splat})")
    else:
        lines.append(f"    acc = Acc[{tc}, {M}, {N}{sc}].load(c, t * {c_tile}, stride={ldc}, layout={L(lc)})")
    lines += [f"    for s in range({steps}):",
              f"        ta = MatA[{ta}, {M}, {K}{sc}].load(a, t * {a_tile} + s * {a_step}, stride={lda}, "
              f"layout={L(la)})",
              f"        tb = MatB[{ta}, {K}, {N}{sc}].load(b, t * {b_tile} + s * {b_step}, stride={ldb}, "
              f"layout={L(lb)})"]
    mul_line = len(lines) + 1
    lines.append(f"        acc = cd.muladd(ta, tb, acc{', saturate=True' if saturate else ''})")
    for p in posts:
        if p == "add_self":
            lines.append("    acc = acc + acc")
        elif p == "neg":
            lines.append("    acc = -acc")
        elif p == "scale":
            lines.append(f"    acc = acc * {'3' if integer else '0.5'}")
        elif p == "element":
            lines.append(f"    acc[0] = acc[0] + {tc}(1)")
        elif p == "convert":
            other = "f16" if tc == "f32" else "f32"
            lines.append(f"    acc = Acc[{tc}, {M}, {N}{sc}](Acc[{other}, {M}, {N}{sc}](acc))")
    lines.append(f"    acc.store(out, t * {o_tile}, stride={ldo}, layout={L(lo)})")
    source = "\n".join(lines) + "\n"

    tiles = groups * per_wg
    rng = np.random.default_rng(ch.int(0, 2**31))
    a = _random(rng, ta, tiles * a_tile)
    b = _random(rng, ta, tiles * b_tile)
    c = _random(rng, tc, tiles * c_tile, big=saturate)
    out = np.zeros(tiles * o_tile, STORAGE[tc])
    expected = out.copy()
    members = sgs if scope == "Subgroup" else wg
    for i in range(tiles):
        acc = np.full((M, N), splat, np.float64 if not integer else np.int64) if init == "splat" else \
            _values(tc, _tile(c, i * c_tile, ldc, lc, M, N))
        for s in range(steps):
            A = _values(ta, _tile(a, i * a_tile + s * a_step, lda, la, M, K))
            B = _values(ta, _tile(b, i * b_tile + s * b_step, ldb, lb, K, N))
            acc = _muladd(A, B, acc, tc, saturate)
        for p in posts:
            acc = _post(p, acc, tc, M * N // members)
        r, cidx = np.arange(M)[:, None], np.arange(N)[None, :]
        expected[i * o_tile + (r * ldo + cidx if lo else cidx * ldo + r)] = acc.astype(STORAGE[tc])
    case = Case(source, (groups, 1, 1), [a, b, c, out], [3], [expected], sgs, exact=integer, kind="matrix")
    case.extra.update(mul_line=mul_line, config=(ta, tc, M, N, K, scope))
    return case


def _random(rng, tname: str, n: int, big: bool = False) -> np.ndarray:
    if tname == "f16":
        return rng.uniform(-1, 1, n).astype(np.float16)
    if tname == "f32":
        return rng.uniform(-1, 1, n).astype(np.float32)
    if tname == "bf16":
        return (rng.uniform(-1, 1, n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    info = np.iinfo(STORAGE[tname])
    if big:
        return rng.choice([info.min, info.max, 0, info.max // 2], n).astype(STORAGE[tname])
    return rng.integers(info.min, int(info.max) + 1, n).astype(STORAGE[tname])


def _muladd(A, B, C, tc: str, saturate: bool) -> np.ndarray:
    if tc[0] == "f":
        r = A.astype(np.float32) @ B.astype(np.float32) + C.astype(np.float32)
        return round_float(r, T.SCALARS[tc]).astype(np.float64)
    total = A.astype(np.int64) @ B.astype(np.int64) + C.astype(np.int64)
    info = np.iinfo(STORAGE[tc])
    if saturate:
        return np.clip(total, int(info.min), int(info.max))
    bits = 8 * np.dtype(STORAGE[tc]).itemsize
    return (total % (1 << bits)).astype(np.uint64).astype(np.dtype(f"u{bits // 8}")).view(STORAGE[tc]).astype(np.int64)


def _post(p: str, acc: np.ndarray, tc: str, per_lane: int) -> np.ndarray:
    rnd = (lambda v: round_float(v, T.SCALARS[tc]).astype(np.float64)) if tc[0] == "f" else \
        (lambda v: v.astype(np.int64).astype(STORAGE[tc]).astype(np.int64))
    if p == "add_self":
        return rnd(acc + acc)
    if p == "neg":
        return rnd(-acc)
    if p == "scale":
        return rnd(acc * (3 if tc[0] in "iu" else 0.5))
    if p == "element":  # component 0 of every invocation: flat element l * per_lane
        flat = acc.reshape(-1).copy()
        flat[::per_lane] = rnd(flat[::per_lane] + 1)
        return flat.reshape(acc.shape)
    if p == "convert":
        other = T.f16 if tc == "f32" else T.f32
        return rnd(round_float(acc, other).astype(np.float64))
    raise KeyError(p)


# == ill-typed variants ================================================================================
def ill_typed(case: Case, ch: Chooser) -> Case | None:
    """``case`` with one type error; ``bad_line`` is where the CompileError must point (None: no variant)."""
    lines = case.source.splitlines()
    if case.kind == "matrix":
        line = case.extra["mul_line"]
        ta, tc, M, N, K, scope = case.extra["config"]
        b_line = line - 1
        lines[b_line - 1] = lines[b_line - 1].replace(f"MatB[{ta}, {K}, {N}", f"MatB[{ta}, {K + 8}, {N}")
    else:
        candidates = case.extra["assign_lines"]
        if not candidates:
            return None
        line = ch.choice(candidates)
        other = "f16" if case.extra["type"] != "f16" else "f32"
        head, rhs = lines[line - 1].split(" = ", 1)
        lines[line - 1] = f"{head} = {rhs} + cd.{other}(1)"
    return Case("\n".join(lines) + "\n", case.grid, case.args, case.outputs, case.expected, case.subgroup_size,
                bad_line=line, kind=case.kind + "-ill-typed")


# == running ===========================================================================================
def load_kernel(case: Case, path) -> Any:
    """Write the case's source to ``path`` and return its kernel ``k``."""
    import runpy
    from pathlib import Path

    Path(path).write_text(case.source)
    return runpy.run_path(str(path))["k"]


def run_case(case: Case, path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(interpreter outputs, numpy model outputs) of a well-typed case."""
    k = load_kernel(case, path)
    k.compile()  # spirv-val runs here: a rejected module raises InternalCompilerError
    args = case.fresh_args()
    k.launch(case.grid, *args, device="cpu", subgroup_size=case.subgroup_size)
    return [args[i] for i in case.outputs], case.expected


def agrees(case: Case, got: list[np.ndarray], want: list[np.ndarray]) -> bool:
    """Whether the interpreter's outputs equal the model's (floats: matrix sums may differ in order)."""
    for g, w in zip(got, want):
        if case.exact or g.dtype.kind != "f":
            if not np.array_equal(g, w, equal_nan=g.dtype.kind == "f"):
                return False
        elif not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=2e-3, atol=2e-3, equal_nan=True):
            return False
    return True


Generator = Callable[[Chooser], Case]
GENERATORS: dict[str, Generator] = {"scalar": scalar_case, "matrix": matrix_case}
