"""Errors of the ahead-of-time tools (kernel files, build specs, builds).

``InputError`` is a usage mistake (missing file, a directory where a file
belongs, a malformed build spec, an unknown kernel name): the command line
reports it with exit status 2.  ``KernelFileError`` and ``BuildError`` mean
the user's code is wrong (it does not import, or a kernel does not compile):
exit status 1.  None of them carries a traceback into coopdsl.
"""

from __future__ import annotations

from ..errors import CoopDSLError


class InputError(CoopDSLError, ValueError):
    """A file or argument given to an ahead-of-time command is unusable."""


class KernelFileError(CoopDSLError):
    """A Python file of kernels could not be run (syntax error, failed import, exception at import)."""


class BuildError(CoopDSLError):
    """A kernel of a build spec failed to compile; the message names the kernel, variant and source line."""
