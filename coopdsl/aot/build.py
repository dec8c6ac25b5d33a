"""``coopdsl build``: compile every kernel variant of a build spec into a directory, incrementally.

Each variant writes ``OUTPUT.spv`` and ``OUTPUT.json`` (its reflection); the
directory also gets one header with every variant (:mod:`.cheader`) and a
manifest, ``.coopdsl-build.json``, recording for each output the hash of
what it was built from: the coopdsl version and compiler sources, the kernel
file's text and modification time, the kernel name and the options (target env, device profile
name, a profile file's contents, spec and Const values), and the hash of the
files it wrote.  A variant whose hash is unchanged and whose files read back
as written is not recompiled (its file is not even run).  A kernel file's
*imports* are not hashed: touch the kernel file, or delete the manifest, after
changing a module it imports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import CoopDSLError
from .artifact import Artifact, compile_artifact
from .buildspec import BuildSpec, Entry, Variant, read_spec
from .cheader import check_names, render_header
from .cspell import identifier
from .errors import BuildError, InputError
from .loading import load_kernels, pick_kernel

if TYPE_CHECKING:
    from ..kernel import Kernel

MANIFEST = ".coopdsl-build.json"
MANIFEST_FORMAT = 2   # (2: each record holds the hash of its files and fields; a format-1 manifest rebuilds all)


@dataclass
class BuildReport:
    """What a build did: outputs compiled, outputs found up to date, stale files removed, the header."""

    compiled: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    header: Path | None = None
    header_changed: bool = False


@cache
def compiler_fingerprint() -> str:
    """Hash of the coopdsl version and its Python sources: a changed compiler rebuilds everything."""
    h = hashlib.sha256(__version__.encode())
    root = Path(__file__).resolve().parents[1]
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def variant_key(entry: Entry, variant: Variant, source_text: str) -> str:
    """The content hash deciding whether ``variant`` of ``entry`` must be recompiled: the kernel file's text and
    its modification time too (touching it rebuilds what it defines, as after a change in a module it imports)."""
    try:
        touched = entry.file.stat().st_mtime_ns
    except OSError:
        touched = None
    data = {"compiler": compiler_fingerprint(), "source": source_text, "touched": touched, "kernel": entry.kernel,
            "target_env": entry.target_env, "device": entry.device, "profile": _profile_text(entry.device),
            "spec": variant.spec, "consts": variant.consts}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _profile_text(device: str | None) -> str | None:
    """A device profile file's contents (an edited profile rebuilds what was checked against it); None for a
    shipped profile's name, which the compiler fingerprint covers, or no profile."""
    if device is None or not device.endswith(".json"):
        return None
    try:
        return Path(device).read_bytes().hex()
    except OSError:
        return None


def build(spec_path: str | Path, out_dir: str | Path, log: Callable[[str], None] | None = None) -> BuildReport:
    """Build the spec at ``spec_path`` into ``out_dir``; ``log`` receives one line per output.

    Raises InputError for a bad spec or output directory and BuildError when
    a kernel fails (outputs finished before it are kept and recorded).
    """
    spec = read_spec(spec_path)
    _check_names(spec)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out_dir}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    records = _read_manifest(out)
    report = BuildReport()
    loaded: dict[Path, dict[str, Kernel]] = {}
    try:
        for entry in spec.entries:
            _build_entry(spec, entry, out, records, loaded, report, log or (lambda line: None))
    finally:
        _write_manifest(out, records)
    wanted = {v.output for e in spec.entries for v in e.variants}
    for name in sorted(set(records) - wanted):
        report.removed += _remove(out, name)
        del records[name]
    _write_manifest(out, records)
    report.header = out / spec.header
    report.header_changed = _write_header(spec, out, records)
    return report


def _build_entry(spec: BuildSpec, entry: Entry, out: Path, records: dict[str, Any],
                 loaded: dict[Path, dict[str, Kernel]], report: BuildReport, log: Callable[[str], None]) -> None:
    if not entry.file.is_file():
        raise InputError(f"{spec.path}: {entry.describe()}: no such file: {entry.file}")
    try:
        text = entry.file.read_text()
    except UnicodeDecodeError as e:   # (emit says the same of the kernel file, located)
        raise InputError(f"{spec.path}: {entry.describe()}: {entry.file}: byte {e.start} is not UTF-8 (Python "
                         f"source files are UTF-8)") from None
    for variant in entry.variants:
        key = variant_key(entry, variant, text)
        rec = records.get(variant.output)
        if rec and rec.get("key") == key and all((out / f).is_file() for f in _files(variant.output)) and \
                _intact(out, variant.output, rec):
            report.up_to_date.append(variant.output)
            continue
        artifact = _compile(spec, entry, variant, loaded)
        reflection = artifact.reflection_json()
        (out / f"{variant.output}.spv").write_bytes(artifact.binary)
        (out / f"{variant.output}.json").write_text(reflection)
        fields = artifact.provenance()
        records[variant.output] = {"key": key, **fields,
                                   "written": _written_hash(artifact.binary, reflection.encode(), fields)}
        report.compiled.append(variant.output)
        log(f"compiled {variant.output} ({entry.kernel} from {entry.source})")


def _compile(spec: BuildSpec, entry: Entry, variant: Variant, loaded: dict[Path, dict[str, Kernel]]) -> Artifact:
    where = f"{spec.path}: {entry.describe()}, output {variant.output}"
    try:
        if entry.file not in loaded:
            loaded[entry.file] = load_kernels(entry.file)
        kernel = pick_kernel(loaded[entry.file], entry.kernel, entry.source)
        return compile_artifact(kernel, variant.output, entry.source, entry.target_env, variant.spec,
                                variant.consts, entry.device)
    except InputError as e:   # a file or kernel the entry names is not there: the spec's fault (a usage error)
        raise InputError(f"{where}: {e}") from None
    except CoopDSLError as e:
        raise BuildError(f"{where}: failed:\n{e}") from None
    except ValueError as e:   # a spec or const value the kernel does not take: the spec's fault, as for emit --spec
        raise InputError(f"{where}: {e}") from None


def _files(output: str) -> tuple[str, str]:
    return f"{output}.spv", f"{output}.json"


def _remove(out: Path, output: str) -> list[str]:
    gone: list[str] = []
    if identifier(output) != output:   # (only names a spec can give: never a path out of the folder)
        return gone
    for f in _files(output):
        if (out / f).is_file():
            (out / f).unlink()
            gone.append(f)
    return gone


def _read_manifest(out: Path) -> dict[str, Any]:
    """The manifest's records by output name; anything that is not one a build wrote (a name that is not a C
    identifier, as spec outputs are, or a record that is not a table) is left out, as an unreadable manifest is:
    those outputs are built again, and no file is removed on its word."""
    try:
        data = json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError, RecursionError):   # (ValueError: JSON, UTF-8 too)
        return {}
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return {}
    outputs = data.get("outputs")
    if not isinstance(outputs, dict):
        return {}
    return {name: rec for name, rec in outputs.items()
            if isinstance(name, str) and identifier(name) == name and isinstance(rec, dict)}


def _write_manifest(out: Path, records: dict[str, Any]) -> None:
    text = json.dumps({"format": MANIFEST_FORMAT, "outputs": records}, indent=1) + "\n"
    (out / MANIFEST).write_text(text)


def _check_names(spec: BuildSpec) -> None:
    """The header's C names that the outputs and the header's name decide (``coopdsl_kernel`` would declare
    ``coopdsl_kernel_info``, the shared type), checked before anything is compiled or written."""
    try:
        check_names([v.output for e in spec.entries for v in e.variants], Path(spec.header).stem)
    except InputError as e:
        raise InputError(f"{spec.path}: {e}") from None


def _write_header(spec: BuildSpec, out: Path, records: dict[str, Any]) -> bool:
    """Write the combined header from the files on disk; only when its text changes (keeps its mtime)."""
    order = [v.output for e in spec.entries for v in e.variants]
    artifacts = [_artifact_on_disk(out, name, records[name]) for name in order]
    stem = Path(spec.header).stem
    try:
        text = render_header(artifacts, stem, index=stem, command=f"coopdsl build {spec.path.name} -o <dir>")
    except InputError as e:   # (names from a kernel's contents: a binding whose macro another output declares)
        raise InputError(f"{spec.path}: {e}") from None
    path = out / spec.header
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def _written_hash(binary: bytes, reflection: bytes, fields: dict[str, Any]) -> str:
    """The hash of an output's module, reflection file and manifest fields as a build wrote them."""
    h = hashlib.sha256()
    for part in (binary, reflection, json.dumps(fields, sort_keys=True).encode()):
        h.update(len(part).to_bytes(8, "little") + part)
    return h.hexdigest()


def _intact(out: Path, name: str, rec: dict[str, Any]) -> bool:
    """Whether an output's files and manifest record are what a build wrote, byte for byte (else it is built
    again: an emptied, cut or edited module, reflection file or record once stopped the build with a traceback
    or went into the header as it was)."""
    fields = {k: v for k, v in rec.items() if k not in ("key", "written")}
    try:
        binary = (out / f"{name}.spv").read_bytes()
        reflection = (out / f"{name}.json").read_bytes()
        return rec.get("written") == _written_hash(binary, reflection, fields)
    except (OSError, TypeError, ValueError):   # (a record's fields that do not serialise: not a build's)
        return False


def _artifact_on_disk(out: Path, name: str, rec: dict[str, Any]) -> Artifact:
    return Artifact(name, rec["kernel"], rec["source"], rec["target_env"], (out / f"{name}.spv").read_bytes(),
                    json.loads((out / f"{name}.json").read_text()), rec.get("spec", {}), rec.get("consts", {}))
