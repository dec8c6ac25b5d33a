"""The NV2 matrix ops on the CPU interpreter, against numpy (the element mapping and callbacks included)."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32


@cd.func
def add(a, b):
    return a + b


@cd.kernel(workgroup_size=(32, 1, 1))
def reductions(a: cd.Buffer[f32], o: cd.Buffer[f32]):
    s = Acc[f32, 16, 32].load(a, 0, stride=32)
    s.reduce(cd.Row, cd.reduce_max, into=Acc[f32, 16, 8]).store(o, 0, stride=8)
    s.reduce(cd.Column, add, into=Acc[f32, 8, 32]).store(o, 128, stride=32)
    s.reduce(cd.Row | cd.Column, cd.reduce_min, into=Acc[f32, 16, 16]).store(o, 384, stride=16)
    s.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, 8, 16]).store(o, 640, stride=16)


def test_reductions_match_numpy():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    o = np.zeros(768, np.float32)
    reductions.launch((1, 1, 1), a, o, device="cpu")
    np.testing.assert_array_equal(o[:128].reshape(16, 8), np.repeat(a.max(axis=1, keepdims=True), 8, axis=1))
    np.testing.assert_allclose(o[128:384].reshape(8, 32), np.tile(a.sum(axis=0), (8, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o[384:640], np.full(256, a.min()))
    quads = a.reshape(8, 2, 16, 2).sum(axis=(1, 3))
    np.testing.assert_allclose(o[640:768].reshape(8, 16), quads, rtol=1e-5, atol=1e-6)


@cd.func
def position(row, col, x, scale):
    return x + f32(row * u32(100) + col) * scale


@cd.func
def larger(row, col, x, y):
    return max(x, y)


@cd.func
def scatter(row, col, x, out, table):
    out[row * u32(16) + col] = x * table[row]   # a store and a shared-array read in the callback
    return x


@cd.kernel(workgroup_size=(64, 1, 1))
def per_element(a: cd.Buffer[f32], b: cd.Buffer[f32], o: cd.Buffer[f32], side: cd.Buffer[f32], s: f32):
    table = cd.shared(f32, 16)
    if cd.local_invocation_index < 16:
        table[cd.local_invocation_index] = f32(cd.local_invocation_index)
    cd.barrier()
    x = Acc[f32, 16, 16, cd.Workgroup].load(a, 0, stride=16)
    y = Acc[f32, 16, 16, cd.Workgroup].load(b, 0, stride=16)
    x.map(position, s).map(larger, y).store(o, 0, stride=16)
    x.map(cd.partial(scatter, out=side, table=table))


@pytest.mark.parametrize("sgs", [32, 16])
def test_per_element_functions_match_numpy(sgs, monkeypatch):
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", str(sgs))
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-1, 1, (16, 16)).astype(np.float32) for _ in range(2))
    o, side = np.zeros(256, np.float32), np.zeros(256, np.float32)
    per_element.launch((1, 1, 1), a, b, o, side, 0.25, device="cpu")
    r, c = np.mgrid[0:16, 0:16]
    np.testing.assert_allclose(o.reshape(16, 16), np.maximum(a + (r * 100 + c) * 0.25, b), rtol=1e-6)
    np.testing.assert_allclose(side.reshape(16, 16), a * r, rtol=1e-6)


@cd.kernel(workgroup_size=(32, 1, 1))
def use_changes(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = Acc[f32, 16, 16].load(c, 0, stride=16)
    h = Acc[f16, 16, 16].load(a, 0, stride=16)
    out = cd.muladd(MatA[f16, 16, 16](acc), h.transpose(), Acc[f32, 16, 16](0.0))
    out = cd.muladd(MatA[f16, 16, 16](h), MatB[f16, 16, 16](h), out)
    out.store(c, 256, stride=16)


def test_use_changes_and_transpose_match_numpy():
    rng = np.random.default_rng(2)
    h = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    c = np.zeros(512, np.float32)
    c[:256] = rng.uniform(-1, 1, 256)
    acc = c[:256].reshape(16, 16).copy()
    use_changes.launch((1, 1, 1), h, c, device="cpu")
    h32 = h.astype(np.float32)
    ref = acc.astype(np.float16).astype(np.float32) @ h32.T + h32 @ h32
    np.testing.assert_allclose(c[256:].reshape(16, 16), ref, rtol=1e-3, atol=1e-3)
