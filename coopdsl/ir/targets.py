"""The Vulkan target environments coopdsl compiles for and the SPIR-V version of each: the one map.

``spirv.tools`` (spirv-val's ``--target-env``), the kernel and the CLI read it; ``lang.availability`` turns a
feature's minimum SPIR-V version into a located error naming the environments that have it.
"""

from __future__ import annotations

TARGET_ENVS: dict[str, tuple[int, int]] = {"vulkan1.1": (1, 3), "vulkan1.2": (1, 5), "vulkan1.3": (1, 6),
                                           "vulkan1.4": (1, 6)}
DEFAULT_TARGET_ENV = "vulkan1.3"


def env_of(version: tuple[int, int]) -> str:
    """The first environment whose SPIR-V version is ``version`` (or "SPIR-V x.y" when none is)."""
    return next((e for e, v in TARGET_ENVS.items() if v == version), f"SPIR-V {version[0]}.{version[1]}")


def envs_from(version: tuple[int, int]) -> list[str]:
    """The environments whose SPIR-V version is at least ``version``, oldest first."""
    return [e for e, v in TARGET_ENVS.items() if v >= version]
