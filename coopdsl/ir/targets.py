"""The Vulkan target environments coopdsl compiles for and the SPIR-V version of each (the one map), and the
one check of what an op, attribute or loop hint needs of that version.

``spirv.tools`` (spirv-val's ``--target-env``), the kernel and the CLI read the map.  An op declares what it
needs where it is declared (``OpDef.availability``, as MLIR's SPIR-V ops carry their availability); a loop
hint says it itself (``LoopHint.availability``).  The IR builder (:class:`coopdsl.ir.builder.Emitter`) calls
:func:`check_available` for every op it builds and every loop merge it places, so a feature's minimum version
is refused at the user's line with the environments that have it (spirv-val does not check
SPV_NV_cooperative_matrix2's 1.6, and a loop control of a later version is refused without the line).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._records import record
from ..errors import SourceLoc, UnsupportedSyntaxError

TARGET_ENVS: dict[str, tuple[int, int]] = {"vulkan1.1": (1, 3), "vulkan1.2": (1, 5), "vulkan1.3": (1, 6),
                                           "vulkan1.4": (1, 6)}
DEFAULT_TARGET_ENV = "vulkan1.3"


def env_of(version: tuple[int, int]) -> str:
    """The first environment whose SPIR-V version is ``version`` (or "SPIR-V x.y" when none is)."""
    return next((e for e, v in TARGET_ENVS.items() if v == version), f"SPIR-V {version[0]}.{version[1]}")


def envs_from(version: tuple[int, int]) -> list[str]:
    """The environments whose SPIR-V version is at least ``version``, oldest first."""
    return [e for e, v in TARGET_ENVS.items() if v >= version]


@record(frozen=True)
class Availability:
    """What an op, attribute or loop hint needs of the target: SPIR-V ``version`` or later, for the feature
    ``brings`` names (an extension, a loop control).  ``what`` is how kernels spell the thing that needs it
    ("m.reduce"), or a function of the op's result type and operands giving that text ("converting X to Y")."""

    version: tuple[int, int]
    brings: str
    what: str | Callable[..., str] = ""

    def spelled(self, *subject: Any) -> str:
        """``what``, for an op of result type and operands ``subject`` when it is a function."""
        return self.what(*subject) if callable(self.what) else self.what

    def needed_by(self, what: str | Callable[..., str]) -> Availability:
        """The same requirement, for the thing ``what`` names (one feature serves a family of ops)."""
        return Availability(self.version, self.brings, what)


def check_available(have: tuple[int, int], need: Availability, loc: SourceLoc, *subject: Any) -> None:
    """A located UnsupportedSyntaxError (at ``loc``) unless a kernel targeting SPIR-V ``have`` may use what
    ``need`` describes (``subject``: the op's result type and operands, for a ``what`` that names them)."""
    version = need.version
    if have < version:
        envs = envs_from(version)
        choice = ", ".join(envs[:-1]) + f" or {envs[-1]}" if len(envs) > 1 else envs[0]
        raise UnsupportedSyntaxError(
            f"{need.spelled(*subject)} needs {need.brings}, which requires SPIR-V {version[0]}.{version[1]}: "
            f"compile for {choice} (this kernel targets SPIR-V {have[0]}.{have[1]}, {env_of(have)})", loc)
