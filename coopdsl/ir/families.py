"""The extension families few kernels use, which load on first need: the one table.

A family is a module of the same name in some of coopdsl's layers: its builtins in ``coopdsl.lang``, its ops
in ``coopdsl.ir.ops``, its lowerings in ``coopdsl.spirv.lower`` and its meaning on the CPU in
``coopdsl.interp.ops``.  The registries those fill (``BUILTINS`` and the method tables, ``OPS``,
``LOWERINGS``) read :func:`deferred` to know which modules to import on a lookup they miss; ``coopdsl``
reads :func:`lazy_names` for the ``cd.X`` names that import a family on first use; the interpreter imports
every family of its layer up front (:func:`modules`).  ``tests/test_lazy_families.py`` checks the table
against the files.
"""

from __future__ import annotations

from .._records import record

LAYERS = ("lang", "ir.ops", "spirv.lower", "interp.ops")  # the packages a family has modules in


@record(frozen=True)
class Family:
    """One deferred family: ``name`` (its modules' name), what it brings, the ``layers`` with a module of
    that name, and the ``cd.X`` names its ``lang`` module defines (``table``: the dict of that module they
    are read from, "" for module attributes)."""

    name: str
    brings: str
    layers: tuple[str, ...] = LAYERS
    exports: tuple[str, ...] = ()
    table: str = ""


_SCANNED = ("add", "mul", "min", "max", "and", "or", "xor")
_SCANS = ("", "inclusive_", "exclusive_", "clustered_")
_SUBGROUP = tuple(f"subgroup_{scan}{op}" for op in _SCANNED for scan in _SCANS) + tuple(
    f"subgroup_{name}" for name in ("elect", "all", "any", "all_equal", "broadcast", "broadcast_first", "ballot",
                                    "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down", "ballot_bit_count",
                                    "ballot_inclusive_bit_count", "ballot_exclusive_bit_count", "ballot_find_lsb",
                                    "ballot_find_msb", "inverse_ballot", "ballot_bit_extract", "quad_broadcast",
                                    "quad_swap_horizontal", "quad_swap_vertical", "quad_swap_diagonal"))
_ATOMICS = tuple(f"atomic_{name}" for name in ("add", "sub", "min", "max", "and", "or", "xor", "exchange",
                                               "compare_exchange", "load", "store"))

DEFERRED = (  # (in the order the registries import them)
    Family("atomics", "atomic operations on buffer and shared-array elements (OpAtomic*; lowered with subgroup)",
           ("lang", "ir.ops", "interp.ops"), _ATOMICS, "ATOMICS"),
    Family("callbacks", "functions as instruction operands (cd.partial)", ("lang",), ("partial",)),
    Family("coopmat2", "SPV_NV_cooperative_matrix2 reductions, per-element functions, use changes, transposes",
           exports=("Row", "Column", "Reduce2x2", "reduce_add", "reduce_max", "reduce_min")),
    Family("intdot", "integer dot products (SPV_KHR_integer_dot_product)", exports=("dot4x8",)),
    Family("qcom", "SPV_QCOM_cooperative_matrix_conversion", exports=("bitcast_array", "sub_array")),
    Family("subgroup", "subgroup operations (votes, broadcasts, ballots and their bits, shuffles, reductions, scans)",
           exports=_SUBGROUP, table="SUBGROUP"),
    Family("tensor", "tensor layouts and views, tensor-addressed loads and stores (SPV_NV_tensor_addressing)",
           exports=("tensor_layout", "tensor_view")),
)
FAMILIES = {f.name: f for f in DEFERRED}


def deferred(layer: str) -> tuple[str, ...]:
    """The names of the families with a module in ``layer`` (one of :data:`LAYERS`), for ``Registry.defer``."""
    if layer not in LAYERS:
        raise ValueError(f"no layer {layer!r}: one of {LAYERS}")
    return tuple(f.name for f in DEFERRED if layer in f.layers)


def modules(package: str, layer: str) -> tuple[str, ...]:
    """The module names of the families of ``layer``, in ``package`` (``coopdsl.interp.ops``)."""
    return tuple(f"{package}.{name}" for name in deferred(layer))


def lazy_names() -> dict[str, str]:
    """``cd.X`` name -> where ``coopdsl`` finds it (``".lang.subgroup:SUBGROUP"``: in that module's dict
    SUBGROUP; ``".lang.tensor"``: an attribute of the module), for :func:`coopdsl._lazy.lazy_exports`."""
    return {name: f".lang.{f.name}" + (f":{f.table}" if f.table else "") for f in DEFERRED for name in f.exports}
