"""Where a kernel's features meet its target: the one check that a feature's minimum SPIR-V version is
available, reported at the user's line with the environments that have it (spirv-val does not check
SPV_NV_cooperative_matrix2's 1.6, and a loop control of a later version is refused without the line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SourceLoc, UnsupportedSyntaxError
from ..ir.targets import env_of, envs_from

if TYPE_CHECKING:
    from ..ir.builder import Emitter

NV2 = ((1, 6), "SPV_NV_cooperative_matrix2")  # (minimum SPIR-V version, what brings the feature)
NV2_TENSORS = ((1, 6), "SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing")
PARTIAL_COUNT = ((1, 4), "the PartialCount loop control")


def require(em: Emitter, feature: tuple[tuple[int, int], str], what: str, loc: SourceLoc | None = None) -> None:
    """A located UnsupportedSyntaxError (at ``loc``, default the op being built) unless the kernel's target
    has ``feature`` ((version, name))."""
    version, name = feature
    have = em.module.target_version
    if have < version:
        envs = envs_from(version)
        choice = ", ".join(envs[:-1]) + f" or {envs[-1]}" if len(envs) > 1 else envs[0]
        raise UnsupportedSyntaxError(
            f"{what} needs {name}, which requires SPIR-V {version[0]}.{version[1]}: compile for {choice} "
            f"(this kernel targets SPIR-V {have[0]}.{have[1]}, {env_of(have)})", loc or em.loc)
