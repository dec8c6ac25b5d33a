"""Errors the runtime raises for user mistakes and missing system pieces, with what to do about them."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import LaunchError as LaunchError  # (defined beside the other errors: the interpreter's subclass it)


class ArrayError(LaunchError):
    """A device array cannot be used as given: wrong dtype or size for the binding, freed, on another
    device, or still pending in an open batch."""


class VulkanUnavailableError(RuntimeError):
    """No usable Vulkan: the loader (libvulkan.so.1) or a driver (ICD) is missing, or no device is found."""


DRIVER_ENV = ("VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES")
INSTALL_HINT = (
    "coopdsl runs kernels through the Vulkan loader (libvulkan.so.1) and a Vulkan driver. Install the loader "
    "(Debian/Ubuntu: `apt install libvulkan1`; Fedora: `dnf install vulkan-loader`) and a driver: on a GPU "
    "machine your GPU vendor's driver (NVIDIA: the proprietary driver, which installs nvidia_icd.json; "
    "AMD/Intel: `apt install mesa-vulkan-drivers`), or for running on the CPU Mesa's lavapipe "
    "(`apt install mesa-vulkan-drivers`). `vulkaninfo --summary` (package vulkan-tools) lists what the loader "
    "finds.")


def no_vulkan_message(reason: str, env: Mapping[str, str] | None = None) -> str:
    """What went wrong (``reason``), what to install, and any driver-selection variable that may be the cause."""
    env = os.environ if env is None else env
    parts = [f"no usable Vulkan: {reason}.", INSTALL_HINT]
    for name in DRIVER_ENV:
        value = env.get(name)
        if value:
            missing = [f for f in value.split(os.pathsep) if f and not os.path.exists(f)]
            note = f" ({', '.join(missing)} does not exist)" if missing else ""
            parts.append(f"{name} is set to {value!r}{note}: the loader only looks there; unset it or point it at "
                         f"a driver's ICD json file.")
    return " ".join(parts)


def vulkan_result_reason(call: str, result: int) -> str | None:
    """The plain-words reason behind a failed instance-level call that means 'no driver', else None."""
    if call == "vkCreateInstance" and result == -9:  # VK_ERROR_INCOMPATIBLE_DRIVER
        return "the Vulkan loader found no driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)"
    if call == "vkCreateInstance" and result == -3:  # VK_ERROR_INITIALIZATION_FAILED
        return "the Vulkan loader could not initialise a driver (vkCreateInstance: VK_ERROR_INITIALIZATION_FAILED)"
    return None
