#!/bin/sh
# The override folder for ggml's loader (GGML_VK_OVERRIDE_DIR): every coopdsl module that replaces a ggml
# cm2 pipeline, named <pipeline>.spv (+ <pipeline>.when where it replaces only some specializations).
#   benchmarks/ggml/make_overrides.sh [OUT_DIR]      (default benchmarks/ggml/work/override)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/work/override}
tmp=$(mktemp -d)
python3 -m coopdsl build "$here/kernels.toml" -o "$tmp/mm" > "$tmp/mm.log"
sh "$here/make_fa.sh" "$tmp/fa" > "$tmp/fa.log"
rm -rf "$out" && mkdir -p "$out"
cp "$tmp"/mm/*.spv "$tmp"/fa/*.spv "$tmp"/fa/*.when "$out"/
rm -rf "$tmp"
echo "$out: $(ls "$out"/*.spv | wc -l) modules ($(ls "$out"/*.when | wc -l) with .when sidecars)"
