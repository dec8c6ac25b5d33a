"""``ops.linear`` (y = x W^T with f16, bf16 or ggml-quantized weights) and the decoding route of
``ops.matmul``: each shape takes the kernel meant for it, and matches numpy on the CPU interpreter."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import gemv as G
from coopdsl.ops import ggml_mul_mm as MM
from coopdsl.ops import hot
from tests.conftest import compile_checked, weights


def _weights(fmt, m, k, rng):
    return weights(fmt, m, k, rng)


def _spy(monkeypatch, module, name, record=None):
    """Calls of ``module.name`` from now on: its name each time, or what ``record(*args, **kwargs)`` returns."""
    calls = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(name if record is None else record(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.parametrize("fmt", ["f16", "bf16", "q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("n", [1, 5, 40])
def test_linear_matches_numpy_and_picks_the_kernel_by_rows(fmt, n, monkeypatch):
    rng = np.random.default_rng(n)
    m, k = 48, 512
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    if fmt == "bf16" and n > G.MAX_ROWS_X:
        x = ops.to_bf16(x)
        xf = ops.from_bf16(x)
    elif n > G.MAX_ROWS_X:
        x = x.astype(np.float16)
        xf = x.astype(np.float32)
    else:
        xf = x
    decode = _spy(monkeypatch, G, "plan")
    y = ops.linear(x, w, None if fmt == "f16" else fmt, device="cpu")
    ref = xf @ wd.T
    assert y.shape == (n, m) and y.dtype == np.float32
    if n <= G.MAX_ROWS_X and G.choice(fmt, n)[0] != "f32":   # x rounded to 8 bits (ggml bound)
        assert ((y - ref) ** 2).sum() / (ref ** 2).sum() < 5e-4
        y = ops.linear(x, w, fmt, device="cpu", q8=False)
    assert np.abs(y - ref).max() <= 2e-3 * np.abs(ref).max()
    assert decode[:1] == (["plan"] if n <= G.MAX_ROWS_X else [])


def test_quantized_prefill_runs_ggmls_kernel(monkeypatch):
    rng = np.random.default_rng(3)
    w, wd = _weights("q4_0", 64, 256, rng)
    x = rng.standard_normal((20, 256)).astype(np.float16)
    used = []
    real = MM.kernel

    def spy(fmt, *args):
        used.append(fmt)
        return real(fmt, *args)

    monkeypatch.setattr(MM, "kernel", spy)
    y = ops.linear(x, w, "q4_0", device="cpu")
    assert used == ["q4_0"]
    assert np.abs(y - x.astype(np.float32) @ wd.T).max() <= 1e-3 * np.abs(y).max()


LINEAR = sys.modules["coopdsl.ops.linear"]  # (ops.linear is the function)


@pytest.mark.parametrize(("n", "want"), [(32, ("m", 4)), (128, ("m", 4)), (200, ("l", 4)), (512, ("l", 2)),
                                         (2048, ("l", 1))])
def test_prefill_tile_and_split_fill_one_wave(n, want):
    """The choices measured fastest on an H100 (benchmarks/results/linear_prefill-h100-2026-11-27-b.md)."""
    assert LINEAR.prefill_choice("q4_0", 4096, n, 14336, 132) == want


def test_prefill_split_leaves_no_slice_of_k_empty():
    # 1 tile: 8 slices wanted; slices of K are multiples of 256, so 1024 takes 4 (3 x 256 < 1024)
    assert LINEAR.prefill_choice("q8_0", 128, 20, 1024, 132) == ("m", 4)
    assert LINEAR.prefill_choice("q8_0", 128, 20, 256, 132) == ("m", 1)
    assert MM.k_slice(14336, 3) == 4864 and MM.k_slice(14336, 1) == 14336


def test_ggml_own_tile_choice_is_ported():
    """ggml_vk_guess_matmul_pipeline / ggml_vk_guess_split_k on 132 SMs (what the benchmark compares with)."""
    assert MM.guess_tile("q4_0", 4096, 512, 132) == "m" and MM.guess_split_k("q4_0", 4096, 512, 14336, "m", 132) == 1
    assert MM.guess_tile("q4_0", 4096, 32, 132) == "s"
    assert MM.guess_tile("q4_0", 4096, 2048, 132) == "l"
    assert MM.guess_tile("f16", 1024, 512, 132) == "m" and MM.guess_split_k("f16", 1024, 512, 4096, "m", 132) == 4
    assert MM.guess_split_k("f16", 2560, 512, 4096, "m", 132) == 3      # 80 tiles: more than half, under 2/3
    assert MM.guess_split_k("q4_K", 4096, 128, 14336, "m", 132) == 4
    assert MM.guess_split_k("q4_K", 4096, 128, 1024, "m", 132) == 1     # K < 2048: no split


@pytest.mark.parametrize("fmt", ["f16", "bf16", "q4_0", "q8_0", "q4_K"])
def test_prefill_with_k_split_adds_the_slices(fmt, monkeypatch):
    rng = np.random.default_rng(7)
    m, n, k = 128, 20, 1024
    w, wd = _weights(fmt, m, k, rng)
    x = rng.standard_normal((n, k)).astype(np.float32)
    xs = ops.to_bf16(x) if fmt == "bf16" else x.astype(np.float16)
    xf = ops.from_bf16(xs) if fmt == "bf16" else xs.astype(np.float32)
    reduced = _spy(monkeypatch, MM, "reduce_kernel")
    y = ops.linear(xs, w, fmt, device="cpu")
    assert reduced == ["reduce_kernel"]            # K in 4 slices (above), then their sum
    ref = xf @ wd.T
    assert np.abs(y - ref).max() <= 1e-3 * np.abs(ref).max()


def test_split_k_partial_products_start_16_byte_aligned():
    """N x M = 37 x 70 is not a multiple of 4 floats: each slice's partial product still starts on 16 bytes, as
    the kernel's tensor stores need (the interpreter warns otherwise, as NVIDIA's driver would misplace them)."""
    import warnings

    rng = np.random.default_rng(11)
    w, wd = _weights("q4_0", 70, 512, rng)
    x = rng.standard_normal((37, 512)).astype(np.float16)
    assert LINEAR.prefill_choice("q4_0", 70, 37, 512, 132) == ("m", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ops.linear(x, w, "q4_0", device="cpu")
    assert np.abs(y - x.astype(np.float32) @ wd.T).max() <= 1e-3 * np.abs(y).max()


def test_prefill_reads_x_in_whole_tiles(monkeypatch):
    """x's rows rounded up to the tile's width (zeros; the results of those rows are not stored)."""
    rng = np.random.default_rng(9)
    w, wd = _weights("q8_0", 40, 256, rng)
    x = rng.standard_normal((20, 256)).astype(np.float16)
    rows = _spy(monkeypatch, MM, "dispatch", lambda *args, **kwargs: kwargs["rows_b"])
    y = ops.linear(x, w, "q8_0", device="cpu")
    assert rows == [LINEAR.TILES["m"][2]] and y.shape == (20, 40)
    assert np.abs(y - x.astype(np.float32) @ wd.T).max() <= 1e-3 * np.abs(y).max()


@pytest.mark.parametrize("wide", [True, False])
def test_the_copy_that_pads_a_resident_x_validates_and_copies_n_values(wide):
    t = "uint" if wide else "ushort"
    compile_checked(LINEAR.pad_kernel(wide), rf"OpLoad %{t}", r"OpStore %\w+ %\w+", r"OpULessThan %bool")
    dt = np.uint32 if wide else np.uint16
    src = np.arange(1, 301, dtype=dt)
    dst = np.zeros(512, dt)
    LINEAR.pad_kernel(wide).launch((2, 1, 1), src, dst, n=300, device="cpu")
    assert (dst[:300] == src).all() and not dst[300:].any()


def test_the_split_k_reduce_validates_and_adds_the_slices():
    compile_checked(MM.reduce_kernel(), r"OpFAdd %float", r"OpLoopMerge")
    part = np.arange(3 * 70, dtype=np.float32)
    d = np.zeros(70, np.float32)
    MM.reduce_kernel().launch(MM.flat_grid(70), part, d, ne=70, k_num=3, stride=70, device="cpu")
    assert (d == part.reshape(3, 70).sum(axis=0)).all()
    MM.reduce_kernel().launch(MM.flat_grid(69), part, d, ne=69, k_num=3, stride=70, device="cpu")
    assert (d[:69] == part.reshape(3, 70)[:, :69].sum(axis=0)).all()
    assert MM.flat_grid(70) == (1, 1, 1) and MM.flat_grid(65535 * 256 + 1) == (65535, 2, 1)


@pytest.mark.parametrize(("n", "route"), [(40, "mul_mm"), (LINEAR.FLOAT_MUL_MM_ROWS + 1, "matmul")])
def test_f16_prefill_takes_mul_mm_up_to_its_rows_then_matmul(n, route, monkeypatch):
    from coopdsl.ops import gemm

    rng = np.random.default_rng(8)
    w, wd = _weights("f16", 48, 128, rng)
    x = rng.standard_normal((n, 128)).astype(np.float16)
    mm = _spy(monkeypatch, MM, "dispatch")
    matmul = _spy(monkeypatch, gemm, "matmul")
    y = ops.linear(x, w, device="cpu")
    assert (mm, matmul) == ((["dispatch"], []) if route == "mul_mm" else ([], ["matmul"]))
    ref = x.astype(np.float32) @ wd.T
    assert np.abs(y - ref).max() <= 1e-3 * np.abs(ref).max()


@pytest.mark.parametrize("n", [2, 20, LINEAR.FLOAT_MUL_MM_ROWS + 1])
@pytest.mark.parametrize("x_kind", ["float32", "float16", "bits"])
def test_bf16_weights_take_every_x_type_at_every_row_count(n, x_kind, monkeypatch):
    """numpy x of float32, float16 or bf16 bits with bf16 weights, through each kernel: past 256 rows float x was
    a ValueError from matmul ('matmul(bf16): a must be uint16'), and bits at 1-16 rows were refused (found by a
    check written from the docs alone)."""
    from coopdsl.ops import gemm

    rng = np.random.default_rng(9)
    w = ops.to_bf16(rng.standard_normal((40, 64)).astype(np.float32))
    x = rng.standard_normal((n, 64)).astype(np.float32)
    xa = ops.to_bf16(x) if x_kind == "bits" else x.astype(x_kind)
    matmul = _spy(monkeypatch, gemm, "matmul")
    y = ops.linear(xa, w, "bf16", device="cpu")
    assert bool(matmul) == (n > LINEAR.FLOAT_MUL_MM_ROWS)
    xr = ops.from_bf16(xa) if x_kind == "bits" else xa
    ref = xr.astype(np.float64) @ ops.from_bf16(w).astype(np.float64).T
    # past 16 rows the kernels read x as bf16 (float x rounded: about 2e-3); the decode kernels as it is
    tol = 1e-5 if x_kind == "bits" or n <= 16 else 5e-3
    assert np.abs(y - ref).max() <= tol * np.abs(ref).max()


def test_ml_dtypes_bfloat16_weights_need_no_fmt():
    """ml_dtypes' bfloat16 weights say their format, as for ops.matmul ('give fmt= for uint16 weights' before)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(3)
    w = rng.standard_normal((24, 64)).astype(ml_dtypes.bfloat16)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    y = ops.linear(x, w, device="cpu")
    np.testing.assert_array_equal(y, ops.linear(x, w.view(np.uint16), "bf16", device="cpu"))
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    assert np.abs(y - ref).max() <= 1e-3 * np.abs(ref).max()    # (3 rows: cooperative matrices, x rounded to f16)


def test_no_rows_give_an_empty_result():
    """As ops.matmul and torch do (ops.linear said 'x has 0 rows; the decode kernels take 1 to 16')."""
    w, _ = _weights("q4_0", 8, 64, np.random.default_rng(0))
    y = ops.linear(np.zeros((0, 64), np.float32), w, "q4_0", device="cpu")
    assert y.shape == (0, 8) and y.dtype == np.float32
    out = np.zeros((0, 8), np.float32)
    assert ops.linear(np.zeros((0, 64), np.float32), w, "q4_0", out=out, device="cpu") is out
    with pytest.raises(ValueError, match="linear: "):
        ops.linear(np.zeros((0, 60), np.float32), w, "q4_0", device="cpu")


@pytest.mark.parametrize("fmt", ["f16", "bf16", "q4_0", "q8_0", "q4_K"])
@pytest.mark.parametrize("n", [3, 20])
def test_k_zero_gives_zeros(fmt, n):
    """A sum over nothing: zeros, as ops.matmul and torch give (past 16 rows this was a ZeroDivisionError in the
    prefill dispatch, and a launch-grid error from the quantized decode kernels)."""
    w = np.zeros((40, 0), np.float16 if fmt == "f16" else np.uint16 if fmt == "bf16" else np.uint8)
    y = ops.linear(np.ones((n, 0), np.float32), w, fmt, device="cpu")
    assert y.shape == (n, 40) and y.dtype == np.float32 and not y.any()
    out = np.full((n, 40), 7.0, np.float32)
    assert ops.linear(np.ones((n, 0), np.float32), w, fmt, out=out, device="cpu") is out and not out.any()


def test_k_zero_zeroes_a_resident_out(device):
    """Any Vulkan device (lavapipe in CI): nothing is launched, the resident out is written with zeros."""
    from coopdsl import runtime

    out = runtime.array(np.full((3, 8), 7.0, np.float32), device=device)
    assert ops.linear(np.ones((3, 0), np.float32), np.zeros((8, 0), np.uint8), "q4_0", out=out) is out
    assert not out.numpy().any()


@pytest.mark.parametrize(("fmt", "want"), [("q4_0", "float16"), ("bf16", r"uint16 \(bf16 bit patterns\)")])
def test_a_resident_x_past_16_rows_must_be_of_the_kernel_s_type(fmt, want, device):
    """Checked before anything is launched (any Vulkan device: lavapipe in CI)."""
    from coopdsl import runtime

    xr = runtime.array(np.zeros((20, 256), np.float32), device=device)
    w, _ = _weights(fmt, 8, 256, np.random.default_rng(0))
    with pytest.raises(ValueError, match=rf"linear: a resident x for {fmt} weights and N > 16 must be {want}, "
                                         "got float32"):
        ops.linear(xr, w, fmt, device=device)


def test_prefill_launches_take_ggml_s_own_tiles_too():
    """A tile given as its five spec values (ggml's small tile, which ops.linear does not pick) gives the product."""
    rng = np.random.default_rng(10)
    w, wd = _weights("q4_0", 40, 256, rng)
    x = rng.standard_normal((20, 256)).astype(np.float16)
    y = np.zeros((20, 40), np.float32)
    launches = LINEAR.prefill_launches(x, w, y, "q4_0", device="cpu", tile=MM.TILES["quant"]["s"])
    assert launches[0][3]["BM"] == 32 and launches[0][3]["BN"] == 64
    hot.run(launches)
    assert np.abs(y - x.astype(np.float32) @ wd.T).max() <= 1e-3 * np.abs(y).max()


def test_prefill_tiles_it_does_not_have_are_named():
    x = np.zeros((20, 256), np.float16)
    w = np.zeros((8, 256), np.float16)
    with pytest.raises(ValueError, match="linear: tile 's'; expected one of l, m"):
        LINEAR.prefill_launches(x, w, np.zeros((20, 8), np.float32), "f16", tile="s")
    with pytest.raises(ValueError, match="linear: split_k=0; expected a count of slices of K, 1 or more"):
        LINEAR.prefill_launches(x, w, np.zeros((20, 8), np.float32), "f16", split_k=0)
    with pytest.raises(ValueError, match=r"linear: K=256 does not split into 3 slices of 256"):
        LINEAR.prefill_launches(x, w, np.zeros((20, 8), np.float32), "f16", split_k=3)


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_matmul_with_a_few_rows_and_transposed_b_reads_the_weights_once(kind, monkeypatch):
    rng = np.random.default_rng(4)
    w, wd = _weights(kind, 40, 256, rng)
    x = rng.standard_normal((3, 256)).astype(np.float32)
    a = x.astype(np.float16) if kind == "f16" else ops.to_bf16(x)
    af = a.astype(np.float32) if kind == "f16" else ops.from_bf16(a)
    decode = _spy(monkeypatch, G, "plan")
    c = ops.matmul(a, w, kind=kind, transpose_b=True, device="cpu")
    assert decode == ["plan"]
    assert np.abs(c - af @ wd.T).max() <= 1e-4 * np.abs(c).max()


def test_weights_it_does_not_take_are_named():
    x = np.zeros((1, 64), np.float32)
    with pytest.raises(ValueError, match="give fmt= for uint8 weights"):
        ops.linear(x, np.zeros((4, 36), np.uint8))
    with pytest.raises(ValueError, match="unknown weight format 'q6_K'"):
        ops.linear(x, np.zeros((4, 36), np.uint8), "q6_K")
    with pytest.raises(ValueError, match="q8_0 weights are uint8 arrays, got float16"):
        ops.linear(x, np.zeros((4, 64), np.float16), "q8_0")
    with pytest.raises(ValueError, match=r"linear: w uint8 \(4, 30\) has 30 bytes a row, but a row of K = 64 q4_0 "
                                         r"values \(x's K\) has 36"):
        ops.linear(np.zeros((20, 64), np.float16), np.zeros((4, 30), np.uint8), "q4_0", device="cpu")
    with pytest.raises(ValueError, match=r"linear: w uint8 \(4, 40\) has 40 bytes"):          # (the decode path)
        ops.linear(np.zeros((2, 64), np.float16), np.zeros((4, 40), np.uint8), "q4_0", device="cpu")
    # f16 / bf16 weights: said in values, not bytes (a docs-only tester's note), on the three paths (past 256 rows
    # ops.matmul's error named matmul)
    for rows in (2, 20, 300):
        with pytest.raises(ValueError, match=r"linear: w float16 \(64, 256\) has K = 256 f16 values a row, but x has "
                                             r"K = 512$"):
            ops.linear(np.zeros((rows, 512), np.float16), np.zeros((64, 256), np.float16), device="cpu")
        with pytest.raises(ValueError, match=r"linear: w uint16 \(64, 256\) has K = 256 bf16 values a row, but x has "
                                             r"K = 512$"):
            ops.linear(np.zeros((rows, 512), np.float32), np.zeros((64, 256), np.uint16), "bf16", device="cpu")
    with pytest.raises(ValueError, match=r"linear: float32 weights are not a format of the op: float16 "
                                         r"\(w.astype\(np.float16\)\)"):
        ops.linear(x, np.zeros((4, 64), np.float32))


def test_the_docs_example_runs():
    """docs/ops.md, "Linear layers": its example runs as written (on the interpreter) and its assert holds."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    section = text[text.index("## Linear layers"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "ops.linear" in code
    exec(compile(code, "docs/ops.md", "exec"), {})


def _fake_prefill_ms(launches, dev, calls):
    """A candidate's time from its mul_mm_cm2 launch: the large tile with K in 3 slices is the fastest."""
    values = next(kw for _, _, _, kw in launches if "BN" in kw)
    split = -(-values["K"] // values["k_split"])
    return 1.0 if (values["BN"], split) == (256, 3) else 2.0 + split / 100


@pytest.fixture
def prefill_gpu(monkeypatch, pretend_gpu):
    """ops.linear's prefill planning on a pretend GPU: its launches are built, not run, and timed by
    _fake_prefill_ms."""
    dev, path = pretend_gpu
    monkeypatch.setattr(G, "gpu_of", lambda device, arrays: dev)
    monkeypatch.setattr(G, "resident", lambda arrays, dev: arrays)
    monkeypatch.setattr(G, "stream_ms", _fake_prefill_ms)
    monkeypatch.setattr(LINEAR.caps, "shader_cores", lambda d: 132)   # (an H100's, which the device would say)
    return path


def test_prefill_tuning_times_each_tile_and_split_once_and_later_calls_read_it(prefill_gpu):
    import json

    w, _ = _weights("q4_0", 4096, 2048, np.random.default_rng(0))
    x, y = np.zeros((40, 2048), np.float16), np.zeros((40, 4096), np.float32)

    def picked(**kw):
        values = next(v for *_, v in LINEAR.mul_mm_launches(x, w, y, "q4_0", None, **kw) if "BN" in v)
        return values["BN"], -(-2048 // values["k_split"])

    assert picked() == (128, 4)                            # nothing stored: prefill_choice's
    assert picked(tune=True) == (256, 3)
    entry = next(iter(json.loads(prefill_gpu.read_text())["entries"].values()))
    assert entry["tile"] == ["l", 3] and entry["ms"] == 1.0
    assert len(entry["times_ms"]) == 1 + len(LINEAR.prefill_candidates(2048)) == 1 + 2 * 5   # (6 x 512 > 2048 + 512)
    LINEAR._TUNED.reset()                                  # a new process: read back from the file
    assert picked() == (256, 3)
    # 1024 values of K: 2 slices of 512 or 4 of 256; 3 slices of 512 would leave the last empty, 6 or 8 of 256 too
    assert LINEAR.prefill_candidates(1024) == [("l", 1), ("l", 2), ("l", 4), ("m", 1), ("m", 2), ("m", 4)]


def test_prefill_tuning_does_nothing_on_the_interpreter(monkeypatch, tmp_path):
    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "autotune.json"))
    rng = np.random.default_rng(2)
    w, wd = _weights("q8_0", 24, 256, rng)
    x = rng.standard_normal((20, 256)).astype(np.float16)
    y = ops.linear(x, w, "q8_0", device="cpu", tune=True)
    assert np.abs(y - x.astype(np.float32) @ wd.T).max() <= 1e-3 * np.abs(y).max()
    assert not (tmp_path / "autotune.json").exists()


def test_the_prefill_autotune_docs_example_runs(capsys):
    """docs/autotune.md, "Tuning the prefill products": its example runs and prints what its comments say."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "autotune.md").read_text()
    section = text[text.index("## Tuning the prefill products"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "docs/autotune.md", "exec"), {})
    said = capsys.readouterr().out.split("\n")
    assert f"# {said[0]}:" in code and f"# {said[1]} tiles and splits" in code
    assert said[1] == str(len(LINEAR.prefill_candidates(14336)))


def test_no_weight_rows_strided_weights_and_a_strided_out():
    # found by a check written from the docs alone: zero rows of W reached the launch ("grid must be 1 to 3
    # positive ints"), strided f16 weights past 16 rows and a strided out named internal buffers ('data_a', 'y')
    from coopdsl import ops

    x = np.ones((3, 64), np.float16)
    assert ops.linear(x, np.zeros((0, 64), np.float16), "f16", device="cpu").shape == (3, 0)
    assert ops.linear(np.ones((20, 64), np.float16), np.zeros((0, 64), np.float16), "f16",
                      device="cpu").shape == (20, 0)
    w = (np.arange(32 * 128, dtype=np.float32).reshape(32, 128) % 7).astype(np.float16)[:, ::2]
    xs = (np.arange(20 * 64, dtype=np.float32).reshape(20, 64) % 5).astype(np.float16)
    np.testing.assert_allclose(ops.linear(xs, w, "f16", device="cpu"),
                               xs.astype(np.float32) @ w.astype(np.float32).T, rtol=2e-3)
    with pytest.raises(ValueError, match="linear: out must be C-contiguous"):
        ops.linear(x, w, "f16", out=np.zeros((3, 64), np.float32)[:, ::2], device="cpu")
    with pytest.raises(ValueError, match="matmul: out must be C-contiguous"):
        ops.matmul(np.ones((16, 16), np.float16), np.ones((16, 16), np.float16),
                   out=np.zeros((16, 32), np.float32)[:, ::2], device="cpu")


@pytest.mark.parametrize("n", [16, 17, 40])
@pytest.mark.parametrize("fmt,dtype", [("q4_0", np.float64), ("q8_0", np.int32), ("f16", np.uint16),
                                       ("q4_0", np.bool_), ("f16", np.complex64)])
def test_x_of_another_dtype_is_refused_at_every_row_count(fmt, dtype, n):
    """Past 16 rows numpy x was converted to float16 whatever its dtype: bf16 bit patterns given with f16
    weights were read as integers (found by a check written from the docs alone). One rule now for every row
    count: float32 or float16 (and bf16 with bf16 weights)."""
    w, _ = weights(fmt, 32, 64, np.random.default_rng(0))
    with pytest.raises(ValueError, match=rf"linear: x must be float32 or float16, got {np.dtype(dtype)}"):
        ops.linear(np.ones((n, 64), dtype), w, fmt, device="cpu")


def test_bf16_x_goes_with_bf16_weights_past_16_rows():
    rng = np.random.default_rng(1)
    w, wf = weights("bf16", 32, 64, rng)
    x = rng.standard_normal((17, 64)).astype(np.float32)
    got = ops.linear(ops.to_bf16(x), w, "bf16", device="cpu")
    want = ops.from_bf16(ops.to_bf16(x)).astype(np.float64) @ wf.T
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)


def test_x_past_f16s_range_becomes_inf_without_a_numpy_warning():
    """Past 16 rows numpy x is converted to the weights' f16 once; a value past 65504 becomes inf, as docs/ops.md
    says, and numpy's overflow warning is not raised from inside the op."""
    import warnings

    x = np.full((17, 64), 1e5, np.float32)
    w = np.ones((8, 64), np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = ops.linear(x, w, device="cpu")
    assert np.isinf(y).all()
