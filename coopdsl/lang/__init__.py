"""What kernels see: types, parameter kinds, and the builtins, each family in its own module.

Importing this package registers the builtin families every kernel may use in
:mod:`coopdsl.lang.registry`; the others (subgroup operations, atomics, tensor
layouts and SPV_NV_cooperative_matrix2 operations, QCOM conversions,
callbacks, integer dot products: :mod:`coopdsl.ir.families`) are named in the registry's ``LATER`` and
imported on first need:
a lookup the loaded families cannot answer, or a listing of a whole table.  ``coopdsl.X``
for one of their names imports its family too (``coopdsl/__init__.py``).
``lang`` imports only ``coopdsl.ir`` (and ``coopdsl.errors``); builtins build
IR through the narrow :class:`~coopdsl.lang.context.Builder` interface they
are handed.
"""

from ..ir.families import deferred
from . import (  # noqa: F401  (register)
    access,
    arrays,
    convert,
    coopmat,
    inputs,
    loops,
    math,
    memory,
    uniform,
)
from .registry import BUILTINS

# (the method tables share the list)
BUILTINS.defer(__name__, *deferred("lang"))
