"""What a host must enable on a Vulkan device to run a module, from its reflection.

The mapping from SPIR-V capabilities to Vulkan extensions and feature names
is the runtime's (``coopdsl/runtime/features.py``); this module only reads
it, keeping capabilities the runtime cannot map (they stay listed by name)
instead of failing, since a generated header must still be written.
"""

from __future__ import annotations

from typing import Any

from .._records import record

# Vulkan API version (VK_MAKE_API_VERSION(0, 1, minor, 0)) each target environment needs.
API_VERSIONS = {"vulkan1.1": (1 << 22) | (1 << 12), "vulkan1.2": (1 << 22) | (2 << 12),
                "vulkan1.3": (1 << 22) | (3 << 12), "vulkan1.4": (1 << 22) | (4 << 12)}


@record(frozen=True)
class Requirements:
    """Device extensions, feature booleans and subgroup operation bits a module needs."""

    extensions: tuple[str, ...]
    features: tuple[str, ...]
    subgroup_operations: int
    unmapped_capabilities: tuple[str, ...]


def requirements(reflection: dict[str, Any]) -> Requirements:
    """The :class:`Requirements` of a module described by ``reflection`` (see docs/runtime.md)."""
    # imported here: loading coopdsl.runtime brings numpy and ctypes, which `coopdsl emit` should not pay for
    from ..runtime.features import ALWAYS, CAPABILITIES, EXTENSION_FOR_SPIRV, extra_needs

    exts: set[str] = set()
    feats: set[str] = set()
    ops, unmapped = 0, []
    for cap in reflection.get("capabilities", []):
        if cap in ALWAYS:
            continue
        need = CAPABILITIES.get(cap)
        if need is None:
            unmapped.append(cap)
            continue
        exts.update([need.extension] if need.extension else [])
        feats.update([need.feature] if need.feature else [])
        ops |= need.subgroup_op
    for extra in extra_needs(reflection.get("cooperative_matrices", []), bool(reflection.get("scalar_block_layout"))):
        exts.update([extra.extension] if extra.extension else [])
        feats.update([extra.feature] if extra.feature else [])
    exts.update(EXTENSION_FOR_SPIRV[e] for e in reflection.get("extensions", []) if e in EXTENSION_FOR_SPIRV)
    if reflection.get("subgroup_size"):  # requested with VkPipelineShaderStageRequiredSubgroupSizeCreateInfo
        feats.add("subgroupSizeControl")
    return Requirements(tuple(sorted(exts)), tuple(sorted(feats)), ops, tuple(unmapped))
