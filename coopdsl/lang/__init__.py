"""What kernels see: types, parameter kinds, and the builtins, each family in its own module.

Importing this package registers every builtin family in
:mod:`coopdsl.lang.registry`.  ``lang`` imports only ``coopdsl.ir`` (and
``coopdsl.errors``); builtins build IR through the narrow
:class:`~coopdsl.lang.context.Builder` interface they are handed.
"""

from . import (  # noqa: F401  (register)
    access,
    arrays,
    atomics,
    callbacks,
    convert,
    coopmat,
    coopmat2,
    inputs,
    loops,
    math,
    memory,
    qcom,
    subgroup,
    uniform,
)
