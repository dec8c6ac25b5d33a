"""Property-based differential testing: random well-typed kernels compile to modules spirv-val accepts, and
the interpreter computes what a plain numpy model of the same program says; ill-typed variants raise a
CompileError at the mutated line (generator: tests/interp/kernelgen.py)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coopdsl import CompileError

from . import kernelgen as kg

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def _check(case, tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / f"{case.kind}_kernel.py"
    got, want = kg.run_case(case, path)
    assert kg.agrees(case, got, want), f"interpreter and numpy model disagree on:\n{case.source}"


@settings(max_examples=25, **SETTINGS)
@given(st.data())
def test_scalar_programs_match_their_numpy_model(tmp_path_factory, data):
    _check(kg.scalar_case(kg.HypothesisChooser(data)), tmp_path_factory)


@settings(max_examples=20, **SETTINGS)
@given(st.data())
def test_matrix_programs_match_their_numpy_model(tmp_path_factory, data):
    _check(kg.matrix_case(kg.HypothesisChooser(data)), tmp_path_factory)


@pytest.mark.parametrize("family", ["scalar", "matrix"])
@settings(max_examples=8, **SETTINGS)
@given(data=st.data())
def test_ill_typed_variants_raise_a_located_compile_error(tmp_path_factory, family, data):
    ch = kg.HypothesisChooser(data)
    case = kg.ill_typed(kg.GENERATORS[family](ch), ch)
    if case is None:
        return
    path = tmp_path_factory.mktemp("gen") / "ill_typed.py"
    k = kg.load_kernel(case, path)
    with pytest.raises(CompileError) as info:
        k.compile()
    assert (info.value.loc.file, info.value.loc.line) == (str(path), case.bad_line), str(info.value)
