"""Target availability is declared on the op and checked in one place: the IR builder.

A made-up op family, declared here only (its op with an ``availability``, its builtin, its lowering and its
meaning on the CPU, as a family's files in ir/, lang/, spirv/ and interp/ would), is refused below its SPIR-V
version at the user's line with the message every family gets, and compiles, validates and runs from it on,
with no edit to the front end, the verifier or the version gate.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import UnsupportedSyntaxError, u32
from coopdsl.interp.ops.registry import SEMANTICS, semantics
from coopdsl.ir import types as T
from coopdsl.ir.attrs import PARTIAL_COUNT, LoopHint
from coopdsl.ir.ops import OPS, define
from coopdsl.ir.ops.base import fail
from coopdsl.ir.targets import Availability
from coopdsl.lang.conversions import RUNTIME
from coopdsl.lang.registry import make_builtin
from coopdsl.spirv.lower import LOWERINGS, lowering

from ..conftest import compile_checked, expect_error

PKG = Path(cd.__file__).resolve().parent
MADE_UP = Availability((1, 5), "SPV_TEST_made_up_doubling", "cd.twice")


def _twice_rule(op):
    t = op.operands[0].type
    if not (isinstance(t, T.ScalarType) and t.is_int) or op.type != t:
        fail(op, f"doubles an integer scalar, got {t} -> {op.type}")


def _twice(cg, x):  # the family's builtin (lang/)
    return cg.em.op("test_twice", x.type, [x])


twice = make_builtin("twice", _twice, "2 * x, through a made-up instruction", "(x)", {"x": RUNTIME})


@pytest.fixture(scope="module", autouse=True)
def made_up_family():
    """The family's op (ir/), lowering (spirv/) and semantics (interp/), registered for this module only."""
    define("test_twice", 1, verify=_twice_rule, availability=MADE_UP, doc="2 * x (a made-up op of the tests)")

    @lowering("test_twice")
    def _lower(w, op, ty, rid, args):
        w.emit("OpIAdd", ty, rid, args[0], args[0])

    @semantics("test_twice")
    def _run(m, op, args):
        return (args[0] * 2).astype(args[0].dtype)

    yield
    for table in (OPS, LOWERINGS, SEMANTICS):
        dict.pop(table, "test_twice")


def _kernel(env: str):
    @cd.kernel(workgroup_size=(32, 1, 1), target_env=env)
    def doubled(out: cd.Buffer[u32]):
        i = cd.global_invocation_id.x
        out[i] = twice(i)  # E:twice

    return doubled


def test_a_new_family_is_refused_below_its_version_at_the_users_line():
    err = expect_error(_kernel("vulkan1.1"), UnsupportedSyntaxError,
                       "cd.twice needs SPV_TEST_made_up_doubling, which requires SPIR-V 1.5: compile for vulkan1.2, "
                       "vulkan1.3 or vulkan1.4 (this kernel targets SPIR-V 1.3, vulkan1.1)", "# E:twice", 18)
    assert err is not None


def test_a_new_family_compiles_and_runs_from_its_version_on():
    k = _kernel("vulkan1.2")
    compile_checked(k, r"OpIAdd %uint %\w+ %\w+", target_env="vulkan1.2")
    out = np.zeros(32, np.uint32)
    k.launch((1,), out, device="cpu")
    np.testing.assert_array_equal(out, 2 * np.arange(32))


def test_the_families_declare_what_they_need():
    """Every op of SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing needs SPIR-V 1.6; the ops every
    target has declare nothing."""
    from coopdsl.ir.ops.coopmat2 import NV2
    from coopdsl.ir.ops.tensor import NV2_TENSORS, SETTERS

    nv2 = {"coop_reduce", "coop_per_element", "coop_convert_use", "coop_transpose"}
    tensors = {"tensor_layout", "tensor_view", "coop_load_tensor", "coop_store_tensor", *SETTERS}
    for kind, d in OPS.items():
        need = d.availability
        if kind in nv2:
            assert need is not None and (need.version, need.brings) == (NV2.version, NV2.brings), kind
        elif kind in tensors:
            assert need is not None and (need.version, need.brings) == (NV2_TENSORS.version, NV2_TENSORS.brings)
        elif kind != "test_twice":
            assert need is None, kind
        if need is not None and kind != "test_twice":
            assert need.version == (1, 6) and (callable(need.what) or need.what), kind


def test_loop_hints_declare_what_they_need():
    assert LoopHint(partial=4).availability is PARTIAL_COUNT and PARTIAL_COUNT.version == (1, 4)
    assert LoopHint(unroll=True).availability is None and LoopHint().availability is None


@cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.1")
def partial_unroll(x: cd.Buffer[cd.f32], n: cd.u32):
    for i in cd.range(0, n, 1, unroll=4):  # E:unroll
        x[i] = 1.0


def test_a_loop_hint_is_refused_at_its_range_call():
    expect_error(partial_unroll, UnsupportedSyntaxError, "unroll=<count> needs the PartialCount loop control, which "
                 "requires SPIR-V 1.4: compile for vulkan1.2, vulkan1.3 or vulkan1.4 (this kernel targets SPIR-V "
                 "1.3, vulkan1.1)", "# E:unroll", 14)


def test_only_the_builder_checks_the_target():
    """No builtin and no part of the front end compares the target's version itself: the one caller of
    the check is the IR builder (where ops and loop merges are built)."""
    callers = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "check_available" or \
                    isinstance(node, ast.Attribute) and node.attr == "target_version":
                callers.append(str(path.relative_to(PKG)))
    assert sorted(set(callers)) == ["ir/builder.py"], sorted(set(callers))
