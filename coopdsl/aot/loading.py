"""Running a Python file of kernels and picking a kernel from it, with clear errors.

A syntax error, a failed import or any exception raised while the file runs
becomes one :class:`KernelFileError` naming ``file:line`` (no traceback
through ``runpy``); a missing file or a directory is an :class:`InputError`.
"""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

from ..errors import CoopDSLError, SourceLoc
from ..kernel import Kernel
from .errors import InputError, KernelFileError


def check_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a Path if it names an existing regular file, else an InputError saying why."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not a {what}")
    if not p.is_file():
        raise InputError(f"no such file: {path}")
    return p


def load_kernels(path: str | Path) -> dict[str, Kernel]:
    """The ``@coopdsl.kernel`` objects a Python file defines at module level, by kernel name."""
    p = check_file(path, "Python file")
    sys.path.insert(0, str(p.resolve().parent))
    try:
        namespace = runpy.run_path(str(p), run_name="__coopdsl_emit__")
    except CoopDSLError as e:  # a coopdsl error raised while the file runs already names its line
        raise e.with_traceback(None) from None
    except SyntaxError as e:
        raise KernelFileError(_syntax_message(e, str(p))) from None
    except (Exception, SystemExit) as e:  # the user's module failed: say where, not how runpy got there
        raise KernelFileError(_exception_message(e, str(p))) from None
    finally:
        sys.path.pop(0)
    return {k.name: k for k in namespace.values() if isinstance(k, Kernel)}


def pick_kernel(kernels: dict[str, Kernel], name: str | None, path: str | Path) -> Kernel:
    """The kernel called ``name``, or the only one when ``name`` is None."""
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
