#!/usr/bin/env bash
# One batch of GPU work on the lent H100 (see scripts/device_setup.sh); results go to $OUT.
set -u
source scripts/device_setup.sh
mkdir -p /tmp/vkdev && dpkg -x .gl/dev/libvulkan-dev_*.deb /tmp/vkdev
step() { echo "=== $*"; }
step host_cpp
g++ -std=c++17 -O2 -I examples/host_cpp/generated -I /tmp/vkdev/usr/include examples/host_cpp/main.cpp \
    /usr/lib/x86_64-linux-gnu/libvulkan.so.1 -o /tmp/host && /tmp/host gemm && /tmp/host gemm 1024 512 768 && /tmp/host saxpy
step launch_overhead
timeout 120 python3 benchmarks/launch_overhead.py --out docs/benchmarks.md 2>&1 | tail -8
step gpu_tests
timeout 240 python3 -m pytest -q -m gpu tests/gpu 2>&1 | tail -4
timeout 120 python3 -m pytest -q tests/runtime 2>&1 | tail -3
cp docs/benchmarks.md "$OUT/benchmarks.md"
