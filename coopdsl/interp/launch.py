"""Running a kernel on the CPU: ``kernel.launch(grid, *args, device="cpu")``.

Workgroups run in batches (all invocations of a batch execute together,
vectorised with numpy), in order of their linear id ``x + gx * (y + gy * z)``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .._grid import INTERPRETER_WORKGROUP, grid3
from ..errors import CoopDSLError
from ..ir.core import Module, SpecConst
from . import resources
from .bind import allocate_arguments, pointers_of
from .control import max_iterations, run_function
from .environ import DEVICE_ENV, device_env, positive_env
from .errors import LaunchArgumentError
from .lanes import SUBGROUP_SIZES, Lanes
from .layout import Layout
from .machine import Machine
from .memory import DeviceMemory
from .spec import SpecValues

if TYPE_CHECKING:
    from ..kernel import Kernel

DEFAULT_SUBGROUP_SIZE = 32
MAX_SLOTS = 1 << 16  # invocation slots per batch (bounds the memory of one batch)
SUBGROUP_ENV = "COOPDSL_SUBGROUP_SIZE"
INVOCATIONS_ENV = "COOPDSL_INTERP_MAX_INVOCATIONS"
DEFAULT_MAX_INVOCATIONS = 1 << 28


def wants_cpu(device: Any) -> bool:
    """Whether a launch with ``device`` runs on the interpreter.

    ``device="cpu"`` does; ``device=None`` does when the environment variable
    ``COOPDSL_DEVICE`` is ``cpu`` (``gpu``, unset or a device index leave it to the GPU runtime, which takes
    the index).  Any other string is an error.
    """
    if device is None:
        env = device_env().strip().lower()
        if env not in ("", "cpu", "gpu") and not env.isdigit():
            raise LaunchArgumentError(f"{DEVICE_ENV} must be 'cpu', 'gpu' or a device index (as `coopdsl devices` "
                                      f"numbers them), got {env!r}")
        return env == "cpu"
    if isinstance(device, str):
        if device.lower() == "cpu":
            return True
        raise LaunchArgumentError(f"device must be 'cpu', None or a coopdsl.runtime.Device, got {device!r}")
    return False


def subgroup_size_from(value: int | None) -> int:
    """The subgroup size to emulate: ``value``, else ``COOPDSL_SUBGROUP_SIZE``, else 32."""
    chosen: int | str | None = value
    source = "subgroup size"
    if chosen is None:
        env = os.environ.get(SUBGROUP_ENV)
        chosen = int(env) if env and env.strip().isdigit() else (DEFAULT_SUBGROUP_SIZE if not env else env)
        source = f"{SUBGROUP_ENV}={env}: the subgroup size" if env else source
    if isinstance(chosen, (bool, np.bool_)) or not isinstance(chosen, (int, np.integer)) \
            or chosen not in SUBGROUP_SIZES:  # (numpy integers too, as the grid and push constants take them)
        raise LaunchArgumentError(f"{source} must be one of {SUBGROUP_SIZES}, got {chosen!r}")
    return int(chosen)


MAX_INVOCATIONS = INTERPRETER_WORKGROUP  # per workgroup: what NVIDIA, AMD (RADV) and Intel (ANV) GPUs allow


def run(module: Module, grid: tuple[int, ...] | int, values: dict[str, Any], spec: dict[str, Any] | None = None,
        subgroup_size: int | None = None, check_races: bool = True, max_slots: int = MAX_SLOTS) -> None:
    """Interpret ``module`` over ``grid`` workgroups (1 to 3 counts, the missing ones 1) with kernel arguments
    ``values`` (by parameter name).

    Writable buffers and arrays passed for pointers are updated in place; returns None.
    """
    sgs = subgroup_size_from(subgroup_size)
    specs = SpecValues(module, dict(spec or {}))
    x, y, z = (int(specs.value(s)) if isinstance(s, SpecConst) else int(s) for s in module.workgroup_size)
    wg_size = (x, y, z)
    if min(wg_size) < 1:
        raise LaunchArgumentError(f"workgroup size {wg_size} must be positive")
    if x * y * z > MAX_INVOCATIONS:
        raise LaunchArgumentError(f"a workgroup of {x}x{y}x{z} = {x * y * z} invocations: the interpreter runs at "
                                  f"most {MAX_INVOCATIONS}, the maxComputeWorkGroupInvocations of NVIDIA, AMD and "
                                  f"Intel GPUs")
    grid = grid3(grid, least=0, error=LaunchArgumentError)  # (Python ints: numpy's would overflow below)
    total = grid[0] * grid[1] * grid[2]
    _check_invocations(grid, total, x * y * z)
    max_iterations()  # (a bad COOPDSL_INTERP_MAX_ITERATIONS is refused before anything runs)
    probe = Lanes(wg_size, sgs, np.zeros((1, 3), np.int64), grid)
    layout = Layout(specs, probe)
    device = DeviceMemory()
    placed = allocate_arguments(module, layout, values, device)
    per_batch = resources.workgroups_per_batch(resources.check(module, layout, probe), probe.slots_per_wg, max_slots)
    region = device.finish()
    globals_ = pointers_of(placed, region)
    with np.errstate(all="ignore"):
        for start in range(0, total, per_batch):
            lanes = Lanes(wg_size, sgs, _workgroup_ids(grid, start, per_batch), grid)
            m = Machine(module, specs, lanes, region, globals_, check_races)
            m.call_function = run_function
            run_function(m, module.entry, [], lanes.valid.copy())
    device.write_back()


def max_invocations() -> int:
    """How many invocations one launch may run on the interpreter (COOPDSL_INTERP_MAX_INVOCATIONS, default
    268,435,456 = 2**28): a grid beyond it is refused instead of running for hours."""
    return positive_env(INVOCATIONS_ENV, DEFAULT_MAX_INVOCATIONS)


def _check_invocations(grid: tuple[int, int, int], workgroups: int, per_workgroup: int) -> None:
    """Refuse a launch of more invocations than :func:`max_invocations` (a GPU runs 2**32 - 1 workgroups per
    axis in seconds; the interpreter runs some tens of millions of invocations a second at best)."""
    limit = max_invocations()
    if workgroups * per_workgroup > limit:
        raise LaunchArgumentError(f"grid {grid}: {workgroups:,} workgroups of {per_workgroup} invocations are "
                                  f"{workgroups * per_workgroup:,} invocations, more than the interpreter runs in one "
                                  f"launch ({limit:,}); raise {INVOCATIONS_ENV} if it really is this large")


def _workgroup_ids(grid: tuple[int, int, int], start: int, count: int) -> np.ndarray:
    """The ids (x, y, z) of workgroups ``start`` to ``start + count`` of ``grid`` in dispatch order (x fastest),
    made per batch: a large grid costs time, not memory for all its ids at once."""
    gx, gy, gz = grid
    flat = np.arange(start, min(start + count, gx * gy * gz), dtype=np.int64)
    return np.stack([flat % gx, flat // gx % gy, flat // (gx * gy)], axis=1)


def launch(kernel: Kernel, grid: tuple[int, int, int], values: dict[str, Any], spec: dict[str, Any],
           subgroup_size: int | None = None) -> None:
    """Run ``kernel`` (a :class:`coopdsl.Kernel`) on the CPU, as ``Kernel.launch`` does on a GPU, with
    subgroups of the kernel's required ``subgroup_size`` when it has one (``subgroup_size`` may only repeat it).

    Errors are raised without the interpreter's frames in their traceback (like compile errors).
    """
    required = getattr(kernel, "subgroup_size", None)  # @kernel(subgroup_size=N): the size it runs at
    if required is not None:
        if subgroup_size is not None and subgroup_size != required:
            raise LaunchArgumentError(f"{kernel.name} requires subgroups of {required} invocations "
                                      f"(@coopdsl.kernel(subgroup_size={required}) at "
                                      f"{kernel.reflect()['subgroup_size_loc']}); the launch asks for "
                                      f"subgroup_size={subgroup_size}: leave it out")
        subgroup_size = required
    try:
        run(kernel.ir(), grid, values, spec, subgroup_size)
    except CoopDSLError as e:
        raise e.with_traceback(None) from None
