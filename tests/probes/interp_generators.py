"""Generated run probes of the CPU interpreter (hardening class 3: the interpreter, as the reference, must never
crash, hang or be silently wrong).

The compile probes (:mod:`tests.probes.generators`) stop at the compiler; these compile small valid kernels and
*run* them on the interpreter (``kernel.launch(..., device="cpu")``) with generated launches: grids (0, huge,
numpy integers), buffers too small for what the kernel indexes or of the wrong dtype or shape, push and
specialization constants at their edges (0, -1, 2**31, 2**32 - 1, wrong types), missing and extra arguments,
reads of never-written shared, local and private memory, barriers and matrix operations in divergent control
flow, integer division by zero, shifts by the width or more, NaN and infinities converted to integers,
cooperative-matrix loads and stores near the end of their buffers with generated strides and layouts, subgroup
operations with inactive lanes, loops with runtime bounds that would run very long, and memory sized by
specialization constants.

Each :class:`RunProbe` carries its expectation, from docs/interpreter.md's rules: ``ok`` (the run must finish and
its outputs equal an independent numpy/Python model of the program), ``error`` (it must raise one of coopdsl's
errors whose message says one of ``says``; a kernel error at the kernel's line) or ``either``. :func:`classify`
runs one (with a timeout, warnings recorded) and names the outcome:

* ``ok``        -- it ran and the outputs are what the model says;
* ``located``   -- an :class:`~coopdsl.errors.CompileError` (an ``InterpreterError`` included) at a line of the
  kernel the probe marks, whose message says what the probe expects;
* ``refused``   -- a launch error (``LaunchArgumentError``, ``LaunchError``) whose message says what is expected;

and the failures:

* ``wrong``     -- it ran, but an output differs from the model (silently wrong);
* ``missed``    -- it ran although the probe does something the interpreter must report;
* ``rejected``  -- a valid launch raised a coopdsl error;
* ``unnamed``   -- a coopdsl error whose message does not say what the probe expects;
* ``misplaced`` -- a CompileError at a line the probe does not mark, or in another file;
* ``internal``  -- an :class:`~coopdsl.errors.InternalCompilerError`;
* ``foreign``   -- an exception that is not coopdsl's (IndexError, ValueError, MemoryError, OverflowError ...);
* ``warning``   -- a warning (a numpy RuntimeWarning ...) reached the user;
* ``hang``      -- it ran past the timeout.

``python3 -m tests.probes.interp_generators [--count N] [--seed S] [-v] [family ...]`` runs a larger generated
set (the test runs a fixed, smaller one; ``COOPDSL_PROBES=all`` makes the test run the larger one too).
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import random
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .harness import ALSO, MARK, Outcome, _alarm, _Timeout, dedent, foreign
from .harness import _one_line as harness_one_line

GOOD = ("ok", "located", "refused")
FAILURES = ("wrong", "missed", "rejected", "unnamed", "misplaced", "internal", "foreign", "warning", "hang")

HEADER = '''
import coopdsl as cd
from coopdsl import *

'''


@dataclass
class RunProbe:
    """One generated run: a module ``source`` whose kernel ``kernel`` is launched on the interpreter.

    ``make()`` returns fresh ``(grid, args, kwargs)`` for the launch (numpy arrays are written back, so each run
    gets its own); ``check(args, kwargs)`` says what is wrong with the outputs after a run (None when right).
    ``want`` is ``ok``, ``error`` or ``either``; an error's message must contain one of ``says`` (any, when
    empty).  ``env`` is set while it runs (``COOPDSL_INTERP_MAX_ITERATIONS`` ...)."""

    name: str
    source: str
    make: Callable[[], tuple[Any, tuple, dict]]
    want: str = "ok"
    says: tuple[str, ...] = ()
    check: Callable[[tuple, dict], str | None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    kernel: str = "k"




_DIR = tempfile.mkdtemp(prefix="coopdsl_interp_probes_")
_MODULES: dict[str, tuple[str, dict]] = {}  # source -> (path, namespace): each program compiles once


def _module(source: str) -> tuple[str, dict]:
    got = _MODULES.get(source)
    if got is None:
        name = f"interp_probe_{os.getpid()}_{len(_MODULES)}"
        path = os.path.join(_DIR, name + ".py")
        with open(path, "w") as f:
            f.write(source)
        mod = type(sys)(name)
        mod.__dict__.update({"__name__": name, "__file__": path})
        sys.modules[name] = mod
        got = _MODULES[source] = (path, mod.__dict__)
        exec(compile(source, path, "exec", dont_inherit=True), mod.__dict__)
    return got


@contextlib.contextmanager
def memory_guard(extra: int = 6 << 30) -> Iterator[None]:
    """While probes run, limit the address space to what the process maps now plus ``extra`` bytes, so that an
    allocation a probe provokes fails with a MemoryError (classified ``foreign``) instead of the system killing
    the process (Linux; elsewhere nothing is limited)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = mapped + extra if hard == resource.RLIM_INFINITY else min(mapped + extra, hard)
        if soft != resource.RLIM_INFINITY and soft <= limit:
            limit = soft
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _marked(source: str) -> set[int]:
    return {i + 1 for i, line in enumerate(source.splitlines()) if line.rstrip().endswith((MARK, ALSO))}


def _says(probe: RunProbe, message: str) -> bool:
    return not probe.says or any(s in message for s in probe.says)


def classify(probe: RunProbe, timeout: float = 10.0) -> Outcome:
    """Run ``probe`` on the interpreter and classify what happened (see the module)."""
    from coopdsl.errors import CompileError, CoopDSLError, InternalCompilerError
    from coopdsl.runtime.errors import LaunchError

    old_env = {k: os.environ.get(k) for k in probe.env}
    os.environ.update(probe.env)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    path = "?"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                path, namespace = _module(probe.source)
                kernel = namespace[probe.kernel]
                grid, args, kwargs = probe.make()
                kernel.launch(grid, *args, device="cpu", **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        leaked = [w for w in caught if not type(w.message).__module__.startswith("coopdsl")]
        if leaked:
            w = leaked[0]
            return Outcome("warning", f"{type(w.message).__name__} at {os.path.basename(w.filename)}:{w.lineno}: "
                                      f"{w.message}")
        if probe.want == "error":
            return Outcome("missed", f"ran; expected an error saying {' or '.join(map(repr, probe.says))}")
        wrong = probe.check(args, kwargs) if probe.check is not None else None
        return Outcome("wrong", wrong) if wrong else Outcome("ok")
    except _Timeout:
        return Outcome("hang", f"more than {timeout:g} s")
    except InternalCompilerError as e:
        return Outcome("internal", _one_line(e))
    except CompileError as e:
        loc = getattr(e, "loc", None)
        if loc is None or loc.file != path or loc.line not in _marked(probe.source):
            where = f"{os.path.basename(str(loc.file))}:{loc.line}" if loc is not None else "?"
            return Outcome("misplaced", f"at {where}: {e.message}")
        return _expected(probe, "located", e.message)
    except (LaunchError, CoopDSLError) as e:
        return _expected(probe, "refused", f"{type(e).__name__}: {_one_line(e)}")
    except RecursionError as e:
        return Outcome("foreign", f"RecursionError: {_one_line(e)}")
    except Exception as e:  # noqa: BLE001 - classifying is the point
        return foreign(e, qualified=True, width=300)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _expected(probe: RunProbe, kind: str, message: str) -> Outcome:
    first = message.strip().splitlines()[0][:300] if message.strip() else message
    if probe.want == "ok":
        return Outcome("rejected", f"{kind}: {first}")
    if not _says(probe, message):
        return Outcome("unnamed", f"{kind}, not saying {' or '.join(map(repr, probe.says))}: {first}")
    return Outcome(kind, first)


def _one_line(e: BaseException) -> str:
    return harness_one_line(e, 300)


def run(probes: Iterator[RunProbe] | list[RunProbe], timeout: float = 10.0
        ) -> dict[str, list[tuple[RunProbe, Outcome]]]:
    """Classify every probe; outcomes grouped by class."""
    out: dict[str, list[tuple[RunProbe, Outcome]]] = collections.defaultdict(list)
    for p in probes:
        o = classify(p, timeout)
        out[o.kind].append((p, o))
    return out


def summary(results: dict[str, list[tuple[RunProbe, Outcome]]]) -> str:
    return ", ".join(f"{k} {len(v)}" for k, v in sorted(results.items()))


def program(body: str) -> str:
    return dedent(HEADER) + dedent(body).replace("{mark}", MARK).replace("{also}", ALSO)


def _same(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    """None when ``got`` equals ``want`` bit for bit (NaNs equal), else where they first differ."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    if got.dtype.kind == "f":
        same = (got == want) | (np.isnan(got) & np.isnan(want))
    else:
        same = got == want
    if same.all():
        return None
    k = int(np.argmin(same.reshape(-1)))
    return f"{name}[{k}] is {got.reshape(-1)[k]!r}, expected {want.reshape(-1)[k]!r}"


# == launches: the grid, each argument and the specialization constant at their edges ============================
LAUNCH = program('''
@cd.struct
class S:
    a: f32
    n: u32


@cd.kernel(workgroup_size=(32, 1, 1))
def k(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32, s: S, W: cd.Spec[u32] = 4):
    i = cd.global_invocation_id.x
    if i < n:
        v = x[i]  {mark}
        y[i] = alpha * v + s.a + f32(W)  {mark}
''')

OOB = ("out of bounds",)
WRONG_VALUE = ("cannot be", "does not fit", "needs", "must be", "got", "missing", "unknown", "expected")


def _launch_model(grid: tuple[int, int, int], x: np.ndarray, y: np.ndarray, n: int, alpha: Any, a: Any, w: int
                  ) -> np.ndarray | None:
    """y after the run, or None when an active invocation indexes past x or y (an out-of-bounds error)."""
    xs, ys = np.asarray(x).reshape(-1), np.asarray(y).reshape(-1).copy()
    active = np.arange(min(32 * grid[0], n))
    if len(active) and (active[-1] >= xs.size or active[-1] >= ys.size):
        return None
    with np.errstate(all="ignore"):
        ys[active] = np.float32(alpha) * xs[active] + np.float32(a) + np.float32(w)
    return ys


def _launch_probe(name: str, grid: Any = (2,), x: Any = None, y: Any = None, n: Any = 50, alpha: Any = 2.0,
                  s: Any = None, spec: dict | None = None, want: str | None = None, says: tuple[str, ...] = (),
                  args: Callable[[tuple], tuple] | None = None, extra: dict | None = None,
                  model_n: int | None = None, model_grid: tuple[int, int, int] | None = None,
                  model_alpha: Any = None, model_w: int | None = None) -> RunProbe:
    """A launch of LAUNCH; arrays are given as factories.  ``want`` None: the model decides (ok, or an
    out-of-bounds error).  ``args`` rewrites the positional arguments; ``extra`` adds keywords."""
    make_x = x if callable(x) else (lambda: np.arange(64, dtype=np.float32))
    make_y = y if callable(y) else (lambda: np.zeros(64, np.float32))
    make_s = s if callable(s) else (lambda: {"a": 1.0, "n": 3})
    spec = {} if spec is None else spec

    def make() -> tuple[Any, tuple, dict]:
        positional = (make_x(), make_y(), n, alpha, make_s())
        made = positional if args is None else args(positional)
        return grid, made, {**spec, **(extra or {})}

    before: dict[str, Any] = {}
    if want is None:
        g = model_grid or _grid3(grid)
        sv = make_s()
        w = spec.get("W", 4) if model_w is None else model_w
        expected = _launch_model(g, make_x(), make_y(), model_n if model_n is not None else int(n),
                                 alpha if model_alpha is None else model_alpha, sv["a"], int(w))
        if expected is None:
            want, says = "error", OOB
        else:
            want = "ok"
            before["y"] = expected

    def check(got: tuple, kwargs: dict) -> str | None:
        if "y" not in before:
            return None
        y = got[1] if len(got) > 1 else kwargs["y"]
        return _same("y", np.asarray(y).reshape(-1), before["y"])

    return RunProbe(f"launch {name}", LAUNCH, make, want, says, check)


def _grid3(grid: Any) -> tuple[int, int, int]:
    g = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    g = tuple(int(v) for v in g) + (1,) * (3 - len(g))
    return (g[0], g[1], g[2])


GRIDS_OK: dict[str, Any] = {"1": (1,), "2": (2,), "int": 2, "np.int64": np.int64(2), "np.uint32 tuple": (np.uint32(2),),
                            "3-D": (2, 1, 1), "y and z": (2, 3, 2), "list": [2, 1], "np array": np.array([2, 1, 1]),
                            "4096": (4096,)}
GRIDS_WRONG: dict[str, Any] = {"0": (0,), "int 0": 0, "negative": (-1,), "zero y": (2, 0), "float": (1.5,),
                               "float int": 2.0, "none": None, "string": "2", "4-D": (1, 1, 1, 1), "empty": (),
                               "2**32": (2**32,), "bool": (True,), "nested": ((1,),), "np float": np.float32(2)}
GRIDS_HUGE: dict[str, Any] = {"2**32-1": (2**32 - 1,), "2**16 x 2**16": (2**16, 2**16), "all 2**32-1":
                              (2**32 - 1, 2**32 - 1, 2**32 - 1), "2**30 x 4": (2**30, 4)}

ARRAYS_WRONG: dict[str, Callable[[], Any]] = {
    "float64": lambda: np.zeros(64), "float16": lambda: np.zeros(64, np.float16),
    "int32": lambda: np.zeros(64, np.int32), "uint8 bytes": lambda: np.zeros(256, np.uint8),
    "bool": lambda: np.zeros(64, bool), "complex": lambda: np.zeros(64, np.complex64),
    "strided": lambda: np.zeros(128, np.float32)[::2],
    "fortran": lambda: np.zeros((8, 8), np.float32, order="F")[:, :4],
    "list": lambda: [0.0] * 64, "none": lambda: None, "int": lambda: 3, "string": lambda: "x",
    "np scalar": lambda: np.float32(1), "object": lambda: np.array([object()] * 64),
}


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


PUSH_U32: dict[str, tuple[Any, str]] = {  # value -> "ok" (the model uses int(value)), "refused" or "either"
    "0": (0, "ok"), "1": (1, "ok"), "31": (31, "ok"), "64": (64, "ok"), "65": (65, "ok"), "2**31": (2**31, "ok"),
    "2**32-1": (2**32 - 1, "ok"), "np.uint32": (np.uint32(40), "ok"), "np.int64": (np.int64(40), "ok"),
    "np.uint64": (np.uint64(40), "ok"), "np.int8": (np.int8(40), "ok"),
    "-1": (-1, "refused"), "2**32": (2**32, "refused"), "2**64": (2**64, "refused"), "-2**31": (-2**31, "refused"),
    "np.int64 -1": (np.int64(-1), "refused"), "float": (40.5, "refused"), "nan": (float("nan"), "refused"),
    "string": ("40", "refused"), "none": (None, "refused"), "list": ([40], "refused"), "dict": ({}, "refused"),
    "integral float": (40.0, "either"), "bool": (True, "either"), "0-d array": (np.array(40), "either"),
    "np.float32": (np.float32(40), "either"), "complex": (1j, "refused"),
}
PUSH_F32: dict[str, tuple[Any, str]] = {
    "2.0": (2.0, "ok"), "-0.5": (-0.5, "ok"), "0": (0.0, "ok"), "int": (3, "ok"), "np.float32": (np.float32(1.5), "ok"),
    "np.float64": (np.float64(0.1), "ok"), "np.float16": (np.float16(2), "ok"), "nan": (float("nan"), "ok"),
    "inf": (float("inf"), "ok"), "-inf": (-float("inf"), "ok"), "max": (3.4e38, "ok"), "denormal": (1e-45, "ok"),
    "np.int64": (np.int64(7), "ok"), "2**24+1": (2**24 + 1, "either"),
    "1e300": (1e300, "refused"), "2**200": (2**200, "refused"), "string": ("2", "refused"), "none": (None, "refused"),
    "list": ([2.0], "refused"), "complex": (1j, "refused"), "bool": (True, "either"),
    "0-d array": (np.array(2.0), "either"),
}
STRUCTS: dict[str, tuple[Callable[[], Any], str]] = {
    "dict": (lambda: {"a": 1.0, "n": 3}, "ok"), "ints": (lambda: {"a": 1, "n": 0}, "ok"),
    "missing": (lambda: {"a": 1.0}, "refused"), "extra": (lambda: {"a": 1.0, "n": 3, "z": 1}, "refused"),
    "bad member": (lambda: {"a": "x", "n": 3}, "refused"), "negative member": (lambda: {"a": 1.0, "n": -1}, "refused"),
    "huge member": (lambda: {"a": 1.0, "n": 2**32}, "refused"), "tuple": (lambda: (1.0, 3), "either"),
    "int": (lambda: 5, "refused"), "none": (lambda: None, "refused"), "list": (lambda: [1.0, 3], "either"),
    "bytes": (lambda: b"\0" * 8, "either"), "array": (lambda: np.zeros(2, np.float32), "either"),
}
SPECS: dict[str, tuple[Any, str]] = {
    "0": (0, "ok"), "1": (1, "ok"), "2**31": (2**31, "ok"), "2**32-1": (2**32 - 1, "ok"),
    "np.uint32": (np.uint32(7), "ok"), "np.int64": (np.int64(7), "ok"),
    "-1": (-1, "refused"), "2**32": (2**32, "refused"), "float": (1.5, "refused"), "string": ("x", "refused"),
    "none": (None, "refused"), "list": ([1], "refused"), "array": (np.array([1, 2]), "refused"),
    "bool": (True, "either"), "integral float": (4.0, "either"), "nan": (float("nan"), "refused"),
}
SUBGROUP_SIZES: dict[str, tuple[Any, str]] = {
    **{str(v): (v, "ok") for v in (1, 2, 4, 8, 16, 32, 64, 128)},
    "np.int64": (np.int64(16), "ok"), "0": (0, "refused"), "3": (3, "refused"), "256": (256, "refused"),
    "-1": (-1, "refused"), "float": (16.0, "refused"), "string": ("16", "refused"), "bool": (True, "refused"),
}


SPEC_TYPES = program('''
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[f32], q: cd.Buffer[i64], H: cd.Spec[f16] = 1.0, F: cd.Spec[f32] = 1.0, B: cd.Spec[bf16] = 1.0,
      C: cd.Spec[i8] = 1, U: cd.Spec[u64] = 1, Z: cd.Spec[boolean] = True):
    if cd.global_invocation_id.x == 0:
        o[0] = f32(H)
        o[1] = F
        o[2] = f32(B)
        q[0] = i64(C)
        q[1] = i64(U)
        o[3] = 1.0 if Z else 0.0
''')
SPEC_EDGES: dict[str, list[Any]] = {
    "H": [0.0, -0.0, 1.5, 65504.0, 65519.0, 65520.0, 1e5, -1e5, math.nan, math.inf, -math.inf, 6e-8, 1e-10, 3,
          np.float16(2.5), np.float32(1e5), 2**200, "x", True, None],
    "F": [3.4e38, 3.5e38, -3.5e38, 1e-45, 1e-46, math.nan, math.inf, 2**24 + 1, 2**128, np.float64(0.1), 1e300],
    "B": [1.0, 3.38e38, 3.39e38, 3.4e38, 1e-40, math.nan, -math.inf, 2**127, 257],
    "C": [-128, 127, 128, -129, 1.0, np.int8(-5), np.uint8(200), True],
    "U": [0, 2**64 - 1, 2**64, -1, np.uint64(2**64 - 1), 2**63, 1.5],
    "Z": [True, False, 1, 0, 2, np.bool_(True), "yes", None],
}


def _spec_model(name: str, value: Any) -> tuple[str, Any]:
    """("ok", the value the kernel stores) or ("refused", None) for a launch value of SPEC_TYPES's constant."""
    if isinstance(value, np.generic):
        value = value.item()
    if name == "Z":
        return ("ok", float(bool(value))) if isinstance(value, (bool, int)) and value in (0, 1) else ("refused", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "refused", None
    if name in ("C", "U"):
        t = {"C": "i8", "U": "u64"}[name]
        w, signed = INTS[t]
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
        if isinstance(value, float) or not lo <= value <= hi:
            return "refused", None
        return "ok", wrap(value, "i64")
    t = {"H": "f16", "F": "f32", "B": "bf16"}[name]
    try:
        rounded = round_to(value, t)
    except OverflowError:
        return "refused", None
    if math.isinf(rounded) and not math.isinf(float(value)):
        return "refused", None
    if rounded == 0.0 and float(value) != 0.0:    # a nonzero value the type would hold as 0: refused as well
        return "refused", None
    return "ok", float(np.float32(rounded))


def _spec_probes() -> Iterator[RunProbe]:
    slot = {"H": ("o", 0), "F": ("o", 1), "B": ("o", 2), "C": ("q", 0), "U": ("q", 1), "Z": ("o", 3)}
    for name, values in SPEC_EDGES.items():
        for value in values:
            kind, stored = _spec_model(name, value)

            def check(args: tuple, kw: dict, name: str = name, stored: Any = stored) -> str | None:
                buf, k = slot[name]
                got = args[0][k] if buf == "o" else args[1][k]
                same = got == stored or isinstance(stored, float) and math.isnan(stored) and math.isnan(got)
                return None if same else f"{buf}[{k}] is {got!r}, expected {stored!r} for {name}"

            yield RunProbe(f"launch spec {name}={value!r}", SPEC_TYPES,
                           lambda name=name, value=value: ((1,), (np.zeros(4, np.float32), np.zeros(2, np.int64)),
                                                           {name: value}),
                           "ok" if kind == "ok" else "error", (f"specialization constant {name}",),
                           check if kind == "ok" else None)


def launch_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """LAUNCH with each argument, the grid, the spec constant and the subgroup size given each edge or wrong
    thing (the others valid), then ``count`` random valid launches of random sizes against the model."""
    yield _launch_probe("valid")
    for label, grid in GRIDS_OK.items():
        yield _launch_probe(f"grid={label}", grid=grid)
    for label, grid in GRIDS_WRONG.items():
        yield _launch_probe(f"grid={label}", grid=grid, want="error", says=("grid",))
    for label, grid in GRIDS_HUGE.items():  # must finish or refuse in bounded time, never hang or overflow
        yield _launch_probe(f"grid={label}", grid=grid, n=0, want="either", says=("grid", "invocations"))
    for which in ("x", "y"):
        for size in (0, 1, 31, 32, 49, 50, 51, 64, 1000):
            yield _launch_probe(f"{which} of {size}", **{which: lambda size=size: np.arange(size, dtype=np.float32)})
        yield _launch_probe(f"{which} 2-D", **{which: lambda: np.arange(64, dtype=np.float32).reshape(8, 8)})
        yield _launch_probe(f"{which} 0-d", n=1, **{which: lambda: np.array(5.0, np.float32)})
        for label, bad in ARRAYS_WRONG.items():
            yield _launch_probe(f"{which}={label}", want="error", says=(f"'{which}'",), **{which: bad})
    yield _launch_probe("x read-only", x=lambda: _readonly(np.arange(64, dtype=np.float32)))
    yield _launch_probe("y read-only", y=lambda: _readonly(np.zeros(64, np.float32)), want="error",
                        says=("read-only",))
    for label, (value, kind) in PUSH_U32.items():
        if kind == "ok":
            yield _launch_probe(f"n={label}", n=value)
        else:
            yield _launch_probe(f"n={label}", n=value, want="error" if kind == "refused" else "either",
                                says=("'n'",))
    for label, (value, kind) in PUSH_F32.items():
        if kind == "ok":
            yield _launch_probe(f"alpha={label}", alpha=value)
        else:
            yield _launch_probe(f"alpha={label}", alpha=value, want="error" if kind == "refused" else "either",
                                says=("'alpha'",))
    for label, (make, kind) in STRUCTS.items():
        if kind == "ok":
            yield _launch_probe(f"s={label}", s=make)
        else:
            yield _launch_probe(f"s={label}", s=make, want="error" if kind == "refused" else "either",
                                says=("'s'", "push constant"))
    for label, (value, kind) in SPECS.items():
        if kind == "ok":
            yield _launch_probe(f"W={label}", spec={"W": value})
        else:
            yield _launch_probe(f"W={label}", spec={"W": value}, want="error" if kind == "refused" else "either",
                                says=("W",))
    for label, (value, kind) in SUBGROUP_SIZES.items():
        if kind == "ok":
            yield _launch_probe(f"subgroup_size={label}", extra={"subgroup_size": value})
        else:
            yield _launch_probe(f"subgroup_size={label}", extra={"subgroup_size": value}, want="error",
                                says=("subgroup size", "subgroup_size"))
    yield from _spec_probes()
    arity = ("missing", "takes", "too many", "unexpected", "unknown", "multiple values")
    yield _launch_probe("missing s", args=lambda a: a[:4], want="error", says=arity)
    yield _launch_probe("missing y", args=lambda a: a[:1], want="error", says=arity)
    yield _launch_probe("no arguments", args=lambda a: (), want="error", says=arity)
    yield _launch_probe("extra positional", args=lambda a: a + (4, 5), want="error", says=arity)
    yield _launch_probe("extra keyword", extra={"z": 1}, want="error", says=arity)
    yield _launch_probe("unknown spec", spec={"Q": 1}, want="error", says=arity)
    yield _launch_probe("duplicate x", args=lambda a: a, extra={"x": np.zeros(64, np.float32)}, want="error",
                        says=arity)
    yield _launch_probe("by keyword", args=lambda a: (), extra={"x": np.arange(64, dtype=np.float32),
                                                              "y": np.zeros(64, np.float32), "n": 50, "alpha": 2.0,
                                                              "s": {"a": 1.0, "n": 3}}, model_n=50)
    yield _launch_probe("W positional", args=lambda a: a + (9,), model_w=9)
    for j in range(count):
        gx = rng.choice([1, 1, 2, 3, 5, 8])
        grid = rng.choice([(gx,), (gx, rng.randint(1, 3)), gx, (gx, 1, rng.randint(1, 2))])
        nx, ny = rng.choice([64, 32 * gx, rng.randint(0, 300)]), rng.choice([64, 32 * gx, rng.randint(0, 300)])
        n = rng.choice([0, 1, 32 * gx, rng.randint(0, 300), 2**32 - 1, min(nx, ny)])
        alpha = rng.choice([1.0, -2.5, 0.0, float(rng.randint(-9, 9)), float("inf"), float("nan")])
        w = rng.choice([0, 4, 2**32 - 1, rng.randint(0, 1000)])
        yield _launch_probe(f"random {j}: grid={grid} x={nx} y={ny} n={n} alpha={alpha} W={w}", grid=grid,
                            x=lambda nx=nx: np.arange(nx, dtype=np.float32), y=lambda ny=ny: np.ones(ny, np.float32),
                            n=n, alpha=alpha, spec={"W": w})



# == arithmetic at the edges: division by zero, INT_MIN / -1, shifts by the width or more, conversions ============
INTS = {"i8": (8, True), "u8": (8, False), "i16": (16, True), "u16": (16, False), "i32": (32, True),
        "u32": (32, False), "i64": (64, True), "u64": (64, False)}
FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
NP_INT = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
          "i64": np.int64, "u64": np.uint64}


def wrap(v: int, t: str) -> int:
    """``v`` wrapped to integer type ``t``."""
    w, signed = INTS[t]
    v &= (1 << w) - 1
    return v - (1 << w) if signed and v >> (w - 1) else v


def int_op(op: str, x: int, y: int, t: str) -> int:
    """docs/interpreter.md, "Numbers": integers wrap; division truncates toward zero and the remainder takes the
    dividend's sign; division by zero gives 0; a shift amount is unsigned, and shifting by the width or more
    gives 0 (-1 for a negative value shifted right)."""
    w, signed = INTS[t]
    if op in ("//", "%"):
        if y == 0:
            return 0
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return wrap(q if op == "//" else x - q * y, t)
    if op in ("<<", ">>"):
        s = y & ((1 << w) - 1)
        if s >= w:
            return 0 if op == "<<" or x >= 0 else -1
        return wrap(x << s, t) if op == "<<" else x >> s
    return wrap({"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y, "min": min(x, y),
                 "max": max(x, y)}[op], t)


def float_to_int(v: float, t: str) -> int:
    """Truncate and saturate; NaN gives 0."""
    w, signed = INTS[t]
    if math.isnan(v):
        return 0
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    if math.isinf(v):
        return hi if v > 0 else lo
    return max(lo, min(hi, math.trunc(v)))


# float formats: (significand bits, smallest normal exponent, largest finite value, has infinities)
FORMATS = {"f16": (11, -14, 65504.0, True), "f32": (24, -126, float(np.finfo(np.float32).max), True),
           "f64": (53, -1022, float(np.finfo(np.float64).max), True), "bf16": (8, -126, (2 - 2**-7) * 2.0**127, True),
           "e4m3": (4, -6, 448.0, False), "e5m2": (3, -14, 57344.0, True)}
STORED = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": np.uint16, "e4m3": np.uint8,
          "e5m2": np.uint8}


def round_to(v: int | float, t: str) -> float:
    """``v`` (an int or a float, exactly) rounded once to float format ``t``: to nearest, ties to even;
    beyond the largest finite value infinity, or NaN for E4M3 (docs/interpreter.md, "Numbers")."""
    bits, emin, largest, has_inf = FORMATS[t]
    if isinstance(v, float) and math.isnan(v):
        return math.nan
    if isinstance(v, float) and math.isinf(v):
        return v if has_inf else math.nan
    if v == 0:
        return float(v)
    n, d = abs(v).as_integer_ratio()
    e = n.bit_length() - d.bit_length()
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    q = max(e, emin) - (bits - 1)  # the exponent of the last significand bit (subnormals: fixed)
    num, den = (n, d << q) if q >= 0 else (n << -q, d)
    m, r = divmod(num, den)
    if 2 * r > den or 2 * r == den and m & 1:
        m += 1
    if m and math.log2(m) + q > 1024:
        return math.copysign(math.inf if has_inf else math.nan, v)
    out = math.ldexp(m, q)
    if out > largest:
        return math.copysign(math.inf if has_inf else math.nan, v)
    return math.copysign(out, v)


def decoded(t: str, stored: np.ndarray) -> np.ndarray:
    """The float64 values of an output buffer of float type ``t`` (bf16 and fp8 travel as their bits)."""
    a = np.asarray(stored)
    if t == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if t in ("e4m3", "e5m2"):
        ebits, mbits, bias = (4, 3, 7) if t == "e4m3" else (5, 2, 15)
        out = []
        for c in a.reshape(-1).tolist():
            e, m = (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
            if t == "e4m3" and e == 15 and m == 7 or t == "e5m2" and e == 31 and m:
                val = math.nan
            elif t == "e5m2" and e == 31:
                val = math.inf
            elif e == 0:
                val = math.ldexp(m, 1 - bias - mbits)
            else:
                val = math.ldexp((1 << mbits) + m, e - bias - mbits)
            out.append(-val if c & 0x80 else val)
        return np.array(out, np.float64).reshape(a.shape)
    return a.astype(np.float64)


def _int_edges(t: str) -> list[int]:
    w, signed = INTS[t]
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    vals = [0, 1, 2, 3, 7, lo, hi, lo + 1, hi - 1, w - 1, w, w + 1, 2 * w, 255, 256]
    if signed:
        vals += [-1, -2, -3, -7, -w, -w - 1]
    return sorted({wrap(v, t) for v in vals})


ARITH = """
@cd.kernel(workgroup_size=(32, 1, 1))
def k(a: cd.Buffer[{t}], b: cd.Buffer[{t}], o: cd.Buffer[{t}]):
    i = cd.global_invocation_id.x
    x = a[i]
    y = b[i]
    o[i * 11 + 0] = x // y  {{mark}}
    o[i * 11 + 1] = x % y  {{mark}}
    o[i * 11 + 2] = x << y  {{mark}}
    o[i * 11 + 3] = x >> y  {{mark}}
    o[i * 11 + 4] = x + y
    o[i * 11 + 5] = x - y
    o[i * 11 + 6] = x * y
    o[i * 11 + 7] = x & y ^ (x | y)
    o[i * 11 + 8] = cd.min(x, y)
    o[i * 11 + 9] = cd.max(x, y)
    o[i * 11 + 10] = {neg}
"""
ARITH_OPS = ("//", "%", "<<", ">>", "+", "-", "*", "&^|", "min", "max", "neg")


def _arith_model(t: str, xs: list[int], ys: list[int]) -> np.ndarray:
    w, signed = INTS[t]
    out = []
    for x, y in zip(xs, ys):
        row = [int_op(op, x, y, t) for op in ARITH_OPS[:7]]
        row.append(wrap((x & y) ^ (x | y), t))
        row += [min(x, y), max(x, y), wrap(-x, t) if signed else wrap(~x, t)]
        out.append(row)
    return np.array(out, dtype=object).reshape(-1)


def _ints(t: str, values: list[int]) -> np.ndarray:
    return np.array([wrap(v, t) for v in values], dtype=object).astype(NP_INT[t])


def arith_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Every integer type's operators on its edge values (each against each) and random ones."""
    for t in INTS:
        src = program(ARITH.format(t=t, neg="-x" if INTS[t][1] else "~x"))
        edges = _int_edges(t)
        pairs = [(x, y) for x in edges for y in edges]
        w = INTS[t][0]
        for _ in range(count):
            x, y = (rng.choice(edges) if rng.random() < 0.3 else wrap(rng.getrandbits(w), t) for _ in range(2))
            pairs.append((x, y if rng.random() < 0.7 else rng.randint(0, 2 * w)))
        for start in range(0, len(pairs), 32):
            chunk = pairs[start:start + 32]
            chunk += [(0, 0)] * (32 - len(chunk))
            xs, ys = [p[0] for p in chunk], [p[1] for p in chunk]
            want = _ints(t, list(_arith_model(t, xs, ys)))

            def make(xs: list[int] = xs, ys: list[int] = ys, t: str = t) -> tuple[Any, tuple, dict]:
                return (1,), (_ints(t, xs), _ints(t, ys), np.zeros(32 * 11, NP_INT[t])), {}

            def check(args: tuple, kwargs: dict, want: np.ndarray = want, xs: list[int] = xs, ys: list[int] = ys
                      ) -> str | None:
                bad = _same("o", args[2], want)
                if bad is None:
                    return None
                k = int(bad.split("[")[1].split("]")[0])
                return f"{bad}: {xs[k // 11]} {ARITH_OPS[k % 11]} {ys[k // 11]}"

            yield RunProbe(f"arith {t} {start // 32}", src, make, "ok", (), check)
    yield from _conversion_probes(rng, count)


CONVERT = """
@cd.kernel(workgroup_size=(32, 1, 1))
def k(f: cd.Buffer[{src}], {outs}):
    i = cd.global_invocation_id.x
    v = f[i]
{body}
"""
FLOAT_EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 127.5, 128.0, -128.5,
               -129.0, 255.9, 256.0, 32767.5, 32768.0, -32769.0, 65504.0, 65535.5, 65536.0, 2.0**31 - 128, 2.0**31,
               -2.0**31, -2.0**31 - 256, 2.0**32 - 256, 2.0**32, 2.0**63, -2.0**63, 2.0**64, -2.0**64, 1e30, -1e30,
               1e300, 5e-324, 1e-40]


def _conversion_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Floats (NaN, infinities, beyond every range) to each integer type, and integers of each type to each float
    type and to each other integer type."""
    targets = list(INTS)
    for src, dtype in FLOATS.items():
        outs = ", ".join(f"o_{t}: cd.Buffer[{t}]" for t in targets)
        body = "\n".join(f"    o_{t}[i] = {t}(v)  {{mark}}" for t in targets)
        prog = program(CONVERT.format(src=src, outs=outs, body=body))
        values = list(FLOAT_EDGES)
        for _ in range(count):
            values.append(rng.choice([1, -1]) * rng.random() * 2.0 ** rng.randint(-3, 70))
        with np.errstate(all="ignore"):
            stored = np.array(values, np.float64).astype(dtype)
        for start in range(0, len(stored), 32):
            chunk = np.resize(stored[start:start + 32], 32) if len(stored[start:start + 32]) else stored[:32]

            def make(chunk: np.ndarray = chunk) -> tuple[Any, tuple, dict]:
                return (1,), (chunk.copy(), *(np.zeros(32, NP_INT[t]) for t in targets)), {}

            def check(args: tuple, kwargs: dict, chunk: np.ndarray = chunk) -> str | None:
                for t, got in zip(targets, args[1:]):
                    want = np.array([float_to_int(float(v), t) for v in chunk], dtype=object).astype(NP_INT[t])
                    bad = _same(f"{t}(v)", got, want)
                    if bad:
                        k = int(bad.split("[")[1].split("]")[0])
                        return f"{bad} for v = {chunk[k]!r}"
                return None

            yield RunProbe(f"convert {src} to ints {start // 32}", prog, make, "ok", (), check)
    for src, dtype in FLOATS.items():
        outs = ", ".join(f"o_{t}: cd.Buffer[{t}]" for t in FORMATS)
        body = "\n".join(f"    o_{t}[i] = {t}(v)  {{mark}}" for t in FORMATS)
        prog = program(CONVERT.format(src=src, outs=outs, body=body))
        values = list(FLOAT_EDGES) + [2.0**-140, 2.0**-149, 2.0**-133 * 1.5, 3 * 2.0**-10, 448.0, 464.0, 480.0,
                                      57344.0, 61440.0, 65519.0, 65520.0]
        values += [rng.choice([1, -1]) * rng.random() * 2.0 ** rng.randint(-150, 140) for _ in range(count)]
        with np.errstate(all="ignore"):
            stored = np.array(values, np.float64).astype(dtype)
        for start in range(0, len(stored), 32):
            chunk = np.resize(stored[start:start + 32], 32)

            def make(chunk: np.ndarray = chunk) -> tuple[Any, tuple, dict]:
                return (1,), (chunk.copy(), *(np.zeros(32, STORED[t]) for t in FORMATS)), {}

            def check(args: tuple, kwargs: dict, chunk: np.ndarray = chunk) -> str | None:
                for t, got in zip(FORMATS, args[1:]):
                    want = np.array([round_to(float(v), t) for v in chunk])
                    bad = _same(f"{t}(v)", decoded(t, got), want)
                    if bad:
                        k = int(bad.split("[")[1].split("]")[0])
                        return f"{bad} for v = {chunk[k]!r}"
                return None

            yield RunProbe(f"convert {src} to floats {start // 32}", prog, make, "ok", (), check)
    floats = tuple(FORMATS)
    for src in INTS:
        outs = ", ".join(f"o_{t}: cd.Buffer[{t}]" for t in (*floats, *INTS))
        body = "\n".join(f"    o_{t}[i] = {t}(v)  {{mark}}" for t in (*floats, *INTS))
        prog = program(CONVERT.format(src=src, outs=outs, body=body))
        w = INTS[src][0]
        values = _int_edges(src) + [wrap((1 << b) + sign * (1 << max(b - 24, 0)) + extra, src)
                                    for b in (24, 25, 53, 54, 60, 62) if b < w
                                    for sign in (1, -1) for extra in (0, 1, -1)]
        values += [wrap(sign * ((1 << b) + (1 << (b - bits)) + 1), src)  # just above a tie: rounds once, up
                   for bits in (3, 4, 8, 11, 24) for b in (15, 31, 55, 60, 62) if bits < b < w for sign in (1, -1)]
        values += [wrap(rng.getrandbits(w), src) for _ in range(count)]
        for start in range(0, len(values), 32):
            chunk = values[start:start + 32]
            chunk += [0] * (32 - len(chunk))
            def make(chunk: list[int] = chunk, src: str = src) -> tuple[Any, tuple, dict]:
                return (1,), (_ints(src, chunk), *(np.zeros(32, {**STORED, **NP_INT}[t]) for t in (*floats, *INTS))), {}

            def check(args: tuple, kwargs: dict, chunk: list[int] = chunk) -> str | None:
                for t, got in zip((*floats, *INTS), args[1:]):
                    if t in INTS:
                        bad = _same(f"{t}(v)", got, _ints(t, chunk))
                    else:
                        bad = _same(f"{t}(v)", decoded(t, got), np.array([round_to(v, t) for v in chunk]))
                    if bad:
                        k = int(bad.split("[")[1].split("]")[0])
                        return f"{bad} for v = {chunk[k]}"
                return None

            yield RunProbe(f"convert {src} {start // 32}", prog, make, "ok", (), check)



# == memory: indexes past the end, never-written shared, local and private memory, atomics ======================
UNWRITTEN = ("before anything was stored there",)

SHARED_STAGE = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(o: cd.Buffer[u32], n: u32, r: u32):
    t = cd.shared(u32, 64)
    i = cd.local_invocation_index
    if i < n:
        t[i] = i * 3 + cd.workgroup_id.x
    cd.barrier()
    o[cd.global_invocation_id.x] = t[(i + r) % 64]  {mark}
""")

SHARED_ATOMIC = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(o: cd.Buffer[u32], z: u32):
    c = cd.shared(u32, 4)
    i = cd.local_invocation_index
    if i == 0 and z == 1:
        c[0] = 100
    cd.barrier()
    o[cd.global_invocation_id.x] = cd.atomic_add(c, 0, i)  {mark}
""")

SHARED_ATOMIC_LOAD = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(o: cd.Buffer[u32], z: u32):
    c = cd.shared(u32, 4)
    i = cd.local_invocation_index
    if i == 0 and z == 1:
        cd.atomic_store(c, 1, u32(7))
    cd.barrier()
    o[cd.global_invocation_id.x] = cd.atomic_load(c, 1)  {mark}
""")

LOCAL = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[u32], m: u32, r: u32):
    a = cd.{kind}(u32, 8)
    i = cd.global_invocation_id.x
    for j in range(m):
        a[j] = j * 5 + i  {mark}
    o[i] = a[r]  {mark}
""")

INDEX = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(x: cd.Buffer[f32], o: cd.Buffer[f32], idx: cd.Buffer[{t}], w: cd.Buffer[{t}]):
    i = cd.global_invocation_id.x
    if i == 0:
        o[w[0]] = 7.0  {mark}
        o[1] = x[idx[0]]  {mark}
""")

VECTOR = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[f32], idx: {t}):
    i = cd.global_invocation_id.x
    v = vec4[f32](f32(i), 1.0, 2.0, 3.0)
    o[i] = v[idx]  {mark}
""")

STRUCT_BUF = program("""
@cd.struct
class P:
    a: f32
    b: vec3[f32]


@cd.kernel(workgroup_size=(32, 1, 1))
def k(p: cd.Buffer[P], o: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        o[i] = p[i].b.y + p[i].a  {mark}
""")


POINTER = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(p: cd.Ptr[f32], o: cd.Buffer[f32], j: {t}):
    if cd.global_invocation_id.x == 0:
        o[0] = p[j]  {mark}
        p[j] = 5.0  {mark}
""")


def _u32s(vals: list[int] | np.ndarray) -> np.ndarray:
    return np.asarray(vals, dtype=np.uint64).astype(np.uint32)


def memory_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Shared memory staged by part of a workgroup and read elsewhere, atomics on shared memory nothing stored,
    local and private arrays written in part, buffer indexes of every integer type at their edges, vector
    indexes out of range, buffers of structs shorter than the invocations reading them."""
    cases = [(n, r, g) for n in (0, 1, 32, 63, 64) for r in (0, 1, 63) for g in (1, 3)]
    cases += [(rng.randint(0, 64), rng.randint(0, 2**32 - 1), rng.randint(1, 4)) for _ in range(count // 4)]
    for n, r, g in cases:
        j = (np.arange(64) + r) % 64
        ok = bool((j < n).all())
        want = np.concatenate([_u32s(j * 3 + w) for w in range(g)])

        def make(n: int = n, r: int = r, g: int = g) -> tuple[Any, tuple, dict]:
            return (g,), (np.zeros(64 * g, np.uint32), n, r), {}

        def check(args: tuple, kwargs: dict, want: np.ndarray = want) -> str | None:
            return _same("o", args[0], want)

        yield RunProbe(f"memory shared staged n={n} r={r} grid={g}", SHARED_STAGE, make, "ok" if ok else "error",
                       UNWRITTEN, check)
    for z in (0, 1):
        for g in (1, 2):
            want = _u32s(np.tile(100 + np.concatenate([[0], np.cumsum(np.arange(63))]), g))
            yield RunProbe(f"memory shared atomic z={z} grid={g}", SHARED_ATOMIC,
                           lambda g=g, z=z: ((g,), (np.zeros(64 * g, np.uint32), z), {}),
                           "ok" if z else "error", UNWRITTEN, lambda a, kw, want=want: _same("o", a[0], want))
            yield RunProbe(f"memory shared atomic load z={z} grid={g}", SHARED_ATOMIC_LOAD,
                           lambda g=g, z=z: ((g,), (np.zeros(64 * g, np.uint32), z), {}),
                           "ok" if z else "error", UNWRITTEN,
                           lambda a, kw, g=g: _same("o", a[0], np.full(64 * g, 7, np.uint32)))
    for kind in ("local_array", "private_array", "array"):
        src = LOCAL.replace("{kind}", kind)
        for m in (0, 1, 4, 8, 9, 2**32 - 1):
            for r in (0, 3, 7, 8, 2**31, 2**32 - 1):
                if kind == "array":  # cd.array starts as zeros: only the bounds matter
                    want_kind, says = ("ok" if m <= 8 and r < 8 else "error"), ("out of bounds", "index")
                    vals = [(r * 5 + i if r < min(m, 8) else 0) for i in range(32)]
                elif m > 8:
                    want_kind, says, vals = "error", ("out of bounds",), []
                else:
                    want_kind = "ok" if r < m else "error"
                    says = UNWRITTEN if r < 8 else ("out of bounds",)
                    vals = [r * 5 + i for i in range(32)]
                want = _u32s(vals) if vals else np.zeros(32, np.uint32)
                yield RunProbe(f"memory {kind} m={m} r={r}", src,
                               lambda m=m, r=r: ((1,), (np.zeros(32, np.uint32), m, r), {}), want_kind, says,
                               lambda a, kw, want=want: _same("o", a[0], want),
                               env={"COOPDSL_INTERP_MAX_ITERATIONS": "4096"})
    for t in ("i32", "u32", "i64", "u64", "i16", "u16", "i8", "u8"):
        src = INDEX.replace("{t}", t)
        edges = sorted({v for v in _int_edges(t) + [15, 16, 17, 2**62 // 4 * 4 + 0, 2**62, 2**60, 2**63 - 2**61,
                                                    -(2**62), -(2**60), 1 << 63, (1 << 64) - 1] if
                        wrap(v, t) == v})
        picks = [(a, b) for a in edges for b in (0, 3)] + [(0, b) for b in edges]
        for a, b in picks:
            good = 0 <= a < 16 and 0 <= b < 16
            want = np.zeros(16, np.float32)
            if good:
                want[b] = 7.0
                want[1] = a * 1.0 if not (b == 1) else a * 1.0
            yield RunProbe(f"memory index {t} read={a} write={b}", src,
                           lambda a=a, b=b, t=t: ((1,), (np.arange(16, dtype=np.float32), np.zeros(16, np.float32),
                                                         _ints(t, [a]), _ints(t, [b])), {}),
                           "ok" if good else "error", ("out of bounds",),
                           lambda args, kw, want=want: _same("o", args[1], want))
    for t in ("u32", "i32"):
        for idx in (0, 3, 4, 5, -1, 2**31 - 1, -(2**31)):
            if t == "u32" and idx < 0:
                continue
            want = np.arange(32, dtype=np.float32) if idx == 0 else np.full(32, float(idx), np.float32)
            yield RunProbe(f"memory vector {t} index {idx}", VECTOR.replace("{t}", t),
                           lambda idx=idx: ((1,), (np.zeros(32, np.float32), idx), {}),
                           "ok" if 0 <= idx < 4 else "error", ("out of bounds", "index"),
                           lambda a, kw, want=want: _same("o", a[0], want))
    for t in ("u32", "i32", "u64", "i64"):
        for j in (0, 3, 4, -1, 2**31, 2**62, 2**63, -(2**62), 2**64 - 1):
            if wrap(j, t) != j:
                continue
            for label, make_p in (("array", lambda: np.arange(4, dtype=np.float32)), ("address 0", lambda: 0),
                                  ("address 1", lambda: 1), ("address 2**63", lambda: 2**63),
                                  ("address 2**64-1", lambda: 2**64 - 1), ("address 2**20", lambda: 2**20)):
                ok = label == "array" and 0 <= j < 4

                def make(make_p: Callable[[], Any] = make_p, j: int = j) -> tuple[Any, tuple, dict]:
                    return (1,), (make_p(), np.zeros(4, np.float32), j), {}

                def check(args: tuple, kw: dict, j: int = j) -> str | None:
                    want = np.arange(4, dtype=np.float32)
                    want[j] = 5.0
                    return _same("o", args[1], np.array([j, 0, 0, 0], np.float32)) or _same("p", args[0], want)

                # (2**20 is where the interpreter's device memory starts: the address of buffer 'o' there)
                yield RunProbe(f"memory pointer {label} {t} index {j}", POINTER.replace("{t}", t), make,
                               "ok" if ok else "either" if label == "address 2**20" else "error",
                               ("device address", "out of bounds"), check if ok else None)
    for count_p, n in ((32, 32), (31, 32), (0, 1), (1, 2**32 - 1), (5, 3)):
        def make(count_p: int = count_p, n: int = n) -> tuple[Any, tuple, dict]:
            p = np.zeros((count_p, 8), np.float32)  # a (4 bytes), pad, b (vec3 at 16): 32-byte elements
            p[:, 0] = np.arange(count_p)
            p[:, 5] = 10.0
            return (1,), (p, np.zeros(32, np.float32), n), {}

        active = min(32, n)
        want = np.zeros(32, np.float32)
        want[:active] = 10.0 + np.arange(active)
        yield RunProbe(f"memory struct buffer of {count_p} n={n}", STRUCT_BUF, make,
                       "ok" if active <= count_p else "error", ("out of bounds",),
                       lambda a, kw, want=want: _same("o", a[1], want))



# == control flow: loops with runtime bounds, loops in helpers, barriers and matrices in divergent flow ==========
LIMIT = 3000  # COOPDSL_INTERP_MAX_ITERATIONS while these run: a loop past it must be reported, not run for long
LOOPING = ("a loop ran", "iterations")

RANGE_LOOP = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[u32], n: u32, step: u32):
    s = u32(0)
    for j in range(0, n, step):  {mark}
        s += j  {mark}
    o[cd.global_invocation_id.x] = s  {mark}
""")

WHILE_LOOP = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[i32], n: i32, step: i32):
    j = i32(0)
    c = i32(0)
    while j < n:  {mark}
        j += step  {mark}
        c += 1  {mark}
    o[cd.global_invocation_id.x] = c  {mark}
""")

NESTED_LOOP = program("""
@cd.func
def inner(n):
    s = u32(0)
    for j in range(n):  {also}
        s += j  {also}
    return s  {also}


@cd.func
def middle(n):
    s = u32(0)
    for j in range(n):  {also}
        s += inner(n)  {also}
    return s  {also}


@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[u32], n: u32):
    s = u32(0)
    for j in range(n):  {mark}
        s += middle(n)  {mark}
    o[cd.global_invocation_id.x] = s  {mark}
""")

DIVERGENT_BARRIER = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(o: cd.Buffer[u32], n: u32):
    i = cd.local_invocation_index
    o[cd.global_invocation_id.x] = 0
    if cd.assume_uniform(i < n):
        cd.barrier()  {mark}
        o[cd.global_invocation_id.x] = 1
""")

EARLY_RETURN_BARRIER = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(o: cd.Buffer[u32], n: u32):
    i = cd.local_invocation_index
    o[cd.global_invocation_id.x] = 5
    if cd.assume_uniform(i >= n):
        return
    cd.barrier()  {mark}
    o[cd.global_invocation_id.x] = 1
""")

LOOP_BARRIER = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(o: cd.Buffer[u32], m: u32):
    i = cd.local_invocation_index
    c = u32(0)
    for j in range(cd.assume_uniform(i % m)):  {mark}
        cd.barrier()  {mark}
        c += 1
    o[cd.global_invocation_id.x] = c
""")

DIVERGENT_MATRIX = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(c: cd.Buffer[f32], n: u32):
    if cd.assume_uniform(cd.subgroup_invocation_id < n):
        m = Acc[f32, 16, 16].splat(2.0)  {mark}
        m.store(c, cd.subgroup_id * 256, stride=16)  {mark}
""")


def _range_model(n: int, step: int) -> tuple[int, int]:
    """(sum mod 2**32, back edges taken) of ``for j in range(0, n, step)`` with a u32 ``j``: it wraps, so a step
    that carries it past 2**32 - 1 starts it again from the bottom (as on a GPU: it never ends)."""
    if step == 0:
        return 0, 10**18 if n > 0 else 0
    trips = -(-n // step) if n > 0 else 0
    if trips and (trips - 1) * step + step >= 2**32 and (trips * step) % 2**32 < n:
        return 0, 10**18
    return sum(range(0, n, step)) % 2**32 if trips <= 10**6 else 0, trips


def _while_model(n: int, step: int, cap: int) -> tuple[int | None, int]:
    j = c = 0
    while j < n:
        j = wrap(j + step, "i32")
        c += 1
        if c > cap:
            return None, c
    return c, c


def control_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Loops whose runtime bounds run them long or forever, loops in functions called from loops, and barriers and
    matrix operations reached by part of their scope (cd.assume_uniform promising wrongly)."""
    env = {"COOPDSL_INTERP_MAX_ITERATIONS": str(LIMIT)}
    cases = [(n, st) for n in (0, 1, 10, LIMIT // 2, 2 * LIMIT, 2**31, 2**32 - 1) for st in (0, 1, 2, 2**31, 2**32 - 1)]
    cases += [(rng.randint(0, 3 * LIMIT), rng.choice([0, 1, rng.randint(1, 50)])) for _ in range(count // 4)]
    for n, st in cases:
        total, trips = _range_model(n, st)
        want = "ok" if trips <= LIMIT // 2 else "error" if trips > 2 * LIMIT else "either"
        yield RunProbe(f"control range n={n} step={st}", RANGE_LOOP,
                       lambda n=n, st=st: ((1,), (np.zeros(32, np.uint32), n, st), {}), want,
                       LOOPING + ("step",), lambda a, kw, t=total: _same("o", a[0], np.full(32, t, np.uint32)),
                       env)
    cases = [(n, st) for n in (0, 1, 100, 2**31 - 1, -(2**31)) for st in (0, 1, -1, 7, 2**30, 2**31 - 1, -(2**31))]
    cases += [(rng.randint(-100, 3 * LIMIT), rng.randint(-3, 40)) for _ in range(count // 4)]
    for n, st in cases:
        c, trips = _while_model(n, st, 2 * LIMIT)
        want = "ok" if trips <= LIMIT // 2 else "error" if trips > 2 * LIMIT else "either"
        yield RunProbe(f"control while n={n} step={st}", WHILE_LOOP,
                       lambda n=n, st=st: ((1,), (np.zeros(32, np.int32), n, st), {}), want, LOOPING,
                       lambda a, kw, c=c: _same("o", a[0], np.full(32, c or 0, np.int32)), env)
    for n in (0, 1, 5, 12, 20, 60, 200, 2**32 - 1):
        inner = sum(range(n)) if n < 10**6 else 0
        total = n * n * inner % 2**32 if n < 10**6 else 0
        edges = n + n * n + n * n * n if n < 10**6 else 10**18  # back edges of the whole call tree
        want = "ok" if edges <= LIMIT // 2 else "error" if n > 2 * LIMIT else "either"
        yield RunProbe(f"control nested loops n={n}", NESTED_LOOP,
                       lambda n=n: ((1,), (np.zeros(32, np.uint32), n), {}), want, LOOPING,
                       lambda a, kw, t=total: _same("o", a[0], np.full(32, t, np.uint32)), env)
    partial = ("reached by",)
    for n in (0, 1, 31, 32, 33, 63, 64, 100, 2**32 - 1):
        for g in (1, 2):
            whole = n == 0 or n >= 64
            yield RunProbe(f"control divergent barrier n={n} grid={g}", DIVERGENT_BARRIER,
                           lambda n=n, g=g: ((g,), (np.zeros(64 * g, np.uint32), n), {}), "ok" if whole else "error",
                           partial, lambda a, kw, n=n: _same("o", a[0], np.full(len(a[0]), int(n >= 64), np.uint32)))
            yield RunProbe(f"control early return before barrier n={n} grid={g}", EARLY_RETURN_BARRIER,
                           lambda n=n, g=g: ((g,), (np.zeros(64 * g, np.uint32), n), {}), "ok" if whole else "error",
                           partial, lambda a, kw, n=n: _same("o", a[0], np.full(len(a[0]), 1 if n >= 64 else 5,
                                                                                      np.uint32)))
    for m in (1, 2, 64, 0, 2**32 - 1):
        trips = [(i % m if m else 0) for i in range(64)]
        yield RunProbe(f"control barrier in a loop m={m}", LOOP_BARRIER,
                       lambda m=m: ((1,), (np.zeros(64, np.uint32), m), {}),
                       "ok" if len(set(trips)) == 1 else "error", partial,
                       lambda a, kw, t=trips: _same("o", a[0], np.array(t, np.uint32)))
    for n in (0, 1, 16, 31, 32, 2**32 - 1):
        whole = n == 0 or n >= 32
        want = np.full(512, 2.0 if n >= 32 else 0.0, np.float32)
        for sgs in (32, 16):
            yield RunProbe(f"control divergent matrix n={n} subgroup_size={sgs}", DIVERGENT_MATRIX,
                           lambda n=n, sgs=sgs: ((1,), (np.zeros(512, np.float32), n), {"subgroup_size": sgs}),
                           "ok" if (n == 0 or n >= sgs) and sgs == 32 else "either" if sgs != 32 else "error",
                           ("reached by", "cooperative-matrix"),
                           (lambda a, kw, want=want: _same("c", a[0], want)) if sgs == 32 else None)



# == subgroups: operations with inactive lanes, lanes outside the subgroup, subgroup sizes ======================
SUBGROUP = program("""
@cd.kernel(workgroup_size=(64, 1, 1))
def k(x: cd.Buffer[u32], f: cd.Buffer[f32], o: cd.Buffer[u32], fo: cd.Buffer[f32], n: u32, p: u32, L: u32, d: u32):
    i = cd.local_invocation_index
    v = x[i]
    w = f[i]
    if i % p < n:
        o[i * 19 + 0] = cd.subgroup_add(v)  {mark}
        o[i * 19 + 1] = cd.subgroup_min(v)
        o[i * 19 + 2] = cd.subgroup_max(v)
        o[i * 19 + 3] = cd.subgroup_inclusive_add(v)
        o[i * 19 + 4] = cd.subgroup_exclusive_add(v)
        o[i * 19 + 5] = cd.subgroup_and(v)
        o[i * 19 + 6] = cd.subgroup_or(v)
        o[i * 19 + 7] = cd.subgroup_xor(v)
        o[i * 19 + 8] = u32(cd.subgroup_elect())
        o[i * 19 + 9] = cd.subgroup_broadcast_first(v)
        o[i * 19 + 10] = cd.subgroup_broadcast(v, L)  {mark}
        o[i * 19 + 11] = cd.subgroup_shuffle(v, L + i)  {mark}
        o[i * 19 + 12] = cd.subgroup_shuffle_xor(v, d)  {mark}
        o[i * 19 + 13] = cd.subgroup_shuffle_up(v, d)  {mark}
        o[i * 19 + 14] = cd.subgroup_shuffle_down(v, d)  {mark}
        o[i * 19 + 15] = cd.subgroup_ballot(v % 2 == 1).x
        o[i * 19 + 16] = u32(cd.subgroup_all(v > p))
        o[i * 19 + 17] = u32(cd.subgroup_any(v > 1000))
        o[i * 19 + 18] = u32(cd.subgroup_all_equal(v % 3))
        fo[i] = cd.subgroup_add(w)
""")

BROADCAST = program("""  # (a lane known only at run time makes the broadcast a shuffle: docs/lang/math.md)
@cd.kernel(workgroup_size=(64, 1, 1))
def k(x: cd.Buffer[u32], o: cd.Buffer[u32], m: u32):
    i = cd.local_invocation_index
    o[i] = cd.subgroup_broadcast(x[i], cd.assume_uniform(i % m))  {mark}
""")


def _subgroup_model(x: np.ndarray, f: np.ndarray, n: int, p: int, L: int, d: int, sgs: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(o, fo) for SUBGROUP: docs/interpreter.md's rules (reductions over the
    active lanes; a shuffle from a lane outside the subgroup, past it or one a partial subgroup lacks, gives the
    reader's own value, from an inactive lane what it holds)."""
    o = np.zeros((64, 19), np.int64)
    fo = np.zeros(64, np.float32)
    xs = [int(v) for v in x]
    act = [(i % p if p else 0) < n for i in range(64)]
    for base in range(0, 64, sgs):
        lanes = [base + j for j in range(sgs) if base + j < 64]
        on = [i for i in lanes if act[i]]
        if not on:
            continue
        vals = [xs[i] for i in on]
        first = on[0]
        ballot = sum(1 << (i - base) for i in on if xs[i] % 2 == 1 and i - base < 32)
        for i in on:
            lane = i - base
            mine = [xs[j] for j in on if j <= i]
            row = [sum(vals) % 2**32, min(vals), max(vals), sum(mine) % 2**32, (sum(mine) - xs[i]) % 2**32,
                   _fold(vals, lambda a, b: a & b), _fold(vals, lambda a, b: a | b), _fold(vals, lambda a, b: a ^ b),
                   int(i == first), xs[first]]
            for src in (L, (L + i) % 2**32, lane ^ d, lane - d, lane + d):
                if not 0 <= src < sgs or base + src >= 64:  # past the subgroup, or a lane a partial one lacks
                    src = lane
                row.append(xs[base + src])
            row += [ballot, int(all(xs[j] > p for j in on)), int(any(xs[j] > 1000 for j in on)),
                    int(len({xs[j] % 3 for j in on}) == 1)]
            o[i] = row
            fo[i] = np.float32(sum(float(f[j]) for j in on))
    return o.astype(np.uint32).reshape(-1), fo


def _fold(vals: list[int], fn: Callable[[int, int], int]) -> int:
    out = vals[0]
    for v in vals[1:]:
        out = fn(out, v)
    return out


def subgroup_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Every subgroup operation under divergence (the active lanes chosen by ``i % p < n``) at every subgroup size,
    with broadcast and shuffle lanes inside, past and outside the subgroup; a broadcast whose lane differs within the
    subgroup (a runtime lane: a shuffle)."""
    cases = [(n, p, L, d, sgs) for sgs in (1, 4, 32, 64, 128) for n, p in ((64, 64), (1, 2), (0, 1), (3, 7), (1, 0))
             for L, d in ((0, 1), (5, 3), (40, 33), (2**32 - 1, 2**31))]
    cases += [(rng.randint(0, 8), rng.randint(0, 9), rng.choice([0, 1, rng.randint(0, 130), 2**32 - 1]),
               rng.choice([0, 1, rng.randint(0, 130), 2**32 - 1]), rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
              for _ in range(count)]
    for j, (n, p, L, d, sgs) in enumerate(cases):
        kind = rng.choice(["small", "full", "bits"])
        x = np.array([rng.randint(0, 9) if kind == "small" else rng.getrandbits(32) if kind == "full" else
                      1 << rng.randint(0, 31) for _ in range(64)], np.uint32)
        f = np.array([rng.randint(-8, 8) for _ in range(64)], np.float32)
        o, fo = _subgroup_model(x, f, n, p, L, d, sgs)

        def make(x: np.ndarray = x, f: np.ndarray = f, n: int = n, p: int = p, L: int = L, d: int = d,
                 sgs: int = sgs) -> tuple[Any, tuple, dict]:
            return (1,), (x.copy(), f.copy(), np.zeros(64 * 19, np.uint32), np.zeros(64, np.float32), n, p, L,
                          d), {"subgroup_size": sgs}

        def check(args: tuple, kwargs: dict, o: np.ndarray = o, fo: np.ndarray = fo) -> str | None:
            bad = _same("o", args[2], o)
            if bad:
                k = int(bad.split("[")[1].split("]")[0])
                return f"{bad} (invocation {k // 19}, column {k % 19})"
            return _same("fo", args[3], fo)

        yield RunProbe(f"subgroup {j} n={n} p={p} L={L} d={d} subgroup_size={sgs} x={kind}", SUBGROUP, make, "ok",
                       (), check)
    for m in (1, 2, 4, 32, 64, 2**32 - 1):
        for sgs in (4, 32):
            lanes = np.arange(64) % m
            x = np.arange(64, dtype=np.uint32) * 10
            want = np.array([x[(i // sgs) * sgs + (lanes[i] if lanes[i] < sgs else i % sgs)] for i in range(64)],
                            np.uint32)
            yield RunProbe(f"subgroup broadcast lane i % {m} subgroup_size={sgs}", BROADCAST,
                           lambda m=m, sgs=sgs, x=x: ((1,), (x.copy(), np.zeros(64, np.uint32), m),
                                                      {"subgroup_size": sgs}),
                           "ok", (), lambda a, kw, want=want: _same("o", a[1], want))



# == cooperative matrices: loads and stores near the ends of their buffers, strides, layouts, MulAdd ============
MATRIX_COPY = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(a: cd.Buffer[{E}], c: cd.Buffer[{F}], off: u32, st: u32, wo: u32, off2: u32, st2: u32, wo2: u32,
      L: cd.Spec[u32] = 0, L2: cd.Spec[u32] = 0):
    w = cd.workgroup_id.x
    m = Acc[{E}, {R}, {C}].load(a, off + w * wo, stride=st, layout=L)  {mark}
    Acc[{F}, {R}, {C}](m).store(c, off2 + w * wo2, stride=st2, layout=L2)  {mark}
""")

MATRIX_MULADD = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(a: cd.Buffer[{E}], b: cd.Buffer[{E}], c: cd.Buffer[{F}], oa: u32, ob: u32, sa: u32, sb: u32):
    ta = MatA[{E}, {M}, {K}].load(a, oa, stride=sa)  {mark}
    tb = MatB[{E}, {K}, {N}].load(b, ob, stride=sb, layout=cd.ColumnMajor)  {mark}
    acc = cd.muladd(ta, tb, Acc[{F}, {M}, {N}].splat({zero}))  {mark}
    acc.store(c, 0, stride={N})  {mark}
""")

ELEMENT = {"f16": np.float16, "f32": np.float32, "i8": np.int8, "i32": np.int32, "u32": np.uint32, "u8": np.uint8}
COPIES = [("f16", "f32"), ("f32", "f32"), ("i8", "i32"), ("u32", "f32"), ("f32", "f16"), ("f32", "i32"),
          ("f16", "u8"), ("f32", "u32")]
SHAPES = [(16, 16), (8, 32), (3, 5), (1, 1), (32, 8)]


def _converted(values: np.ndarray, e: str, f: str) -> np.ndarray:
    if f in INTS and e not in INTS:  # truncate and saturate; NaN gives 0
        return np.array([float_to_int(float(v), f) for v in values.reshape(-1)], dtype=object).astype(
            ELEMENT[f]).reshape(values.shape)
    if f in INTS:
        return values.astype(np.int64).astype(ELEMENT[f])
    return np.array([round_to(int(v) if e in INTS else float(v), f) for v in values.reshape(-1)],
                    np.float64).astype(ELEMENT[f]).reshape(values.shape)


def _matrix_indexes(base: int, st: int, r: int, c: int, row_major: bool) -> np.ndarray:
    rr, cc = np.arange(r, dtype=object)[:, None], np.arange(c, dtype=object)[None, :]
    return base + (rr * st + cc if row_major else cc * st + rr)


def _copy_model(e: str, f: str, r: int, c: int, g: int, a: np.ndarray, nc: int, off: int, st: int, wo: int,
                off2: int, st2: int, wo2: int, lay: int, lay2: int) -> tuple[str, np.ndarray | None]:
    """("ok", c after the run) / ("either", None) for overlapping stores / ("error", None): an access past an end."""
    out = np.zeros(nc, ELEMENT[f])
    written: set[int] = set()
    overlap = False
    for w in range(g):
        src = _matrix_indexes((off + w * wo) % 2**32, st, r, c, lay == 0)
        dst = _matrix_indexes((off2 + w * wo2) % 2**32, st2, r, c, lay2 == 0)
        if src.max() >= len(a) or dst.max() >= nc or st2 == 0:
            return "error", None
        flat = [int(v) for v in dst.reshape(-1)]
        overlap |= len(set(flat)) < len(flat) or bool(written & set(flat))
        written |= set(flat)
        out[dst.astype(np.int64)] = _converted(a[src.astype(np.int64)], e, f)
    return ("either", None) if overlap else ("ok", out)


def matrix_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """KHR matrix loads and stores of several component types and shapes, with offsets, strides and layouts
    (RowMajor, ColumnMajor, spec-constant layouts including values that are neither) that put them inside, at and
    past the end of their buffers, over several workgroups; MulAdds of operands loaded near the ends."""
    for j in range(max(count, 8) * 2):
        e, f = COPIES[j % len(COPIES)] if j < 2 * len(COPIES) else rng.choice(COPIES)
        r, c = SHAPES[j % len(SHAPES)] if j < len(SHAPES) else rng.choice(SHAPES)
        src = MATRIX_COPY.replace("{E}", e).replace("{F}", f).replace("{R}", str(r)).replace("{C}", str(c))
        g = rng.choice([1, 1, 2, 3])
        lay, lay2 = rng.choice([0, 0, 0, 1, 1, 1, 2, 2**32 - 1]), rng.choice([0, 0, 0, 1, 1, 1, 2])
        minor = c if lay else r
        st = rng.choice([0, 1, c, r, minor, minor + 1, 2 * minor, 2**31, 2**32 - 1, rng.randint(0, 64)])
        st2 = rng.choice([0, c if lay2 == 0 else r, c if lay2 == 0 else r, (c if lay2 == 0 else r) + 3, 2**32 - 1,
                           rng.randint(1, 64)])
        size = r * c
        small = rng.random() < 0.75  # mostly offsets and strides that fit, then buffers just big enough or not
        off = rng.choice([0, 0, 3, rng.randint(0, 64)] if small else [2**32 - 1, 2**31, rng.randint(0, 2**32 - 1)])
        wo = rng.choice([0, size, 2 * size, rng.randint(0, 3 * size)] if small else [2**32 - 1, 2**31])
        if not small:
            st = rng.choice([st, 2**31, 2**32 - 1])
        extent = max(int(_matrix_indexes((off + w * wo) % 2**32, st, r, c, lay != 1).max()) for w in range(g)) + 1
        na = max(1, rng.choice([extent] * 4 + [extent + 5, extent - 1, 1, size]) if extent < 2**20 else size)
        off2 = rng.choice([0, 0, 1, rng.randint(0, 64)])
        wo2 = rng.choice([size * max(st2, 1), 2 * size * max(st2, 1), 0, rng.randint(0, 4 * size)]) % 2**32
        extent2 = max(int(_matrix_indexes((off2 + w * wo2) % 2**32, st2, r, c, lay2 != 1).max()) for w in range(g)) + 1
        nc = max(1, rng.choice([extent2] * 4 + [extent2 + 3, extent2 - 1, size]) if extent2 < 2**20 else size)
        with np.errstate(all="ignore"):
            a = (np.arange(na) % 97 - 13).astype(ELEMENT[e]) if e != "u32" else \
                np.array([rng.getrandbits(32) for _ in range(na)], np.uint32)
            if e in ("f16", "f32"):  # NaN, infinities and values past the integer types, converted below
                specials = np.array([math.nan, math.inf, -math.inf, 1e9, -3e9, 300.5, -0.75, 65504.0])
                a[::7] = specials[np.arange(len(a[::7])) % len(specials)].astype(ELEMENT[e])
        if lay > 1 or lay2 > 1:
            want, says, model = "error", ("layout",), None
        else:
            want, model = _copy_model(e, f, r, c, g, a, nc, off, st, wo, off2, st2, wo2, lay, lay2)
            says = ("out of bounds", "stride")

        def make(a: np.ndarray = a, nc: int = nc, f: str = f, g: int = g, args: tuple = (off, st, wo, off2, st2, wo2),
                 spec: dict = {"L": lay, "L2": lay2}) -> tuple[Any, tuple, dict]:  # noqa: B006
            return (g,), (a.copy(), np.zeros(nc, ELEMENT[f]), *args), dict(spec)

        yield RunProbe(f"matrix copy {j}: {e}->{f} {r}x{c} grid={g} a={na} c={nc} off={off} st={st} wo={wo} "
                       f"off2={off2} st2={st2} wo2={wo2} L={lay} L2={lay2}", src, make, want, says,
                       (lambda args, kw, model=model: _same("c", args[1], model)) if model is not None else None)
    for j in range(max(count // 2, 6)):
        e, fty, zero = rng.choice([("f16", "f32", "0.0"), ("i8", "i32", "0"), ("f16", "f16", "0.0")])
        m, n, kk = rng.choice([(16, 16, 16), (8, 8, 32), (3, 5, 7), (16, 8, 16), (1, 1, 1)])
        src = MATRIX_MULADD.replace("{E}", e).replace("{F}", fty).replace("{M}", str(m)).replace(
            "{N}", str(n)).replace("{K}", str(kk)).replace("{zero}", zero)
        sa, sb = rng.choice([kk, kk + 1, 0]), rng.choice([kk, kk + 2, 0])
        na, nb = rng.choice([m * kk, m * kk + 3, 2 * m * kk]), rng.choice([kk * n, kk * n + 1, 3 * kk * n])
        oa = rng.choice([0, max(na - ((m - 1) * sa + kk), 0), max(na - ((m - 1) * sa + kk), 0) + 1])
        ob = rng.choice([0, max(nb - ((n - 1) * sb + kk), 0), max(nb - ((n - 1) * sb + kk), 0) + 1])
        lo, hi = (-3, 3) if fty == "f16" else (-128, 127) if e == "i8" else (-4, 4)
        av = np.array([rng.randint(lo, hi) for _ in range(na)]).astype(ELEMENT[e])
        bv = np.array([rng.randint(lo, hi) for _ in range(nb)]).astype(ELEMENT[e])
        ia = _matrix_indexes(oa, sa, m, kk, True)
        ib = _matrix_indexes(ob, sb, kk, n, False)
        if ia.max() >= na or ib.max() >= nb:
            want, model = "error", None
        else:
            prod = av[ia.astype(np.int64)].astype(np.int64) @ bv[ib.astype(np.int64)].astype(np.int64)
            model = prod.reshape(-1).astype(ELEMENT[fty])

        def make(av: np.ndarray = av, bv: np.ndarray = bv, size: int = m * n, fty: str = fty,
                 args: tuple = (oa, ob, sa, sb)) -> tuple[Any, tuple, dict]:
            return (1,), (av.copy(), bv.copy(), np.zeros(size, ELEMENT[fty]), *args), {}

        yield RunProbe(f"matrix muladd {j}: {e}->{fty} {m}x{n}x{kk} a={na} b={nb} oa={oa} ob={ob} sa={sa} sb={sb}",
                       src, make, "ok" if model is not None else "error", ("out of bounds",),
                       (lambda args, kw, model=model: _same("c", args[2], model)) if model is not None else None)



# == memory and sizes set by specialization constants at launch ================================================
SIZE_ERROR = ("shared", "memory", "bytes", "race", "out of bounds", "dimension", "rows", "cols", "invocations",
              "workgroup size", "elements", "at most", "stride", "length must be from 1")

SHARED_SPEC = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[u32], S: cd.Spec[u32] = 64):
    t = cd.shared(u32, S)  {mark}
    i = cd.local_invocation_index
    t[i % S] = i  {mark}
    cd.barrier()
    o[cd.global_invocation_id.x] = t[i % S]  {mark}
""")

LOCAL_SPEC = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[u32], S: cd.Spec[u32] = 64):
    t = cd.{kind}(u32, S)  {mark}
    i = cd.global_invocation_id.x
    t[S - 1] = u32(7)  {mark}
    t[i % S] = i  {mark}
    o[i] = t[i % S] + t[S - 1]  {mark}
""")

MATRIX_SPEC = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[f32], R: cd.Spec[u32] = 16, C: cd.Spec[u32] = 16):
    m = Acc[f32, R, C].splat(1.5)  {mark}
    m.store(o, 0, stride=C)  {mark}
""")

WORKGROUP_SPEC = program("""
@cd.kernel(workgroup_size=("X", "Y", 1))  {mark}
def k(o: cd.Buffer[u32], X: cd.Spec[u32] = 32, Y: cd.Spec[u32] = 1):
    o[cd.local_invocation_id.y * X + cd.local_invocation_id.x] = cd.local_invocation_index  {mark}
""")

SPEC_ARITH = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[i32], A: cd.Spec[i32] = 7, B: cd.Spec[i32] = 3, S: cd.Spec[u32] = 1):
    i = cd.global_invocation_id.x
    if i == 0:
        o[0] = A // B  {mark}
        o[1] = A % B  {mark}
        o[2] = A * B  {mark}
        o[3] = A + B  {mark}
        o[4] = A << i32(S)  {mark}
        o[5] = A >> i32(S)  {mark}
        o[6] = -A  {mark}
        o[7] = i32(u32(A) >> S)  {mark}
""")

SIZES = (0, 1, 2, 31, 64, 1000, 2**14, 2**16, 2**20, 2**24, 2**31, 2**32 - 1)


def resource_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Shared, local and private arrays and matrix dimensions sized by specialization constants at launch (0,
    small, beyond any GPU, 2**32 - 1), workgroup sizes from specialization constants, and the arithmetic of
    specialization constants at their edges: each runs, or is a clear error; never a MemoryError, a numpy error
    or a process the system kills."""
    for size in SIZES:
        if 32 <= size <= 2**12:
            want, model = "ok", np.arange(32, dtype=np.uint32)
        elif 1 <= size < 32:
            want, model = "error", None
        else:
            want, model = "either", np.arange(32, dtype=np.uint32)
        yield RunProbe(f"resources shared array of {size}", SHARED_SPEC,
                       lambda size=size: ((1,), (np.zeros(32, np.uint32),), {"S": size}), want, SIZE_ERROR,
                       lambda a, kw, model=model: _same("o", a[0], model) if model is not None else None)
        for kind in ("local_array", "private_array"):
            i = np.arange(32, dtype=np.int64)
            local = [(v, 7 if v % size != size - 1 else v) for v in range(32)] if size else []
            want = np.array([v + last for v, last in local], np.uint32) if size else None
            yield RunProbe(f"resources {kind} of {size}", LOCAL_SPEC.replace("{kind}", kind),
                           lambda size=size: ((1,), (np.zeros(32, np.uint32),), {"S": size}),
                           "error" if size == 0 else "ok" if size <= 2**12 else "either", SIZE_ERROR,
                           (lambda a, kw, want=want: _same("o", a[0], want)) if want is not None else None)
    dims = [(16, 16), (1, 1), (0, 16), (16, 0), (3, 7), (256, 256), (2**16, 2**16), (2**31, 1), (1, 2**31),
            (2**32 - 1, 2**32 - 1), (2**20, 16)] + [(rng.randint(1, 40), rng.randint(1, 40)) for _ in range(count // 4)]
    for r, c in dims:
        small = 1 <= r <= 64 and 1 <= c <= 64
        want = np.zeros(4096, np.float32)
        if small:
            want[:r * c] = 1.5
        yield RunProbe(f"resources matrix {r}x{c}", MATRIX_SPEC,
                       lambda r=r, c=c: ((1,), (np.zeros(4096, np.float32),), {"R": r, "C": c}),
                       "ok" if small else "error" if r * c == 0 or r * c > 2**24 else "either", SIZE_ERROR,
                       (lambda a, kw, want=want: _same("o", a[0], want)) if small else None)
    for x, y in ((32, 1), (1, 1), (1024, 1), (32, 32), (1025, 1), (0, 1), (1, 0), (2**16, 2**16), (2**32 - 1, 1),
                 (64, 2)):
        ok = 1 <= x * y <= 1024
        want = np.zeros(2048, np.uint32)
        if ok:
            want[:x * y] = np.arange(x * y)
        yield RunProbe(f"resources workgroup size ({x}, {y}, 1)", WORKGROUP_SPEC,
                       lambda x=x, y=y: ((1,), (np.zeros(2048, np.uint32),), {"X": x, "Y": y}),
                       "ok" if ok else "error", SIZE_ERROR, lambda a, kw, want=want: _same("o", a[0], want))
    edges = [0, 1, -1, 3, 7, -7, 2**31 - 1, -(2**31), 31, 32]
    pairs = [(a, b) for a in edges for b in edges]
    for a, b in pairs + [(rng.randint(-(2**31), 2**31 - 1), rng.randint(-(2**31), 2**31 - 1))
                         for _ in range(count // 4)]:
        sh = b % 40 if b >= 0 else 33
        want = np.array([int_op("//", a, b, "i32"), int_op("%", a, b, "i32"), int_op("*", a, b, "i32"),
                         int_op("+", a, b, "i32"), int_op("<<", a, sh, "i32"), int_op(">>", a, sh, "i32"),
                         wrap(-a, "i32"), wrap(int_op(">>", wrap(a, "u32"), sh, "u32"), "i32")] + [0] * 24, np.int32)
        yield RunProbe(f"resources spec arithmetic A={a} B={b} S={sh}", SPEC_ARITH,
                       lambda a=a, b=b, sh=sh: ((1,), (np.zeros(32, np.int32),), {"A": a, "B": b, "S": sh}), "ok",
                       (), lambda args, kw, want=want: _same("o", args[0], want))



# == tensor-addressed loads (SPV_NV_cooperative_matrix2): dimensions, offsets and clamp modes at their edges ====
TENSOR = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(src: cd.Buffer[f16], dst: cd.Buffer[f16], n: u32, m: u32, o0: i32, o1: i32, MODE: cd.Spec[u32] = 1):
    L = cd.tensor_layout(2, clamp=MODE).dimension(n, m).clamp_value(7.0, f16)  {mark}
    t = Acc[f16, 16, 16].load_tensor(src, 0, L.slice(o0, 16, o1, 16))  {mark}
    t.store_tensor(dst, 0, cd.tensor_layout(2).dimension(16, 16))  {mark}
""")


def _tensor_model(src: np.ndarray, n: int, m: int, o0: int, o1: int, mode: int) -> tuple[str, np.ndarray | None]:
    """docs/lang/nv2.md: element (r, c) is tensor coordinate (o0 + r, o1 + c), clamped by the mode, at
    ``coord0 * m + coord1`` (the packed strides ``dimension`` sets)."""
    if mode > 4:
        return "error", None
    out = np.zeros((16, 16), np.float16)
    for r in range(16):
        for c in range(16):
            coords = []
            for x, dim in ((o0 + r, n), (o1 + c, m)):
                if 0 <= x < dim:
                    coords.append(x)
                elif mode == 0 or dim == 0 and mode > 1:
                    return "error", None
                elif mode == 1:
                    coords.append(None)
                elif mode == 2:
                    coords.append(min(max(x, 0), dim - 1))
                elif mode == 3:
                    coords.append(x % dim)
                else:
                    period = max(2 * dim - 2, 1)
                    y = x % period
                    coords.append(2 * dim - 2 - y if y >= dim else y)
            if None in coords:
                out[r, c] = 7.0
                continue
            address = coords[0] * m + coords[1]
            if address >= len(src):
                return "error", None
            out[r, c] = src[address]
    return "ok", out.reshape(-1)


def tensor_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """A 16 x 16 tensor load through a layout whose dimensions (0 to 2**32 - 1), slice offsets (negative, past
    the end) and clamp mode (each of the five, and values that are none) come from the launch."""
    cases = [(n, m, o0, o1, mode) for mode in range(5) for n, m in ((16, 16), (8, 8), (1, 1), (0, 16), (16, 0), (40, 3))
             for o0, o1 in ((0, 0), (-3, 5), (20, -20))]
    cases += [(n, m, 0, 0, mode) for mode in (5, 2**32 - 1) for n, m in ((16, 16),)]
    cases += [(2**32 - 1, 2**32 - 1, 0, 0, mode) for mode in range(5)] + [(16, 16, -(2**31), 2**31 - 1, 2)]
    cases += [(rng.randint(0, 40), rng.randint(0, 40), rng.randint(-40, 40), rng.randint(-40, 40), rng.randint(0, 4))
              for _ in range(count)]
    for n, m, o0, o1, mode in cases:
        size = rng.choice([n * m, n * m + 5, 1024]) if n * m < 2**20 else 1024
        src = (np.arange(size) % 251).astype(np.float16)
        want, model = _tensor_model(src, n, m, o0, o1, mode)

        def make(src: np.ndarray = src, args: tuple = (n, m, o0, o1), mode: int = mode) -> tuple[Any, tuple, dict]:
            return (1,), (src.copy(), np.zeros(256, np.float16), *args), {"MODE": mode}

        yield RunProbe(f"tensor n={n} m={m} o0={o0} o1={o1} mode={mode} src={size}", TENSOR, make, want,
                       ("out of bounds", "outside", "clamp", "dimension", "is 0"),
                       (lambda a, kw, model=model: _same("dst", a[1], model)) if model is not None else None)



# == float arithmetic and math functions at their edges (NaN, infinities, zeros of both signs, overflow) =========
UNARY_MATH = ("exp exp2 log log2 sqrt inversesqrt floor ceil trunc round round_even fract sin cos tan asin acos "
              "atan sinh cosh tanh abs sign").split()
BINARY_MATH = ("atan2", "pow", "min", "max", "step", "mod")
MATH = """
@cd.kernel(workgroup_size=(32, 1, 1))
def k(x: cd.Buffer[{t}], y: cd.Buffer[{t}], z: cd.Buffer[{t}], o: cd.Buffer[{t}]):
    i = cd.global_invocation_id.x
    a = x[i]
    b = y[i]
    c = z[i]
{body}
"""


def _math_lines() -> list[tuple[str, str]]:
    """(coopdsl expression, model name) of each column."""
    cols = [(f"cd.{f}(a)", f) for f in UNARY_MATH] + [(f"cd.{f}(a, b)", f) for f in BINARY_MATH]
    cols += [("a + b", "+"), ("a - b", "-"), ("a * b", "*"), ("a / b", "/"), ("a % b", "%"), ("-a", "neg"),
             ("cd.fma(a, b, c)", "fma"), ("cd.mix(a, b, c)", "mix"), ("cd.clamp(a, b, c)", "clamp"),
             ("cd.smoothstep(a, b, c)", "smoothstep"), ("cd.select(a < b, a, c)", "select<"),
             ("cd.select(a == b, b, c)", "select=="), ("cd.select(cd.isnan(a), c, b)", "isnan"),
             ("cd.select(cd.isinf(a), c, b)", "isinf")]
    return cols


def _math_model(name: str, a: np.ndarray, b: np.ndarray, c: np.ndarray, t: str) -> np.ndarray:
    """docs/interpreter.md, "Numbers": math functions are numpy's evaluated in float32 (float64 for f64) and
    rounded to the type; round rounds halves away from zero; f16 arithmetic rounds after every operation."""
    dtype = FLOATS[t]
    wide = np.float64 if t == "f64" else np.float32
    A, B, C = (v.astype(wide) for v in (a, b, c))
    with np.errstate(all="ignore"):
        out = {
            "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
            "inversesqrt": lambda v: 1.0 / np.sqrt(v), "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
            "round": lambda v: np.trunc(v + np.copysign(0.5, v)), "round_even": np.rint,
            "fract": lambda v: v - np.floor(v), "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
            "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
            "abs": np.abs, "sign": np.sign,
        }.get(name)
        if out is not None:
            if name == "round_even" and t == "f16":
                return np.rint(a)
            return out(A).astype(dtype)
        if name in ("+", "-", "*", "/", "%"):  # in the type itself: f16 rounds after the operation
            return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "%": np.fmod}[name](a, b)
        r = {"atan2": lambda: np.arctan2(A, B), "pow": lambda: np.power(A, B), "min": lambda: np.minimum(A, B),
             "max": lambda: np.maximum(A, B), "step": lambda: np.where(B < A, 0.0, 1.0),
             "mod": lambda: A - B * np.floor(A / B), "neg": lambda: -A,
             "fma": lambda: A.astype(np.float64) * B + C, "mix": lambda: A * (1.0 - C) + B * C,
             "clamp": lambda: np.minimum(np.maximum(A, B), C),
             "smoothstep": lambda: _smooth(A, B, C), "select<": lambda: np.where(a < b, A, C),
             "select==": lambda: np.where(a == b, B, C), "isnan": lambda: np.where(np.isnan(a), C, B),
             "isinf": lambda: np.where(np.isinf(a), C, B)}[name]()
        if name == "mod" and t != "f64":
            r = (A - B * np.floor(A / B).astype(wide)).astype(wide)
        return np.asarray(r).astype(dtype)


def _smooth(e0: np.ndarray, e1: np.ndarray, x: np.ndarray) -> np.ndarray:
    v = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return v * v * (3.0 - 2.0 * v)


F32_ONLY = ("exp exp2 log log2 sin cos tan asin acos atan sinh cosh tanh atan2 pow").split()  # GLSL.std.450: no f64
MATH_EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 1e-8, -1e-8,
              65504.0, 70000.0, 1e30, -1e30, 3.4e38, 1e-45, 1e300, 710.0, 89.0, 11.5, -11.5, 1e7 + 0.5, 2.0**24 + 1]


def math_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Every math function, float operator and select of f16, f32 and f64 on edge values (each of a, b, c drawn
    from NaN, infinities, signed zeros, values that overflow the type or its exp) and random ones."""
    for t, dtype in FLOATS.items():
        cols = [c for c in _math_lines() if t != "f64" or c[1] not in F32_ONLY]
        body = "\n".join(f"    o[i * {len(cols)} + {j}] = {expr}  {{mark}}" for j, (expr, _) in enumerate(cols))
        src = program(MATH.format(t=t, body=body))
        triples = [(a, b, rng.choice(MATH_EDGES)) for a in MATH_EDGES for b in MATH_EDGES[::3]]
        triples += [tuple(rng.choice([rng.choice(MATH_EDGES), rng.uniform(-4, 4), rng.uniform(-1e3, 1e3)])
                          for _ in range(3)) for _ in range(count)]
        for start in range(0, len(triples), 32):
            chunk = triples[start:start + 32]
            chunk += [(0.0, 1.0, 2.0)] * (32 - len(chunk))
            with np.errstate(all="ignore"):
                a, b, c = (np.array([tr[k] for tr in chunk], np.float64).astype(dtype) for k in range(3))
            want = np.stack([_math_model(name, a, b, c, t) for _, name in cols], axis=1).reshape(-1)

            def make(a: np.ndarray = a, b: np.ndarray = b, c: np.ndarray = c, n: int = len(cols),
                     dtype: Any = dtype) -> tuple[Any, tuple, dict]:
                return (1,), (a.copy(), b.copy(), c.copy(), np.zeros(32 * n, dtype)), {}

            def check(args: tuple, kw: dict, want: np.ndarray = want, a: np.ndarray = a, b: np.ndarray = b,
                      c: np.ndarray = c, cols: list[tuple[str, str]] = cols) -> str | None:
                bad = _same("o", args[3], want)
                if bad is None:
                    return None
                k = int(bad.split("[")[1].split("]")[0])
                row, col = divmod(k, len(cols))
                return f"{bad}: {cols[col][0]} with a={a[row]!r} b={b[row]!r} c={c[row]!r}"

            yield RunProbe(f"math {t} {start // 32}", src, make, "ok", (), check)



# == atomics on buffers: every operation, contended addresses, compare-exchange, float adds; element access =====
ATOMIC_OPS = {"add": lambda o, v: o + v, "sub": lambda o, v: o - v, "min": min, "max": max,
              "and": lambda o, v: o & v, "or": lambda o, v: o | v, "xor": lambda o, v: o ^ v,
              "exchange": lambda o, v: v}
ATOMICS = """
@cd.kernel(workgroup_size=(32, 1, 1))
def k(m: cd.Buffer[{t}], v: cd.Buffer[{t}], a: cd.Buffer[u32], old: cd.Buffer[{t}], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        old[i] = cd.atomic_{op}(m, a[i], v[i])  {{mark}}
"""
CMPXCHG = """
@cd.kernel(workgroup_size=(32, 1, 1))
def k(m: cd.Buffer[u32], v: cd.Buffer[u32], c: cd.Buffer[u32], a: cd.Buffer[u32], old: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    old[i] = cd.atomic_compare_exchange(m, a[i], c[i], v[i])  {mark}
"""
ELEMENTS = program("""
@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[f32], lens: cd.Buffer[u32], j: u32, w: u32):
    m = Acc[f32, 16, 16].splat(1.0)
    lane = cd.subgroup_invocation_id
    m[w] = f32(lane)  {mark}
    lens[lane] = m.length()
    o[lane] = m[j]  {mark}
""")


def _atomic_model(op: str, t: str, mem: list[int], vals: list[int], addrs: list[int], n: int
                  ) -> tuple[list[int], list[int]]:
    """docs/interpreter.md: the active invocations apply an atomic one after another in slot order."""
    mem, old = list(mem), [0] * len(vals)
    for i in range(min(n, len(vals))):
        o = mem[addrs[i]]
        old[i] = o
        mem[addrs[i]] = wrap(ATOMIC_OPS[op](o, vals[i]), t) if t in INTS else ATOMIC_OPS[op](o, vals[i])
    return mem, old


def atomic_probes(rng: random.Random, count: int) -> Iterator[RunProbe]:
    """Every atomic read-modify-write of u32, i32 and u64 with contended and distinct addresses (and addresses past
    the end), partial activity, compare-exchange, float atomic adds (rounded after each); a matrix component read
    and written at a runtime index in and past length()."""
    for j in range(max(count, 6)):
        op = list(ATOMIC_OPS)[j % len(ATOMIC_OPS)] if j < 2 * len(ATOMIC_OPS) else rng.choice(list(ATOMIC_OPS))
        t = rng.choice(["u32", "i32", "u64", "i64"] if op not in ("sub",) else ["u32", "i32"])
        size = rng.choice([1, 2, 4, 33])
        w = INTS[t][0]
        mem = [wrap(rng.getrandbits(w), t) for _ in range(size)]
        vals = [wrap(rng.choice([rng.getrandbits(w), rng.randint(0, 5), -1, 2**(w - 1)]), t) for _ in range(32)]
        addrs = [rng.choice([0, rng.randint(0, size - 1)]) for _ in range(32)]
        if rng.random() < 0.15:
            addrs[rng.randint(0, 31)] = size + rng.choice([0, 1, 100])
        n = rng.choice([32, 32, rng.randint(0, 32)])
        active_past = any(a >= size for a in addrs[:n])
        want_mem, want_old = _atomic_model(op, t, mem, vals, addrs, n) if not active_past else (mem, [0] * 32)
        src = program(ATOMICS.format(t=t, op=op))

        def make(mem: list[int] = mem, vals: list[int] = vals, addrs: list[int] = addrs, n: int = n, t: str = t
                 ) -> tuple[Any, tuple, dict]:
            return (1,), (_ints(t, mem), _ints(t, vals), _u32s(addrs), np.zeros(32, NP_INT[t]), n), {}

        def check(args: tuple, kw: dict, want_mem: list[int] = want_mem, want_old: list[int] = want_old,
                  n: int = n, t: str = t) -> str | None:
            return _same("m", args[0], _ints(t, want_mem)) or \
                _same("old", args[3][:n], _ints(t, want_old[:n]))

        yield RunProbe(f"atomic {op} {t} {j}: memory {size} n={n}", src, make, "error" if active_past else "ok",
                       ("out of bounds",), None if active_past else check)
    for t in ("f32", "f64"):  # (f16 atomics are refused by the compiler: 32- or 64-bit elements)
        src = program(ATOMICS.format(t=t, op="add"))
        for j in range(max(count // 4, 3)):
            dtype = FLOATS[t]
            mem = np.array([rng.choice([0.0, 1.0, 1e-3, 65504.0, -0.0]) for _ in range(2)], dtype)
            vals = np.array([rng.choice([1.0, 0.1, 1e-4, 3e4, -2.5, math.inf, math.nan]) for _ in range(32)], dtype)
            addrs = [rng.randint(0, 1) for _ in range(32)]
            m2, old = mem.copy(), np.zeros(32, dtype)
            with np.errstate(all="ignore"):
                for i in range(32):  # one after another in slot order, each sum rounded to the type
                    old[i] = m2[addrs[i]]
                    m2[addrs[i]] = dtype(m2[addrs[i]] + vals[i])

            def make(mem: np.ndarray = mem, vals: np.ndarray = vals, addrs: list[int] = addrs, dtype: Any = dtype
                     ) -> tuple[Any, tuple, dict]:
                return (1,), (mem.copy(), vals.copy(), _u32s(addrs), np.zeros(32, dtype), 32), {}

            yield RunProbe(f"atomic float add {t} {j}", src, make, "ok", (),
                           lambda args, kw, m2=m2, old=old: _same("m", args[0], m2) or _same("old", args[3], old))
    src = program(CMPXCHG)
    for j in range(max(count // 2, 4)):
        size = rng.choice([1, 3])
        mem = [rng.randint(0, 3) for _ in range(size)]
        vals = [rng.randint(0, 3) for _ in range(32)]
        cmps = [rng.randint(0, 3) for _ in range(32)]
        addrs = [rng.randint(0, size - 1) for _ in range(32)]
        m2, old = list(mem), []
        for i in range(32):
            old.append(m2[addrs[i]])
            if m2[addrs[i]] == cmps[i]:
                m2[addrs[i]] = vals[i]

        def make(mem: list[int] = mem, vals: list[int] = vals, cmps: list[int] = cmps, addrs: list[int] = addrs
                 ) -> tuple[Any, tuple, dict]:
            return (1,), (_u32s(mem), _u32s(vals), _u32s(cmps), _u32s(addrs), np.zeros(32, np.uint32)), {}

        yield RunProbe(f"atomic compare-exchange {j}", src, make, "ok", (),
                       lambda args, kw, m2=m2, old=old: _same("m", args[0], _u32s(m2)) or
                       _same("old", args[4], _u32s(old)))
    for j in (0, 7, 8, 255, 2**32 - 1):
        for w in (0, 7, 8, 2**31):
            for sgs in (32, 16):
                per = 256 // sgs  # components each lane holds; both subgroups (of 16) write o[0:16]
                bad = j >= per or w >= per
                want = np.array([(float(lane) if w == j else 1.0) if lane < sgs else 0.0 for lane in range(32)],
                                np.float32)
                lens = np.array([per if lane < sgs else 0 for lane in range(32)], np.uint32)
                yield RunProbe(f"atomic-free matrix component w={w} j={j} subgroup_size={sgs}", ELEMENTS,
                               lambda j=j, w=w, sgs=sgs: ((1,), (np.zeros(32, np.float32), np.zeros(32, np.uint32),
                                                                 j, w), {"subgroup_size": sgs}),
                               "error" if bad else "ok", ("does not exist", "out of bounds"),
                               lambda args, kw, want=want, lens=lens: _same("o", args[0], want) or
                               _same("lens", args[1], lens))


FAMILIES: dict[str, Callable[[random.Random, int], Iterator[RunProbe]]] = {
    "launch": launch_probes,
    "arith": arith_probes,
    "memory": memory_probes,
    "control": control_probes,
    "subgroup": subgroup_probes,
    "matrix": matrix_probes,
    "resources": resource_probes,
    "tensor": tensor_probes,
    "math": math_probes,
    "atomic": atomic_probes,
}


def probes(families: list[str] | None = None, count: int = 20, seed: int = 0) -> Iterator[RunProbe]:
    """Every family's probes, ``count`` random ones each, deterministic for a ``seed``."""
    for name in families or list(FAMILIES):
        yield from FAMILIES[name](random.Random(f"{name}:{seed}"), count)


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python3 -m tests.probes.interp_generators", description=__doc__.split("\n")[0])
    ap.add_argument("families", nargs="*", help=f"from {', '.join(FAMILIES)} (default: all)")
    ap.add_argument("--count", type=int, default=200, help="random probes per family (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per probe (a hang past it is reported)")
    ap.add_argument("-v", action="store_true", help="list every failure (else 25 per class)")
    opts = ap.parse_args(argv)
    total_bad = 0
    for name in opts.families or list(FAMILIES):
        start = time.time()
        with memory_guard():
            results = run(probes([name], opts.count, opts.seed), opts.timeout)
        print(f"{name}: {summary(results)} ({time.time() - start:.0f} s)", flush=True)
        for kind in FAILURES:
            items = results.get(kind, [])
            total_bad += len(items)
            for p, o in items[: None if opts.v else 25]:
                print(f"  {kind:9} {p.name}: {o.detail}", flush=True)
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
