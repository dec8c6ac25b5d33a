"""ops.attention(tune=True): the default tiles and the candidates are timed once per problem and device, the fastest
is kept in the autotune cache file, and later calls read it; nothing is tuned on the interpreter."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from coopdsl import autotune, ops
from coopdsl.ops import attention_nv2 as nv2
from coopdsl.ops import attention_tune as AT
from coopdsl.ops import device_caps as caps
from coopdsl.ops import flash_attention as FA
from coopdsl.ops import op_tune

TIMES = {None: 2.0, (128, 128, 256): 1.5, (128, 64, 256): 2.5, (64, 128, 256): 3.0, (128, 64, 128): 1.75}


class _Kernel:
    def __init__(self, tiles):
        self.tiles = tiles

    def bench(self, grid, *args, warmup=0, repeat=0, **kwargs):
        if self.tiles == (64, 64, 128):
            raise RuntimeError("the device cannot run these tiles")
        return types.SimpleNamespace(median_ms=TIMES[self.tiles], times_ms=[TIMES[self.tiles]] * max(repeat, 1))


@pytest.fixture
def fake_gpu(monkeypatch, pretend_gpu):
    """ops.attention's NV2 path on a pretend GPU: launches are recorded, 'timed' from TIMES."""
    dev, path = pretend_gpu
    runs = []

    def run(q, k, v, dims, *, tiles=None, out=None, **kw):
        runs.append(tiles)
        if nv2._recording is not None:
            nv2._recording.append((_Kernel(tiles), (1, 1, 1), (), {}))
        return out

    monkeypatch.setattr(FA, "_resolve_device", lambda device, arrays: dev)
    monkeypatch.setattr(caps, "has_nv2", lambda d: True)
    monkeypatch.setattr(nv2, "run", run)
    return dev, runs, path


def _qkv(rng, hq=2, s=64, d=64):
    return tuple(rng.standard_normal((hq, s, d)).astype(np.float16) for _ in range(3))


def test_the_first_tuned_call_times_each_candidate_and_keeps_the_fastest(fake_gpu):
    dev, runs, path = fake_gpu
    q, k, v = _qkv(np.random.default_rng(0))
    ops.attention(q, k, v, causal=True, tune=True)
    assert runs == [None, (128, 128, 256), (128, 64, 256), (64, 128, 256), (64, 64, 128), (128, 64, 128),
                    (128, 128, 256)]
    entry = next(iter(json.loads(path.read_text())["entries"].values()))
    assert entry["tiles"] == [128, 128, 256] and entry["ms"] == 1.5 and np.isnan(entry["times_ms"]["64x64x128"])
    runs.clear()
    ops.attention(q, k, v, causal=True)                     # later calls use the choice without timing
    assert runs == [(128, 128, 256)]
    op_tune.reset_all()                                     # ... in the next process too (read from the file)
    runs.clear()
    ops.attention(q, k, v, causal=True, tune=True)
    assert runs == [(128, 128, 256)]


def test_each_problem_is_tuned_on_its_own_and_the_default_tiles_can_win(fake_gpu, monkeypatch):
    dev, runs, path = fake_gpu
    q, k, v = _qkv(np.random.default_rng(1))
    ops.attention(q, k, v, causal=False)                    # untuned and nothing stored: the default tiles
    assert runs == [None]
    monkeypatch.setitem(TIMES, None, 1.0)
    runs.clear()
    ops.attention(q, k, v, causal=False, tune=True)
    assert runs[-1] is None and len(runs) == 2 + len(AT.CANDIDATES)
    assert AT.lookup(AT.problem((2, 64, 64, 2, 64), causal=False, window=0, masked=False, acc="f32",
                                f16_out=False), dev) == (True, None)


def test_nothing_is_tuned_on_the_interpreter(pretend_gpu):
    _, path = pretend_gpu
    rng = np.random.default_rng(2)
    q, k, v = _qkv(rng, hq=1, s=32, d=16)
    out = ops.attention(q, k, v, causal=True, tune=True, device="cpu")
    ref = FA.reference(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), causal=True)
    assert np.abs(out - ref).max() < 2e-2
    assert not path.exists()


class _DecodeKernel:
    def __init__(self, chunks, how=None, times=None):
        self.chunks, self.how = chunks, how
        self.times = times or {(None, None): 2.0, (32, None): 1.0}

    def bench(self, grid, *args, warmup=0, repeat=0, **kwargs):
        t = self.times.get((self.chunks, self.how), 3.0)
        return types.SimpleNamespace(median_ms=t, times_ms=[t] * max(repeat, 1))


@pytest.fixture
def fake_decode_gpu(monkeypatch, pretend_gpu):
    """ops.attention's decode path on a pretend GPU with 66 SMs: plans are recorded, 'timed' by their chunks."""
    from coopdsl.ops import attention_decode as AD

    dev, path = pretend_gpu
    runs = []
    monkeypatch.setattr(FA, "_resolve_device", lambda device, arrays: dev)
    monkeypatch.setattr(FA, "default_impl", lambda dims, d: "decode")
    monkeypatch.setattr(caps, "shader_cores", lambda d: 66)
    monkeypatch.setattr(AD, "plan", lambda *a, chunks=None, how=None, **kw: [(_DecodeKernel(chunks, how), (1, 1, 1),
                                                                               (), {})])
    monkeypatch.setattr(AD, "run", lambda *a, chunks=None, out=None, how=None, **kw:
                        runs.append(chunks if how is None else (chunks, how)) or out)
    return runs, path


def test_the_decode_kernels_chunk_count_is_tuned_and_kept(fake_decode_gpu):
    """One token, 32 query heads on 8 K/V heads, 16384 keys, 66 cores: the default is 2 workgroups a core,
    round(2 * 66 / 8) = 16 chunks a head; the candidates are a quarter to 4 times it; the fastest (32) is kept
    in the autotune cache and read back by a later call without tune."""
    from coopdsl.ops import attention_decode as AD

    runs, path = fake_decode_gpu
    rng = np.random.default_rng(0)
    q = rng.standard_normal((32, 1, 64)).astype(np.float16)
    k = rng.standard_normal((8, 16384, 64)).astype(np.float16)
    default = AD.default_chunks(8, 16384, 66)
    assert default == 16 and AT.decode_candidates(default) == [(4,), (8,), (32,), (64,)]
    knobs = AD.variants((32, 1, 64, 8, 16384))      # D 64: split 4 and loads 2 by default, 4 rows fused
    assert knobs == ["lanes:split1", "lanes:split2", "lanes:loads1", "lanes:loads3", "lanes:fused0"]
    ops.attention(q, k, k)                          # nothing stored, no tune: the default
    assert runs == [None]
    ops.attention(q, k, k, tune=True)
    entry = next(iter(json.loads(path.read_text())["entries"].values()))
    assert entry["chunks"] == [32] and entry["times_ms"] == {"default": 2.0, "4": 3.0, "8": 3.0, "32": 1.0,
                                                              "64": 3.0, **{f"16x{k}": 3.0 for k in knobs}}
    assert runs == [None, 32]
    op_tune.reset_all()
    ops.attention(q, k, k)                          # read back, as a new process would
    assert runs == [None, 32, 32]


def _tuned_one_token(monkeypatch, times):
    """One token of 32 query heads on 8 K/V heads, D 64, 16384 keys, tuned with the decode plans 'timed' by
    ``times`` ((chunks, kernel name) -> ms; 3 ms for the others); returns q and k (k is also v)."""
    from coopdsl.ops import attention_decode as AD

    monkeypatch.setattr(AD, "plan", lambda *a, chunks=None, how=None, **kw: [(_DecodeKernel(chunks, how, times),
                                                                               (1, 1, 1), (), {})])
    rng = np.random.default_rng(0)
    q = rng.standard_normal((32, 1, 64)).astype(np.float16)
    k = rng.standard_normal((8, 16384, 64)).astype(np.float16)
    ops.attention(q, k, k, tune=True)
    return q, k


def test_the_tuned_decode_call_also_times_the_other_decode_kernel(fake_decode_gpu, monkeypatch):
    """Where both decode kernels take the problem (D 64, 4 rows a K/V head, a device with 16 x 16 x 16 f16
    matrices) the candidates are the chunk counts of the default kernel ("lanes" at 4 rows) and each count with
    the other ("mma"); the fastest, (16, "mma") here, is stored as chunks and kernel and read back."""
    from coopdsl.ops import attention_decode as AD

    runs, path = fake_decode_gpu
    dev = FA._resolve_device(None, [])
    dev.info.coopmat_configs = [{"M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", "C": "f32", "scope": "Subgroup"}]
    dims = (32, 1, 64, 8, 16384)
    assert AD.hows(dims, dev) == ["lanes", "mma"] and AD.default_how(dims, dev) == "lanes"
    assert AD.hows((32, 1, 256, 8, 16384), dev) == ["lanes"]                 # D 256: lanes only
    assert AT.decode_candidates(16, "mma") == [(4,), (8,), (32,), (64,), (16, "mma"), (4, "mma"), (8, "mma"),
                                               (32, "mma"), (64, "mma")]
    # the lane kernel's knobs at its own default count, where the default kernel's count is another's
    assert AT.decode_candidates(8, "lanes", ["lanes:split2"], 16)[-1] == (16, "lanes:split2")
    times = {(None, None): 2.0, (32, None): 1.5, (16, "mma"): 1.0}
    q, k = _tuned_one_token(monkeypatch, times)
    entry = next(iter(json.loads(path.read_text())["entries"].values()))
    assert entry["chunks"] == [16, "mma"] and entry["times_ms"]["default"] == 2.0 and len(entry["times_ms"]) == 15
    assert runs == [(16, "mma")]
    op_tune.reset_all()
    assert AT.decode_lookup(next(iter(json.loads(path.read_text())["entries"])).split("|")[1], dev) == \
        (True, (16, "mma"))
    ops.attention(q, k, k)                          # read back, as a new process would
    assert runs == [(16, "mma"), (16, "mma")]


def test_a_tuned_decode_call_times_the_lane_kernels_knobs_and_keeps_the_fastest(fake_decode_gpu, monkeypatch):
    """Besides the chunk counts, the lane-per-key kernel with one knob at a time set away from its default
    (attention_decode.variants): the fastest, the two-lane split here, is stored as its name and read back (plan
    parses the name: tests/ops/test_attention_decode.py, test_a_kernel_name_with_a_knob_plans_that_knob)."""
    runs, path = fake_decode_gpu
    times = {(None, None): 2.0, (16, "lanes:split2"): 1.0}
    q, k = _tuned_one_token(monkeypatch, times)
    entry = next(iter(json.loads(path.read_text())["entries"].values()))
    assert entry["chunks"] == [16, "lanes:split2"] and entry["times_ms"]["16xlanes:split2"] == 1.0
    assert runs == [(16, "lanes:split2")]
    op_tune.reset_all()
    ops.attention(q, k, k)                          # read back, as a new process would
    assert runs == [(16, "lanes:split2")] * 2


def test_each_candidate_is_timed_after_the_clocks_are_up():
    """LaunchTimer: the slowest kernel of a candidate's launches runs untimed for 200 ms of GPU time before the
    first candidate and 50 ms before each later one; the candidate's time is the sum of its kernels' medians."""
    class Timed:
        def __init__(self, ms):
            self.ms, self.untimed = ms, 0.0

        def bench(self, grid, *args, warmup=0, repeat=0, **kwargs):
            if warmup == 0:                       # the probe and the clock-up dispatches
                self.untimed += self.ms * repeat
            return types.SimpleNamespace(median_ms=self.ms, times_ms=[self.ms] * repeat)

    timer = AT.LaunchTimer()
    small, big = Timed(0.004), Timed(0.5)
    assert timer([(small, (1, 1, 1), (), {}), (big, (8, 1, 1), (), {"device": None})]) == pytest.approx(0.504)
    assert big.untimed >= AT.CLOCK_UP_FIRST_MS == autotune.CLOCK_UP_MS and small.untimed == pytest.approx(0.004)
    again = Timed(1.0)
    assert timer([(again, (1, 1, 1), (), {})]) == 1.0
    assert AT.CLOCK_UP_MS == 50.0 <= again.untimed < AT.CLOCK_UP_FIRST_MS


def test_the_lane_kernels_knobs_are_timed_at_its_own_chunk_count(fake_decode_gpu):
    """Where the default kernel is the cooperative-matrix one (8 rows a K/V head, a device with its matrices: one
    workgroup a core, 8 chunks on 66 cores), the lane kernel's knob candidates run at the lane kernel's own
    default count (two workgroups a core: 16)."""
    from coopdsl.ops import attention_decode as AD

    runs, path = fake_decode_gpu
    dev = FA._resolve_device(None, [])
    dev.info.coopmat_configs = [{"M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", "C": "f32", "scope": "Subgroup"}]
    dims = (32, 2, 64, 8, 16384)
    assert AD.default_how(dims, dev) == "mma"
    assert AD.default_chunks(8, 16384, 66, "mma") == 8 and AD.default_chunks(8, 16384, 66) == 16
    rng = np.random.default_rng(0)
    q = rng.standard_normal((32, 2, 64)).astype(np.float16)
    k = rng.standard_normal((8, 16384, 64)).astype(np.float16)
    ops.attention(q, k, k, causal=True, tune=True)
    times = next(iter(json.loads(path.read_text())["entries"].values()))["times_ms"]
    assert {n for n in times if "lanes:" in n} == {f"16x{kn}" for kn in AD.variants(dims)}
