"""With no Vulkan loader or driver the user is told what to install, not a bare VkResult."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coopdsl.runtime import VulkanUnavailableError
from coopdsl.runtime.errors import no_vulkan_message, vulkan_result_reason
from coopdsl.runtime.vk import Loader

ROOT = Path(__file__).resolve().parents[2]


def test_incompatible_driver_result_becomes_an_install_hint():
    reason = vulkan_result_reason("vkCreateInstance", -9)
    assert "found no driver" in reason
    assert vulkan_result_reason("vkCreateInstance", -3) is not None
    assert vulkan_result_reason("vkCreateDevice", -9) is None  # other calls keep their VulkanError
    text = no_vulkan_message(reason, env={})
    assert text.startswith("no usable Vulkan: the Vulkan loader found no driver")
    for needed in ("libvulkan1", "mesa-vulkan-drivers", "lavapipe", "NVIDIA", "vulkaninfo"):
        assert needed in text
    assert "VK_DRIVER_FILES" not in text


def test_message_names_a_driver_variable_pointing_nowhere():
    text = no_vulkan_message("x", env={"VK_DRIVER_FILES": "/nowhere/icd.json", "VK_ICD_FILENAMES": ""})
    assert "VK_DRIVER_FILES is set to '/nowhere/icd.json' (/nowhere/icd.json does not exist)" in text
    assert "VK_ICD_FILENAMES" not in text


def test_missing_loader_library():
    with pytest.raises(VulkanUnavailableError, match="the Vulkan loader /nonexistent/libvulkan.so.1 was not found"
                                                     ".*apt install libvulkan1"):
        Loader("/nonexistent/libvulkan.so.1")


def test_no_driver_in_a_fresh_process():
    env = {**os.environ, "VK_DRIVER_FILES": "/nonexistent/icd.json", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "coopdsl.cli", "devices"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1
    assert "VkResult -9" not in r.stderr
    assert "mesa-vulkan-drivers" in r.stderr and "VK_DRIVER_FILES is set to '/nonexistent/icd.json'" in r.stderr
    code = "from coopdsl import runtime\ntry:\n    runtime.Device()\nexcept runtime.VulkanUnavailableError as e:\n" \
           "    print('OK', e)\n"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.startswith("OK no usable Vulkan"), r.stdout + r.stderr
