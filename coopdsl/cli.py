"""The ``coopdsl`` command: emit | build | val | dis | devices.

Exit status: 0 success, 1 the kernel or module is invalid (message on
stderr), 2 bad usage or a missing file.  Every output path accepts ``-`` for
stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __version__
from ._gcpause import paused
from .aot.errors import InputError
from .aot.loading import check_file, load_kernels, pick_kernel
from .errors import CoopDSLError
from .spirv import tools
from .spirv._tables import MAGIC as SPIRV_MAGIC

FORMATS = {"spv": ".spv", "c": ".h", "json": ".json"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coopdsl", description="Compile cooperative-matrix kernels to SPIR-V.")
    p.add_argument("--version", action="version", version=f"coopdsl {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("emit", help="compile a kernel from a Python file to SPIR-V, a C header or JSON")
    e.add_argument("file", help="Python file defining one or more @coopdsl.kernel functions")
    e.add_argument("-o", "--output", help="output path, '-' for stdout (default: <kernel>.spv, .h or .json)")
    e.add_argument("--format", choices=sorted(FORMATS), default="spv",
                   help="spv: the SPIR-V binary; c: a C/C++ header with the words and the reflection; "
                        "json: the reflection alone (default: %(default)s)")
    e.add_argument("--kernel", help="which kernel to emit when the file defines several")
    e.add_argument("--target-env", default=None, choices=sorted(tools.TARGET_ENVS),
                   help="Vulkan environment (default: the kernel's, normally vulkan1.3)")
    e.add_argument("--spec", action="append", default=[], metavar="NAME=VALUE",
                   help="default value of a specialization constant (repeatable)")
    e.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a compile-time (Const) parameter (repeatable)")
    e.add_argument("--device", metavar="PROFILE", help="check the kernel against a device profile "
                   "(coopdsl devices --json file, or a shipped name such as nvidia-h100)")
    e.add_argument("--dis", metavar="PATH", help="also write the disassembly ('-' for stdout)")
    e.add_argument("--reflect", metavar="PATH", help="also write reflection JSON ('-' for stdout)")
    e.add_argument("--ir", metavar="PATH", help="also write the IR text ('-' for stdout)")
    b = sub.add_parser("build", help="compile the kernels and variants of a TOML build spec (docs/aot.md)")
    b.add_argument("spec", help="TOML file listing kernels and their variants")
    b.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="directory for the .spv, .json and header files")
    v = sub.add_parser("val", help="validate a SPIR-V binary with spirv-val")
    v.add_argument("file")
    v.add_argument("--target-env", default=tools.DEFAULT_TARGET_ENV, choices=sorted(tools.TARGET_ENVS),
                   help="Vulkan environment to validate for (default: %(default)s)")
    d = sub.add_parser("dis", help="disassemble a SPIR-V binary")
    d.add_argument("file")
    d.add_argument("-o", "--output", help="write to a file instead of stdout")
    dev = sub.add_parser("devices", help="list Vulkan devices and their cooperative-matrix support")
    dev.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    Without ``argv`` (the ``coopdsl`` script, ``python -m coopdsl``) the process ends next: what the
    command made is left to the exit, not to the cyclic collector (see :func:`_before_exit`)."""
    args = _parser().parse_args(argv)
    with paused():  # loading the kernel file and compiling: see coopdsl/_gcpause.py
        try:
            return COMMANDS[args.command](args)
        except (UsageError, InputError) as e:
            print(f"coopdsl: error: {e}", file=sys.stderr)
            return 2
        except CoopDSLError as e:
            print(str(e), file=sys.stderr)
            return 1
        except OSError as e:  # a folder that cannot be made or written (build's output): the OS's reason
            where = f"{e.filename}: " if e.filename else ""
            print(f"coopdsl: error: {where}{e.strerror or e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # Ctrl-C (or a kernel file raising it): no traceback, the shell's status
            print("coopdsl: interrupted", file=sys.stderr)
            return 130
        finally:
            if argv is None:  # before the collector is back on
                _before_exit()


def _before_exit() -> None:
    """Keep the collector off the objects the command left (the kernel file's tree, the IR, the imported
    modules) for the rest of the process: its first pass once it is back on, and the one at interpreter
    exit, would walk them all only to find them alive (about 100 ms after a 1,024-step kernel, 10 ms after
    an example)."""
    import gc

    gc.freeze()


class UsageError(Exception):
    """A command-line mistake (bad option value): exit status 2."""


def _read_spirv(path: str) -> bytes:
    """The bytes of a SPIR-V file; a file that is not SPIR-V at all is named in the error."""
    data = check_file(path, "SPIR-V file").read_bytes()
    head = int.from_bytes(data[:4], "little") if len(data) >= 4 else None
    if len(data) % 4 or head not in (SPIRV_MAGIC, int.from_bytes(SPIRV_MAGIC.to_bytes(4, "big"), "little")):
        raise NotSpirvError(f"{path}: not a SPIR-V module (it does not start with the magic number "
                            f"0x07230203 or its size is not a multiple of 4 bytes)")
    return data


class NotSpirvError(CoopDSLError):
    """A file given to ``val``/``dis`` is not a SPIR-V binary: exit status 1."""


def _parse_values(items: list[str], option: str) -> dict[str, bool | int | float]:
    """``NAME=VALUE`` items of ``option`` (--spec or --const) as numbers or booleans."""
    out: dict[str, bool | int | float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"{option} takes NAME=VALUE, got {item!r}")
        low = value.lower()
        if low in ("true", "false"):
            out[name] = low == "true"
            continue
        try:
            out[name] = int(value, 0)
        except ValueError:
            try:
                out[name] = float(value)
            except ValueError:
                raise UsageError(f"{option} {name}: {value!r} is not a number or true/false") from None
    return out


def _write(path: str, data: str | bytes) -> None:
    """Write text or bytes to ``path``, or to stdout when it is '-'."""
    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
        return
    if Path(path).is_dir():
        raise UsageError(f"{path}: is a directory; give a file name")
    try:
        if isinstance(data, bytes):
            Path(path).write_bytes(data)
        else:
            Path(path).write_text(data)
    except OSError as e:  # a missing folder, no permission, a full disk: the OS's reason, no traceback
        raise UsageError(f"cannot write {path}: {e.strerror or e}") from None


def cmd_emit(args: argparse.Namespace) -> int:
    """``coopdsl emit``: one kernel to SPIR-V, a C header or reflection JSON (plus optional extras)."""
    from .aot.artifact import compile_artifact

    k = pick_kernel(load_kernels(args.file), args.kernel, args.file)
    spec = _parse_values(args.spec, "--spec")
    consts = _parse_values(args.const, "--const")
    try:
        artifact = compile_artifact(k, source=args.file, target_env=args.target_env, spec=spec, consts=consts,
                                    device=args.device, reflect=args.format != "spv" or bool(args.reflect))
    except ValueError as e:
        raise UsageError(str(e)) from None
    out = args.output or f"{artifact.name}{FORMATS[args.format]}"
    extras = {"--dis": args.dis, "--reflect": args.reflect, "--ir": args.ir}
    for flag, path in extras.items():   # (one file written twice would keep only the last: the module lost)
        if path and path != "-" and Path(path).resolve() == Path(out).resolve():
            raise UsageError(f"{flag} {path} is the output file too: give it another path")
    if args.format == "spv":
        _write(out, artifact.binary)
    elif args.format == "json":
        _write(out, artifact.reflection_json())
    else:
        from .aot.cheader import render_header

        _write(out, render_header([artifact], artifact.name, command=_emit_command(args)))
    if args.dis:
        _write(args.dis, tools.disassemble(artifact.binary))
    if args.reflect:
        _write(args.reflect, artifact.reflection_json())
    if args.ir:
        k = k.specialize(**consts) if consts else k
        _write(args.ir, k.print_ir(artifact.target_env, spec))
    shown = "<stdout>" if out == "-" else out
    print(f"wrote {shown} ({args.format}, {len(artifact.binary)}-byte module, kernel {artifact.kernel}, "
          f"{artifact.target_env})", file=sys.stderr)
    return 0


def _emit_command(args: argparse.Namespace) -> str:
    """The emit command line that regenerates a header (recorded in it)."""
    parts = ["coopdsl emit", args.file, "--format c"]
    parts += [f"--kernel {args.kernel}"] if args.kernel else []
    parts += [f"--target-env {args.target_env}"] if args.target_env else []
    parts += [f"--spec {s}" for s in args.spec] + [f"--const {c}" for c in args.const]
    parts += [f"-o {args.output}"] if args.output else []
    return " ".join(parts)


def cmd_build(args: argparse.Namespace) -> int:
    """``coopdsl build``: compile a TOML build spec into a directory (incremental)."""
    from .aot.build import build

    if args.output in ("-", ""):   # (a folder: stdout, or no name, would be a folder named '-' or the current one)
        raise UsageError(f"build writes a folder of modules and a header: -o {args.output!r} is not a folder name")
    report = build(args.spec, args.output, log=lambda line: print(line, file=sys.stderr))
    print(f"{args.output}: {len(report.compiled)} compiled, {len(report.up_to_date)} up to date"
          + (f", {len(report.removed)} stale files removed" if report.removed else "")
          + f"; header {report.header}", file=sys.stderr)
    return 0


def cmd_val(args: argparse.Namespace) -> int:
    """``coopdsl val``: run spirv-val on a file."""
    message = tools.validation_message(_read_spirv(args.file), args.target_env)
    if message is not None:
        print(f"{args.file}: " + message.replace("file '-'", f"file '{args.file}'"), file=sys.stderr)
        return 1
    print(f"{args.file}: valid ({args.target_env})", file=sys.stderr)
    return 0


def cmd_dis(args: argparse.Namespace) -> int:
    """``coopdsl dis``: spirv-dis text of a file."""
    text = tools.disassemble(_read_spirv(args.file))
    _write(args.output or "-", text)
    return 0


def cmd_devices(args: argparse.Namespace) -> int:
    """``coopdsl devices``: the Vulkan devices and their cooperative-matrix configurations."""
    from . import runtime

    try:
        infos = runtime.list_devices()
    except Exception as e:  # no loader / no driver: say so plainly
        print(f"coopdsl: no Vulkan devices: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(runtime.devices_json(infos), indent=2))
    else:
        print(runtime.format_devices(infos))
    return 0


COMMANDS = {"emit": cmd_emit, "build": cmd_build, "val": cmd_val, "dis": cmd_dis, "devices": cmd_devices}

if __name__ == "__main__":
    raise SystemExit(main())
