"""Timing dispatches with GPU timestamps (``Kernel.bench``)."""

from __future__ import annotations

import ctypes
import operator
import statistics
from dataclasses import dataclass, field
from typing import Any

from .._counts import counts_problem
from .._grid import grid3
from . import vk
from .batch import Batch, current_batch
from .device import Device
from .errors import LaunchError
from .features import INTERPRETER_HINT, DeviceFeatureError
from .launch import _check_call, bind, resolve_device


@dataclass
class BenchResult:
    """GPU-timestamp timing of repeated dispatches (milliseconds)."""

    median_ms: float
    min_ms: float
    max_ms: float
    stdev_ms: float
    times_ms: list[float] = field(repr=False, default_factory=list)
    flops: float | None = None

    @property
    def tflops(self) -> float | None:
        """TFLOP/s at the median time, when the flop count was given."""
        return None if self.flops is None else self.flops / (self.median_ms * 1e-3) / 1e12


BENCH_NO_INTERPRETER = ("; bench times kernels on a GPU (the CPU interpreter runs them, device=\"cpu\", but does not "
                        "time them)")


def bench(spirv: bytes, reflection: dict[str, Any], grid: tuple[int, int, int], args: dict[str, Any],
          spec: dict[str, Any] | None = None, warmup: int = 5, repeat: int = 20, flops: float | None = None,
          device: Device | None = None) -> BenchResult:
    """Time ``repeat`` dispatches (after ``warmup`` untimed ones) with GPU timestamps around each.

    All dispatches go into one submission, separated by barriers so each timing covers one whole kernel;
    numpy outputs hold the result of the last dispatch afterwards. ``grid`` as :func:`coopdsl.runtime.launch`
    takes it; ``flops`` (optional) is a non-negative count.
    """
    grid = grid3(grid, least=1, error=LaunchError)
    spirv = _check_call(spirv, reflection, args, spec)
    if flops is not None and (isinstance(flops, bool) or not isinstance(flops, (int, float)) or not flops >= 0):
        raise LaunchError(f"flops must be a non-negative number of floating-point operations, got {flops!r}")
    problem = counts_problem(warmup, repeat)
    if problem:
        raise LaunchError(problem)
    warmup, repeat = operator.index(warmup), operator.index(repeat)   # (np.int64(3) as 3)
    dev = resolve_device(device, args)
    if current_batch(dev) is not None:
        raise LaunchError("bench times its own submission: call it outside a `with runtime.batch(...)` block")
    v, d = dev.vk, dev.handle
    qinfo = vk.QueryPoolCreateInfo(sType=vk.ST_QUERY_POOL_CREATE_INFO, queryType=vk.QUERY_TYPE_TIMESTAMP,
                                   queryCount=2 * repeat)
    pool = vk.VkNonDispatchable()
    v.call("vkCreateQueryPool", d, ctypes.byref(qinfo), None, ctypes.byref(pool))
    b = Batch(dev)
    try:
        program = dev.program(spirv, reflection)
        pipeline = program.pipeline(spec)
        ds, push = bind(b, program, args)
        v.vkCmdResetQueryPool(b.command_buffer, pool, 0, 2 * repeat)
        for i in range(warmup + repeat):
            query = (pool.value, 2 * (i - warmup)) if i >= warmup else None
            b.dispatch(pipeline, program.layout, ds, push, grid, query=query)
        b.submit()
        stamps = (ctypes.c_uint64 * (2 * repeat))()
        v.call("vkGetQueryPoolResults", d, pool, 0, 2 * repeat, ctypes.sizeof(stamps), stamps, 8,
               vk.QUERY_RESULT_64 | vk.QUERY_RESULT_WAIT)
    except DeviceFeatureError as e:   # (the interpreter runs kernels but does not time them: no hint to it)
        b.discard()
        raise DeviceFeatureError(str(e).replace(INTERPRETER_HINT, BENCH_NO_INTERPRETER), e.mismatches,
                                 e.loc) from None
    except BaseException:
        b.discard()
        raise
    finally:
        v.vkDestroyQueryPool(d, pool, None)
    mask = (1 << dev.timestamp_bits) - 1 if 0 < dev.timestamp_bits < 64 else (1 << 64) - 1
    period = dev.info.timestamp_period_ns
    times = [(((stamps[2 * i + 1] - stamps[2 * i]) & mask) * period) / 1e6 for i in range(repeat)]
    return BenchResult(median_ms=statistics.median(times), min_ms=min(times), max_ms=max(times),
                       stdev_ms=statistics.pstdev(times), times_ms=times, flops=flops)
