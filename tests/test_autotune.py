"""coopdsl.autotune without a GPU: choosing, caching and reusing configs, with a fake timer and device."""

from __future__ import annotations

import json
import os
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.autotune import AutotuneError, Autotuner, Config, autotune, default_cache_path, kernel_fingerprint
from coopdsl.runtime import LaunchError

H100 = SimpleNamespace(info=SimpleNamespace(name="NVIDIA H100", driver_name="NVIDIA", driver_info="580.1"))
L40 = SimpleNamespace(info=SimpleNamespace(name="NVIDIA L40", driver_name="NVIDIA", driver_info="580.1"))
CONFIGS = [Config(PER=1, WG=64), Config(PER=4, WG=32), Config(PER=2, WG=128)]


@cd.kernel(workgroup_size=("WG", 1, 1))
def scale(x: cd.Buffer[f32], n: u32, PER: cd.Const[int] = 1, WG: cd.Spec[u32] = 64):
    first = cd.global_invocation_id.x * PER
    for j in cd.static_range(PER):
        if first + j < n:
            x[first + j] = 2.0 * x[first + j]


class FakeTimer:
    """Milliseconds per (PER, WG), and the calls it got."""

    def __init__(self, times: dict[tuple[int, int], float | Exception]):
        self.times = times
        self.calls: list[tuple] = []

    def __call__(self, variant, grid, args, kwargs, device):
        key = (variant.consts["PER"], kwargs["WG"])
        self.calls.append((key, grid, device.info.name))
        t = self.times[key]
        if isinstance(t, Exception):
            raise t
        return t


@pytest.fixture
def timer():
    return FakeTimer({(1, 64): 3.0, (4, 32): 1.0, (2, 128): 2.0})


def tuner(timer, path, configs=CONFIGS, key=("n",), kernel=scale, **options) -> Autotuner:
    return autotune(configs, list(key), cache=path, timer=timer, **options)(kernel)


def grid(p):
    return ((p["n"] + p["WG"] * p["PER"] - 1) // (p["WG"] * p["PER"]),)


def test_the_fastest_config_is_chosen_and_cached_on_disk(timer, tmp_path):
    path = tmp_path / "cache.json"
    x = np.zeros(1000, np.float32)
    best = tuner(timer, path).best_config(grid, x, 1000, device=H100)
    assert best == Config(PER=4, WG=32)
    assert [c[0] for c in timer.calls] == [(1, 64), (4, 32), (2, 128)]
    assert [c[1] for c in timer.calls] == [(16,), (8,), (4,)]  # the grid function saw each config's values
    entries = json.loads(path.read_text())["entries"]
    (key,) = entries
    assert key == f"{kernel_fingerprint(scale)}|n=1000|NVIDIA H100 / NVIDIA 580.1"
    assert entries[key]["config"] == "Config(PER=4, WG=32)" and entries[key]["ms"] == 1.0
    assert entries[key]["timings"] == {"Config(PER=1, WG=64)": 3.0, "Config(PER=4, WG=32)": 1.0,
                                       "Config(PER=2, WG=128)": 2.0}


def test_the_next_process_reuses_the_cache_without_timing(timer, tmp_path):
    path = tmp_path / "cache.json"
    x = np.zeros(1000, np.float32)
    tuner(timer, path).best_config(grid, x, 1000, device=H100)
    again = FakeTimer({})  # any timing would fail: a KeyError
    fresh = tuner(again, path)
    assert fresh.best_config(grid, x, 1000, device=H100) == Config(PER=4, WG=32)
    assert fresh.best_config(grid, x, n=1000, device=H100) == Config(PER=4, WG=32)  # by name too
    assert again.calls == [] and fresh.last_timings == {}


def test_a_new_problem_or_device_is_tuned_again(timer, tmp_path):
    path = tmp_path / "cache.json"
    t = tuner(timer, path)
    x = np.zeros(1000, np.float32)
    t.best_config(grid, x, 1000, device=H100)
    t.best_config(grid, x, 2000, device=H100)
    t.best_config(grid, x, 1000, device=L40)
    assert len(timer.calls) == 9
    keys = sorted(json.loads(path.read_text())["entries"])
    assert [k.split("|", 1)[1] for k in keys] == ["n=1000|NVIDIA H100 / NVIDIA 580.1",
                                                   "n=1000|NVIDIA L40 / NVIDIA 580.1",
                                                   "n=2000|NVIDIA H100 / NVIDIA 580.1"]


def test_arrays_in_the_key_count_by_dtype_and_shape(timer, tmp_path):
    t = tuner(timer, tmp_path / "c.json", key=("x",))
    t.best_config(grid, np.zeros(10, np.float32), 10, device=H100)
    t.best_config(grid, np.ones(10, np.float32), 10, device=H100)  # same dtype and shape: cached
    t.best_config(grid, np.zeros(20, np.float32), 20, device=H100)
    assert len(timer.calls) == 6
    assert any("|x=float32[20]|" in k for k in json.loads((tmp_path / "c.json").read_text())["entries"])


def test_a_config_that_fails_is_left_out(tmp_path):
    timer = FakeTimer({(1, 64): 3.0, (4, 32): LaunchError("grid too large"), (2, 128): 2.0})
    t = tuner(timer, tmp_path / "c.json")
    assert t.best_config(grid, np.zeros(100, np.float32), 100, device=H100) == Config(PER=2, WG=128)
    assert t.last_timings["Config(PER=4, WG=32)"] == "error: LaunchError: grid too large"


def test_no_config_that_runs_is_an_error_listing_each_failure(tmp_path):
    timer = FakeTimer({k: RuntimeError(f"no {k}") for k in [(1, 64), (4, 32), (2, 128)]})
    with pytest.raises(AutotuneError) as info:
        tuner(timer, tmp_path / "c.json").best_config(grid, np.zeros(8, np.float32), 8, device=H100)
    assert str(info.value).splitlines() == [
        "autotune scale: no config ran on NVIDIA H100 / NVIDIA 580.1:",
        "  Config(PER=1, WG=64): error: RuntimeError: no (1, 64)",
        "  Config(PER=4, WG=32): error: RuntimeError: no (4, 32)",
        "  Config(PER=2, WG=128): error: RuntimeError: no (2, 128)"]
    assert not (tmp_path / "c.json").exists()


def test_a_cached_config_no_longer_listed_is_tuned_again(timer, tmp_path):
    path = tmp_path / "c.json"
    x = np.zeros(100, np.float32)
    tuner(timer, path).best_config(grid, x, 100, device=H100)  # caches PER=4, WG=32
    t = tuner(timer, path, configs=[Config(PER=1, WG=64), Config(PER=2, WG=128)])
    assert t.best_config(grid, x, 100, device=H100) == Config(PER=2, WG=128)
    assert len(timer.calls) == 5


def test_an_unreadable_cache_is_reported_and_rewritten(timer, tmp_path):
    path = tmp_path / "c.json"
    path.write_text("{not json")
    with pytest.warns(UserWarning, match=r"ignoring the cache .*c.json .*; it will be rewritten") as caught:
        best = tuner(timer, path).best_config(grid, np.zeros(8, np.float32), 8, device=H100)
    assert len([w for w in caught if "ignoring the cache" in str(w.message)]) == 1   # (once, not at the write too)
    assert json.loads(path.read_text())["entries"][next(iter(json.loads(path.read_text())["entries"]))][
        "config"] == repr(best)


@pytest.mark.parametrize("bad", [{"config": {"PER": 4}}, 5, {"ms": 1.0}, [1]])
def test_a_cache_entry_that_a_tuner_did_not_write_is_tuned_again(timer, tmp_path, bad):
    # an entry whose config was a table raised "unhashable type: 'dict'", one that was a number AttributeError
    # (found by a check written from the docs alone): such entries are dropped, and the problem tuned again
    path = tmp_path / "c.json"
    x = np.zeros(100, np.float32)
    first = tuner(timer, path)
    first.best_config(grid, x, 100, device=H100)
    data = json.loads(path.read_text())
    (entry,) = data["entries"]
    data["entries"][entry] = bad
    path.write_text(json.dumps(data))
    timer.calls.clear()
    assert tuner(timer, path).best_config(grid, x, 100, device=H100) == first.best_config(grid, x, 100, device=H100)
    assert len(timer.calls) == len(CONFIGS)                 # tuned again: every config timed
    assert isinstance(json.loads(path.read_text())["entries"][entry]["config"], str)


def test_variant_takes_a_config(timer, tmp_path):
    # a dict reached "'dict' object has no attribute 'values'" (found by a check written from the docs alone)
    with pytest.raises(TypeError, match="variant takes a coopdsl.autotune.Config, got dict"):
        tuner(timer, tmp_path / "c.json").variant({"PER": 4, "WG": 32})
    kernel, spec = tuner(timer, tmp_path / "c.json").variant(Config(PER=4, WG=32))
    assert spec == {"WG": 32}
    # a config of another list is checked as the tuner's configs were (a name that is no Spec or Const once
    # went on to the launch as a keyword)
    with pytest.raises(AutotuneError, match=r"autotune scale: Config\(TILE=8\) sets TILE, which is not a cd.Spec"):
        tuner(timer, tmp_path / "c.json").variant(Config(TILE=8))


def test_the_interpreter_refuses_the_arguments_a_gpu_launch_refuses(timer, tmp_path):
    """best_config, cached_config and launch on device="cpu" bind the arguments as on a GPU: a missing key and a
    tuned parameter given are the same AutotuneErrors there (they once returned the first config)."""
    t = tuner(timer, tmp_path / "c.json")
    x = np.zeros(8, np.float32)
    for call in (lambda: t.best_config(grid, x, device="cpu"), lambda: t.cached_config(x, device="cpu"),
                 lambda: t.launch(grid, x, device="cpu")):
        with pytest.raises(AutotuneError, match=r"the key argument\(s\) \['n'\] were not given"):
            call()
    with pytest.raises(AutotuneError, match=r"WG is set by the configs"):
        t.launch(grid, x, 8, WG=64, device="cpu")


def test_entries_of_other_processes_are_kept(timer, tmp_path):
    path = tmp_path / "c.json"
    a, b = tuner(timer, path), tuner(timer, path)
    x = np.zeros(8, np.float32)
    a.best_config(grid, x, 8, device=H100)
    b.best_config(grid, x, 8, device=L40)  # b read the file before a wrote: it merges on writing
    assert len(json.loads(path.read_text())["entries"]) == 2


def test_cache_false_keeps_results_in_the_process(timer, tmp_path, monkeypatch):
    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "env.json"))
    t = tuner(timer, False)
    x = np.zeros(8, np.float32)
    t.best_config(grid, x, 8, device=H100)
    t.best_config(grid, x, 8, device=H100)
    assert len(timer.calls) == 3 and not (tmp_path / "env.json").exists()


def test_default_cache_path(monkeypatch, tmp_path):
    monkeypatch.delenv("COOPDSL_AUTOTUNE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "coopdsl" / "autotune.json"
    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "mine.json"))
    assert default_cache_path() == tmp_path / "mine.json"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", "~/tuned.json")   # (quoted: the shell left the ~)
    assert default_cache_path() == tmp_path / "tuned.json"


def test_a_cache_name_the_file_system_refuses_is_a_warning(timer, tmp_path):
    """A 300-character file name was an OSError (ENAMETOOLONG) from the read; an unusable cache is a warning."""
    with pytest.warns(UserWarning) as caught:
        best = tuner(timer, tmp_path / ("a" * 300 + ".json")).best_config(grid, np.zeros(1000, np.float32), 1000,
                                                                          device=H100)
    assert best == Config(PER=4, WG=32)
    assert any("cannot write the cache" in str(w.message) for w in caught)


def test_restore_puts_the_arguments_back_after_each_config(tmp_path):
    x = np.arange(4, dtype=np.float32)
    seen = []

    def doubling(variant, grid, args, kwargs, device):
        seen.append(args[0].copy())
        np.multiply(args[0], 2, out=args[0])  # what the kernel would do to its buffer
        return 1.0

    tuner(doubling, tmp_path / "c.json", restore=("x",)).best_config(grid, x, 4, device=H100)
    assert all(np.array_equal(s, np.arange(4)) for s in seen) and len(seen) == 3
    np.testing.assert_array_equal(x, np.arange(4))


def test_the_fingerprint_follows_the_source_and_the_globals_it_reads(tmp_path):
    def load(text: str, name: str):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        import runpy

        return runpy.run_path(str(path))["k"]

    base = """\
        import coopdsl as cd
        SCALE = {scale}

        @cd.kernel
        def k(x: cd.Buffer[cd.f32]):
            x[0] = {body}
        """
    a = load(base.format(scale=2.0, body="SCALE"), "a")
    b = load(base.format(scale=3.0, body="SCALE"), "b")
    c = load(base.format(scale=2.0, body="SCALE + 1.0"), "c")
    d = load(base.format(scale=2.0, body="SCALE"), "d")
    prints = [kernel_fingerprint(k) for k in (a, b, c, d)]
    assert prints[0] == prints[3] and len(set(prints)) == 3
    assert all(p.startswith("k:") for p in prints)
    assert kernel_fingerprint(a.specialize()) == prints[0]


def test_kernels_of_one_factory_for_other_types_have_other_fingerprints():
    # a factory's kernels share their source; only the coopdsl types (and enumerants) they close over differ
    import coopdsl as cd

    def make(t, layout):
        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(x: cd.Buffer[t], y: cd.Buffer[t]):
            m = cd.MatA[t, 16, 16].load(x, 0, stride=16, layout=layout)
            m.store(y, 0, stride=16, layout=layout)
        return k

    prints = {kernel_fingerprint(make(t, lay)) for t in (cd.f16, cd.bf16) for lay in (cd.RowMajor, cd.ColumnMajor)}
    assert len(prints) == 4
    assert kernel_fingerprint(make(cd.f16, cd.RowMajor)) in prints  # and the same in every process


@pytest.mark.parametrize("build,message", [
    (lambda: autotune([Config(TILE=4, WG=64)], ["n"])(scale),
     "autotune scale: Config(TILE=4, WG=64) sets TILE, which is not a cd.Spec or cd.Const parameter of scale "
     "(those are: PER, WG)"),
    (lambda: autotune([Config(A=1, B=2)], ["n"])(scale),
     "autotune scale: Config(A=1, B=2) sets A, B, which are not cd.Spec or cd.Const parameters of scale"),
    (lambda: autotune([], ["n"])(scale), "autotune scale: no configs given"),
    (lambda: autotune([{"WG": 64}], ["n"])(scale),
     "autotune scale: configs must be coopdsl.autotune.Config objects, got {'WG': 64}"),
    (lambda: autotune([Config(WG=64), Config(WG=64)], ["n"])(scale), "autotune scale: Config(WG=64) is listed twice"),
    (lambda: autotune(CONFIGS, ["m"])(scale),
     "autotune scale: key names m, not parameters of scale (those are: x, n, PER, WG)"),
    (lambda: autotune(CONFIGS, "n")(scale), "autotune scale: key is a list of parameter names, got the string 'n'"),
    (lambda: autotune(CONFIGS, ["n"], restore=["y"])(scale), "autotune scale: restore names y, not parameters"),
    (lambda: autotune(CONFIGS, ["n"])(lambda x: x), "autotune applies to a @coopdsl.kernel, got function"),
    (lambda: Config(), "a Config needs at least one NAME=VALUE"),
    # the timing options, when the tuner is made (they once failed only at its first tuning, on a GPU)
    (lambda: autotune(CONFIGS, ["n"], repeat=0)(scale),
     "autotune scale: repeat must be from 1 to 1,000,000 and warmup from 0 to 1,000,000"),
    (lambda: autotune(CONFIGS, ["n"], warmup=-1)(scale), "got repeat=20, warmup=-1"),
    (lambda: autotune(CONFIGS, ["n"], repeat=2.5)(scale), "got repeat=2.5, warmup=5"),
    (lambda: autotune(CONFIGS, ["n"], clock_up_ms=float("nan"))(scale),
     "autotune scale: clock_up_ms must be a finite number of milliseconds, 0 or more, got nan"),
    (lambda: autotune(CONFIGS, ["n"], clock_up_ms=-1)(scale), "clock_up_ms must be a finite number"),
    (lambda: autotune(CONFIGS, ["n"], timer=3)(scale), "autotune scale: timer must be a function"),
    # (foreign TypeErrors before: found by a fuzzer of the host API)
    (lambda: autotune(None, ["n"])(scale), "autotune scale: configs is a list of coopdsl.autotune.Config, got "
     "NoneType"),
    (lambda: autotune(CONFIGS, None)(scale), "autotune scale: key is a list of parameter names (strings), got None"),
    (lambda: autotune(CONFIGS, b"n")(scale), "autotune scale: key is a list of parameter names (strings), got b'n'"),
    (lambda: autotune(CONFIGS, ["n"], cache=1.5)(scale), "autotune: cache is True, False, None or a file path, "
     "got float 1.5"),
    (lambda: Config(WG=[64]), "Config(WG=[64]): a value must be a number, a bool or another hashable"),
])
def test_mistakes_are_autotune_errors(build, message):
    with pytest.raises(AutotuneError) as info:
        build()
    assert message in str(info.value)


def test_a_key_argument_left_out_is_an_error(timer, tmp_path):
    with pytest.raises(AutotuneError, match=r"the key argument\(s\) \['n'\] were not given"):
        tuner(timer, tmp_path / "c.json").best_config(grid, np.zeros(8, np.float32), device=H100)


def test_passing_a_tuned_parameter_is_an_error(timer, tmp_path):
    with pytest.raises(AutotuneError, match=r"autotune scale: WG is set by the configs; leave it out of the launch"):
        tuner(timer, tmp_path / "c.json").best_config(grid, np.zeros(8, np.float32), 8, WG=64, device=H100)


def test_variant_splits_const_and_spec_values(timer, tmp_path):
    variant, spec = tuner(timer, tmp_path / "c.json").variant(Config(PER=4, WG=32))
    assert variant.consts == {"PER": 4} and spec == {"WG": 32}
    assert "PER=4" in repr(variant)


def test_on_the_cpu_interpreter_the_first_config_runs_untimed(timer, tmp_path):
    # (device="cpu" once failed with "'str' object has no attribute 'info'")
    t = tuner(timer, tmp_path / "cache.json")
    x = np.arange(100, dtype=np.float32)
    t.launch(grid, x, 100, device="cpu")
    np.testing.assert_array_equal(x, 2.0 * np.arange(100, dtype=np.float32))
    assert timer.calls == [] and not (tmp_path / "cache.json").exists()
    # what a launch there would use: the first config, untimed, uncached
    assert t.best_config(grid, x, 100, device="cpu") == CONFIGS[0] and t.cached_config(x, 100, device="cpu") is None
    assert timer.calls == [] and not (tmp_path / "cache.json").exists()


def test_a_cache_that_cannot_be_written_costs_a_warning_not_the_launch(timer, tmp_path):
    # the cache path is a folder (once an IsADirectoryError): one warning, which says the choice stays in the
    # process (it said "ignoring ...; it will be rewritten", then "cannot write the cache": found by a docs-only
    # check of autotune.md)
    t = tuner(timer, tmp_path)
    with pytest.warns(UserWarning) as caught:
        assert t.best_config(grid, np.zeros(100, np.float32), 100, device=H100) == CONFIGS[1]
    assert [str(w.message) for w in caught] == [
        f"coopdsl.autotune: the cache {tmp_path} is not a regular file (a folder, a pipe or a device); choices "
        f"are kept in this process only"]
    assert list(tmp_path.glob(".autotune-*")) == []  # no temporary file left behind
    assert t.cached_config(np.zeros(100, np.float32), 100, device=H100) == CONFIGS[1]   # (kept in the process)


def test_the_default_timer_brings_the_clocks_up_before_the_first_config(tmp_path, monkeypatch):
    # an idle GPU runs at low clocks (on the H100 about 150 ms of work brings them back): before timing the
    # first config, the default timer runs it untimed, 1, 4, 16, ... dispatches a submission, until they have
    # taken clock_up_ms of GPU time, once per tuning; then every config is timed with warmup + repeat
    calls = []

    def bench(self, grid, *args, device=None, warmup=5, repeat=20, **kwargs):
        calls.append((self.consts["PER"], kwargs["WG"], warmup, repeat))
        t = {1: 3.0, 4: 1.0, 2: 2.0}[self.consts["PER"]]
        return SimpleNamespace(median_ms=t, times_ms=[t] * repeat)

    monkeypatch.setattr(cd.Kernel, "bench", bench)
    t = autotune(CONFIGS, ["n"], cache=tmp_path / "c.json", warmup=7, repeat=9, clock_up_ms=150.0)(scale)
    assert t.best_config(grid, np.zeros(100, np.float32), 100, device=H100) == Config(PER=4, WG=32)
    # 3 + 12 + 48 ms < 150: a fourth submission of 64 (255 ms in all)
    clock_up = [(1, 64, 0, 1), (1, 64, 0, 4), (1, 64, 0, 16), (1, 64, 0, 64)]
    assert calls == clock_up + [(1, 64, 7, 9), (4, 32, 7, 9), (2, 128, 7, 9)]
    calls.clear()
    t.best_config(grid, np.zeros(200, np.float32), 200, device=H100)  # a new problem: a new tuning
    assert calls[:4] == clock_up and len(calls) == 7
    calls.clear()
    none = autotune(CONFIGS, ["n"], cache=False, clock_up_ms=0)(scale)
    none.best_config(grid, np.zeros(100, np.float32), 100, device=H100)
    assert calls == [(1, 64, 5, 20), (4, 32, 5, 20), (2, 128, 5, 20)]


def test_a_timer_start_runs_once_on_the_first_config_that_runs(tmp_path):
    class Starting(FakeTimer):
        def start(self, variant, grid, args, kwargs, device):
            self.calls.append(("start", variant.consts["PER"]))
            if variant.consts["PER"] == 1:
                raise LaunchError("does not fit")

    timer = Starting({(1, 64): 3.0, (4, 32): 1.0, (2, 128): 2.0})
    t = tuner(timer, tmp_path / "c.json")
    assert t.best_config(grid, np.zeros(100, np.float32), 100, device=H100) == Config(PER=4, WG=32)
    assert [c[0] for c in timer.calls] == ["start", "start", (4, 32), (2, 128)]
    assert t.last_timings["Config(PER=1, WG=64)"] == "error: LaunchError: does not fit"


def test_a_timer_may_return_an_int_or_a_numpy_float_but_not_something_else(tmp_path):
    ints = FakeTimer({(1, 64): 3, (4, 32): np.float32(1.0), (2, 128): 2})
    t = tuner(ints, tmp_path / "c.json")
    assert t.best_config(grid, np.zeros(100, np.float32), 100, device=H100) == CONFIGS[1]
    assert t.last_timings == {repr(CONFIGS[0]): 3.0, repr(CONFIGS[1]): 1.0, repr(CONFIGS[2]): 2.0}
    assert all(type(v) is float for v in t.last_timings.values())
    words = FakeTimer({(1, 64): "fast", (4, 32): None, (2, 128): True})
    with pytest.raises(AutotuneError, match=r"no config ran on .*\n  Config\(PER=1, WG=64\): error: AutotuneError: "
                                            r"the timer returned 'fast', not a time in milliseconds"):
        tuner(words, tmp_path / "d.json").best_config(grid, np.zeros(100, np.float32), 100, device=H100)


@pytest.mark.parametrize("bad", [float("nan"), -5.0, float("inf")])
def test_a_timing_that_is_not_a_time_is_that_configs_failure(tmp_path, bad):
    """NaN and negative times were accepted, and a NaN config won."""
    timer = FakeTimer({(1, 64): bad, (4, 32): 1.0, (2, 128): 2.0})
    t = tuner(timer, tmp_path / "c.json")
    assert t.best_config(grid, np.zeros(100, np.float32), 100, device=H100) == Config(PER=4, WG=32)
    assert t.last_timings["Config(PER=1, WG=64)"].startswith(f"error: AutotuneError: the timer returned {bad!r}, "
                                                             "not a time in milliseconds")


def test_the_cache_through_a_symlink_updates_its_target_and_a_device_file_is_never_replaced(timer, tmp_path):
    """The atomic write replaced a symlink with a regular file (its target stayed stale), and a cache path of
    /dev/null replaced the device file (as root)."""
    real = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(real)
    tuner(timer, link).best_config(grid, np.zeros(1000, np.float32), 1000, device=H100)
    assert link.is_symlink() and json.loads(real.read_text())["entries"]
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.warns(UserWarning) as caught:   # (a pipe is neither read, which would block, nor replaced)
        tuner(timer, fifo).best_config(grid, np.zeros(1000, np.float32), 1000, device=H100)
    texts = [str(w.message) for w in caught]
    assert texts == [f"coopdsl.autotune: the cache {fifo} is not a regular file (a folder, a pipe or a device); "
                     f"choices are kept in this process only"], texts
    assert fifo.is_fifo()


def test_a_device_that_is_not_one_is_a_type_error(timer, tmp_path):
    """device=7 was an AttributeError from inside the tuner."""
    with pytest.raises(TypeError, match=r"device must be None, 'cpu' or a coopdsl.runtime.Device, got int 7"):
        tuner(timer, tmp_path / "c.json").best_config(grid, np.zeros(8, np.float32), 8, device=7)


def test_a_numpy_scalar_key_is_its_value(timer, tmp_path):
    # np.int64(1000) and np.int64(50000) were one problem ("n=int64[]"), the second reusing the first's choice,
    # and np.uint32(1000) was not n=1000 (found by a docs-only check of autotune.md)
    from coopdsl.autotune import problem_key

    assert problem_key({"n": np.int64(1000)}) == problem_key({"n": 1000}) == problem_key({"n": np.uint32(1000)})
    assert problem_key({"n": np.int64(50000)}) == "n=50000" and problem_key({"x": np.zeros((2, 3))}) == \
        "x=float64[2, 3]"
    t = tuner(timer, tmp_path / "c.json")
    x = np.zeros(1000, np.float32)
    t.best_config(grid, x, 1000, device=H100)
    assert len(timer.calls) == 3
    t.best_config(grid, x, np.uint32(1000), device=H100)   # the same problem: not timed again
    assert len(timer.calls) == 3
    t.best_config(grid, x, np.int64(500), device=H100)     # another
    assert len(timer.calls) == 6


def test_launch_arguments_that_do_not_bind_are_a_launch_call_error(timer, tmp_path):
    # as Kernel.launch says it (it was a plain TypeError)
    from coopdsl.errors import LaunchCallError

    t = tuner(timer, tmp_path / "c.json")
    with pytest.raises(LaunchCallError, match=r"^scale.launch: .*unexpected keyword argument 'm'"):
        t.launch(grid, np.zeros(8, np.float32), m=8, device=H100)
    with pytest.raises(LaunchCallError, match=r"^scale.launch: multiple values for argument 'n'"):
        t.launch(grid, np.zeros(8, np.float32), 8, n=8, device=H100)


def test_the_same_launch_error_from_every_config_is_raised_as_it_is(tmp_path):
    # a launch argument every config refuses alike (a missing buffer) was "no config ran", the same error once
    # a config (found by a docs-only check of autotune.md); errors that differ by config stay an AutotuneError
    from coopdsl.errors import LaunchError

    same = FakeTimer({k: LaunchError("missing buffer 'x'") for k in ((1, 64), (4, 32), (2, 128))})
    with pytest.raises(LaunchError, match=r"^missing buffer 'x'$"):
        tuner(same, tmp_path / "c.json").best_config(grid, np.zeros(8, np.float32), 8, device=H100)
    differ = FakeTimer({(1, 64): LaunchError("shared memory 1"), (4, 32): LaunchError("shared memory 2"),
                        (2, 128): LaunchError("shared memory 3")})
    with pytest.raises(AutotuneError, match="no config ran"):
        tuner(differ, tmp_path / "d.json").best_config(grid, np.zeros(8, np.float32), 8, device=H100)


def test_an_empty_cache_path_and_configs_equal_in_another_spelling_are_refused(timer):
    with pytest.raises(AutotuneError, match=r"cache is True, False, None or a file path, got an empty path ''"):
        tuner(timer, "")
    with pytest.raises(AutotuneError, match=r"Config\(PER=True, WG=64\) is listed twice \(as Config\(PER=1, "
                                            r"WG=64\): the same values\)"):
        tuner(timer, None, configs=[Config(PER=1, WG=64), Config(PER=True, WG=64)])
