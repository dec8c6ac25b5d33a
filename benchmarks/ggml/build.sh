#!/usr/bin/env bash
# Build ggml's test-backend-ops (Vulkan backend, coopmat2 on, static, with ggml-override.patch) and pack it
# into benchmarks/ggml/work/bundle.tar.xz for run_device.sh. See README.md in this folder.
#
#   benchmarks/ggml/build.sh            # everything; each step is skipped when its output is already there
#   JOBS=16 benchmarks/ggml/build.sh    # parallel jobs (default 2)
#
# Runs on Debian 12 (x86_64, no GPU needed). Everything fetched or built goes to benchmarks/ggml/work/
# (ignored by git). Sources, in order of preference: the bare mirrors under $MIRROR (/work/.mirror, made by
# the session's `fetch` tool: github:ggml-org/ggml, github:KhronosGroup/glslang,
# github:KhronosGroup/SPIRV-Headers), else github.com. Debian packages come through apt-get download.
set -euo pipefail

GGML_COMMIT=d99724f2b141fed9e1a9f402213506c081433465      # ggml-org/ggml, 2026-08-21
GLSLANG_COMMIT=90afccfbd49dff0349d86a41762e9de24e1df811   # KhronosGroup/glslang main, 2026-08-06
SPVH_COMMIT=0d25db97cb9b8f725e4c95e4553001710e7fc39d      # KhronosGroup/SPIRV-Headers v2026.08.0, 2026-08-14
VKDEV_VERSION=1.4.309.0-1                                 # Debian 13 (trixie) libvulkan-dev: vulkan.hpp

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
W=${GGML_WORK:-$HERE/work}
MIRROR=${MIRROR:-/work/.mirror}
JOBS=${JOBS:-2}
mkdir -p "$W/logs" "$W/debs" "$W/bin"
L=$W/logs
T0=$(date +%s)
step() { echo "[$(date +%H:%M:%S) +$(( $(date +%s) - T0 ))s] $*"; }
run_logged() { local log=$1; shift; "$@" > "$L/$log" 2>&1 || { echo "FAILED: $* (log $L/$log)"; tail -30 "$L/$log"; exit 1; }; }

# --- 0. host packages -------------------------------------------------------------------------------
need=()
for p in cmake ninja-build g++ git python3 xz-utils binutils; do
  dpkg -s "$p" > /dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  step "apt-get install ${need[*]}"
  apt-get update -q > "$L/apt.log" 2>&1 && apt-get install -y -q "${need[@]}" >> "$L/apt.log" 2>&1
fi

# --- 1. sources -------------------------------------------------------------------------------------
get_src() {  # dir mirror-name github-url commit
  local dir=$W/$1 src=$MIRROR/$2/repo
  [ -d "$src" ] || src=$3
  if [ ! -d "$dir/.git" ]; then step "clone $src -> $dir"; git clone -q "$src" "$dir"; fi
  if [ "$(git -C "$dir" rev-parse HEAD)" != "$4" ]; then git -C "$dir" checkout -q -f "$4"; fi
}
get_src ggml ggml-org+ggml https://github.com/ggml-org/ggml "$GGML_COMMIT"
get_src glslang KhronosGroup+glslang https://github.com/KhronosGroup/glslang "$GLSLANG_COMMIT"
get_src SPIRV-Headers KhronosGroup+SPIRV-Headers https://github.com/KhronosGroup/SPIRV-Headers "$SPVH_COMMIT"
if git -C "$W/ggml" apply --reverse --check "$HERE/ggml-override.patch" 2> /dev/null; then
  step "ggml-override.patch already applied"
else
  step "apply ggml-override.patch"
  git -C "$W/ggml" checkout -q -f "$GGML_COMMIT" -- .
  git -C "$W/ggml" apply "$HERE/ggml-override.patch"
fi

# --- 2. Debian packages: vulkan.hpp 1.4.309 (trixie's libvulkan-dev) and the loader (bookworm's libvulkan1)
if [ ! -f "$W/vkdev/usr/include/vulkan/vulkan.hpp" ]; then
  step "download libvulkan-dev $VKDEV_VERSION (trixie) and libvulkan1 (this system's)"
  A=$W/apt
  mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" > "$A/sources.list"
  APT=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache")
  run_logged apt-trixie.log apt-get "${APT[@]}" update
  (cd "$W/debs" && apt-get "${APT[@]}" download "libvulkan-dev=$VKDEV_VERSION" && apt-get download libvulkan1) >> "$L/apt-trixie.log" 2>&1
  rm -rf "$W/vkdev" "$W/vkloader"
  dpkg -x "$W/debs/libvulkan-dev_${VKDEV_VERSION}_amd64.deb" "$W/vkdev"
  dpkg -x "$(ls "$W"/debs/libvulkan1_*.deb | head -1)" "$W/vkloader"
fi
VK_LIB=$W/vkloader/usr/lib/x86_64-linux-gnu/libvulkan.so.1

# --- 3. glslang standalone + the glslc shim; SPIRV-Headers into a prefix ------------------------------
GLSLANG=$W/glslang-build/StandAlone/glslang
if [ ! -x "$GLSLANG" ]; then
  step "build glslang (standalone)"
  run_logged glslang-cfg.log cmake -S "$W/glslang" -B "$W/glslang-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DENABLE_OPT=OFF -DGLSLANG_TESTS=OFF -DENABLE_HLSL=OFF -DGLSLANG_ENABLE_INSTALL=OFF
  run_logged glslang-build.log cmake --build "$W/glslang-build" --target glslang-standalone -j "$JOBS"
fi
step "glslang: $("$GLSLANG" --version | head -1)"
cat > "$W/bin/glslc" <<EOF
#!/bin/sh
GLSLANG='$GLSLANG' exec python3 '$HERE/glslc_shim.py' "\$@"
EOF
chmod +x "$W/bin/glslc"
"$W/bin/glslc" -o - -fshader-stage=compute --target-env=vulkan1.3 \
  "$W/ggml/src/ggml-vulkan/vulkan-shaders/feature-tests/coopmat2.comp" > /dev/null && step "shim: coopmat2 feature test compiles"
if [ ! -f "$W/spvh-inst/include/spirv/unified1/spirv.hpp" ]; then
  step "install SPIRV-Headers"
  run_logged spvh.log cmake -S "$W/SPIRV-Headers" -B "$W/spvh-build" -G Ninja -DCMAKE_INSTALL_PREFIX="$W/spvh-inst" -DSPIRV_HEADERS_ENABLE_TESTS=OFF
  cmake --install "$W/spvh-build" >> "$L/spvh.log" 2>&1
fi

# --- 4. ggml: configure and build test-backend-ops -----------------------------------------------------
B=$W/ggml-build
if [ ! -f "$B/build.ninja" ]; then
  step "configure ggml"
  run_logged ggml-cfg.log cmake -S "$W/ggml" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGGML_VULKAN=ON -DGGML_BUILD_TESTS=ON -DGGML_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
    -DVulkan_INCLUDE_DIR="$W/vkdev/usr/include" -DVulkan_LIBRARY="$VK_LIB" -DVulkan_GLSLC_EXECUTABLE="$W/bin/glslc" \
    -DCMAKE_PREFIX_PATH="$W/spvh-inst" -DCMAKE_CXX_FLAGS="-isystem $W/spvh-inst/include" \
    -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
fi
grep -E "supported by glslc|GGML_VULKAN_COOPMAT" "$L/ggml-cfg.log" | sed 's/^/    /'
grep -q "GL_NV_cooperative_matrix2 supported by glslc" "$L/ggml-cfg.log" || { echo "FAILED: coopmat2 not supported by the shim's glslang"; exit 1; }
step "build test-backend-ops (-j $JOBS; log $L/ggml-build.log)"
t=$(date +%s)
run_logged ggml-build.log cmake --build "$B" --target test-backend-ops -j "$JOBS"
step "ggml built in $(( $(date +%s) - t )) s"

# --- 5. bundle: stripped binary + libgomp (the loader comes from .gl/ on the GPU machine) ---------------
BIN=$B/bin/test-backend-ops
rm -rf "$W/bundle" && mkdir -p "$W/bundle/lib"
strip -o "$W/bundle/test-backend-ops" "$BIN"
for lib in $(LD_LIBRARY_PATH=$(dirname "$VK_LIB") ldd "$BIN" | awk '/=>/ {print $3}'); do
  case $(basename "$lib") in libgomp.so*) cp -L "$lib" "$W/bundle/lib/";; esac
done
(cd "$W/ggml" && echo "ggml $GGML_COMMIT + ggml-override.patch ($(sha256sum "$HERE/ggml-override.patch" | cut -c1-16)); glslang $GLSLANG_COMMIT; SPIRV-Headers $SPVH_COMMIT; built $(date -u +%FT%TZ)") > "$W/bundle/VERSION"
tar -C "$W/bundle" -cJf "$W/bundle.tar.xz" .
step "bundle $W/bundle.tar.xz: $(du -h "$W/bundle.tar.xz" | cut -f1) (binary $(du -h "$W/bundle/test-backend-ops" | cut -f1) stripped)"

# --- 6. checks that need no GPU -----------------------------------------------------------------------
strings "$W/bundle/test-backend-ops" | grep -q GGML_VK_OVERRIDE_DIR && step "binary holds GGML_VK_OVERRIDE_DIR"
LD_LIBRARY_PATH=$(dirname "$VK_LIB"):$W/bundle/lib "$W/bundle/test-backend-ops" -o ADD -b CPU 2>&1 | tail -3 | sed 's/^/    /'
echo "    GLIBC needed: $(objdump -T "$W/bundle/test-backend-ops" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"

# --- 7. .gl/ for run_device.sh (Debian 12 loader + glvnd), if the repository has none -------------------
if [ ! -d "$REPO/.gl" ]; then
  step "download .gl/ debs"
  mkdir -p "$REPO/.gl"
  (cd "$REPO/.gl" && apt-get download libvulkan1 libglvnd0 libegl1 libgl1 libglx0 libgles2 libopengl0) > "$L/gl.log" 2>&1
fi
step "done"
