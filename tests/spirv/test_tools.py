"""Finding the SPIRV-Tools binaries cheaply, and running spirv-val once per distinct module."""

import subprocess
import sys
from pathlib import Path

import pytest

from coopdsl.errors import ValidationError
from coopdsl.spirv import tools

from ..conftest import child_env

ROOT = Path(__file__).resolve().parents[2]

BODY = """OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""
VALID = tools.assemble("OpCapability Shader\n" + BODY)
INVALID = tools.assemble(BODY)  # no Shader capability


@pytest.fixture
def spirv_val_runs(monkeypatch):
    """The spirv-val runs made while a test runs (target env of each)."""
    runs: list[str] = []
    real = tools._run

    def counting(name, args, data):
        if name == "spirv-val":
            runs.append(args[1])
        return real(name, args, data)

    monkeypatch.setattr(tools, "_run", counting)
    monkeypatch.setattr(tools, "_validated", {})
    return runs


def test_an_identical_module_is_validated_once(spirv_val_runs):
    assert tools.validation_message(VALID) is None
    assert tools.validation_message(bytes(VALID)) is None
    assert spirv_val_runs == ["vulkan1.3"]
    # another environment is another question: this SPIR-V 1.6 module is not valid for Vulkan 1.1
    assert "Invalid SPIR-V binary version 1.6" in tools.validation_message(VALID, "vulkan1.1")
    assert spirv_val_runs == ["vulkan1.3", "vulkan1.1"]


def test_a_rejection_is_remembered_with_its_message(spirv_val_runs):
    first = tools.validation_message(INVALID)
    assert first is not None and first.startswith("spirv-val rejected the module:")
    with pytest.raises(ValidationError, match="spirv-val rejected the module"):
        tools.validate(INVALID)
    assert tools.validation_message(INVALID) == first
    assert spirv_val_runs == ["vulkan1.3"]


def test_the_cache_forgets_the_oldest_verdict_beyond_its_limit(spirv_val_runs, monkeypatch):
    monkeypatch.setattr(tools, "VALIDATED_LIMIT", max(len(VALID), len(INVALID)))  # room for one module
    tools.validation_message(VALID)
    tools.validation_message(INVALID)
    tools.validation_message(VALID)  # forgotten: validated again
    assert spirv_val_runs == ["vulkan1.3"] * 3
    assert len(tools._validated) == 1


def test_finding_spirv_val_does_not_import_cmeel_when_site_packages_hold_it():
    import sysconfig

    held = [Path(sysconfig.get_paths()[k]) / "cmeel.prefix" / "bin" / "spirv-val" for k in ("purelib", "platlib")]
    if not any(p.is_file() for p in held):  # e.g. a `pip install --target DIR` install: found through cmeel
        pytest.skip("the SPIR-V tools are not in this interpreter's site-packages")
    code = ("import sys; from coopdsl.spirv import tools; p = tools.tool_path('spirv-val'); "
            "print(p.is_file(), 'cmeel' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env=child_env()).stdout
    assert out.split() == ["True", "False"]
