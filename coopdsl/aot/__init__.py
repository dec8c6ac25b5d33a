"""Ahead-of-time artifacts: C/C++ headers, reflection JSON and multi-kernel builds.

``coopdsl emit --format c|json`` and ``coopdsl build SPEC.toml`` are thin
front ends over this package (see docs/aot.md):

* :func:`compile_artifact` compiles one kernel variant into an :class:`Artifact`;
* :func:`render_header` writes artifacts as a C99/C++17 header;
* :func:`build` compiles a TOML build spec incrementally into a directory.
"""

from .._lazy import lazy_exports
from .artifact import Artifact, compile_artifact
from .errors import BuildError, InputError, KernelFileError
from .loading import load_kernels, pick_kernel
from .requirements import Requirements, requirements

__getattr__ = lazy_exports(__name__, {"render_header": ".cheader"})  # `coopdsl emit` to SPIR-V needs no header

__all__ = ["Artifact", "BuildError", "InputError", "KernelFileError", "Requirements", "compile_artifact",
           "load_kernels", "pick_kernel", "render_header", "requirements"]
