#!/usr/bin/env bash
# GPU batch for the inference kernels: the gpu tests of coopdsl.ops' LLM kernels, then benchmarks/ops_llm.py.
# Run on the lent GPU machine from the repository root with .gl/ and .whl/ carried (scripts/device_setup.sh).
set -u
source scripts/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "=== gpu tests"
timeout 300 python3 -m pytest -q -m gpu tests/gpu/test_llm_ops_gpu.py -x 2>&1 | tail -15
echo "=== ops_llm"
timeout 280 python3 benchmarks/ops_llm.py --out "${OUT:-/tmp}/ops_llm.md" 2>&1 | tail -30
