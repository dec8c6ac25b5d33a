#!/usr/bin/env bash
# Installs what the C++ host example (examples/host_cpp) needs to build: CMake, g++, and the
# Vulkan headers with the loader's link library (libvulkan-dev), so tests/aot/test_host_cpp.py
# builds it and runs it on lavapipe in CI. Run by scripts/test.sh when CI=true; does nothing
# when everything is already there.
set -euo pipefail
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ ! -f /usr/include/vulkan/vulkan.h ] || ! compgen -G "/usr/lib/*/libvulkan.so" >/dev/null; then
    missing+=(libvulkan-dev)
fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
