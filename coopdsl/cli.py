"""The ``coopdsl`` command: emit | val | dis | devices.

Exit status: 0 success, 1 the kernel or module is invalid (message on
stderr), 2 bad usage or a missing file.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path

from .errors import CoopDSLError
from .kernel import Kernel
from .spirv import tools


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coopdsl", description="Compile cooperative-matrix kernels to SPIR-V.")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("emit", help="compile a kernel from a Python file to SPIR-V")
    e.add_argument("file", help="Python file defining one or more @coopdsl.kernel functions")
    e.add_argument("-o", "--output", help="SPIR-V output path (default: <kernel>.spv)")
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
    v = sub.add_parser("val", help="validate a SPIR-V binary with spirv-val")
    v.add_argument("file")
    v.add_argument("--target-env", default=tools.DEFAULT_TARGET_ENV, choices=sorted(tools.TARGET_ENVS))
    d = sub.add_parser("dis", help="disassemble a SPIR-V binary")
    d.add_argument("file")
    d.add_argument("-o", "--output", help="write to a file instead of stdout")
    dev = sub.add_parser("devices", help="list Vulkan devices and their cooperative-matrix support")
    dev.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except CoopDSLError as e:
        print(str(e), file=sys.stderr)
        return 1
    except UsageError as e:
        print(f"coopdsl: error: {e}", file=sys.stderr)
        return 2


class UsageError(Exception):
    pass


def _read(path: str) -> bytes:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such file: {path}")
    return p.read_bytes()


def _kernels(path: str) -> dict[str, Kernel]:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such file: {path}")
    sys.path.insert(0, str(p.resolve().parent))
    try:
        namespace = runpy.run_path(str(p), run_name="__coopdsl_emit__")
    finally:
        sys.path.pop(0)
    return {k.name: k for k in namespace.values() if isinstance(k, Kernel)}


def _parse_spec(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--spec takes NAME=VALUE, got {item!r}")
        low = value.lower()
        if low in ("true", "false"):
            out[name] = low == "true"
        else:
            try:
                out[name] = int(value, 0)
            except ValueError:
                try:
                    out[name] = float(value)
                except ValueError:
                    raise UsageError(f"--spec {name}: {value!r} is not a number or true/false") from None
    return out


def _write_text(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)


def cmd_emit(args) -> int:
    kernels = _kernels(args.file)
    if not kernels:
        raise UsageError(f"{args.file} defines no @coopdsl.kernel function")
    if args.kernel:
        if args.kernel not in kernels:
            raise UsageError(f"{args.file} has no kernel '{args.kernel}' (it has: {', '.join(sorted(kernels))})")
        k = kernels[args.kernel]
    elif len(kernels) > 1:
        raise UsageError(f"{args.file} defines several kernels ({', '.join(sorted(kernels))}); pick one with --kernel")
    else:
        k = next(iter(kernels.values()))
    try:
        spec = _parse_spec(args.spec)
        if args.const:
            k = k.specialize(**_parse_spec(args.const))
        binary = k.compile(args.target_env, spec, device=args.device)
    except ValueError as e:
        raise UsageError(str(e)) from None
    out = Path(args.output or f"{k.name}.spv")
    out.write_bytes(binary)
    if args.dis:
        _write_text(args.dis, tools.disassemble(binary))
    if args.reflect:
        _write_text(args.reflect, json.dumps(k.reflect(args.target_env, spec), indent=2) + "\n")
    if args.ir:
        _write_text(args.ir, k.print_ir(args.target_env, spec))
    print(f"wrote {out} ({len(binary)} bytes, kernel {k.name}, {args.target_env or k.target_env})", file=sys.stderr)
    return 0


def cmd_val(args) -> int:
    message = tools.validation_message(_read(args.file), args.target_env)
    if message is not None:
        print(message, file=sys.stderr)
        return 1
    print(f"{args.file}: valid ({args.target_env})", file=sys.stderr)
    return 0


def cmd_dis(args) -> int:
    text = tools.disassemble(_read(args.file))
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_devices(args) -> int:
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


COMMANDS = {"emit": cmd_emit, "val": cmd_val, "dis": cmd_dis, "devices": cmd_devices}

if __name__ == "__main__":
    raise SystemExit(main())
