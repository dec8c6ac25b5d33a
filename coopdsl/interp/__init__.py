"""A CPU reference interpreter of coopdsl's IR, vectorised with numpy.

``kernel.launch(grid, *args, device="cpu")`` (or ``COOPDSL_DEVICE=cpu``)
runs a kernel here instead of on a Vulkan GPU, with the same arguments and
results.  See docs/interpreter.md for the execution model, the
cooperative-matrix element mapping, and the errors it reports.
"""

from __future__ import annotations

from .errors import InterpreterError, LaunchArgumentError
from .launch import DEFAULT_SUBGROUP_SIZE, launch, run, subgroup_size_from, wants_cpu

__all__ = ["launch", "run", "wants_cpu", "subgroup_size_from", "InterpreterError", "LaunchArgumentError",
           "DEFAULT_SUBGROUP_SIZE"]
