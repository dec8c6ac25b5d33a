"""Running a Python file of kernels and picking a kernel from it, with clear errors.

A syntax error, a failed import or any exception raised while the file runs
becomes one :class:`KernelFileError` naming ``file:line`` (no traceback
through ``runpy``); a missing file or a directory is an :class:`InputError`.
"""

from __future__ import annotations

import os
import runpy
import sys
import types
from pathlib import Path
from typing import Any

from .._sources import file_text, parse_file
from ..errors import CoopDSLError, SourceLoc
from ..kernel import Kernel
from .errors import InputError, KernelFileError

RUN_NAME = "__coopdsl_emit__"  # __name__ of a kernel file while it runs (not "__main__": no script code runs)


def check_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a Path if it names an existing regular file, else an InputError saying why (a TypeError for
    a value that is no path)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"expected the {what}'s path (str or os.PathLike), got {type(path).__name__}")
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a {what}")
    if p.exists():   # a device, a pipe, a socket: it cannot be read as a whole file
        if not p.is_file():
            raise InputError(f"{path}: is not a regular file (a device, a pipe or a socket); give a {what}")
    else:
        raise InputError(f"no such file: {path}")
    return p


def load_kernels(path: str | Path) -> dict[str, Kernel]:
    """The ``@coopdsl.kernel`` objects a Python file defines at module level, by kernel name."""
    p = check_file(path, "Python file")
    sys.path.insert(0, str(p.resolve().parent))
    try:
        namespace = _run_file(str(p))
    except CoopDSLError as e:  # a coopdsl error raised while the file runs already names its line
        raise e.with_traceback(None) from None
    except SyntaxError as e:
        raise KernelFileError(_syntax_message(e, str(p))) from None
    except _TooDeep:  # Python's own parser gave up (a 3,000-term expression)
        raise KernelFileError(f"{p}: error: an expression in {p.name} is nested too deeply for Python's parser "
                              f"(RecursionError while parsing); split it into several statements") from None
    except (Exception, SystemExit) as e:  # the user's module failed: say where, not how runpy got there
        raise KernelFileError(_exception_message(e, str(p))) from None
    finally:
        sys.path.pop(0)
    # kernels by name; a kernel's .specialize() variants share its name: the kernel itself (its defaults)
    # answers for the name, whatever order the file binds them in
    found: dict[str, Kernel] = {}
    for k in namespace.values():
        if isinstance(k, Kernel) and (k.name not in found or found[k.name].consts or not k.consts):
            found[k.name] = k
    return found


def _check_encoding(path: str) -> None:
    """A file ``linecache`` could not read because it is not UTF-8 (and declares no other encoding) is a
    located error: Python would refuse to import it, and coopdsl could not find its kernels' source."""
    raw = Path(path).read_bytes()
    if not raw.strip() or b"coding" in b"\n".join(raw.splitlines()[:2]):
        return
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise KernelFileError(f"{path}:{line}:{col}: error: byte 0x{raw[e.start]:02x} is not UTF-8; Python source "
                              f"files are UTF-8 unless they declare another encoding on their first or second line "
                              f"(# -*- coding: latin-1 -*-, PEP 263)") from None


class _TooDeep(Exception):
    """Python's parser or compiler ran out of recursion on the file (a RecursionError while the file runs is
    the file's own, reported at its line)."""


def _run_file(path: str) -> dict[str, Any]:
    """Run the file as ``runpy.run_path(path, run_name="__coopdsl_emit__")`` does, parsing it only once:
    the code runs from the tree the front end then finds the kernels' source in (a large file took as
    long to parse as to compile the rest).  Files ``linecache`` cannot read go through ``runpy``."""
    text = file_text(path)
    if not text:
        _check_encoding(path)
        return runpy.run_path(path, run_name=RUN_NAME)
    try:
        code = compile(parse_file(path, text), path, "exec")
    except RecursionError:
        raise _TooDeep() from None
    module = types.ModuleType(RUN_NAME)
    module.__dict__.update(__file__=path, __cached__=None, __loader__=None, __package__="", __spec__=None)
    saved = sys.modules.get(RUN_NAME), sys.argv[0] if sys.argv else None
    sys.modules[RUN_NAME] = module  # as runpy does: the module exists while it runs (dataclasses need it)
    if sys.argv:
        sys.argv[0] = path
    try:
        exec(code, module.__dict__)
    finally:
        if saved[0] is None:
            sys.modules.pop(RUN_NAME, None)
        else:
            sys.modules[RUN_NAME] = saved[0]
        if sys.argv and saved[1] is not None:
            sys.argv[0] = saved[1]
    return dict(module.__dict__)


def pick_kernel(kernels: dict[str, Kernel], name: str | None, path: str | Path) -> Kernel:
    """The kernel called ``name``, or the only one when ``name`` is None."""
    if not isinstance(kernels, dict):
        raise TypeError(f"pick_kernel: kernels must be a dict of name -> Kernel (load_kernels'), got "
                        f"{type(kernels).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"pick_kernel: name must be a kernel's name (str) or None, got {type(name).__name__}")
    if not kernels:
        raise InputError(f"{path} defines no @coopdsl.kernel function")
    if name is not None:
        if name not in kernels:
            raise InputError(f"{path} has no kernel '{name}' (it has: {', '.join(sorted(kernels))})")
        return kernels[name]
    if len(kernels) > 1:
        raise InputError(f"{path} defines several kernels ({', '.join(sorted(kernels))}); pick one with --kernel")
    return next(iter(kernels.values()))


def _syntax_message(e: SyntaxError, path: str) -> str:
    loc = SourceLoc(e.filename or path, e.lineno or 0, e.offset or 0)
    head = f"{loc}: error: {type(e).__name__}: {e.msg}"
    text = (e.text or loc.source_line()).rstrip("\n")
    if not text.strip():
        return head
    stripped = text.lstrip()
    caret = " " * max(loc.col - 1 - (len(text) - len(stripped)), 0) + "^"
    return f"{head}\n    {stripped}\n    {caret}"


def _exception_message(e: BaseException, path: str) -> str:
    import traceback  # only for this message: it costs an import a successful run need not pay

    frames = traceback.extract_tb(e.__traceback__)
    target = str(Path(path).resolve())
    mine = [f for f in frames if f.filename and str(Path(f.filename).resolve()) == target]
    candidates = mine or frames
    frame = candidates[-1] if candidates else None
    where = f"{frame.filename}:{frame.lineno}: " if frame is not None else f"{path}: "
    detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    text = f"{where}error: running {path} failed: {detail}"
    if frame is not None and frame.line:
        text += f"\n    {frame.line}"
    return text
