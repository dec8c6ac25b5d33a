"""coopdsl: cooperative-matrix compute kernels in Python, compiled to SPIR-V.

Write a kernel as a decorated Python function, compile it to a validated
SPIR-V module, inspect it, and run it (``coopdsl.runtime``).  See README.md
and docs/ for the language.
"""

import gc as _gc
from typing import TYPE_CHECKING

# Importing makes ~20,000 objects and keeps them: the cyclic collector, left on, would look at them
# over and over (a sixth of the import); it is off while the package loads (coopdsl/_gcpause.py).
_collecting = _gc.isenabled()
_gc.disable()
try:
    from ._lazy import lazy_exports
    from .errors import (
                         ArgumentError,
                         CompileError,
                         CoopDSLError,
                         InternalCompilerError,
                         LaunchCallError,
                         NameResolutionError,
                         ShapeError,
                         SourceLoc,
                         ToolError,
                         TypeMismatchError,
                         UniformityError,
                         UnsupportedSyntaxError,
                         ValidationError,
    )
    from .ir.families import FAMILIES as _FAMILIES
    from .ir.families import lazy_names as _lazy_names
    from .kernel import Kernel, kernel
    from .lang import math as _math
    from .lang.access import load_element, store_element
    from .lang.arrays import array  # noqa: F401  (cd.array: array values and types, struct members too; not star-exported)
    from .lang.convert import bitcast
    from .lang.coopmat import muladd
    from .lang.functions import DeviceFunction, func
    from .lang.inputs import BUILTIN_VARS
    from .lang.loops import range_ as range  # noqa: A001, F401  (coopdsl.range: range with loop hints)
    from .lang.loops import static_range
    from .lang.memory import barrier, control_barrier, local_array, memory_barrier, private_array, shared
    from .lang.structs import Ptr, Uniform, struct
    from .lang.types import (
                         Acc,
                         Buffer,
                         ClampConstant,
                         ClampRepeat,
                         ClampRepeatMirrored,
                         ClampToEdge,
                         ClampUndefined,
                         ColumnMajor,
                         Const,
                         CoopMat,
                         CrossDevice,
                         Device,
                         Invocation,
                         MatA,
                         MatB,
                         Push,
                         QueueFamily,
                         RowMajor,
                         Spec,
                         Subgroup,
                         UseA,
                         UseAcc,
                         UseB,
                         Workgroup,
                         bf16,
                         boolean,
                         e4m3,
                         e5m2,
                         f16,
                         f32,
                         f64,
                         i8,
                         i16,
                         i32,
                         i64,
                         u8,
                         u16,
                         u32,
                         u64,
                         vec2,
                         vec3,
                         vec4,
    )
    from .lang.uniform import assume_uniform  # the uniformity check's escape hatch
finally:
    if _collecting:
        _gc.enable()
    del _collecting

globals().update(_math.MATH)
dot, mod, isnan, isinf, any, all, select, erf = (  # noqa: A001  (kernel builtins shadow Python's inside coopdsl)
    _math.BUILTINS[n] for n in ("dot", "mod", "isnan", "isinf", "any", "all", "select", "erf"))
bit_count, bit_reverse, bitfield_extract, bitfield_insert, pack_half_2x16, unpack_half_2x16 = (
    _math.BUILTINS[n] for n in ("bit_count", "bit_reverse", "bitfield_extract", "bitfield_insert", "pack_half_2x16",
                                "unpack_half_2x16"))
(pack_unorm_4x8, unpack_unorm_4x8, pack_snorm_4x8, unpack_snorm_4x8, pack_unorm_2x16, unpack_unorm_2x16,
 pack_snorm_2x16, unpack_snorm_2x16) = (_math.BUILTINS[f"{way}_{fmt}"] for fmt in ("unorm_4x8", "snorm_4x8",
                                                                                  "unorm_2x16", "snorm_2x16")
                                        for way in ("pack", "unpack"))

workgroup_id = BUILTIN_VARS["workgroup_id"]
local_invocation_id = BUILTIN_VARS["local_invocation_id"]
global_invocation_id = BUILTIN_VARS["global_invocation_id"]
num_workgroups = BUILTIN_VARS["num_workgroups"]
local_invocation_index = BUILTIN_VARS["local_invocation_index"]
subgroup_id = BUILTIN_VARS["subgroup_id"]
subgroup_size = BUILTIN_VARS["subgroup_size"]
subgroup_invocation_id = BUILTIN_VARS["subgroup_invocation_id"]
num_subgroups = BUILTIN_VARS["num_subgroups"]
subgroup_eq_mask, subgroup_ge_mask, subgroup_gt_mask, subgroup_le_mask, subgroup_lt_mask = (
    BUILTIN_VARS[f"subgroup_{r}_mask"] for r in ("eq", "ge", "gt", "le", "lt"))

__version__ = "0.1.0"

# The builtins of coopdsl.lang.subgroup and coopdsl.lang.atomics by name, so that cd.X can load them on first
# use (tests/test_lazy_families.py checks these lists against the families' own tables).
_SUBGROUP = list(_FAMILIES["subgroup"].exports)
_ATOMICS = list(_FAMILIES["atomics"].exports)

__all__ = [
    "kernel", "Kernel", "func", "DeviceFunction",
    # types
    "boolean", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bf16",
    "e4m3", "e5m2", "vec2", "vec3", "vec4", "MatA", "MatB", "Acc", "CoopMat",
    "Buffer", "Spec", "Push", "Const", "Uniform", "Ptr", "struct",
    # enumerants
    "RowMajor", "ColumnMajor", "Subgroup", "Workgroup", "Device", "CrossDevice", "Invocation", "QueueFamily",
    "UseA", "UseB", "UseAcc",
    # builtins
    "muladd", "barrier", "bitcast", "static_range", "load_element", "store_element",
    "shared", "local_array", "private_array", "control_barrier", "memory_barrier",  # (cd.range is not star-exported)
    "bitcast_array", "sub_array",
    "workgroup_id", "local_invocation_id", "global_invocation_id", "num_workgroups",
    "local_invocation_index", "subgroup_id", "subgroup_size", "subgroup_invocation_id", "num_subgroups",
    "subgroup_eq_mask", "subgroup_ge_mask", "subgroup_gt_mask", "subgroup_le_mask", "subgroup_lt_mask",
    # math (GLSL.std.450 and friends)
    # (min, max, abs, round, pow, any, all are reached as cd.min etc.: a star-import must not shadow Python's)
    *sorted(n for n in _math.MATH if n not in ("min", "max", "abs", "round", "pow")),
    "dot", "mod", "isnan", "isinf", "select", "erf", "dot4x8",
    "bit_count", "bit_reverse", "bitfield_extract", "bitfield_insert", "pack_half_2x16", "unpack_half_2x16",
    "pack_unorm_4x8", "unpack_unorm_4x8", "pack_snorm_4x8", "unpack_snorm_4x8", "pack_unorm_2x16",
    "unpack_unorm_2x16", "pack_snorm_2x16", "unpack_snorm_2x16",
    *sorted(_SUBGROUP), *sorted(_ATOMICS),
    # errors
    "CoopDSLError", "CompileError", "UnsupportedSyntaxError", "NameResolutionError", "TypeMismatchError",
    "ShapeError", "ArgumentError", "InternalCompilerError", "ToolError", "ValidationError", "SourceLoc",
    "LaunchCallError",
]
__all__ += ["assume_uniform", "UniformityError"]
__all__ += ["tensor_layout", "tensor_view", "ClampUndefined", "ClampConstant", "ClampToEdge", "ClampRepeat",
            "ClampRepeatMirrored"]
__all__ += ["partial", "Row", "Column", "Reduce2x2", "reduce_add", "reduce_max", "reduce_min"]  # docs/lang/nv2-ops.md

# The builtins of extensions few kernels use load on first use (a kernel reaches them as cd.X, which comes
# here), so that `import coopdsl` and `coopdsl emit` of a KHR kernel do not pay for them (the families and
# their names: coopdsl/ir/families.py, the one table); so do cd.devices (device profiles and checks) and
# cd.runtime (it brings numpy and ctypes).
_LATER = _lazy_names()
__getattr__ = lazy_exports(__name__, _LATER, submodules=("devices", "runtime"))


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LATER))


if TYPE_CHECKING:  # what the type checker sees of the names above
    from .lang.callbacks import partial
    from .lang.coopmat2 import Column, Reduce2x2, Row, reduce_add, reduce_max, reduce_min
    from .lang.qcom import bitcast_array, sub_array
    from .lang.tensor import tensor_layout, tensor_view
