"""What `coopdsl emit` and `import coopdsl` load: not the runtime (numpy, ctypes), not the device checks,
not the C-header writer, unless the command needs them (each costs milliseconds of every run)."""

import json
import subprocess
import sys
from pathlib import Path

from coopdsl.aot import compile_artifact

from ..conftest import child_env

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import sys, json\nfrom coopdsl.cli import main\nstatus = main(sys.argv[1:])\n"
         "print(json.dumps([status] + [m in sys.modules for m in ('numpy', 'coopdsl.runtime', 'coopdsl.devices', "
         "'coopdsl.aot.cheader', 'coopdsl.reflect')]))")


def _loaded(*argv: str) -> list:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True,
                         cwd=ROOT, env=child_env()).stdout
    return json.loads(out.splitlines()[-1])


def test_import_coopdsl_loads_neither_runtime_nor_device_checks():
    code = "import sys, coopdsl; print([m in sys.modules for m in ('numpy', 'coopdsl.runtime', 'coopdsl.devices')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env=child_env()).stdout
    assert out.strip() == "[False, False, False]"


def test_emitting_spirv_loads_only_the_compiler(tmp_path):
    status, numpy, runtime, devices, cheader, reflect = _loaded("emit", "examples/gemm_khr.py", "-o",
                                                                str(tmp_path / "g.spv"))
    assert status == 0 and (tmp_path / "g.spv").stat().st_size > 0
    assert not (numpy or runtime or devices or cheader or reflect)


def test_a_header_or_reflection_loads_what_it_needs(tmp_path):
    status, numpy, runtime, devices, cheader, reflect = _loaded("emit", "examples/gemm_khr.py", "--format", "c",
                                                                "-o", str(tmp_path / "g.h"))
    assert status == 0 and cheader and reflect and "GEMM_SPIRV" in (tmp_path / "g.h").read_text().upper()
    status, *_, reflect = _loaded("emit", "examples/gemm_khr.py", "-o", str(tmp_path / "g.spv"),
                                  "--reflect", str(tmp_path / "r.json"))
    assert status == 0 and reflect and json.loads((tmp_path / "r.json").read_text())["entry_point"] == "gemm"


def test_compile_artifact_without_reflection():
    import runpy

    k = runpy.run_path(str(ROOT / "examples" / "gemm_khr.py"))["gemm"]
    assert compile_artifact(k, reflect=False).reflection == {}
    assert compile_artifact(k).reflection["entry_point"] == "gemm"
