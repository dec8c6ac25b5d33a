"""``ops.linear`` (y = x W^T with f16, bf16 or ggml-quantized weights) and the decoding route of
``ops.matmul``: each shape takes the kernel meant for it, and matches numpy on the CPU interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.ops import gemv as G
from coopdsl.ops import ggml_mul_mm as MM
from tests.conftest import weights


def _weights(fmt, m, k, rng):
    return weights(fmt, m, k, rng)


def _spy(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(name)
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
    with pytest.raises(ValueError, match=r"not M x 64 q4_0 blocks \(36 bytes a row"):
        ops.linear(np.zeros((20, 64), np.float16), np.zeros((4, 30), np.uint8), "q4_0", device="cpu")


def test_the_docs_example_runs():
    """docs/ops.md, "Linear layers": its example runs as written (on the interpreter) and its assert holds."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    section = text[text.index("## Linear layers"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "ops.linear" in code
    exec(compile(code, "docs/ops.md", "exec"), {})
