"""What the ops take as an array argument, decided in one place for every op (``matmul``, ``attention``,
``linear``, ``gemv``): a numpy array or a resident ``coopdsl.runtime.Array`` as it is; another object numpy reads
without guessing a type (one with ``__array__``, such as a CPU tensor of PyTorch or JAX, or with the buffer
protocol, such as ``array.array`` or a ``memoryview``) as the numpy array ``np.asarray`` makes of it; anything
else (a list, a number, None where an array is needed) is a ``TypeError`` naming the op and the argument; a
bfloat16 array (ml_dtypes') as its uint16 bit patterns; an array in the other byte order a ValueError.  And
the checks of a ``device``, of an ``out`` argument's shape and type, of a product's 2-D operands, of a yes/no option
(``causal``, ``tune``, ``transpose_b``, ``q8``) and of a named choice (a weight format, a kind)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import numpy as np


def is_resident(x: Any) -> bool:
    """Whether ``x`` is a ``coopdsl.runtime.Array`` (without importing the runtime when nothing made one)."""
    if x is None or isinstance(x, np.ndarray):
        return False
    mod = sys.modules.get("coopdsl.runtime.array")
    return mod is not None and isinstance(x, mod.Array)


def is_bfloat16(x: Any) -> bool:
    """Whether ``x`` is a numpy array of a 2-byte type named bfloat16 (ml_dtypes' ``bfloat16``, JAX's), which the
    ops take as the uint16 bit patterns they read bf16 as."""
    return isinstance(x, np.ndarray) and x.dtype.name == "bfloat16" and x.dtype.itemsize == 2


def _readable(x: Any) -> bool:
    """Whether numpy reads ``x`` as an array of its own type: ``__array__`` or the buffer protocol."""
    if hasattr(x, "__array__"):
        return True
    if isinstance(x, (str, bytes)):   # (bytes would become one string scalar, not an array of its bytes)
        return False
    try:
        memoryview(x)
    except TypeError:
        return False
    return True


def operand(op: str, name: str, x: Any, *, optional: bool = False) -> Any:
    """``x`` as the op takes it: a numpy array or a resident array as it is, an object numpy reads (``__array__``,
    the buffer protocol) as a numpy array, None when ``optional``; a bfloat16 array (not an ``out``) as a uint16
    view of its bits; anything else, and an object numpy reads as Python objects, is a TypeError.  An ``out`` must
    be writable (numpy gives a read-only array for, e.g., a JAX array) and, when numpy reads it, share its memory
    (else the result would not reach it): a ValueError."""
    if x is None and optional:
        return None
    given = type(x).__name__
    if not (isinstance(x, np.ndarray) or is_resident(x)):
        if not _readable(x):   # (the hint names no dtype: each operand's are the op's to say)
            hint = ("an out is written in place: pass a numpy array of the result's dtype, or none and take the "
                    "result" if name == "out" else f"convert it, e.g. np.asarray({name})")
            raise TypeError(f"{op}: {name} must be a numpy array or a coopdsl.runtime.Array (or an object with "
                            f"__array__ or the buffer protocol), got {given} ({hint})")
        try:
            obj, x = x, np.asarray(x)
            shared = name != "out" or np.shares_memory(x, np.asarray(obj))   # (a copy each time: not its memory)
        except Exception as e:   # (a tensor numpy cannot read: on a GPU, or of a type numpy lacks such as bf16)
            raise TypeError(f"{op}: numpy cannot read {name} ({given}: {e}); pass a numpy array or a "
                            f"coopdsl.runtime.Array") from None
        if not shared:
            raise ValueError(f"{op}: numpy reads out ({given}) as a copy, so the result would not reach it; pass a "
                             f"numpy array, or none and take the result")
        if x.dtype == object:
            raise TypeError(f"{op}: numpy reads {name} ({given}) as Python objects, not numbers; pass a numpy "
                            f"array of numbers")
    if isinstance(x, np.ndarray) and not x.dtype.isnative:
        raise ValueError(f"{op}: {name} is {x.dtype.name} in the other byte order ({x.dtype.str}); convert it: "
                         f"{name}.astype({name}.dtype.newbyteorder('='))")
    if name != "out" and is_bfloat16(x):
        x = x.view(np.uint16)          # bf16 travels as its bit patterns
    if name == "out" and isinstance(x, np.ndarray) and not x.flags.writeable:
        raise ValueError(f"{op}: out is read-only ({given}); pass a writable numpy array, or none and take the "
                         f"result")
    return x


def matrices(op: str, x: Any, w: Any) -> None:
    """A ValueError unless ``x`` (N x K) and ``w`` (M x K, or M x bytes a row of quantized blocks) are 2-D."""
    if len(x.shape) != 2 or len(w.shape) != 2:
        raise ValueError(f"{op}: x must be N x K and w M x K (2-D; w of quantized blocks: M x bytes a row), got "
                         f"x {tuple(x.shape)}, w {tuple(w.shape)}")


def check_device(op: str, device: Any, arrays: tuple[Any, ...] = ()) -> None:
    """A TypeError unless ``device`` is None, a string (which the interpreter's ``wants_cpu`` checks) or a
    ``coopdsl.runtime.Device`` (there is one only once the runtime is imported); a ValueError for resident
    ``arrays`` sent to the interpreter, which takes numpy arrays."""
    if device is None or isinstance(device, str):
        if isinstance(device, str) or any(is_resident(a) for a in arrays):
            from ..interp import LaunchArgumentError, wants_cpu

            try:
                cpu = wants_cpu(device)
            except LaunchArgumentError as e:   # (an unknown string), named for the op
                raise LaunchArgumentError(f"{op}: {e}") from None
            if cpu and any(is_resident(a) for a in arrays):
                why = "" if isinstance(device, str) else \
                    " (COOPDSL_DEVICE=cpu in the environment sends calls that name no device there)"
                raise ValueError(f"{op}: resident coopdsl.runtime.Arrays cannot run on the CPU interpreter{why}; pass "
                                 f"numpy arrays (arr.numpy()), or device=arr.device")
        return
    mod = sys.modules.get("coopdsl.runtime.device")
    if mod is None or not isinstance(device, mod.Device):
        raise TypeError(f"{op}: device must be None, 'cpu' or a coopdsl.runtime.Device, got "
                        f"{type(device).__name__} {device!r}")


def new_out(shape: tuple[int, ...], dtype: Any, like: Any) -> Any:
    """A new result array of ``shape`` and ``dtype`` for an op called without ``out``: a resident array on the
    device of ``like`` (the op's first operand: activations, queries) when that is resident, as torch keeps a
    result where its inputs are, else a numpy array. Its contents are undefined until the op writes them."""
    if is_resident(like):
        from ..runtime import empty

        return empty(shape, dtype, device=like.device)
    return np.empty(shape, dtype)


def check_out(op: str, out: Any, shape: tuple[int, ...], dtype: Any) -> None:
    """A ValueError unless ``out`` (a numpy or resident array) has ``shape`` and ``dtype`` and, for numpy, is
    C-contiguous (the kernels write it as one block)."""
    if tuple(out.shape) != tuple(shape) or np.dtype(out.dtype) != np.dtype(dtype):
        raise ValueError(f"{op}: out must be {np.dtype(dtype)} of shape {tuple(shape)}, got {np.dtype(out.dtype)} "
                         f"{tuple(out.shape)}")
    if isinstance(out, np.ndarray) and not out.flags.c_contiguous:
        raise ValueError(f"{op}: out must be C-contiguous")


def flag(op: str, name: str, value: Any) -> bool:
    """``value`` of a yes/no option: True or False (numpy's bools too); anything else (``"yes"``, 1) is a
    TypeError, not a truth value taken silently."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{op}: {name} must be True or False, got {value!r}")


def flag_or_none(op: str, name: str, value: Any) -> bool | None:
    """:func:`flag`, where None (the op's own choice) is allowed too."""
    if value is None:
        return None
    try:
        return flag(op, name, value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be None, True or False, got {value!r}") from None


def choice_name(op: str, what: str, value: Any, allowed: Iterable[str]) -> str:
    """``value`` of a named choice (a weight format, a matmul kind): one of the strings ``allowed``; another type
    (a list, a number, None where a name is needed) is a TypeError and an unknown name a ValueError, each naming
    the op, the argument and the names it takes."""
    names = tuple(allowed)
    if not isinstance(value, str):
        raise TypeError(f"{op}: the {what} must be a string, one of {', '.join(names)}; got {type(value).__name__} "
                        f"{value!r}")
    if value not in names:
        raise ValueError(f"{op}: unknown {what} {value!r}; expected one of {', '.join(names)}")
    return value


def numbers_array(op: str, name: str, x: Any) -> np.ndarray:
    """``x`` (an array, or nested lists of numbers) as a numpy array, for the host-side helpers (``quantize``,
    ``dequantize``, ``to_bf16``, ``from_bf16``): None, a string or bytes is a TypeError, and what numpy cannot
    read as one rectangular array of numbers (ragged lists, Python objects) a ValueError naming the op and the
    argument, not numpy's own."""
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{op}: {name} must be an array of numbers, got {type(x).__name__} {x!r}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{op}: numpy cannot read {name} as one rectangular array of numbers ({e})") from None
    if a.dtype == object or a.dtype.kind in "USV" and not is_bfloat16(a):
        raise ValueError(f"{op}: {name} must hold numbers, got {a.dtype} values")
    return a


def count(op: str, name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """``value`` of a count argument (rows, a dimension, SMs): an int (numpy's too; not a bool) from ``lo`` to ``hi``
    (no upper bound for None); anything else is a ValueError naming the op and the argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < lo or \
            (hi is not None and value > hi):
        span = f"{lo} to {hi}" if hi is not None else f"{lo} or more"
        raise ValueError(f"{op}: {name} must be an int, {span}; got {value!r}")
    return int(value)
