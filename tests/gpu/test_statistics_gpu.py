"""Kernel.statistics on the GPU: what the driver compiled (VK_KHR_pipeline_executable_properties)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.cases import load_example  # noqa: E402

pytestmark = pytest.mark.gpu


def test_the_driver_reports_registers_for_each_specialization():
    kernel = load_example("gemm_shared.py")["gemm_shared"]
    small = kernel.statistics(TILE_M=64, TILE_N=64, TILE_K=32, SG_M=32, SG_N=32, WG=128)
    large = kernel.statistics(TILE_M=128, TILE_N=256, TILE_K=32, SG_M=64, SG_N=64, WG=256)
    print(small, large)
    assert small and all(e["statistics"] for e in small)
    numbers = [v for e in small for v in e["statistics"].values() if isinstance(v, (int, float))]
    assert numbers and any(v > 0 for v in numbers)
    assert small != large  # another tiling compiles to another program
