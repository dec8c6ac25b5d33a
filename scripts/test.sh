#!/usr/bin/env bash
# The README's test command. Installs coopdsl with its test extras into the
# active Python, brings a CPU Vulkan driver when running under CI (so the
# runtime's launch path is exercised for real) and the C++ host example's build tools,
# lints (ruff) and type-checks (mypy) the package, then runs the test suite. A lint or
# type error fails the run before any test runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[test]'
if [ "${CI:-}" = "true" ] && [ -x scripts/install-lavapipe.sh ]; then
    scripts/install-lavapipe.sh || echo "lavapipe not installed; Vulkan tests will skip"
fi
if [ "${CI:-}" = "true" ] && [ -x scripts/install-cpp-host-deps.sh ]; then
    scripts/install-cpp-host-deps.sh || echo "cmake/g++/libvulkan-dev not installed; the C++ host test will skip"
fi
echo "ruff check coopdsl tests"
python3 -m ruff check coopdsl tests
echo "mypy (settings in pyproject.toml [tool.mypy])"
python3 -m mypy
exec python3 -m pytest -q "$@"
