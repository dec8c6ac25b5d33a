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


class _Dev:
    class info:  # noqa: N801 (a stand-in for DeviceInfo)
        name, driver_name, driver_info = "GPU", "drv", "1.0"


def _args(**kw):
    base = dict(n=8192, rounds=5, warmup=100, repeat=20, check=2048, pause=1.0, pairs=["s8-s32"],
                values=["uniform", "harness"], peer_shaders=None)
    return type("Args", (), {**base, **kw})


def _summary(tflops):
    return {"ms": 1.8, "tflops": tflops, "lo": tflops - 10, "hi": tflops + 10}


def test_the_report_has_a_row_per_pair_with_the_chosen_configuration():
    cfg = best.CONFIGS["s8-s32"][0].values
    result = {"pair": "s8-s32", "config": cfg, "tuning": {best_run._short(cfg): 1.8, "x": "error: too big"},
              "by_values": {"uniform": {"ours": _summary(600.0), "errors": {"ours": 0.0}},
                            "harness": {"ours": _summary(610.0), "errors": {"ours": 0.0}}},
              "torch": None, "gemm_shared": None, "statistics": {"Register Count": 174}}
    lines = best_run.report([result], _args(), _Dev())
    header = next(x for x in lines if x.startswith("| pair |"))
    assert "| coopdsl, uniform inputs | coopdsl, harness inputs | target | peer on its harness |" in header
    row = next(x for x in lines if x.startswith("| s8-s32 |"))
    assert "| 600.0 (590.0..610.0) | 610.0 (600.0..620.0) | 580 | 528 |" in row
    assert "128x128x128/64x32/g8/a1/s1/l16, WG 256" in row and "| 174 |" in row and "x error: too big" in row
    assert row.count("|") == header.count("|")
    assert lines[2].startswith("Command: `python benchmarks/best_gemm/run.py --n 8192 --rounds 5 --warmup 100")
    assert "--values uniform harness --out" in lines[2]
    assert not any(x.startswith("| pair | inputs |") for x in lines)  # no peer table without --peer-shaders


def test_the_report_compares_with_the_peer_kernel_timed_the_same_way():
    cfg = best.CONFIGS["f16-f16"][0].values
    by_values = {v: {"ours": _summary(t), "peer": _summary(p), "port": _summary(p),
                     "errors": {"ours": 1e-3, "peer": 2e-3, "port": 2e-3}}
                 for v, t, p in (("uniform", 404.0, 404.0), ("harness", 425.0, 430.0))}
    result = {"pair": "f16-f16", "config": cfg, "tuning": {}, "by_values": by_values, "torch": None,
              "gemm_shared": None, "statistics": {}}
    lines = best_run.report([result], _args(pairs=["f16-f16"], peer_shaders=Path("shaders")), _Dev())
    assert "--peer-shaders SHADERS" in lines[2]
    rows = [x for x in lines if x.startswith("| f16-f16 | ")]
    same = [x for x in rows if x.startswith(("| f16-f16 | uniform |", "| f16-f16 | harness |"))]
    assert len(same) == 2
    assert "| 425.0 (415.0..435.0) | 430.0 (420.0..440.0) | 430.0 (420.0..440.0) | 0.99 |" in same[1]
    assert "16x16x16 256x256x32 row-major B | 1.0e-03, 2.0e-03, 2.0e-03 |" in same[1]


def test_the_peer_kernel_gets_the_harness_specialization_values():
    from benchmarks.best_gemm import peer

    s = peer.spec("s8-s32", 8192)  # the peer's int8 best takes B column-major: B's stride is K, rows are N
    assert (s["TILE_M"], s["TILE_N"], s["TILE_K"], s["BColMajor"]) == (128, 256, 64, True)
    assert (s["strideB"], s["B_ROW_LEN"], s["B_NUM_ROWS"], s["A_ROW_LEN"], s["A_NUM_ROWS"]) == (8192, 64, 256, 64, 128)
    assert peer.grid("s8-s32", 8192) == (32, 64, 1)
    f = peer.spec("f16-f16", 4096)
    assert (f["B_ROW_LEN"], f["B_NUM_ROWS"], f["strideB"], f["WG"], f["SUBGROUP_SIZE"]) == (256, 32, 4096, 256, 32)
    # every spec name is one of the port's specialization constants, and every configuration is one the
    # harness runs for the pair (its tiles divide 8192)
    from benchmarks.peer_gemm import shmem

    for pair, (tokens, conf) in peer.PEER.items():
        names = {c["name"] for c in shmem.variant(*shmem.VARIANTS[tokens]).reflect()["spec_constants"]}
        assert set(peer.spec(pair, 8192)) <= names, pair
        assert all(8192 % x == 0 for x in conf[3:6])


def test_the_peer_and_port_multiply_like_numpy_on_the_interpreter():
    # the port through benchmarks/best_gemm/peer.py's values, on harness inputs, at the smallest size its
    # tiles allow (the peer's glslang module is not in this repository; run.py checks it on the GPU)
    from benchmarks.best_gemm import peer
    from benchmarks.peer_gemm import shmem

    for pair in ("f16-f32", "s8-s32"):
        n = 256
        a, b, d, ref = inputs(pair, n, n, n, np.random.default_rng(5), "harness")
        col = peer.PEER[pair][1][6]
        bm = np.ascontiguousarray(b.T) if col else b
        params = {"inputAV4": a.view(np.uint32).reshape(-1, 4), "inputBV4": bm.view(np.uint32).reshape(-1, 4),
                  "inputC": np.zeros_like(d), "outputO": d}
        shmem.variant(*shmem.VARIANTS[peer.PEER[pair][0]]).launch(peer.grid(pair, n), params, device="cpu",
                                                                   **peer.spec(pair, n))
        np.testing.assert_allclose(d.astype(np.float64), ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


def test_harness_inputs_take_the_harness_values():
    from benchmarks.cases import HARNESS_FLOATS, gemm_inputs

    a, b, ref = gemm_inputs("f16", 64, 32, 48, np.random.default_rng(1), values="harness")
    assert set(np.unique(a.astype(np.float32))) <= set(HARNESS_FLOATS) and set(np.unique(b)) == set(HARNESS_FLOATS)
    np.testing.assert_array_equal(ref, a.astype(np.float64) @ b.astype(np.float64))
    a2, b2, none = gemm_inputs("f16", 64, 32, 48, np.random.default_rng(1), values="harness", reference=False)
    assert none is None and np.array_equal(a, a2) and np.array_equal(b, b2)  # the same inputs, no product
    with pytest.raises(ValueError, match="values must be 'uniform' or 'harness'"):
        gemm_inputs("f16", 4, 4, 4, np.random.default_rng(1), values="ones")


def test_runs_split_over_calls_are_tabled_together(tmp_path):
    import json

    cfg = best.CONFIGS["s8-s32"][0].values
    raws = []
    for i, pair in enumerate(("s8-s32", "u8-u32")):
        result = {"pair": pair, "config": cfg, "tuning": {}, "torch": None, "gemm_shared": None, "statistics": {},
                  "by_values": {"uniform": {"ours": _summary(600.0 + i), "errors": {"ours": 0.0}}}}
        raws.append(tmp_path / f"{pair}.json")
        raws[-1].write_text(json.dumps({"device": {"name": "GPU", "driver_name": "drv", "driver_info": "1"},
                                        "results": [result]}))
    out = tmp_path / "bench.md"
    best_run.main(["--merge", *map(str, raws), "--pairs", "s8-s32", "u8-u32", "--values", "uniform",
                   "--out", str(out)])
    text = out.read_text()
    assert text.startswith("## Best GEMM per type pair (issue 16)") and "Machine: GPU, driver drv 1." in text
    assert "| s8-s32 | 600.0 (590.0..610.0) | 580 |" in text and "| u8-u32 | 601.0 (591.0..611.0) | 580 |" in text


def test_the_instruction_count_needs_valgrind(monkeypatch):
    from benchmarks import compile_instructions

    monkeypatch.setattr(compile_instructions.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="compile_instructions.py: cannot run: valgrind is not on PATH"):
        compile_instructions.main([])
