"""coopdsl.autotune for real: a non-matrix kernel timed on any Vulkan device (lavapipe in CI)."""

import json

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.autotune import Autotuner, Config, autotune

pytestmark = pytest.mark.vulkan

CONFIGS = [Config(PER=1, WG=64), Config(PER=4, WG=32), Config(PER=2, WG=128)]


@cd.kernel(workgroup_size=("WG", 1, 1))
def accumulate(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, PER: cd.Const[int] = 1, WG: cd.Spec[u32] = 64):
    first = cd.global_invocation_id.x * PER
    for j in cd.static_range(PER):
        if first + j < n:
            y[first + j] = y[first + j] + 2.0 * x[first + j]


def grid(p):
    return ((p["n"] + p["WG"] * p["PER"] - 1) // (p["WG"] * p["PER"]),)


@pytest.fixture
def bench_calls(monkeypatch):
    """Every Kernel.bench call (the public timing API the tuner uses), by the config it timed."""
    calls = []
    real = cd.Kernel.bench

    def counting(self, grid, *args, **kwargs):
        calls.append((self.consts.get("PER"), kwargs.get("WG")))
        return real(self, grid, *args, **kwargs)

    monkeypatch.setattr(cd.Kernel, "bench", counting)
    return calls


def test_tunes_on_the_device_launches_correctly_and_reuses_the_cache(device, tmp_path, bench_calls):
    path = tmp_path / "autotune.json"
    tuned = autotune(CONFIGS, key=["n"], cache=path, warmup=1, repeat=3, restore=["y"])(accumulate)
    n = 5000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    tuned.launch(grid, x, y, n, device=device)
    np.testing.assert_array_equal(y, 1 + 2 * x)  # restored after each timing, then one real launch
    clock_up = bench_calls[:-3]  # the clocks brought up with the first config (1, 4, 16, ... dispatches), untimed
    assert clock_up and set(clock_up) == {(1, 64)}
    assert sorted(bench_calls[-3:]) == [(1, 64), (2, 128), (4, 32)]
    tuned_calls = len(bench_calls)
    assert all(isinstance(t, float) and t > 0 for t in tuned.last_timings.values())
    (entry,) = json.loads(path.read_text())["entries"].values()
    assert entry["config"] == repr(tuned.best_config(grid, x, y, n, device=device))

    again = Autotuner(accumulate, CONFIGS, ["n"], cache=path)  # another process would start like this
    y2 = np.ones(n, np.float32)
    again.launch(grid, x, y2, n, device=device)
    np.testing.assert_array_equal(y2, 1 + 2 * x)
    assert len(bench_calls) == tuned_calls and again.last_timings == {}


def test_resident_arrays_are_restored_and_name_the_device(device, tmp_path, bench_calls):
    from coopdsl import runtime

    n = 300
    x = runtime.array(np.full(n, 3.0, np.float32), device)
    y = runtime.array(np.zeros(n, np.float32), device)
    tuned = autotune(CONFIGS[:2], key=["n"], cache=tmp_path / "c.json", warmup=0, repeat=1, restore=["y"])(accumulate)
    tuned.launch(grid, x, y, n)  # the device comes from the resident arrays
    np.testing.assert_array_equal(y.numpy(), np.full(n, 6.0))
    assert device.info.name in next(iter(json.loads((tmp_path / "c.json").read_text())["entries"]))
    x.free(), y.free()
