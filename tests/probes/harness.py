"""Fresh probes of the hardening issue's kinds (issue 24): generate programs, compile them, classify the outcome.

A probe is a small module: a valid kernel with one line under test (marked ``# THE LINE``), or a declaration
under test.  :func:`classify` compiles it (with a timeout) and returns one of

* ``ok``        -- it compiled and spirv-val accepts the module;
* ``located``   -- a :class:`~coopdsl.errors.CompileError` (not internal) at the line under test;
* ``misplaced`` -- a CompileError elsewhere (another line, or no location);
* ``internal``  -- an :class:`~coopdsl.errors.InternalCompilerError`;
* ``foreign``   -- any exception that is not coopdsl's;
* ``hang``      -- it ran past the timeout;
* ``invalid``   -- it compiled but spirv-val rejects the module.

The first two are the targets; the rest are failures.  ``python3 -m tests.probes.harness`` runs every
generated probe (tests/probes/test_*.py run all or a fixed sample of them) and prints the counts per class.
"""

from __future__ import annotations

import atexit
import collections
import os
import shutil
import signal
import sys
import tempfile
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

GOOD = ("ok", "located")
MARK = "# THE LINE"
ALSO = "# ALSO"  # a line of a function the line under test calls: its errors are located there too


@dataclass(frozen=True)
class Probe:
    """One generated program: ``source`` (a module), the kernel ``kernel`` to compile, a name, and whether
    it is the valid base program (which must compile: ``ok``)."""

    name: str
    source: str
    kernel: str = "k"
    valid: bool = False
    target_env: str = "vulkan1.3"


@dataclass(frozen=True)
class Outcome:
    kind: str
    detail: str = ""


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


_DIR = tempfile.mkdtemp(prefix="coopdsl_probes_")
atexit.register(shutil.rmtree, _DIR, True)   # (each run left its directory in /tmp)
_COUNT = [0]


def classify(probe: Probe, timeout: float = 10.0) -> Outcome:
    """Compile ``probe`` and classify what happened (see the module)."""
    from coopdsl.errors import CompileError, CoopDSLError, InternalCompilerError
    from coopdsl.spirv import tools

    _COUNT[0] += 1
    modname = f"probe_{os.getpid()}_{_COUNT[0]}"
    path = os.path.join(_DIR, modname + ".py")
    with open(path, "w") as f:
        f.write(probe.source)
    lines = probe.source.splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(MARK)]
    also = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(ALSO)]  # the line's callees
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        namespace = {"__name__": modname, "__file__": path}
        sys.modules[modname] = type(sys)(modname)
        sys.modules[modname].__dict__.update(namespace)
        namespace = sys.modules[modname].__dict__
        exec(compile(probe.source, path, "exec", dont_inherit=True), namespace)
        binary = namespace[probe.kernel].compile(probe.target_env)
        signal.setitimer(signal.ITIMER_REAL, 0)
        msg = tools.validation_message(binary, probe.target_env)
        if msg is not None:
            return Outcome("invalid", msg.splitlines()[0] if msg else "")
        return Outcome("ok")
    except _Timeout:
        return Outcome("hang")
    except InternalCompilerError as e:
        return Outcome("internal", _one_line(e))
    except CompileError as e:
        loc = getattr(e, "loc", None)
        if loc is not None and loc.file == path and (loc.line in marked or loc.line in also):
            if probe.valid:
                import traceback
                frames = [f"{f.filename.split('coopdsl/')[-1]}:{f.lineno}"
                          for f in traceback.extract_tb(e.__traceback__) if "/coopdsl/" in f.filename]
                return Outcome("located", f"{e.message} [raised at {' <- '.join(reversed(frames[-6:]))}]")
            return Outcome("located", e.message)
        where = f"{os.path.basename(str(loc.file))}:{loc.line}" if loc is not None else "?"
        return Outcome("misplaced", f"at {where}: {e.message}")
    except CoopDSLError as e:  # coopdsl's own, but not a compile error: a declaration/launch error class
        return Outcome("misplaced", f"{type(e).__name__}: {_one_line(e)}")
    except RecursionError as e:
        return Outcome("foreign", f"RecursionError: {_one_line(e)}")
    except Exception as e:  # noqa: BLE001 - classifying is the point
        return foreign(e)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        sys.modules.pop(modname, None)
        try:
            os.unlink(path)
        except OSError:
            pass


def foreign(e: BaseException, qualified: bool = False, width: int = 200) -> Outcome:
    """A foreign exception's outcome: its class (with its module when ``qualified``), the innermost coopdsl line
    it passed through, and its message's first line."""
    import traceback

    tb = traceback.extract_tb(e.__traceback__)
    where = next((f"{f.filename.split('coopdsl/')[-1]}:{f.lineno}" for f in reversed(tb)
                  if "/coopdsl/" in f.filename), "?")
    name = f"{type(e).__module__}.{type(e).__name__}" if qualified else type(e).__name__
    return Outcome("foreign", f"{name} at {where}: {_one_line(e, width)}")


def _one_line(e: BaseException, width: int = 200) -> str:
    return str(e).strip().splitlines()[0][:width] if str(e).strip() else type(e).__name__


def run(probes: Iterable[Probe], timeout: float = 10.0) -> dict[str, list[tuple[Probe, Outcome]]]:
    """Classify every probe; outcomes grouped by class.  A valid base program must be ``ok``: anything else is
    a valid program rejected (counted as ``rejected``, with what happened)."""
    out: dict[str, list[tuple[Probe, Outcome]]] = collections.defaultdict(list)
    for p in probes:
        o = classify(p, timeout)
        if p.valid and o.kind != "ok":
            o = Outcome("rejected", f"{o.kind}: {o.detail}")
        out[o.kind].append((p, o))
    return out


def summary(results: dict[str, list[tuple[Probe, Outcome]]]) -> str:
    return ", ".join(f"{k} {len(v)}" for k, v in sorted(results.items()))


def dedent(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def main(argv: list[str]) -> int:
    from . import generators
    verbose = "-v" in argv
    groups = [a for a in argv if not a.startswith("-")] or list(generators.GROUPS)
    total_bad = 0
    for g in groups:
        results = run(generators.GROUPS[g]())
        print(f"{g}: {summary(results)}")
        for kind, items in sorted(results.items()):
            if kind in GOOD:
                continue
            total_bad += len(items)
            for p, o in items[: None if verbose else 25]:
                print(f"  {kind:9} {p.name}: {o.detail}")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
