"""The C++ host example (examples/host_cpp), built from freshly emitted headers and run on a Vulkan device.

Needs cmake, g++, the Vulkan headers and loader (Debian: ``cmake g++
libvulkan-dev``; CI installs them with scripts/install-cpp-host-deps.sh) and
a Vulkan device (lavapipe is enough for saxpy). Skips with the reason when
any is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from coopdsl.cli import main

pytestmark = pytest.mark.vulkan

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "examples" / "host_cpp"
EMIT = {"saxpy.h": ["examples/host_cpp/kernels.py", "--kernel", "saxpy"], "gemm.h": ["examples/gemm_khr.py"]}


def _require_toolchain(tmp: Path) -> None:
    for tool in ("cmake", "g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (apt-get install cmake g++ libvulkan-dev)")
    probe = tmp / "probe.cpp"
    probe.write_text("#include <vulkan/vulkan.h>\nint main() { return 0; }\n")
    r = subprocess.run(["g++", "-std=c++17", str(probe), "-lvulkan", "-o", str(tmp / "probe")], capture_output=True)
    if r.returncode != 0:
        pytest.skip("the Vulkan headers or libvulkan.so are missing (apt-get install libvulkan-dev)")


def _require_device() -> list:
    from coopdsl import runtime

    try:
        infos = runtime.list_devices()
    except Exception as e:  # no loader, no ICD
        pytest.skip(f"no Vulkan device: {e}")
    if not infos:
        pytest.skip("no Vulkan device")
    return infos


@pytest.fixture(scope="module")
def headers(tmp_path_factory):
    """saxpy.h and gemm.h written by ``coopdsl emit --format c`` into a temporary folder."""
    out = tmp_path_factory.mktemp("headers")
    for name, (source, *args) in EMIT.items():
        assert main(["emit", str(ROOT / source), *args, "--format", "c", "-o", str(out / name)]) == 0
    return out


@pytest.fixture(scope="module")
def cmake_host(tmp_path_factory, headers) -> Path:
    """The example configured and built with CMake against ``headers``; returns the executable."""
    build = tmp_path_factory.mktemp("build")
    _require_toolchain(build)
    _require_device()
    for step in (["cmake", "-S", str(HOST), "-B", str(build), f"-DCOOPDSL_HEADER_DIR={headers}"],
                 ["cmake", "--build", str(build)]):
        r = subprocess.run(step, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    return build / "coopdsl_host"


def _run(exe: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300)


def test_saxpy_runs_and_matches(cmake_host):
    r = _run(cmake_host, "saxpy", "10000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("saxpy on ") and r.stdout.endswith(": n=10000, workgroup 128 (spec id 0): ok\n")


def test_gemm_runs_or_names_what_the_device_lacks(cmake_host):
    has_coopmat = any(i.has_coopmat for i in _require_device())
    r = _run(cmake_host, "gemm", "64", "64", "64")
    if has_coopmat:
        assert r.returncode == 0, r.stderr
        assert "64x64x64 f16 -> f32 (cooperative matrices), max |C - A*B| = 0: ok" in r.stdout
    else:
        assert r.returncode == 1
        assert "no Vulkan device can run kernel gemm" in r.stderr
        assert "extension VK_KHR_cooperative_matrix" in r.stderr


def test_the_device_variable_names_a_device_or_says_it_names_none(cmake_host):
    """``COOPDSL_DEVICE=cpu`` (Python's interpreter) left over in the environment gave 'no Vulkan device can run
    kernel saxpy' with no reason; "gpu" means the first device that runs it, as in Python."""
    import os

    def run(value: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(cmake_host), "saxpy", "1000"], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "COOPDSL_DEVICE": value})

    for ok in ("gpu", "0", ""):
        assert run(ok).returncode == 0, ok
    r = run("cpu")
    assert r.returncode == 1 and ": COOPDSL_DEVICE=cpu names none of the " in r.stderr and "unset it" in r.stderr


def test_bad_usage_exits_2(cmake_host):
    for args in ([], ["conv"], ["saxpy", "0"], ["gemm", "15", "16", "16"]):
        r = _run(cmake_host, *args)
        assert r.returncode == 2, args
        assert r.stderr.startswith("coopdsl_host: ") or r.stderr.startswith("usage: ")


def test_single_gpp_line_builds_it_without_cmake(tmp_path):
    """The documented fallback: g++ -std=c++17 -I examples/host_cpp/generated main.cpp -lvulkan."""
    _require_toolchain(tmp_path)
    _require_device()
    exe = tmp_path / "host"
    r = subprocess.run(["g++", "-std=c++17", "-O2", "-I", str(HOST / "generated"), str(HOST / "main.cpp"),
                        "-lvulkan", "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = _run(exe, "saxpy", "777")
    assert r.returncode == 0 and r.stdout.endswith(": ok\n"), r.stdout + r.stderr
