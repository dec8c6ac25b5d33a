"""Every example runs on the interpreter and matches numpy (the GPU check's cases, at small sizes)."""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import coopdsl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.cases import CASES, QCOM_CASES  # noqa: E402

SMALL = {  # sizes kept small so the default test run stays fast
    "gemm_khr": [(16, 16, 16), (64, 48, 32)],
    "gemm_shared": [(128, 128, 32), (256, 128, 64)],
    "gemm_shared_64": [(64, 64, 32), (192, 64, 96)],
    "gemm_edges": [(1, 1, 1), (17, 33, 5), (100, 75, 50)],
    "bf16_gemm": [(16, 16, 16), (128, 64, 96)],
    "int8_gemm": [(16, 16, 32), (64, 48, 96)],
    "gemm_portable": [(16, 16, 16), (64, 48, 32)],
    "gemm_workgroup": [(128, 128, 32), (1, 1, 1), (100, 75, 50)],
    "gemm_workgroup_colmajor": [(100, 75, 50), (130, 129, 40)],
    "gemm_workgroup_f16": [(100, 75, 50)],
    "q4_matmul": [(64, 64, 32), (100, 37, 96)],
    "flash_attention": [(1, 64, 77, 64), (2, 100, 130, 128)],  # (heads, n_q, n_kv, D)
}


def test_every_example_has_a_case():
    examples = {p.name for p in (ROOT / "examples").glob("*.py")}
    covered = {fn.__name__ for fn, _ in [*CASES.values(), *QCOM_CASES.values()]}  # QCOM ones: tests/qcom
    for name in examples:
        ns = runpy.run_path(str(ROOT / "examples" / name))
        assert any(isinstance(v, coopdsl.Kernel) for v in ns.values())
        assert name.removesuffix(".py") in covered, f"examples/{name} has no case in benchmarks/cases.py"
    assert set(SMALL) == set(CASES)


@pytest.mark.parametrize("case,size", [(c, s) for c, sizes in SMALL.items() for s in sizes])
def test_example_on_the_interpreter_matches_numpy(case, size):
    fn, _ = CASES[case]
    r = fn(size, np.random.default_rng(0), device="cpu")
    assert r.passed, r


@pytest.mark.parametrize("sgs", [16, 8])
def test_examples_at_other_subgroup_sizes(sgs, monkeypatch):
    # with several subgroups per workgroup each computes (and writes) the same tile
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", str(sgs))
    for case in ("gemm_khr", "gemm_edges"):
        fn, _ = CASES[case]
        r = fn(SMALL[case][-1], np.random.default_rng(1), device="cpu")
        assert r.passed, r


def test_environment_variable_sends_every_launch_to_the_cpu(monkeypatch):
    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")
    fn, _ = CASES["gemm_khr"]
    r = fn((32, 32, 16), np.random.default_rng(2))  # device=None, as a GPU script would call it
    assert r.passed, r


def test_a_kernel_that_assumes_32_wide_subgroups_is_caught(monkeypatch):
    # gemm_shared places subgroup s's tiles by s: with 16-wide subgroups there are 8 of them and the
    # last ones read past the shared tile.  The example says so (subgroup_size=32); a copy that does not
    # is caught by the interpreter at the user's line
    import coopdsl as cd
    from benchmarks.cases import load_example
    from coopdsl.interp import InterpreterError

    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "16")
    k = load_example("gemm_shared.py")["gemm_shared"]
    unsaid = cd.Kernel(k.fn, k.workgroup_size)
    a = np.zeros((64 * 32 // 8, 4), np.uint32)
    b = np.zeros((32 * 64 // 8, 4), np.uint32)
    with pytest.raises(InterpreterError, match="cooperative-matrix load of shared array 'a_sh' out of bounds") as e:
        unsaid.launch((1, 1), a, b, np.zeros(64 * 64, np.float32), 1.0, 0.0, M=64, N=64, K=32, TILE_M=64,
                      TILE_N=64, TILE_K=32, SG_M=32, SG_N=32, WG=128, device="cpu")
    assert e.value.loc.file.endswith("gemm_shared.py")


def test_a_required_subgroup_size_wins_over_the_environment(monkeypatch):
    # the example requires subgroups of 32, so COOPDSL_SUBGROUP_SIZE=16 does not change how it runs
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", "16")
    fn, _ = CASES["gemm_shared_64"]
    r = fn((64, 64, 32), np.random.default_rng(0), device="cpu")
    assert r.passed, r
