"""``@coopdsl.kernel(entry_point=NAME)``: the module's OpEntryPoint name, for hosts that create their
pipelines with a fixed name (ggml's Vulkan back end uses ``"main"``), as glslang's ``-e`` and DXC's ``-E``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32


@cd.kernel(workgroup_size=(32, 1, 1), entry_point="main")
def doubled(x: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        x[i] = x[i] * 2.0


def test_the_entry_point_takes_the_given_name_and_the_module_validates():
    text = doubled.disassemble()  # compile() already ran spirv-val on it
    assert 'OpEntryPoint GLCompute %main "main"' in text
    assert '"doubled"' not in text  # the entry is named "main"; its push block keeps the kernel's name
    assert doubled.name == "doubled"  # the kernel keeps its Python name (build specs, errors)
    assert json.loads(json.dumps(doubled.reflect()))["entry_point"] == "main"


def test_a_specialization_keeps_the_entry_point():
    @cd.kernel(workgroup_size=(32, 1, 1), entry_point="run")
    def scaled(x: cd.Buffer[f32], S: cd.Const[int] = 2):
        x[cd.global_invocation_id.x] = x[cd.global_invocation_id.x] * f32(S)

    assert 'OpEntryPoint GLCompute %run "run"' in scaled.specialize(S=3).disassemble()


def test_without_one_the_entry_point_is_the_function_name():
    @cd.kernel(workgroup_size=(32, 1, 1))
    def plain(x: cd.Buffer[f32]):
        x[0] = 1.0

    assert 'OpEntryPoint GLCompute %plain "plain"' in plain.disassemble()


def test_the_interpreter_runs_a_kernel_with_a_renamed_entry_point():
    x = np.arange(40, dtype=np.float32)
    doubled.launch((2, 1, 1), x, 40, device="cpu")
    assert (x == 2 * np.arange(40)).all()


@pytest.mark.parametrize("bad", ["", "two words", 7, b"main", "caf\u00e9"])
def test_a_bad_entry_point_is_refused_at_the_decorator(bad):
    with pytest.raises(cd.CompileError) as e:
        @cd.kernel(workgroup_size=(32, 1, 1), entry_point=bad)
        def k(out: cd.Buffer[u32]):
            pass
    assert "entry_point must be a non-empty name of printable ASCII characters" in str(e.value)
    assert e.value.loc.line == _line_of("entry_point=bad)")
    assert e.value.loc.col == len("        @cd.kernel(workgroup_size=(32, 1, 1), ") + 1


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)
