"""`pytest -m gpu` and the GPU benchmarks stop with one clear message on a machine without a usable GPU."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks._gpu import gpu_problem, require_gpu  # noqa: E402

PROBLEM = gpu_problem()
needs_no_gpu = pytest.mark.skipif(PROBLEM is None, reason="this machine has a usable GPU")


@needs_no_gpu
def test_gpu_suite_exits_once_with_the_reason():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "tests/gpu"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert out.count("the GPU tests (-m gpu) cannot run on this machine: ") == 1, out
    assert PROBLEM in out and "skipped" not in out and "passed" not in out


def test_default_run_is_not_stopped_by_the_gpu_check():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/gpu"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 5 and "deselected" in r.stdout, r.stdout + r.stderr  # 5: no tests selected


@needs_no_gpu
def test_gpu_benchmarks_exit_with_one_message():
    with pytest.raises(SystemExit, match="^gemm_bench.py: cannot run: ") as info:
        require_gpu("gemm_bench.py")
    assert PROBLEM in str(info.value)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VK_DRIVER_FILES": "/nonexistent/icd.json"}
    scripts = {"gpu_check.py": "gpu_check.py", "gemm_bench.py": "gemm_bench.py", "best_gemm/run.py": "best_gemm/run.py",
               "best_gemm/ops_matmul.py": "best_gemm/ops_matmul.py", "best_gemm/sweep.py": "sweep.py",
               "autotune_clock.py": "autotune_clock.py"}
    for script, name in scripts.items():
        r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script)], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 1 and r.stdout == "", (script, r.stdout, r.stderr)
        assert r.stderr.startswith(f"{name}: cannot run: no usable Vulkan") and "Traceback" not in r.stderr


def test_no_usable_gpu_reason_names_what_was_found(monkeypatch):
    from coopdsl import runtime
    from coopdsl.runtime.instance import DeviceInfo

    cpu = DeviceInfo(0, "llvmpipe", "CPU", 0, 0, "1.3", "llvmpipe", "", 8, 0, 0, 0, 1.0)
    monkeypatch.setattr(runtime, "list_devices", lambda: [cpu])
    assert gpu_problem().startswith("no device with cooperative matrices (found: llvmpipe (CPU))")
    monkeypatch.setattr(runtime, "list_devices", lambda: [])
    assert gpu_problem().startswith("the Vulkan loader found no devices")
    cpu.coopmat_configs = [{"M": 16}]
    monkeypatch.setattr(runtime, "list_devices", lambda: [cpu])
    assert gpu_problem() is None
