"""Host-side cost of launching a small kernel: numpy in/out, resident arrays, and batches.

    python benchmarks/launch_overhead.py [--launches 1000] [--repeats 7] [--out benchmarks/notes/launch-overhead.md]

Times ``--launches`` launches of a 1,024-element axpy (16 workgroups of 64) in each mode and reports the
wall-clock microseconds per launch (median and minimum over ``--repeats`` runs):

- numpy in/out: ``k.launch(grid, x, y, n, alpha)`` with numpy arrays (upload, dispatch, download, wait);
- resident, immediate: the same with ``runtime.Array`` arguments (dispatch and wait per launch; the wait
  polls the fence for up to ``Device.spin_ns`` before it blocks);
- resident, immediate, blocking wait: the same with ``spin_ns = 0`` (straight to ``vkWaitForFences``);
- resident, batch: all launches inside one ``with runtime.batch(dev):`` block (recorded and handed to the
  GPU in chunks of 64 while recording goes on, one wait at the end); the time includes the wait, and
  "recording" gives the host time per launch spent before the block's end;
- resident, batch without chunks: the same with ``flush_every=None`` (one submission at the end, so the GPU
  starts only when everything is recorded).

Each mode's result is checked (y = launches * x). Runs on any Vulkan device, lavapipe included.

``--breakdown`` adds where a batched launch's host time goes, each part timed alone in a loop (best of the
repeats): the whole ``Kernel.launch`` recorded into a batch without chunks, the driver's barrier and
dispatch recording called as the batch calls them (untyped ctypes entry points, arguments wrapped once)
and through the typed ones, and a trivial ctypes call (libc ``labs``) for ctypes' own cost.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import coopdsl as cd  # noqa: E402
from benchmarks._gpu import require_vulkan  # noqa: E402
from benchmarks._report import cpu_name, replace_section  # noqa: E402
from coopdsl import f32, runtime, u32  # noqa: E402

N = 1024
GRID = (N // 64,)


@cd.kernel(workgroup_size=(64, 1, 1))
def axpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i]


def run_numpy(dev, launches: int) -> tuple[float, float, np.ndarray]:
    x, y = np.ones(N, np.float32), np.zeros(N, np.float32)
    t0 = time.perf_counter()
    for _ in range(launches):
        axpy.launch(GRID, x, y, N, 1.0, device=dev)
    t = time.perf_counter() - t0
    return t, t, y


def run_immediate(dev, launches: int) -> tuple[float, float, np.ndarray]:
    x, y = runtime.array(np.ones(N, np.float32), dev), runtime.zeros(N, np.float32, dev)
    t0 = time.perf_counter()
    for _ in range(launches):
        axpy.launch(GRID, x, y, N, 1.0)
    t = time.perf_counter() - t0
    out = y.numpy()
    x.free(), y.free()
    return t, t, out


def run_blocking(dev, launches: int) -> tuple[float, float, np.ndarray]:
    spin, dev.spin_ns = dev.spin_ns, 0
    try:
        return run_immediate(dev, launches)
    finally:
        dev.spin_ns = spin


def run_batch(dev, launches: int, flush_every: int | None = runtime.FLUSH_EVERY) -> tuple[float, float, np.ndarray]:
    x, y = runtime.array(np.ones(N, np.float32), dev), runtime.zeros(N, np.float32, dev)
    t0 = time.perf_counter()
    with runtime.batch(dev, flush_every=flush_every):
        for _ in range(launches):
            axpy.launch(GRID, x, y, N, 1.0)
        recorded = time.perf_counter() - t0
    t = time.perf_counter() - t0
    out = y.numpy()
    x.free(), y.free()
    return t, recorded, out


MODES = {"numpy in/out, immediate": run_numpy, "resident arrays, immediate": run_immediate,
         "resident arrays, immediate, blocking wait": run_blocking,
         "resident arrays, one batch": run_batch,
         "resident arrays, one batch without chunks": lambda dev, launches: run_batch(dev, launches, None)}


def measure(dev, launches: int, repeats: int) -> list[tuple[str, float, float, float]]:
    """(mode, median us/launch, min us/launch, median recording us/launch) per mode, results checked."""
    rows = []
    for label, fn in MODES.items():
        fn(dev, 3)  # warm-up: compile, pipeline, descriptor sets, pooled buffers
        totals, records = [], []
        for _ in range(repeats):
            total, recorded, out = fn(dev, launches)
            if not np.array_equal(out, np.full(N, launches, np.float32)):
                raise SystemExit(f"launch_overhead.py: {label}: wrong result {out[:4]}...")
            totals.append(total / launches * 1e6)
            records.append(recorded / launches * 1e6)
        rows.append((label, statistics.median(totals), min(totals), statistics.median(records)))
    return rows


def breakdown(dev, calls: int, repeats: int) -> list[tuple[str, float]]:
    """(part, best us per call) of a batched launch's host time (see the module docstring)."""
    import ctypes

    from coopdsl.runtime.batch import _BARRIER_ARGS, COMPUTE_AND_TRANSFER, FULL_BARRIER_REF

    x, y = runtime.array(np.ones(N, np.float32), dev), runtime.zeros(N, np.float32, dev)
    axpy.launch(GRID, x, y, N, 1.0)
    libc = ctypes.CDLL(None)

    def best(fn) -> float:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times) / calls * 1e6

    out = []
    with runtime.batch(dev, flush_every=None) as b:
        def launches() -> None:
            for _ in range(calls):
                axpy.launch(GRID, x, y, N, 1.0)
        out.append(("Kernel.launch recorded into a batch (all of it)", best(launches)))
        cb, v = b.command_buffer, dev.vk
        arg = ctypes.c_void_p(cb)
        raw_barrier, raw_dispatch = v.raw["vkCmdPipelineBarrier"], v.raw["vkCmdDispatch"]

        def untyped() -> None:
            for _ in range(calls):
                raw_barrier(arg, *_BARRIER_ARGS)
                raw_dispatch(arg, GRID[0], 1, 1)

        def typed() -> None:
            for _ in range(calls):
                v.vkCmdPipelineBarrier(cb, COMPUTE_AND_TRANSFER, COMPUTE_AND_TRANSFER, 0, 1, FULL_BARRIER_REF, 0,
                                       None, 0, None)
                v.vkCmdDispatch(cb, GRID[0], 1, 1)
        out.append(("the driver's barrier + dispatch recording, untyped ctypes (as the batch calls them)",
                    best(untyped)))
        out.append(("the same through the typed entry points", best(typed)))
    labs = libc.labs

    def trivial() -> None:
        for _ in range(calls):
            labs(16)
    out.append(("a trivial ctypes call (libc labs)", best(trivial)))
    x.free(), y.free()
    return out


def table(rows: list[tuple[str, float, float, float]]) -> list[str]:
    """The results as markdown table lines."""
    lines = ["| mode | median us/launch | min us/launch | host recording us/launch |", "|---|---|---|---|"]
    for label, med, lo, rec in rows:
        lines.append(f"| {label} | {med:.1f} | {lo:.1f} | {rec:.1f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table and write it to ``--out`` when given."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--launches", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--out", default=None, help="markdown file to add or replace this device's section in")
    p.add_argument("--breakdown", action="store_true", help="also time the parts of a batched launch")
    args = p.parse_args(argv)
    if args.launches < 1 or args.repeats < 1:
        p.error("--launches and --repeats must be >= 1")
    dev = require_vulkan("launch_overhead.py")
    info = dev.info
    rows = measure(dev, args.launches, args.repeats)
    lines = table(rows)
    if args.breakdown:
        lines += ["", f"Where a batched launch's host time goes ({args.launches} calls, best of {args.repeats}):", "",
                  "| part | us per launch |", "|---|---|"]
        lines += [f"| {part} | {us:.2f} |" for part, us in breakdown(dev, args.launches, args.repeats)]
    print(f"{info.name} ({info.device_type}), {args.launches} launches x {args.repeats} repeats")
    print("\n".join(lines))
    if args.out:
        cpu_note = " (Mesa's lavapipe: the device work runs on the host CPU too)" if info.device_type == "CPU" else ""
        body = [f"Device: {info.name} ({info.device_type}){cpu_note}, driver {info.driver_name} {info.driver_info}; "
                f"host {platform.node()}: {cpu_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
                f"{datetime.date.today()}.", "",
                f"Command: `python benchmarks/launch_overhead.py --launches {args.launches} --repeats "
                f"{args.repeats}{' --breakdown' if args.breakdown else ''} --out {args.out}`", "",
                f"Wall-clock time per launch of a {N}-element axpy ({GRID[0]} workgroups of 64) through "
                f"`Kernel.launch`, {args.launches} launches per run, median and minimum over {args.repeats} runs. "
                "\"Host recording\" is the time before the submission (equal to the total for immediate "
                "launches). Targets on the H100: <= 100 us per immediate launch, <= 10 us per launch in a batch.",
                "", *lines]
        replace_section(args.out, f"## Launch overhead on {info.name}", "\n".join(body))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
