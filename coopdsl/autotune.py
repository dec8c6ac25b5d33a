"""Choosing a kernel's tile sizes by timing them on the device, with an on-disk cache (docs/autotune.md).

Modelled on Triton's ``triton.autotune``::

    from coopdsl.autotune import Config, autotune

    @autotune(configs=[Config(TILE=64, WG=64), Config(TILE=128, WG=128)], key=["n"])
    @cd.kernel(workgroup_size=("WG", 1, 1))
    def k(x: cd.Buffer[f32], n: u32, TILE: cd.Const[int] = 64, WG: cd.Spec[u32] = 64): ...

    k.launch(lambda p: (p["n"] // p["TILE"],), x, n)   # times every config the first time, then the fastest

A :class:`Config` sets ``cd.Spec`` parameters (specialization constants, passed at launch) and
``cd.Const`` parameters (compile-time values: ``kernel.specialize``). The first launch for a new
problem (the values of the ``key`` arguments; arrays by dtype and shape) on a device times every config
with ``Kernel.bench`` and keeps the fastest in the cache file, keyed by (kernel, problem, device): later
launches, in this process or the next, reuse it without timing anything.
"""

from __future__ import annotations

import datetime
import hashlib
import inspect
import json
import math
import numbers
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from ._counts import counts_problem
from ._numbers import python_value
from .errors import CoopDSLError, LaunchCallError, LaunchError
from .ir.types import Type
from .kernel import Kernel
from .lang.types import ConstParam, Enumerant, SpecParam

# (variant, grid, args, kwargs, device) -> ms
Timer = Callable[[Kernel, tuple[Any, ...], tuple[Any, ...], dict[str, Any], Any], float]
CACHE_ENV = "COOPDSL_AUTOTUNE_CACHE"
FORMAT = 1  # the cache file's layout version


class AutotuneError(CoopDSLError):
    """Autotuning cannot go ahead: a bad config or key, or no config that runs."""


class Config:
    """One candidate: values of the kernel's ``cd.Spec`` and ``cd.Const`` parameters, by name."""

    def __init__(self, **values: Any):
        if not values:
            raise AutotuneError("a Config needs at least one NAME=VALUE")
        for k, v in values.items():   # (a config is a dict key: of the cache's entries, of a tuning's timings)
            try:
                hash(v)
            except TypeError:
                raise AutotuneError(f"Config({k}={v!r}): a value must be a number, a bool or another hashable "
                                    f"compile-time value (a tuple, not a list)") from None
        self._values = dict(sorted(values.items()))

    @property
    def values(self) -> dict[str, Any]:
        """The parameter values (a copy)."""
        return dict(self._values)

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(self._values.items()))


# -- the cache file ----------------------------------------------------------------------------------------
def default_cache_path() -> Path:
    """$COOPDSL_AUTOTUNE_CACHE, else $XDG_CACHE_HOME/coopdsl/autotune.json, else ~/.cache/coopdsl/autotune.json."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()   # ('~/x': the shell expands only an unquoted ~)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "coopdsl" / "autotune.json"


class Cache:
    """The fastest config per (kernel, problem, device), in a JSON file (``path`` None: in memory only)."""

    def __init__(self, path: str | Path | None):
        if path is not None and not isinstance(path, (str, Path)):   # (os.PathLike too: Path() takes it)
            if not hasattr(path, "__fspath__"):
                raise AutotuneError(f"autotune: cache is True, False, None or a file path, got {type(path).__name__} "
                                    f"{path!r}")
        if path is not None and not os.fspath(path):   # (Path("") is the current folder)
            raise AutotuneError("autotune: cache is True, False, None or a file path, got an empty path ''")
        self.path = None if path is None else Path(path)
        self._entries: dict[str, dict[str, Any]] = {}
        self._loaded = False
        self._reported = False  # whether the file was reported unreadable (once: a write reads it again)
        self._in_process = False  # the path is no regular file (a folder, a pipe, a device): nothing is written

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under ``key``, or None."""
        if not self._loaded:
            self._entries.update(self._read())
            self._loaded = True
        return self._entries.get(key)

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` under ``key`` (and in the file, merged with what other processes wrote there)."""
        self._entries[key] = record
        if self.path is None:
            return
        entries = {**self._read(), key: record}
        if self._in_process:   # (said once, when the path was read)
            return
        tmp = None
        try:
            # a symlink's target is the cache (replacing the link would leave the target stale), and a path that
            # exists but is not a regular file (a device such as /dev/null, a pipe) is never replaced
            target = Path(os.path.realpath(self.path))
            if target.exists() and not target.is_file():
                raise OSError(0, "it is not a regular file")
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".autotune-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump({"format": FORMAT, "entries": entries}, f, indent=1, sort_keys=True)
            os.replace(tmp, target)  # atomic: a reader sees the old file or the new one
        except OSError as e:  # an unwritable cache costs the next process a tuning, not this launch
            warnings.warn(f"coopdsl.autotune: cannot write the cache {self.path} ({e.strerror or e}); the choice "
                          f"is kept in this process only", stacklevel=3)
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)

    def _read(self) -> dict[str, dict[str, Any]]:
        if self.path is None:
            return {}
        try:
            if not self.path.exists():   # (inside: a name the file system refuses, 300 characters, is an OSError)
                return {}
            if not self.path.is_file():   # (a pipe would block the read; a device is no cache)
                self._in_process = True
                if not self._reported:
                    self._reported = True
                    warnings.warn(f"coopdsl.autotune: the cache {self.path} is not a regular file (a folder, a pipe "
                                  f"or a device); choices are kept in this process only", stacklevel=4)
                return {}
            data = json.loads(self.path.read_text())
            if data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
                raise ValueError(f"not an autotune cache of format {FORMAT}")
        except (OSError, ValueError, AttributeError, RecursionError) as e:   # (ValueError: JSON, UTF-8 too)
            if not self._reported:
                self._reported = True
                warnings.warn(f"coopdsl.autotune: ignoring the cache {self.path} ({e}); it will be rewritten",
                              stacklevel=4)
            return {}
        # (an entry that is not a table, as every tuner writes, is dropped: its problem is tuned again)
        return {k: v for k, v in data["entries"].items() if isinstance(v, dict)}


# -- identifying kernels, problems and devices -------------------------------------------------------------
# values whose repr is the same in every process: what a kernel's globals and closure variables contribute
# to its fingerprint (coopdsl types and enumerants too: one factory's kernels for f16 and bf16 differ only there)
_PLAIN = (bool, int, float, str, tuple, Type, Enumerant)


def kernel_fingerprint(kernel: Kernel) -> str:
    """``name:hash`` of what the compiled kernel depends on: the function's source, the plain values
    (numbers, strings, tuples, coopdsl types and enumerants) of the globals and closure variables it
    names, its workgroup size, target environment, Const values and required subgroup size."""
    fn = kernel.fn
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = fn.__code__.co_code.hex()
    names = {n: fn.__globals__[n] for n in fn.__code__.co_names if n in fn.__globals__}
    if fn.__closure__:
        names.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    plain = {n: repr(v) for n, v in sorted(names.items()) if isinstance(v, _PLAIN)}
    text = json.dumps([source, plain, repr(kernel.workgroup_size), kernel.target_env,
                       sorted((k, repr(v)) for k, v in kernel.consts.items()),
                       *([kernel.subgroup_size] if kernel.subgroup_size else [])])
    return f"{kernel.name}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def problem_key(values: dict[str, Any]) -> str:
    """The key arguments as text: numbers as themselves (a numpy scalar too: ``np.int64(1000)`` is ``1000``),
    arrays as dtype[shape]."""
    parts = []
    for name, v in values.items():
        v = python_value(v)
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            parts.append(f"{name}={v.dtype}{list(v.shape)}")
        else:
            parts.append(f"{name}={v!r}")
    return ",".join(parts)


def device_key(device: Any) -> str:
    """The device's name and driver (``runtime.Device.info``)."""
    info = getattr(device, "info", None)
    if info is None:
        raise TypeError(f"device must be None, 'cpu' or a coopdsl.runtime.Device, got {type(device).__name__} "
                        f"{device!r}")
    return f"{info.name} / {info.driver_name} {info.driver_info}".strip()


def _on_cpu(device: Any) -> bool:
    """Whether a launch with ``device`` runs on the CPU interpreter (``"cpu"``, or COOPDSL_DEVICE=cpu)."""
    if device is not None and not isinstance(device, str):
        return False
    from .interp import wants_cpu

    return wants_cpu(device)


def _resolve_device(device: Any, args: Iterable[Any]) -> Any:
    """``device``, else the device a launch with ``args`` runs on by ``Kernel.launch``'s rule
    (``runtime.launch.resolve_device``: the first resident array's, else the open batch's, else the default
    device). The callers answer for the CPU interpreter first, and :func:`device_key` for a ``device`` that is
    none."""
    if device is not None:
        return device
    from .runtime.launch import resolve_device

    return resolve_device(None, {str(i): v for i, v in enumerate(args)})


CLOCK_UP_MS = 1000.0  # untimed GPU work before the first config is timed (see BenchTimer)
CLOCK_UP_MAX = 10000  # dispatches at most per submission of that work (for kernels of microseconds)
CLOCK_UP_ROUNDS = 32  # submissions at most


class BenchTimer:
    """The default timer: the median GPU time of ``Kernel.bench`` (milliseconds), ``warmup`` untimed and
    ``repeat`` timed dispatches per config.

    Before the first config of a tuning, :meth:`start` runs that config untimed until its dispatches have
    taken ``clock_up_ms`` of GPU time (1, then 4, 16, ... per submission): an idle GPU runs at low clocks, and
    on the H100 they come back only after about half a second of sustained work (they fall again after one to
    two seconds idle; ``benchmarks/clock_ramp.py``), so without it the first config timed after an idle spell
    ran up to 4x slower and was judged by that.
    """

    def __init__(self, warmup: int, repeat: int, clock_up_ms: float = CLOCK_UP_MS):
        self.warmup, self.repeat, self.clock_up_ms = warmup, repeat, clock_up_ms

    def start(self, variant: Kernel, grid: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any],
              device: Any) -> None:
        """Bring the clocks up with ``variant`` (its results are overwritten by the timings that follow)."""
        done, count = 0.0, 1
        for _ in range(CLOCK_UP_ROUNDS):  # 1, 4, 16, ... dispatches until that much GPU time has passed
            if done >= self.clock_up_ms:
                return
            done += sum(variant.bench(grid, *args, device=device, warmup=0, repeat=count, **kwargs).times_ms)
            count = min(CLOCK_UP_MAX, 4 * count)

    def __call__(self, variant: Kernel, grid: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any],
                 device: Any) -> float:
        return variant.bench(grid, *args, device=device, warmup=self.warmup, repeat=self.repeat,
                             **kwargs).median_ms


def bench_timer(warmup: int, repeat: int, clock_up_ms: float = CLOCK_UP_MS) -> BenchTimer:
    """The default timer (:class:`BenchTimer`): the median GPU time of ``Kernel.bench`` (milliseconds)."""
    return BenchTimer(warmup, repeat, clock_up_ms)


# -- the tuner ---------------------------------------------------------------------------------------------
class Autotuner:
    """A kernel launched with the fastest of ``configs`` for each problem and device (see :func:`autotune`)."""

    def __init__(self, kernel: Kernel, configs: Sequence[Config], key: Sequence[str], *,
                 cache: str | Path | None | bool = True, warmup: int = 5, repeat: int = 20,
                 restore: Sequence[str] = (), timer: Timer | None = None, clock_up_ms: float = CLOCK_UP_MS):
        if not isinstance(kernel, Kernel):
            raise AutotuneError(f"autotune applies to a @coopdsl.kernel, got {type(kernel).__name__}")
        self.kernel = kernel
        _check_options(kernel.name, warmup, repeat, clock_up_ms, timer)
        self.signature = inspect.signature(kernel.fn)
        kinds = _parameter_kinds(kernel)
        self.configs = _check_configs(kernel.name, configs, kinds)
        self.key = _check_names(kernel.name, "key", key, self.signature)
        self.restore = _check_names(kernel.name, "restore", restore, self.signature)
        self.const_names = {n for n, k in kinds.items() if k == "const"}
        self.cache = Cache(default_cache_path() if cache is True else None if cache is False else cache)
        self.timer = timer or bench_timer(warmup, repeat, clock_up_ms)
        self.fingerprint = kernel_fingerprint(kernel)
        self.last_timings: dict[str, float | str] = {}  # config -> ms or the error, of the last tuning

    def __repr__(self) -> str:
        return f"<coopdsl.autotune {self.kernel.name}: {len(self.configs)} configs, key={self.key}>"

    def variant(self, config: Config) -> tuple[Kernel, dict[str, Any]]:
        """(the kernel specialized with the config's Const values, its Spec values for the launch)."""
        if not isinstance(config, Config):
            raise TypeError(f"variant takes a coopdsl.autotune.Config, got {type(config).__name__}")
        if config not in self.configs:   # (one of another list: its names checked as the configs' were)
            _check_configs(self.kernel.name, [config], _parameter_kinds(self.kernel))
        values = config.values
        consts = {n: v for n, v in values.items() if n in self.const_names}
        spec = {n: v for n, v in values.items() if n not in self.const_names}
        return (self.kernel.specialize(**consts) if consts else self.kernel), spec

    def cached_config(self, *args: Any, device: Any = None, **kwargs: Any) -> Config | None:
        """The config the cache holds for these arguments on the device, or None (nothing is timed; the CPU
        interpreter has no cache entries)."""
        bound = self._bind(args, kwargs)   # (on the interpreter too: the same arguments are refused there)
        if _on_cpu(device):
            return None
        dev = _resolve_device(device, [*args, *kwargs.values()])
        return self._cached(self._entry(bound, dev))

    def best_config(self, grid: Any, *args: Any, device: Any = None, **kwargs: Any) -> Config:
        """The fastest config for these arguments on the device: from the cache, else tuned now; on the CPU
        interpreter (``device="cpu"``), where nothing is timed, the first config, the one :meth:`launch` runs."""
        bound = self._bind(args, kwargs)   # (on the interpreter too: the same arguments are refused there)
        if _on_cpu(device):
            return self.configs[0]
        dev = _resolve_device(device, [*args, *kwargs.values()])
        entry = self._entry(bound, dev)
        cached = self._cached(entry)
        if cached is not None:
            return cached
        config, timings = self._tune(grid, args, kwargs, bound, dev)
        self.cache.put(entry, {"config": repr(config), "ms": timings[repr(config)], "timings": timings,
                               "tuned": datetime.datetime.now().isoformat(timespec="seconds"),
                               "coopdsl": __version__})
        return config

    def _entry(self, bound: dict[str, Any], dev: Any) -> str:
        return "|".join([self.fingerprint, problem_key({n: bound[n] for n in self.key}), device_key(dev)])

    def _cached(self, entry: str) -> Config | None:
        record = self.cache.get(entry)
        known = {repr(c): c for c in self.configs}
        choice = None if record is None else record.get("config")
        if isinstance(choice, str) and choice in known:  # (a config since removed, or not a name: tune again)
            return known[choice]
        return None

    def launch(self, grid: Any, *args: Any, device: Any = None, **kwargs: Any) -> None:
        """Launch with the fastest config (tuning first on a new problem or device); ``grid`` may be a
        function of the arguments and the config's values, by name (``lambda p: (p["n"] // p["TILE"],)``)."""
        config = self.best_config(grid, *args, device=device, **kwargs)   # (the interpreter: the first config)
        variant, spec = self.variant(config)
        variant.launch(self._grid(grid, config, args, kwargs), *args, device=device, **kwargs, **spec)

    def _tune(self, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any], bound: dict[str, Any],
              dev: Any) -> tuple[Config, dict[str, float | str]]:
        saved = {n: _snapshot(bound[n]) for n in self.restore}
        timings: dict[str, float | str] = {}
        failures: list[Exception] = []
        start = getattr(self.timer, "start", None)  # a timer's preparation before the first config (clocks)
        for config in self.configs:
            variant, spec = self.variant(config)
            try:
                if start is not None:  # once, on the first config that runs
                    start(variant, self._grid(grid, config, args, kwargs), args, {**kwargs, **spec}, dev)
                    start = None
                ms = self.timer(variant, self._grid(grid, config, args, kwargs), args, {**kwargs, **spec}, dev)
                if isinstance(ms, bool) or not isinstance(ms, numbers.Real) or not 0.0 <= float(ms) < math.inf:
                    raise AutotuneError(f"the timer returned {ms!r}, not a time in milliseconds (a finite number, "
                                        f"0 or more)")
                timings[repr(config)] = float(ms)     # (an int, a numpy float: one type in the cache)
            except (CoopDSLError, RuntimeError, ValueError) as e:  # this config cannot run: try the others
                timings[repr(config)] = f"error: {type(e).__name__}: {e}"
                failures.append(e)
            finally:
                for n, data in saved.items():
                    _write_back(bound[n], data)
        self.last_timings = timings
        ran = [c for c in self.configs if isinstance(timings[repr(c)], float)]
        if not ran:
            first = failures[0] if failures else None
            if isinstance(first, LaunchError) and all(type(e) is type(first) and str(e) == str(first)
                                                      for e in failures):
                # (the launch's arguments, whatever the config: a missing buffer)
                raise first.with_traceback(None) from None
            raise AutotuneError(f"autotune {self.kernel.name}: no config ran on {device_key(dev)}:\n" +
                                "\n".join(f"  {c}: {t}" for c, t in timings.items()))
        return min(ran, key=lambda c: timings[repr(c)]), timings

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = self.signature.bind_partial(*args, **kwargs)
        except TypeError as e:   # (as Kernel.launch says it)
            raise LaunchCallError(f"{self.kernel.name}.launch: {e}") from None
        tuned = sorted({n for c in self.configs for n in c.values} & set(bound.arguments))
        if tuned:
            raise AutotuneError(f"autotune {self.kernel.name}: {', '.join(tuned)} "
                                f"{'is' if len(tuned) == 1 else 'are'} set by the configs; leave "
                                f"{'it' if len(tuned) == 1 else 'them'} out of the launch arguments")
        bound.apply_defaults()
        missing = [n for n in self.key if n not in bound.arguments]
        if missing:
            raise AutotuneError(f"autotune {self.kernel.name}: the key argument(s) {missing} were not given")
        return dict(bound.arguments)

    def _grid(self, grid: Any, config: Config, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not callable(grid):
            return grid
        return grid({**self._bind(args, kwargs), **config.values})


def autotune(configs: Sequence[Config], key: Sequence[str], *, cache: str | Path | None | bool = True,
             warmup: int = 5, repeat: int = 20, restore: Sequence[str] = (),
             timer: Timer | None = None, clock_up_ms: float = CLOCK_UP_MS) -> Callable[[Kernel], Autotuner]:
    """Decorate a ``@coopdsl.kernel`` so that each launch uses the fastest of ``configs``.

    ``key`` names the arguments whose values define a problem (tuning happens once per problem and
    device). ``cache`` is the JSON file keeping the results (True: :func:`default_cache_path`; False or
    None: this process only). ``warmup``/``repeat`` are ``Kernel.bench``'s. ``restore`` names arguments
    (numpy arrays or resident ``runtime.Array``) the kernel writes and reads, put back after each
    config's timing so that the real launch starts from the caller's data. ``timer`` replaces the
    timing (``(variant, grid, args, kwargs, device) -> ms``; for tests; a ``start`` method with the same
    arguments, if it has one, runs once before the first config is timed). ``clock_up_ms``: the untimed GPU
    work the default timer runs before the first config (:class:`BenchTimer`; 0 for none).
    """
    def wrap(kernel: Kernel) -> Autotuner:
        return Autotuner(kernel, configs, key, cache=cache, warmup=warmup, repeat=repeat, restore=restore,
                         timer=timer, clock_up_ms=clock_up_ms)

    return wrap


def _parameter_kinds(kernel: Kernel) -> dict[str, str]:
    """'spec' or 'const' for each such parameter of ``kernel``."""
    from .frontend.params import parameter_annotations
    from .frontend.source import parse_function

    # as the compiler reads them: also for a kernel made in a factory whose annotations name its locals
    annotations = parameter_annotations(kernel.fn, parse_function(kernel.fn))
    return {n: ("spec" if isinstance(a, SpecParam) else "const") for n, a in annotations.items()
            if isinstance(a, (SpecParam, ConstParam))}


def _check_options(name: str, warmup: Any, repeat: Any, clock_up_ms: Any, timer: Any) -> None:
    """The timing options, checked when the tuner is made (``warmup``/``repeat`` by ``Kernel.bench``'s rule,
    coopdsl/_counts.py) rather than at its first tuning; with a ``timer`` of the caller's, only that it is
    callable."""
    if timer is not None:
        if not callable(timer):
            raise AutotuneError(f"autotune {name}: timer must be a function (variant, grid, args, kwargs, device) "
                                f"-> ms, got {type(timer).__name__}")
        return
    problem = counts_problem(warmup, repeat)
    if problem:
        raise AutotuneError(f"autotune {name}: {problem}")
    if isinstance(clock_up_ms, bool) or not isinstance(clock_up_ms, numbers.Real) or \
            not 0.0 <= float(clock_up_ms) < math.inf:
        raise AutotuneError(f"autotune {name}: clock_up_ms must be a finite number of milliseconds, 0 or more, "
                            f"got {clock_up_ms!r}")


def _check_configs(name: str, configs: Sequence[Config], kinds: dict[str, str]) -> tuple[Config, ...]:
    if isinstance(configs, (str, bytes, Config)) or not isinstance(configs, Iterable):
        raise AutotuneError(f"autotune {name}: configs is a list of coopdsl.autotune.Config, got "
                            f"{type(configs).__name__}")
    configs = tuple(configs)
    if not configs:
        raise AutotuneError(f"autotune {name}: no configs given")
    for c in configs:
        if not isinstance(c, Config):
            raise AutotuneError(f"autotune {name}: configs must be coopdsl.autotune.Config objects, got {c!r}")
        unknown = sorted(set(c.values) - set(kinds))
        if unknown:
            raise AutotuneError(f"autotune {name}: {c} sets {', '.join(unknown)}, which "
                                f"{'is not a' if len(unknown) == 1 else 'are not'} cd.Spec or cd.Const "
                                f"parameter{'' if len(unknown) == 1 else 's'} of {name} "
                                f"(those are: {', '.join(sorted(kinds)) or 'none'})")
    for i, c in enumerate(configs):
        if c in configs[:i]:   # (True == 1 and np.uint32(64) == 64: such configs are one config)
            same = configs[configs[:i].index(c)]
            also = "" if repr(same) == repr(c) else f" (as {same}: the same values)"
            raise AutotuneError(f"autotune {name}: {c} is listed twice{also}")
    return configs


def _check_names(name: str, what: str, names: Sequence[str], signature: inspect.Signature) -> tuple[str, ...]:
    if isinstance(names, str):
        raise AutotuneError(f"autotune {name}: {what} is a list of parameter names, got the string {names!r}")
    if isinstance(names, bytes) or not isinstance(names, Iterable):
        raise AutotuneError(f"autotune {name}: {what} is a list of parameter names (strings), got {names!r}")
    names = tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise AutotuneError(f"autotune {name}: {what} is a list of parameter names (strings), got {names!r}")
    unknown = [n for n in names if n not in signature.parameters]
    if unknown:
        raise AutotuneError(f"autotune {name}: {what} names {', '.join(unknown)}, not parameters of {name} "
                            f"(those are: {', '.join(signature.parameters)})")
    return tuple(names)


def _snapshot(value: Any) -> Any:
    """A copy of an array argument's data (numpy array or resident ``runtime.Array``)."""
    import numpy as np

    if hasattr(value, "numpy") and hasattr(value, "write"):
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value.copy()
    raise AutotuneError(f"restore applies to numpy arrays and runtime.Array arguments, got {type(value).__name__}")


def _write_back(value: Any, data: Any) -> None:
    import numpy as np

    if isinstance(value, np.ndarray):
        np.copyto(value, data)
    else:
        value.write(data)
