#!/usr/bin/env bash
# Correctness on ggml's own suite, with coopdsl's modules replacing ggml's cm2 pipelines (run on the GPU machine
# from the repository root; carry .gl, benchmarks/ggml/work/bundle.tar.xz, benchmarks/ggml/work/override).
#   benchmarks/ggml/gpu_check.sh [OP[=FILTER] ...]      (default: MUL_MAT FLASH_ATTN_EXT, all their cases)
# FILTER is test-backend-ops' -p regular expression over the case parameters, e.g.
#   benchmarks/ggml/gpu_check.sh "MUL_MAT=type_a=(f16|bf16|q4_0|q8_0|q4_K)," "FLASH_ATTN_EXT=type_K=f16"
set -u
OVR=${OVR:-benchmarks/ggml/work/override}
OUT=${OUT:-/tmp/ggml-out}; export OUT; mkdir -p "$OUT"
for spec in "${@:-MUL_MAT FLASH_ATTN_EXT}"; do
    op=${spec%%=*}; filt=; [ "$spec" != "$op" ] && filt=${spec#*=}
    args=(-o "$op"); [ -n "$filt" ] && args+=(-p "$filt")
    GGML_VK_OVERRIDE_TRACE=1 LOG=test-$op-coopdsl.log timeout ${TEST_TIMEOUT:-280} \
        bash benchmarks/ggml/run_device.sh test "$OVR" "${args[@]}" > /dev/null 2>&1
    echo "test-backend-ops test ${args[*]}: exit status $?"
    tail -2 "$OUT/test-$op-coopdsl.log"
    python3 benchmarks/ggml/summarize.py "$OUT/test-$op-coopdsl.log"
done
