#!/usr/bin/env bash
# Installs Mesa's CPU Vulkan driver (lavapipe, Vulkan 1.4 compute, no cooperative
# matrices) and the Vulkan loader, so the runtime's launch path runs in CI.
# mesa-vulkan-drivers 25.x comes from bookworm-backports: the suite is enabled by
# adding it to the Suites: line of the machine's existing Debian sources entry.
set -euo pipefail
if ldconfig -p | grep -q libvulkan.so.1 && ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
    exit 0
fi
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q "bookworm-backports" "$src"; then
    sed -i '0,/^Suites: bookworm bookworm-updates$/s//Suites: bookworm bookworm-updates bookworm-backports/' "$src"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null \
    || apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
