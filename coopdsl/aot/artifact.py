"""A compiled kernel variant: the SPIR-V words and reflection that outputs are written from."""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any

from .._records import record
from ..kernel import Kernel
from ..spirv.words import from_bytes


@record(frozen=True)
class Artifact:
    """One kernel compiled with one set of spec-constant defaults and Const values.

    ``name`` is the output name: the stem of its files and the prefix of its
    C identifiers.  ``spec``/``consts`` record the values it was built with.
    """

    name: str
    kernel: str
    source: str
    target_env: str
    binary: bytes
    reflection: dict[str, Any]
    spec: dict[str, Any] = field(default_factory=dict)
    consts: dict[str, Any] = field(default_factory=dict)

    @property
    def words(self) -> list[int]:
        """The module as 32-bit words."""
        return from_bytes(self.binary)

    def reflection_json(self) -> str:
        """The reflection as indented JSON text (what ``--format json`` writes)."""
        return json.dumps(self.reflection, indent=2) + "\n"

    def provenance(self) -> dict[str, Any]:
        """Everything but the module and reflection, as JSON-ready data (kept in build manifests)."""
        return {"name": self.name, "kernel": self.kernel, "source": self.source, "target_env": self.target_env,
                "spec": self.spec, "consts": self.consts}


def compile_artifact(kernel: Kernel, name: str | None = None, source: str = "", target_env: str | None = None,
                     spec: dict[str, Any] | None = None, consts: dict[str, Any] | None = None, device: Any = None,
                     reflect: bool = True) -> Artifact:
    """Compile ``kernel`` (specialized with ``consts``, spec defaults ``spec``) into an :class:`Artifact`.

    ``device`` (a profile name or file, see docs/devices.md) also checks the
    kernel against what that device offers.  With ``reflect=False`` the
    artifact's ``reflection`` is left empty (``coopdsl emit`` writing only the
    module does not pay for it).  Raises CompileError for a wrong kernel
    (DeviceMismatchError for one the device cannot run) and ValueError for an
    unknown Const or spec-constant name, a bad value or target environment.
    """
    if not isinstance(kernel, Kernel):   # (a str or a function gave AttributeError: no attribute 'target_env')
        raise TypeError(f"compile_artifact takes a coopdsl kernel (@coopdsl.kernel's), got {type(kernel).__name__}")
    if consts is not None and not isinstance(consts, dict) or spec is not None and not isinstance(spec, dict):
        raise TypeError("compile_artifact: consts and spec are dicts of names to values")
    k = kernel.specialize(**consts) if consts else kernel
    env = target_env or k.target_env
    binary = k.compile(env, spec or None, device=device)
    return Artifact(name or k.name, k.name, source, env, binary, k.reflect(env, spec or None) if reflect else {},
                    dict(spec or {}), dict(consts or {}))
