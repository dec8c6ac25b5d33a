"""Ahead-of-time artifacts: C/C++ headers, reflection JSON and multi-kernel builds.

``coopdsl emit --format c|json`` and ``coopdsl build SPEC.toml`` are thin
front ends over this package (see docs/aot.md):

* :func:`compile_artifact` compiles one kernel variant into an :class:`Artifact`;
* :func:`render_header` writes artifacts as a C99/C++17 header;
* :func:`build` compiles a TOML build spec incrementally into a directory.

Each name but ``requirements`` loads its module on first use (``coopdsl emit``
to SPIR-V needs the kernel loader and the artifact, not the header writer).
``requirements`` is also the name of its module, so it stays an eager import
(see coopdsl/_lazy.py): importing the module would rebind the name to it.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from .requirements import Requirements, requirements

_EXPORTS = {
    "Artifact": ".artifact", "compile_artifact": ".artifact",
    "BuildError": ".errors", "InputError": ".errors", "KernelFileError": ".errors",
    "load_kernels": ".loading", "pick_kernel": ".loading",
    "render_header": ".cheader",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what the type checker sees of the names above
    from .artifact import Artifact, compile_artifact
    from .cheader import render_header
    from .errors import BuildError, InputError, KernelFileError
    from .loading import load_kernels, pick_kernel

__all__ = ["Artifact", "BuildError", "InputError", "KernelFileError", "Requirements", "compile_artifact",
           "load_kernels", "pick_kernel", "render_header", "requirements"]
