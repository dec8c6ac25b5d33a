"""coopdsl.autotune after an idle spell, with and without bringing the clocks up first (clock_up_ms).

    python benchmarks/autotune_clock.py [--n 8192] [--rounds 3] [--idle 3.0]
        [--out benchmarks/notes/gemm-best-per-pair.md]

Each round leaves the GPU idle for ``--idle`` seconds, then tunes two configurations of
``coopdsl/ops/gemm_tiled.py`` (f16->f16, 256x256x32 blocks, GROUP_M 8 and 1; they run at nearly the same
speed) with ``clock_up_ms=0`` and, after another idle spell, with the default; the table gives the time
the tuner recorded for each configuration (``Autotuner.last_timings``, the median of its 20 timed
dispatches after 5 untimed ones).  Without the clock-up the first configuration is timed while the clocks
are still coming back up.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.best_gemm.kernel import kernel  # noqa: E402
from benchmarks.best_gemm.sweep import inputs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--idle", type=float, default=3.0, help="seconds of idle GPU before each tuning")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    from benchmarks._gpu import require_gpu
    from coopdsl import runtime
    from coopdsl.autotune import CLOCK_UP_MS, Autotuner
    from coopdsl.ops.gemm_tiled import config, grid

    device = require_gpu("autotune_clock.py")
    n = args.n
    a, b, d, _ = inputs("f16-f16", n, n, n, np.random.default_rng(0), reference=False)
    arrays = [runtime.array(x, device=device) for x in (a, b, d)]
    configs = [config(256, 256, 32, 128, 64, group=8), config(256, 256, 32, 128, 64, group=1)]
    rows = []
    for r in range(args.rounds):
        for clock in (0.0, CLOCK_UP_MS):
            time.sleep(args.idle)
            tuner = Autotuner(kernel("f16-f16"), configs, key=["M", "N", "K"], cache=False, clock_up_ms=clock)
            tuner.best_config(lambda q: grid(q["M"], q["N"], q["TILE_M"], q["TILE_N"]), *arrays, M=n, N=n, K=n,
                              device=device)
            first, second = (tuner.last_timings[repr(c)] for c in configs)
            rows.append(f"| {r + 1} | {clock:g} | {first:.3f} | {second:.3f} |")
            print(rows[-1], flush=True)
    info = device.info
    lines = [f"Date: {datetime.date.today()}. Machine: {info.name}, driver {info.driver_name} {info.driver_info}.", "",
             f"Command: `python benchmarks/autotune_clock.py --n {n} --rounds {args.rounds} --idle {args.idle}`", "",
             f"Each tuning follows {args.idle} s of idle GPU. f16->f16 at {n}^3, `coopdsl/ops/gemm_tiled.py` "
             "256x256x32 blocks; ms per dispatch as the tuner recorded them (median of 20 after 5 untimed). "
             "The first configuration is timed first.", "",
             "| round | clock_up_ms | first configuration (GROUP_M 8), ms | second (GROUP_M 1), ms |",
             "|---|---|---|---|", *rows]
    print("\n".join(lines))
    if args.out:
        from benchmarks._report import replace_section

        replace_section(str(args.out), "## Autotuning after an idle spell: clock_up_ms (H100)", "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
