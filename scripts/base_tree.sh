#!/usr/bin/env bash
# Copy the package and benchmarks of a commit (default HEAD) into DIR (default .base, which git ignores), to time
# a change against the code before it in one device call: carry DIR to the GPU machine and run the base's own
# scripts there, `python3 .base/benchmarks/<script>.py`, beside `python3 benchmarks/<script>.py`. Every benchmark
# puts its own tree first on sys.path, so running the working tree's script with PYTHONPATH=.base would time the
# working tree twice.
# Usage: bash scripts/base_tree.sh [COMMIT] [DIR]
set -euo pipefail
commit=${1:-HEAD}
cd "$(dirname "$0")/.."
dir=${2:-.base}
rm -rf "$dir" && mkdir -p "$dir"
git archive "$commit" coopdsl benchmarks pyproject.toml | tar -x -C "$dir"
echo "wrote $dir from $(git rev-parse --short "$commit"): run python3 $dir/benchmarks/<script>.py"
