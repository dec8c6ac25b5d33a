"""A reflection whose fields are of other types (an edited JSON file) is refused by the device checks with a
TypeError naming the field (``coopdsl/devices/schema.py``), where it reached a KeyError or a comparison
inside a rule; every kernel's own reflection passes."""

import copy
import runpy
from pathlib import Path

import pytest

from coopdsl import devices
from coopdsl.devices import check as device_check
from coopdsl.kernel import Kernel

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]


def _example_kernels() -> list[Kernel]:
    found = [k for k in vars(K).values() if isinstance(k, Kernel)]
    for path in sorted((ROOT / "examples").glob("*.py")):
        found += [k for k in runpy.run_path(str(path)).values() if isinstance(k, Kernel)]
    return found


def test_every_example_and_test_kernels_reflection_passes():
    kernels = _example_kernels()
    assert len(kernels) > 10
    for k in kernels:
        r = k.reflect()
        devices.mismatches(r, "nvidia-h100")          # no TypeError: the schema takes what reflect() writes
        device_check.workgroup_size(r)


DAMAGED = {
    "workgroup_size": (lambda r: r.update(workgroup_size="64"), "'workgroup_size' is '64', not a list of 1 to 3 ints"),
    "a float size": (lambda r: r.update(workgroup_size=[64.0, 1, 1]),
                     "'workgroup_size' is [64.0, 1, 1], not a list of 1 to 3 ints"),
    "spec ids": (lambda r: r.update(workgroup_size_spec_ids=[0]),
                 "'workgroup_size_spec_ids' is [0], not a list of 3 ints or nulls"),
    "subgroup size": (lambda r: r.update(subgroup_size="32"), "'subgroup_size' is '32', not an int or null"),
    "loc": (lambda r: r.update(workgroup_size_loc=5), "'workgroup_size_loc' is 5, not 'file:line:col'"),
    "matrices": (lambda r: r.update(cooperative_matrices={}), "'cooperative_matrices' is dict, not a list"),
    "matrix rows": (lambda r: r["cooperative_matrices"][0].update(rows="16"),
                    "'cooperative_matrices[0].rows' is '16', not a size"),
    "muladd K": (lambda r: r["muladds"][0].pop("K"), "'muladds[0]' has no 'K'"),
    "spec default": (lambda r: r["spec_constants"][0].update(default="64"),
                     "'spec_constants[0].default' is '64', not a number"),
    "shared bytes": (lambda r: r.update(shared_memory={"bytes": "x"}),
                     "'shared_memory' is {'bytes': 'x'}, not a mapping with 'bytes' (a size) and 'arrays'"),
    "shared array": (lambda r: r.update(shared_memory={"bytes": 4, "arrays": [{"bytes": 4}]}),
                     "'shared_memory.arrays[0]' has no 'name'"),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_field_is_named(case):
    damage, words = DAMAGED[case]
    r = copy.deepcopy(runpy.run_path(str(ROOT / "examples" / "gemm_khr.py"))["gemm"].reflect())
    damage(r)
    want = f"coopdsl.devices: the kernel's reflection is damaged: {words} (write it again with kernel.reflect() " \
           f"or `coopdsl emit --reflect`)"
    for check in (lambda: devices.verify(r, "nvidia-h100"), lambda: devices.mismatches(r, "nvidia-h100"),
                  lambda: device_check.workgroup_size(r)):
        with pytest.raises(TypeError) as e:
            check()
        assert str(e.value) == want
