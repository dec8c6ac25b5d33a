#!/usr/bin/env bash
# The README's test command. Installs coopdsl with its test extras into the
# active Python, brings a CPU Vulkan driver when running under CI (so the
# runtime's launch path is exercised for real) and the C++ host example's build tools,
# then runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[test]'
if [ "${CI:-}" = "true" ] && [ -x scripts/install-lavapipe.sh ]; then
    scripts/install-lavapipe.sh || echo "lavapipe not installed; Vulkan tests will skip"
fi
if [ "${CI:-}" = "true" ] && [ -x scripts/install-cpp-host-deps.sh ]; then
    scripts/install-cpp-host-deps.sh || echo "cmake/g++/libvulkan-dev not installed; the C++ host test will skip"
fi
exec python3 -m pytest -q "$@"
