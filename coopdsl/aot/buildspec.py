"""The TOML build spec of ``coopdsl build``: which kernels to compile, with which variants.

::

    header = "kernels.h"          # optional: the combined header (default: <spec name>.h)
    target_env = "vulkan1.3"      # optional: default for every kernel
    device = "nvidia-h100"        # optional: check every kernel against a device profile (docs/devices.md)

    [[kernel]]
    file = "kernels.py"           # a Python file, relative to the spec file
    name = "saxpy"                # the kernel function
    output = "saxpy"              # optional: output name (default: the kernel name)
    target_env = "vulkan1.2"      # optional
    device = "profile.json"       # optional (a profile name, or a file relative to the spec)
    variants = [                  # optional: one output per entry (default: one, no values)
        { spec = { WG = 64 } },                       # -> saxpy_WG64
        { suffix = "big", spec = { WG = 256 } },      # -> saxpy_big
    ]

Every mistake is an :class:`InputError` naming the spec file and the entry.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ir.targets import TARGET_ENVS
from .cspell import C_KEYWORDS, identifier
from .errors import InputError
from .loading import check_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TOP_KEYS = {"header", "target_env", "device", "kernel"}
KERNEL_KEYS = {"file", "name", "output", "target_env", "device", "variants"}
VARIANT_KEYS = {"suffix", "spec", "const"}


@dataclass(frozen=True)
class Variant:
    """One output of an entry: its name and the spec-constant defaults and Const values it is built with."""

    output: str
    spec: dict[str, Any]
    consts: dict[str, Any]


@dataclass(frozen=True)
class Entry:
    """One ``[[kernel]]`` table: a kernel of a Python file and its variants."""

    number: int        # 1-based position in the spec, for messages
    file: Path         # resolved path of the Python file
    source: str        # the file as the spec writes it
    kernel: str
    target_env: str | None
    device: str | None  # device profile to check against: a shipped name or a resolved .json path
    variants: tuple[Variant, ...]

    def describe(self) -> str:
        """How messages name this entry: ``kernel #2 'saxpy' (kernels.py)``."""
        return f"kernel #{self.number} '{self.kernel}' ({self.source})"


@dataclass(frozen=True)
class BuildSpec:
    """A parsed build spec."""

    path: Path
    header: str
    entries: tuple[Entry, ...]


def read_spec(path: str | Path) -> BuildSpec:
    """Parse and check the build spec at ``path``."""
    p = check_file(path, "build spec")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError as e:  # TOML is UTF-8 (a Latin-1 file, a binary file)
        raise InputError(f"{path}: not valid TOML: byte {e.start} is not UTF-8 ({e.reason}); TOML files are "
                         f"UTF-8") from None
    _keys(data, TOP_KEYS, f"{path}")
    header = _opt(data, "header", str, f"{path}") or f"{p.stem}.h"
    if Path(header).name != header or not header.endswith(".h"):
        raise InputError(f"{path}: header must be a file name ending in .h, got {header!r}")
    default_env = _env(data, f"{path}")
    default_device = _device(data, f"{path}", p)
    tables = data.get("kernel")
    if not isinstance(tables, list) or not tables:
        raise InputError(f"{path}: no kernels: add [[kernel]] tables with file = \"...\"")
    entries = tuple(_entry(i + 1, t, p, default_env, default_device) for i, t in enumerate(tables))
    _check_unique(entries, path)
    return BuildSpec(p, header, entries)


def _entry(number: int, table: Any, spec_path: Path, default_env: str | None, default_device: str | None) -> Entry:
    where = f"{spec_path}: kernel #{number}"
    if not isinstance(table, dict):
        raise InputError(f"{where}: must be a table")
    name = _opt(table, "name", str, where)
    where += f" '{name}'" if name else ""
    _keys(table, KERNEL_KEYS, where)
    source = _opt(table, "file", str, where)
    if source is None:
        raise InputError(f"{where}: missing 'file' (the Python file defining the kernel)")
    if name is None:
        raise InputError(f"{where}: missing 'name' (the kernel function in {source})")
    output = _opt(table, "output", str, where) or name
    variants = table.get("variants", [{}])
    if not isinstance(variants, list) or not variants:
        raise InputError(f"{where}: variants must be a non-empty list of tables")
    many = len(variants) > 1
    return Entry(number, spec_path.parent / source, source, name, _env(table, where) or default_env,
                 _device(table, where, spec_path) or default_device,
                 tuple(_variant(v, output, many, f"{where} variant #{i + 1}") for i, v in enumerate(variants)))


def _variant(table: Any, output: str, many: bool, where: str) -> Variant:
    if not isinstance(table, dict):
        raise InputError(f"{where}: must be a table such as {{ spec = {{ N = 64 }} }}")
    _keys(table, VARIANT_KEYS, where)
    spec, consts = (_values(table, key, where) for key in ("spec", "const"))
    suffix = _opt(table, "suffix", str, where)
    if suffix is None and many:
        suffix = "_".join(f"{k}{_suffix_value(v)}" for k, v in {**consts, **spec}.items())
        if not suffix:
            raise InputError(f"{where}: give several variants different values or a 'suffix'")
    name = f"{output}_{suffix}" if suffix else output
    if identifier(name) != name:
        why = "is a C keyword" if name in C_KEYWORDS else "must be a C identifier (letters, digits, '_')"
        raise InputError(f"{where}: output name {name!r} {why}")
    return Variant(name, spec, consts)


def _suffix_value(v: Any) -> str:
    return re.sub(r"\W", "_", str(v).lower()).replace("-", "m")


def _values(table: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    d = table.get(key, {})
    if not isinstance(d, dict):
        raise InputError(f"{where}: {key} must be a table of NAME = value")
    for name, v in d.items():
        if not isinstance(v, (bool, int, float)):
            raise InputError(f"{where}: {key} {name} must be a number or true/false, got {v!r}")
    return dict(d)


def _env(table: dict[str, Any], where: str) -> str | None:
    env: str | None = _opt(table, "target_env", str, where)
    if env is not None and env not in TARGET_ENVS:
        raise InputError(f"{where}: target_env must be one of {', '.join(sorted(TARGET_ENVS))}, got {env!r}")
    return env


def _device(table: dict[str, Any], where: str, spec_path: Path) -> str | None:
    """A device profile: a shipped name as written, a ``.json`` file resolved against the spec's folder.

    It is loaded here, so that a profile that is not there or not readable is the spec's fault (an InputError,
    exit status 2, as ``emit --device nope`` is a usage error), found before anything is compiled or written."""
    device: str | None = _opt(table, "device", str, where)
    if device is not None and device.endswith(".json"):
        device = str(spec_path.parent / device)
    if device is not None:   # (an empty name too: not a profile, the spec's fault)
        from ..devices.profile import ProfileError, load_profile

        try:
            load_profile(device)
        except ProfileError as e:
            raise InputError(f"{where}: device: {e}") from None
    return device


def _opt(table: dict[str, Any], key: str, kind: type, where: str) -> Any:
    v = table.get(key)
    if v is not None and not isinstance(v, kind):
        raise InputError(f"{where}: {key} must be a {kind.__name__}, got {v!r}")
    return v


def _keys(table: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")


def _check_unique(entries: tuple[Entry, ...], path: Any) -> None:
    # by lower case: outputs named apart only by case write one file on a case-insensitive file system, and
    # their header macros (upper case) clash
    seen: dict[str, tuple[Entry, str]] = {}
    for e in entries:
        for v in e.variants:
            key = v.output.lower()
            if key in seen:
                first, name = seen[key]
                other = "another variant of it" if first is e else first.describe()
                clash = f"output '{v.output}'" if name == v.output else f"outputs '{name}' and '{v.output}' (their " \
                        f"files and header macros differ only in case)"
                raise InputError(f"{path}: {e.describe()} and {other} both write {clash}; "
                                 f"set 'output' or a variant 'suffix'")
            seen[key] = (e, v.output)
