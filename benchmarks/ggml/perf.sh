#!/usr/bin/env bash
# ggml's own benchmark (test-backend-ops perf), stock and with coopdsl's modules, interleaved, ROUNDS rounds, in
# one device call; then a table per case (benchmarks/ggml/perf_table.py).  Run on the GPU machine from the
# repository root (carry .gl, benchmarks/ggml/work/bundle.tar.xz, benchmarks/ggml/work/override):
#   ROUNDS=3 benchmarks/ggml/perf.sh OP FILTER [OP FILTER ...]
#   e.g. benchmarks/ggml/perf.sh MUL_MAT "type_a=(f16|q4_0),type_b=f32,m=4096,n=512,k=14336"
set -u
OVR=${OVR:-benchmarks/ggml/work/override}
OUT=${OUT:-/tmp/ggml-out}; export OUT; mkdir -p "$OUT"
ROUNDS=${ROUNDS:-3}
logs=()
# which cases run coopdsl's pipelines: one traced run first (its times are not used: the trace prints a line
# per dispatch), then ROUNDS untraced rounds, stock and coopdsl interleaved
args=("$@")
for ((i = 0; i < ${#args[@]}; i += 2)); do
    log=perf-${args[i]}-$i-trace.log
    GGML_VK_OVERRIDE_TRACE=1 LOG=$log timeout ${PERF_TIMEOUT:-120} bash benchmarks/ggml/run_device.sh perf "$OVR" \
        -o "${args[i]}" -p "${args[i+1]}" > /dev/null 2>&1
    logs+=("$OUT/$log")
done
for r in $(seq 1 "$ROUNDS"); do
    set -- "${@}"
    args=("$@")
    for ((i = 0; i < ${#args[@]}; i += 2)); do
        op=${args[i]}; filt=${args[i+1]}
        for mode in stock coopdsl; do
            dir=none; [ $mode = coopdsl ] && dir=$OVR
            log=perf-$op-$i-$mode-r$r.log
            LOG=$log timeout ${PERF_TIMEOUT:-120} bash benchmarks/ggml/run_device.sh perf "$dir" -o "$op" -p "$filt" \
                > /dev/null 2>&1
            logs+=("$OUT/$log")
        done
    done
done
python3 benchmarks/ggml/perf_table.py "${logs[@]}"
