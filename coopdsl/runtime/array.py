"""Resident device arrays: data that stays in device memory between launches.

    x = runtime.array(np.arange(1024, dtype=np.float32))   # upload once
    y = runtime.zeros(1024, np.float32)
    kernel.launch((16,), x, y, 1024)                        # binds the buffers directly, no copies
    print(y.numpy())                                        # read back
"""

from __future__ import annotations

import math
import weakref
from typing import Any, cast

import numpy as np

from ..errors import with_article
from .device import Device, default_device
from .errors import ArrayError
from .memory import Buffer
from .packing import DTYPES, array_problem


class Array:
    """A C-ordered array of ``shape`` and numpy ``dtype`` in device memory of ``device``.

    Create one with :func:`array`, :func:`empty` or :func:`zeros`. Passing it to ``Kernel.launch`` binds
    its buffer directly; ``numpy()`` reads it back, ``write()`` replaces its contents, ``free()`` returns
    its memory (it is also returned when the object is garbage-collected). bf16 and fp8 data use
    ``uint16`` / ``uint8`` bit patterns (or ml_dtypes' ``bfloat16``), as for numpy launch arguments.
    """

    def __init__(self, device: Device, shape: tuple[int, ...], dtype: np.dtype):
        from .device import Device as _Device

        if not isinstance(device, _Device):
            raise ArrayError(f"device must be a coopdsl.runtime.Device (or None for the default one), got "
                             f"{type(device).__name__} {device!r}")
        _check_number_dtype(dtype)
        self.device, self.shape, self.dtype = device, shape, dtype
        self.size = math.prod(shape)
        self.nbytes = self.size * dtype.itemsize
        largest = device.largest_heap()
        if self.nbytes > largest:   # (before Vulkan sees it: a size past 64 bits wrapped there)
            raise ArrayError(f"a device array of shape {shape} and {dtype} is {self.nbytes:,} bytes, more than "
                             f"the device's largest memory heap ({largest:,} bytes)")
        self._buffer: Buffer | None = device.pool.take(self.nbytes, host_visible=False)

    def __repr__(self) -> str:
        state = "freed" if self._buffer is None else f"on {self.device!r}"
        return f"<coopdsl.runtime.Array shape={self.shape} dtype={self.dtype} {state}>"

    @property
    def freed(self) -> bool:
        """Whether ``free()`` was called."""
        return self._buffer is None

    @property
    def address(self) -> int:
        """The device address of the data, for a ``Ptr`` argument (needs bufferDeviceAddress)."""
        if not self.device.has_device_address:
            raise ArrayError(f"{self.device!r} has no bufferDeviceAddress feature: arrays have no device address")
        buf = self.buffer()
        at = buf.address()
        # (a number given for a Ptr is taken only inside a live array whose address was handed out)
        self.device.addresses.add(at, self.nbytes, self._base_array(), buf)
        return at

    def buffer(self, what: str = "the array") -> Buffer:
        """The backing buffer; raises ArrayError naming ``what`` when the array was freed."""
        if self._buffer is None:
            raise ArrayError(f"{what}: the device array {self.shape} {self.dtype} was freed")
        return self._buffer

    def numpy(self) -> np.ndarray:
        """A new numpy array with the contents (waits for nothing: call it after the work that writes it)."""
        from .batch import Batch

        self._not_pending("read")
        out = np.empty(self.shape, self.dtype)
        b = Batch(self.device)
        b.download(self.buffer(), out)
        b.submit()
        return out

    def write(self, data: Any) -> None:
        """Replace the contents with ``data`` (same shape and dtype). Inside a batch it is recorded in order."""
        from .batch import Batch, current_batch

        src = _c_order(as_numpy(data, "write into a device array from"))
        if src.dtype != self.dtype or src.shape != self.shape:
            raise ArrayError(f"cannot write {with_article(src.dtype)} array of shape {src.shape} into a device array "
                             f"of {self.dtype} and shape {self.shape}")
        buf = self.buffer()
        b = current_batch(self.device)
        if b is not None:
            b.upload(buf, src)
            b.use(self)
            return
        b = Batch(self.device)
        b.upload(buf, src)
        b.submit()

    def free(self) -> None:
        """Give the memory back (to the device's buffer pool); using the array afterwards is an ArrayError."""
        if self._buffer is None:
            return
        self._not_pending("free")
        buf, self._buffer = self._buffer, None
        self.device.pool.give(buf)

    def view(self, dtype: Any) -> Array:
        """The same device memory seen as ``dtype``, as numpy's ``ndarray.view``: no copy; the last
        dimension is rescaled by the ratio of the item sizes (its bytes must divide evenly). A kernel that
        reads quantized blocks as 16-bit words takes ``weights.view(np.uint16)``. The view keeps this array
        alive and shares its memory: free the base, not the view (``view.free()`` is an ArrayError). Asking
        again for the same dtype gives the same view object (so a launch that binds it again finds its binding
        remembered, as for the array itself)."""
        views: weakref.WeakValueDictionary[Any, Array] | None = self.__dict__.get("_views")
        if views is None:  # weak: a view holds its base, and the base must not hold it back (no cycle)
            views = self.__dict__["_views"] = weakref.WeakValueDictionary()
        self.buffer("view")   # (a freed array has no memory to view: an ArrayError, as any use after free())
        seen = views.get(dtype if isinstance(dtype, (str, np.dtype, type)) else None)
        if seen is not None:  # the same view object each time: a launch binding it again finds it remembered
            return seen
        dt = numpy_dtype(dtype)
        _check_number_dtype(dt)   # (a view as object or complex would hand numpy raw device bytes as such)
        seen = views.get(dt)
        if seen is not None:
            return seen
        row = (self.shape[-1] if self.shape else 1) * self.dtype.itemsize
        if row % dt.itemsize:
            raise ArrayError(f"cannot view a device array {self.shape} {self.dtype} as {dt}: its last dimension "
                             f"holds {row} bytes, not a multiple of {dt.itemsize}")
        shape = (*self.shape[:-1], row // dt.itemsize) if self.shape else (row // dt.itemsize,)
        view = views[dt] = ArrayView(self, shape, dt)
        if isinstance(dtype, (str, np.dtype, type)):
            views[dtype] = view
        return view

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:   # (numpy 2's protocol: the contents live on the device, so any numpy array is a copy)
            raise ValueError("a coopdsl.runtime.Array's contents live in device memory: numpy can only copy them "
                             "(np.array(a) or a.numpy()); copy=False is not possible")
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __del__(self) -> None:
        try:
            if self._buffer is not None:
                self.device.pool.give(self._buffer)
                self._buffer = None
        except Exception:  # interpreter shutdown: the device may already be gone
            pass

    def _base_array(self) -> Array:
        """The array that owns the memory (itself; a view's base)."""
        return self

    def _not_pending(self, action: str) -> None:
        from .batch import current_batch

        b = current_batch(self.device)
        if b is not None and b.uses(self):
            raise ArrayError(f"cannot {action} a device array whose memory work recorded in the open batch uses "
                             f"(a launch, a write or a fill; through the array or a view of the same memory); "
                             f"leave the `with` block (or call batch.submit()) first")


class ArrayView(Array):
    """Another dtype's view of an :class:`Array`'s memory (made by :meth:`Array.view`)."""

    def __init__(self, base: Array, shape: tuple[int, ...], dtype: np.dtype):  # no memory of its own
        self.base = base._base_array()
        self.device, self.shape, self.dtype = base.device, shape, dtype
        self.size = math.prod(shape)
        self.nbytes = self.size * dtype.itemsize

    @property
    def _buffer(self) -> Buffer | None:  # type: ignore[override]
        return self.base._buffer

    def _base_array(self) -> Array:
        return self.base

    def free(self) -> None:
        raise ArrayError("a view of a device array shares its base's memory: free the base array instead")

    def __del__(self) -> None:
        pass


def _c_order(a: np.ndarray) -> np.ndarray:
    """``a`` C-contiguous, its shape kept (``np.ascontiguousarray`` makes a 0-d array 1-d)."""
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def as_numpy(data: Any, action: str = "make a device array from") -> np.ndarray:
    """``data`` as a numpy array: ndarrays, objects with ``__array__``, or the buffer protocol (else an
    ArrayError saying it cannot ``action`` it)."""
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "__array__"):
        return np.asarray(data)
    try:
        view = memoryview(data)
    except TypeError:
        raise ArrayError(f"cannot {action} {type(data).__name__}: it has neither the buffer "
                         f"protocol nor __array__ (for a list, use np.array(values, dtype=...))") from None
    return np.asarray(view)


_ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")  # ml_dtypes' number types (numpy kind 'V')


def numpy_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype for a numpy dtype-like, a coopdsl scalar type (``cd.f16``) or its name (``"bf16"``)."""
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) if _is_coopdsl_type(dtype) else None
    if name in DTYPES and not (isinstance(dtype, str) and name == "bool"):
        return np.dtype(DTYPES[name])
    try:
        return cast("np.dtype[Any]", np.dtype(dtype))
    except TypeError:
        raise ArrayError(f"{dtype!r} is not a dtype (use a numpy dtype or a coopdsl scalar type such as cd.f16)") \
            from None


def _check_number_dtype(dtype: np.dtype) -> None:
    """ArrayError unless ``dtype`` is one a device array holds (numbers; bf16/fp8 as bit patterns or ml_dtypes')."""
    if (dtype.kind not in "biuf" or dtype.hasobject) and dtype.name not in _ML_DTYPES:
        raise ArrayError(f"a device array holds numbers: numpy bool, int, uint or float dtypes "
                         f"(bf16/fp8 as uint16/uint8 bit patterns), got {dtype}")


def _is_coopdsl_type(obj: Any) -> bool:
    return type(obj).__module__.startswith("coopdsl.")


def _shape(shape: Any) -> tuple[int, ...]:
    try:
        dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    except TypeError:   # (a float, None: not a shape)
        raise ArrayError(f"shape must be non-negative ints, got {shape!r}") from None
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ArrayError(f"shape must be non-negative ints, got {shape!r}")
    return tuple(int(d) for d in dims)


def empty(shape: Any, dtype: Any, device: Device | None = None) -> Array:
    """An uninitialised device array (its memory may hold earlier data)."""
    return Array(device if device is not None else default_device(), _shape(shape), numpy_dtype(dtype))


def zeros(shape: Any, dtype: Any, device: Device | None = None) -> Array:
    """A device array filled with zero bytes."""
    from .batch import Batch, current_batch

    arr = empty(shape, dtype, device)
    b = current_batch(arr.device)
    if b is not None:
        b.fill(arr.buffer())
        b.use(arr)
        return arr
    b = Batch(arr.device)
    b.fill(arr.buffer())
    b.submit()
    return arr


def array(data: Any, device: Device | None = None) -> Array:
    """A device array holding a copy of ``data`` (numpy, ``__array__`` or buffer protocol), same shape and dtype."""
    src = _c_order(as_numpy(data))
    arr = Array(device if device is not None else default_device(), src.shape, src.dtype)
    arr.write(src)
    return arr


def resident_buffer(arr: Array, dev: Device, what: str) -> Buffer:
    """The buffer of ``arr`` for use on ``dev``; ArrayError naming ``what`` when freed or on another device."""
    buf = arr.buffer(what)
    if arr.device is not dev:
        same = repr(arr.device) == repr(dev)   # two Device objects opened on one GPU print alike: say so
        hint = (" (two coopdsl.runtime.Device objects opened on the same GPU: make the arrays and launches with "
                "one of them, e.g. runtime.default_device())") if same else ""
        raise ArrayError(f"{what}: the array lives on {arr.device!r}, a different Device object than the "
                         f"launch's {dev!r}{hint}; arrays do not move between devices (create it with device=...)")
    return buf


def check_resident(binding: dict[str, Any], arr: Array, dev: Device) -> Buffer:
    """The buffer of ``arr`` for ``binding``; ArrayError when freed, on another device, or of the wrong
    dtype or size."""
    buf = resident_buffer(arr, dev, f"buffer '{binding['name']}'")
    problem = array_problem(binding, arr)
    if problem:
        raise ArrayError(problem)
    return buf
