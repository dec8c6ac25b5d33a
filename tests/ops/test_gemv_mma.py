"""The decode products on cooperative matrices (coopdsl/ops/gemv_mma.py) against numpy on the CPU interpreter:
every weight format, 8- and 16-column B matrices, each depth and split; W of a row count no tile divides; where
gemv picks them and where it does not; their SPIR-V; the errors for what they do not take."""

from __future__ import annotations

import re
import types

import numpy as np
import pytest

from coopdsl.ops import gemv as G
from coopdsl.ops import gemv_mma as GM
from tests.conftest import compile_checked, weights


def _run(fmt, n, m, k, depth, split, rng, x_f16=False):
    w, wd = weights(fmt, m, k, rng, scale=0.1)
    x = rng.standard_normal((n, k)).astype(np.float16 if x_f16 else np.float32)
    y = np.full((n, m), np.nan, np.float32)
    launches = G._mma_launches(G.word_view(w, fmt), x.reshape(-1, 4), y, fmt, n, m, k, x_f16, depth, split, "cpu")
    for kern, grid, args, kw in launches:
        kern.launch(grid, *args, **kw)
    return y, x.astype(np.float16).astype(np.float64) @ wd.T


@pytest.mark.parametrize("fmt", GM.FORMATS)
@pytest.mark.parametrize("n,depth,split", [(2, 1, 2), (8, 2, 4), (11, 4, 8), (16, 2, 2)])
def test_matches_numpy_on_the_interpreter(fmt, n, depth, split):
    """x rounded to f16 (the reference rounds it too), W's values decoded to f16 (within f16's 2^-11 a value)."""
    rng = np.random.default_rng(n * 10 + depth)
    m, k = 37, 512 if fmt == "q4_K" else 448            # 37: the last tile starts at row 21 (rows 21-31 twice)
    y, ref = _run(fmt, n, m, k, depth, split, rng, x_f16=n % 2 == 1)
    assert np.isfinite(y).all()
    assert np.abs(y - ref).max() <= 2e-3 * np.abs(ref).max()


def test_sixteen_rows_of_w_and_one_step():
    rng = np.random.default_rng(3)
    y, ref = _run("q4_0", 5, 16, 64, 2, 4, rng)
    assert np.abs(y - ref).max() <= 2e-3 * np.abs(ref).max()


def test_gemv_picks_them_where_they_take_the_problem():
    fmt = "q4_K"
    nx = G.MMA[fmt][0]
    assert G.choice(fmt, nx, None, 4096, 4096) == ("mma", *G.MMA[fmt][1:])
    assert G.choice(fmt, nx - 1, None, 4096, 4096)[0] != "mma"       # fewer rows: the plain kernels
    assert G.choice(fmt, nx, None, 15, 4096)[0] != "mma"             # fewer than 16 rows of W
    assert G.choice("q8_0", 16, None, 4096, 32 * 67)[0] != "mma"     # K not a multiple of 64
    assert G.choice("q4_0", 16, None, 4096, 4096)[0] == "prew"      # q4_0: its blocks as words, faster on an H100
    assert G.choice(fmt, nx, False, 4096, 4096)[0] == "f32"          # x as given: never rounded to f16
    assert G.choice(fmt, nx, True, 4096, 4096)[0] in ("pre", "prew", "inline")
    assert G.choice("bf16", 16, None, 4096, 4096) == ("mma", *G.MMA["bf16"][1:])   # bf16 rounded to f16 as staged
    assert G.choice("bf16", 2, None, 4096, 4096)[0] == "f32"


def test_a_device_without_the_matrices_keeps_the_plain_kernels():
    def dev(configs):
        return types.SimpleNamespace(info=types.SimpleNamespace(coopmat_configs=configs))

    offer = {"M": 16, "N": 8, "K": 16, "A": "f16", "B": "f16", "C": "f32", "Result": "f32", "scope": "Subgroup"}
    assert GM.device_takes(dev([offer]), 8) and not GM.device_takes(dev([offer]), 16)
    assert G.choice("f16", 16, None, 4096, 4096, dev([offer]))[0] == "f32"
    assert G.choice("f16", 8, None, 4096, 4096, dev([offer]))[0] == "mma"
    assert all(c[0] != "mma" for c in G.candidates("f16", 8, None, 4096, 4096, dev([])))
    assert {c for c in G.candidates("f16", 8, None, 4096, 4096) if c[0] == "mma"} == \
        {("mma", d, s) for d in GM.DEPTHS for s in GM.SPLITS}


def test_gemv_and_linear_run_them_by_default():
    from coopdsl import ops

    rng = np.random.default_rng(5)
    w, wd = weights("f16", 40, 256, rng)
    x = rng.standard_normal((12, 256)).astype(np.float32)
    launches, _ = G.plan(w, x, "f16", device="cpu")
    assert [k.__name__ for k, *_ in launches] == ["gemv_mma_x", f"gemv_mma_f16_x16_s{G.MMA['f16'][2]}_d"
                                                  f"{G.MMA['f16'][1]}"]
    y = ops.linear(x, w, device="cpu")
    ref = x.astype(np.float16).astype(np.float64) @ wd.T
    assert np.abs(y - ref).max() <= 2e-3 * np.abs(ref).max()
    # bf16 weights (5 to 16 rows took 2.1-4.3x torch's time on the plain kernel): the same, bit for bit, as the
    # weights' values given as f16 where they are f16 values
    wb = ops.to_bf16(wd)
    launches, _ = G.plan(wb, x[:5], "bf16", device="cpu")
    assert [k.__name__ for k, *_ in launches] == ["gemv_mma_x", f"gemv_mma_bf16_x8_s{G.MMA['bf16'][2]}_d"
                                                  f"{G.MMA['bf16'][1]}"]
    yb = ops.linear(x[:5], wb, "bf16", device="cpu")
    assert np.array_equal(yb, ops.linear(x[:5], ops.from_bf16(wb).astype(np.float16), device="cpu"))


@pytest.mark.parametrize("fmt", GM.FORMATS)
def test_each_kernel_validates_and_multiplies_cooperative_matrices(fmt):
    compile_checked(GM.kernel(fmt, 8, 4, 2), r"OpCooperativeMatrixMulAddKHR", r"OpCooperativeMatrixLoadKHR",
                    r"OpCooperativeMatrixStoreKHR", r"OpControlBarrier %uint_3 %uint_3")
    text = compile_checked(GM.kernel(fmt, 16, 2, 4),
                           r"OpTypeCooperativeMatrixKHR %half %uint_3 %uint_16 %uint_16 %uint_1")
    if fmt not in ("f16", "bf16"):    # the block decoders are functions of the module
        assert re.search(r"OpFunctionCall %\w+ %block_" + fmt, text)
    # bf16: each pair of values widened (a shift, a mask), rounded to f16 and packed again as it is staged
    if fmt == "bf16":
        for pattern in (r"OpShiftLeftLogical %uint", r"OpBitwiseAnd %uint %\S+ %uint_4294901760",
                        r"OpBitcast %uint %\S+", r"OpFConvert %half"):
            assert re.search(pattern, text), pattern
    assert bool(re.search(r"OpFunctionCall %v4uint %bf16_as_f16", text)) == (fmt == "bf16")
    compile_checked(GM.x_kernel(True), r"OpFConvert|OpStore")


def test_what_they_do_not_take_is_named():
    with pytest.raises(ValueError, match="gemv_mma: weights in 'q6_K'; these kernels take f16, bf16, q4_0, q8_0, "
                                         "q4_K"):
        GM.kernel("q6_K", 8, 4)
    with pytest.raises(ValueError, match=r"np_=12, split=16, depth=2; np_ 8 or 16, split one of \(2, 4, 8\)"):
        GM.kernel("f16", 12, 16)
    assert not GM.takes("q4_0", 15, 4096) and not GM.takes("q4_0", 16, 4064) and GM.takes("q4_0", 16, 4096)
