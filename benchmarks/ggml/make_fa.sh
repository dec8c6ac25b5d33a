#!/bin/sh
# Build coopdsl's flash_attn_cm2 modules for ggml's override loader:
#   benchmarks/ggml/make_fa.sh [OUT_DIR]        (default: build/ggml_fa)
# writes OUT_DIR/<pipeline>.spv (+ .json reflection, ggml_fa.h) from fa_kernels.toml, and for each
# module a sidecar OUT_DIR/<pipeline>.when holding "12=1" and "13=1": ggml's loader uses the module
# only when specialization constants 12 and 13 (FaTypeK, FaTypeV) are 1 (GGML_TYPE_F16), the only
# K/V type the kernel implements.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/ggml_fa}
python3 -m coopdsl build "$here/fa_kernels.toml" -o "$out"
for name in flash_attn_f32_f16_f16acc_cm2 flash_attn_f32_f16_f32acc_cm2 \
            flash_attn_f32_f16_aligned_f16acc_cm2 flash_attn_f32_f16_aligned_f32acc_cm2; do
    test -f "$out/$name.spv"
    printf '12=1\n13=1\n' > "$out/$name.when"
done
echo "$out: 4 modules with .when sidecars"
