"""benchmarks/best_gemm: the kernel is right for every type pair and code shape (on the interpreter), its
configurations fit the device limits, and the report says what was measured."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.best_gemm import kernel as best  # noqa: E402
from benchmarks.best_gemm import run as best_run  # noqa: E402
from benchmarks.best_gemm.sweep import fits, inputs, points  # noqa: E402


def _run(pair, M, N, K, cfg, b_kmajor=None, seed=0):
    a_t, c_t, kmajor = best.PAIRS[pair]
    kmajor = kmajor if b_kmajor is None else b_kmajor
    a, b, d, ref = inputs(pair, M, N, K, np.random.default_rng(seed))
    k = best.make(a_t, c_t, kmajor).specialize(A_FIRST=cfg.pop("A_FIRST", 1), STAGES=cfg.pop("STAGES", 1),
                                               LN=cfg.pop("LN", 16))
    k.launch(best.grid(M, N, cfg["TILE_M"], cfg["TILE_N"]), a, np.ascontiguousarray(b.T) if kmajor else b, d,
             M=M, N=N, K=K, device="cpu", **cfg)
    return d.astype(np.float64), ref


SMALL = dict(TILE_M=128, TILE_N=128, SG_M=64, SG_N=64, WG=128)


@pytest.mark.parametrize("pair", list(best.PAIRS))
@pytest.mark.parametrize("a_first,stages,b_kmajor,ln", [(1, 1, None, 16), (0, 2, None, 16), (1, 2, True, 8),
                                                         (0, 1, False, 16), (1, 1, True, 8)])
def test_every_pair_and_code_shape_matches_numpy(pair, a_first, stages, b_kmajor, ln):
    tk = 64 if best.PAIRS[pair][0].nbytes == 1 else 32
    cfg = dict(SMALL, TILE_K=tk, GROUP_M=8, A_FIRST=a_first, STAGES=stages, LN=ln)
    out, ref = _run(pair, 256, 128, 4 * tk, cfg, b_kmajor)
    if best.PAIRS[pair][1].kind == "int":
        np.testing.assert_array_equal(out, ref)  # exact: every product and sum fits 32 bits
    else:
        tol = 2e-2 if pair == "f16-f16" else 1e-4  # f16 accumulation rounds each partial sum
        np.testing.assert_allclose(out, ref, atol=tol * np.abs(ref).max())


def test_two_stages_with_an_odd_number_of_steps():
    cfg = dict(SMALL, TILE_K=32, GROUP_M=8, STAGES=2, A_FIRST=0)
    out, ref = _run("bf16-f32", 128, 256, 96, cfg)
    np.testing.assert_allclose(out, ref, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("group", [1, 2, 8])
def test_grouped_order_covers_every_block_once(group):
    # 3 x 2 blocks of 128 x 128: with GROUP_M = 2 the last group has one block row
    cfg = dict(SMALL, TILE_K=32, GROUP_M=group)
    out, ref = _run("f16-f32", 384, 256, 64, cfg)
    np.testing.assert_allclose(out, ref, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("pair", list(best.PAIRS))
def test_the_tuned_configurations_fit_and_divide_8192(pair):
    a_t, _, kmajor = best.PAIRS[pair]
    for c in best.CONFIGS[pair]:
        v = c.values
        assert best.shared_bytes(a_t, v, kmajor) <= best.SHARED_LIMIT, c
        assert v["WG"] == 32 * (v["TILE_M"] // v["SG_M"]) * (v["TILE_N"] // v["SG_N"]) <= 1024, c
        assert all(8192 % v[k] == 0 for k in ("TILE_M", "TILE_N", "TILE_K")), c
        assert v["TILE_K"] % best.depth(a_t) == 0 and v["LN"] in (8, 16), c
        assert kmajor or v["LN"] % (16 // a_t.nbytes) == 0, c  # a row-major B fragment starts on a vector
    assert len(set(best.CONFIGS[pair])) == len(best.CONFIGS[pair])


def test_every_pair_compiles_with_its_muladd_and_the_b_layout_it_asks_for():
    import re

    for pair, (_, _, kmajor) in best.PAIRS.items():
        text = best.kernel(pair).specialize(STAGES=2).disassemble()
        assert "OpCooperativeMatrixMulAddKHR" in text and "OpControlBarrier" in text
        # the MatB type (Use MatrixBKHR = 2 ... written last) and the layout operand of its load:
        # ColumnMajorKHR (1) for a K-major B, RowMajorKHR (0) otherwise
        (b_type,) = re.findall(r"(%\w+) = OpTypeCooperativeMatrixKHR %\w+ %uint_3 %uint_\d+ %uint_16 %uint_1$", text,
                               re.M)
        layouts = re.findall(rf"OpCooperativeMatrixLoadKHR {b_type} %\w+ (%\w+)", text)
        assert layouts == ["%uint_1" if kmajor else "%uint_0"], (pair, layouts)


def test_the_sweep_keeps_points_within_the_shared_memory_limit():
    from coopdsl import f16

    big = dict(TILE_M=256, TILE_N=256, TILE_K=32, SG_M=128, SG_N=64, WG=256)
    assert fits(big, f16, 1, False) and not fits(big, f16, 2, False)  # 37,376 bytes; twice that is too much
    todo = points("f16-f16", ["1T", "2T"], [1, 8])
    assert all(best.shared_bytes(f16, {**c, "STAGES": int(v[0])}) <= best.SHARED_LIMIT for v, _, c in todo)
    assert {v for v, _, _ in todo} == {"1T", "2T"} and {c["GROUP_M"] for _, _, c in todo} == {1, 8}


def test_the_report_has_a_row_per_pair_with_the_chosen_configuration():
    class Info:
        name, driver_name, driver_info = "GPU", "drv", "1.0"

    class Dev:
        info = Info()

    cfg = best.CONFIGS["s8-s32"][0].values
    summary = {"ms": 1.8, "tflops": 600.0, "lo": 590.0, "hi": 610.0}
    result = {"pair": "s8-s32", "config": cfg, "tuning": {best_run._short(cfg): 1.8, "x": "error: too big"},
              "error": 0.0, "ours": summary, "torch": None, "gemm_shared": None,
              "statistics": {"Register Count": 174}}
    class Args:
        n, rounds, warmup, repeat, check, pause, pairs = 8192, 5, 10, 20, 2048, 1.0, ["s8-s32"]

    lines = best_run.report([result], Args, Dev())
    row = next(x for x in lines if x.startswith("| s8-s32 |"))
    assert "600.0 (590.0..610.0)" in row and "| 580 | 528 |" in row and "| 1.14 |" in row
    assert "128x128x128/64x32/g8/a1/s1/l16, WG 256" in row and "| 174 |" in row and "x error: too big" in row
    assert lines[2].startswith("Command: `python benchmarks/best_gemm/run.py --n 8192 --rounds 5")
