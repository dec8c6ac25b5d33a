"""The target-to-SPIR-V-version map exists once (coopdsl/ir/targets.py) and every reader uses it."""

from coopdsl.ir import targets
from coopdsl.spirv import tools


def test_one_map():
    assert tools.TARGET_ENVS is targets.TARGET_ENVS
    assert tools.DEFAULT_TARGET_ENV == targets.DEFAULT_TARGET_ENV
    assert targets.env_of((1, 5)) == "vulkan1.2" and targets.env_of((1, 0)) == "SPIR-V 1.0"
    assert targets.envs_from((1, 4)) == ["vulkan1.2", "vulkan1.3", "vulkan1.4"]


def test_a_target_env_or_spec_of_another_type_is_the_documented_error():
    """A list, dict or numpy array for target_env (a hash or a truth value of an array) and a non-dict spec for
    reflect/print_ir (AttributeError) were foreign errors (found by a fuzzer of the host API)."""
    import numpy as np
    import pytest

    from tests.runtime.test_lavapipe import through_pointers as k

    for env in (["vulkan1.3"], {"a": 1}, np.array(3), np.array(["vulkan1.3", "x"]), ""):
        for method in (k.compile, k.reflect):
            with pytest.raises(ValueError, match=r"target_env must be one of \['vulkan1.1'"):
                method(target_env=env)
    for spec in ("WG=1", [1], np.array([1])):
        for method in (k.reflect, k.print_ir, k.compile):
            with pytest.raises(TypeError, match=r"spec must be a dict of specialization-constant values by name"):
                method(spec=spec)
