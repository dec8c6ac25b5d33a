#!/usr/bin/env bash
# Prepare the lent GPU machine (no network there): Vulkan loader + glvnd from the carried .debs,
# the SPIR-V tools from carried wheels, and coopdsl from the working tree (PYTHONPATH).
# Usage there: source scripts/device_setup.sh
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
done
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
export PYTHONUNBUFFERED=1
