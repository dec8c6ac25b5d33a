#!/usr/bin/env bash
# Run ggml's test-backend-ops (from build.sh's bundle) on the GPU machine, stock or with coopdsl overrides.
#
#   benchmarks/ggml/run_device.sh MODE OVERRIDES [test-backend-ops args...]
#     MODE       test | perf (any test-backend-ops mode: support, grad, ...)
#     OVERRIDES  a folder of <pipeline name>.spv (+ optional <name>.when) for GGML_VK_OVERRIDE_DIR, or `none` (stock)
#     args       passed on, e.g. -o MUL_MAT -p "type_a=q4_0"; `-b Vulkan0` is added unless -b is given
#
# Run from the repository root, with .gl/ (Debian 12 libvulkan1 + glvnd .debs) and
# benchmarks/ggml/work/bundle.tar.xz carried (device tool: carry [".gl", "benchmarks/ggml/work/bundle.tar.xz"]).
# Env: BUNDLE (another bundle path), GGML_VK_OVERRIDE_TRACE=1 (print `[override-dispatch] NAME` before each
# case line; use with test mode and without -j), LOG (output file name under $OUT).
# Output goes to stdout and, when $OUT is set, to $OUT/${LOG:-ggml-MODE-TAG.log} (TAG = folder name or stock).
# The exit status is test-backend-ops's.
set -uo pipefail
[ $# -ge 2 ] || { sed -n 2,15p "$0"; exit 2; }
MODE=$1; OVR=$2; shift 2
BUNDLE=${BUNDLE:-benchmarks/ggml/work/bundle.tar.xz}
[ -f "$BUNDLE" ] || { echo "run_device.sh: no bundle at $BUNDLE (run build.sh here and carry it)"; exit 2; }

# Vulkan loader + glvnd into / (the image has the NVIDIA driver's ICD but no loader)
if [ -d .gl ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ]; then
  for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$icd" ] && { export VK_DRIVER_FILES=$icd; break; }
  done
fi

# unpack the bundle once per machine (again when the bundle changes)
T=${TMPDIR:-/tmp}/ggml-bundle
KEY=$(stat -c %s-%Y "$BUNDLE")
if [ "$(cat "$T/.key" 2>/dev/null)" != "$KEY" ]; then
  rm -rf "$T" && mkdir -p "$T" && tar -C "$T" -xJf "$BUNDLE" && echo "$KEY" > "$T/.key" || { echo "run_device.sh: cannot unpack $BUNDLE"; exit 2; }
fi
export LD_LIBRARY_PATH=$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

if [ "$OVR" = none ]; then
  unset GGML_VK_OVERRIDE_DIR; TAG=stock
else
  [ -d "$OVR" ] || { echo "run_device.sh: no override folder $OVR"; exit 2; }
  export GGML_VK_OVERRIDE_DIR=$(cd "$OVR" && pwd); TAG=$(basename "$GGML_VK_OVERRIDE_DIR")
fi
ARGS=("$@")
case " $* " in *" -b "*) ;; *) ARGS+=(-b Vulkan0) ;; esac

echo "== test-backend-ops $MODE ${ARGS[*]} | overrides: ${GGML_VK_OVERRIDE_DIR:-none} | $(cat "$T/VERSION")"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  "$T/test-backend-ops" "$MODE" "${ARGS[@]}" 2>&1 | tee "$OUT/${LOG:-ggml-$MODE-$TAG.log}"
else
  "$T/test-backend-ops" "$MODE" "${ARGS[@]}" 2>&1
fi
