#!/usr/bin/env bash
# Correctness on ggml's own suite, with coopdsl's modules replacing ggml's cm2 pipelines (run on the GPU machine
# from the repository root; carry .gl, .whl, benchmarks/ggml/work/bundle.tar.xz, benchmarks/ggml/work/override).
#   benchmarks/ggml/gpu_check.sh [OPS...]      (default: MUL_MAT FLASH_ATTN_EXT)
set -u
OVR=benchmarks/ggml/work/override
OUT=${OUT:-/tmp/ggml-out}; export OUT; mkdir -p "$OUT"
for op in ${@:-MUL_MAT FLASH_ATTN_EXT}; do
    GGML_VK_OVERRIDE_TRACE=1 LOG=test-$op-coopdsl.log timeout ${TEST_TIMEOUT:-280} \
        bash benchmarks/ggml/run_device.sh test "$OVR" -o "$op" > /dev/null 2>&1
    echo "exit status $?"
    tail -3 "$OUT/test-$op-coopdsl.log"
    python3 benchmarks/ggml/summarize.py "$OUT/test-$op-coopdsl.log"
done
