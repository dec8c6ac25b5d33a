"""The target-to-SPIR-V-version map exists once (coopdsl/ir/targets.py) and every reader uses it."""

from coopdsl.ir import targets
from coopdsl.spirv import tools


def test_one_map():
    assert tools.TARGET_ENVS is targets.TARGET_ENVS
    assert tools.DEFAULT_TARGET_ENV == targets.DEFAULT_TARGET_ENV
    assert targets.env_of((1, 5)) == "vulkan1.2" and targets.env_of((1, 0)) == "SPIR-V 1.0"
    assert targets.envs_from((1, 4)) == ["vulkan1.2", "vulkan1.3", "vulkan1.4"]
