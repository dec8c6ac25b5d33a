"""Launching a compiled module: binding arguments (numpy arrays, resident arrays, numbers, struct dicts) to
the module's buffers and push constants, and recording the dispatch into a batch."""

from __future__ import annotations

import struct
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._grid import grid3
from .._packing import none_buffer, spec_values
from .array import Array, ArrayView, check_resident, resident_buffer
from .batch import Batch, current_batch, open_batches
from .descriptors import DescriptorSet
from .device import Device, default_device
from .errors import ArrayError, LaunchError
from .graph import Graph
from .graph import keep as keep_graph
from .memory import Buffer
from .packing import check_array, check_struct_keys, dict_contents, pack_members
from .program import SPIRV_MAGIC, Program

if TYPE_CHECKING:
    from .program import Bound

__all__ = ["launch", "record", "replay", "bind", "resolve_device", "default_device", "LaunchError"]

# A launch recorded into a batch on the hot path, as (device, program, pipeline, (descriptor set, push bytes),
# descriptor-cache generation, its arrays (a view's base) held weakly): ``replay`` records it again, into the
# batch open on the device then, for the very same argument objects without binding them anew. It keeps none of
# its arrays, nor the batch, alive.
Recorded = tuple[Device, Program, int, tuple[DescriptorSet, bytes], int, tuple["weakref.ref[Array]", ...]]


def bound_bytes(nbytes: int) -> int:
    """The range a buffer's descriptor binds for an array of ``nbytes``: its bytes, which a kernel's ``len(buf)``
    (``OpArrayLength``) divides by the element's stride; 4 for an empty array (Vulkan binds no empty range, so
    there ``len`` counts the elements of 4 bytes)."""
    return nbytes if nbytes else 4

def launch(spirv: bytes, reflection: dict[str, Any], grid: tuple[int, int, int], args: dict[str, Any],
           spec: dict[str, Any] | None = None, device: Device | None = None,
           keep: bool = False) -> Recorded | Graph | None:
    """Run one dispatch of ``grid`` workgroups, or record it when a batch is open on the device.

    Numpy arrays are copied in and (when the kernel writes them) back out; resident ``Array`` arguments
    are bound directly. Every check happens before anything is dispatched. Returns, for a launch recorded
    into an open batch with resident arrays and plain numbers only, what ``replay`` needs to record it
    again; with ``keep=True``, for such a launch run at once, its command buffer as a
    :class:`~coopdsl.runtime.graph.Graph` whose ``run()`` runs it again; else None. ``grid``: 1 to 3 positive
    ints, or one int, as ``Kernel.launch`` takes it.
    """
    grid = grid3(grid, least=1, error=LaunchError)
    spirv = _check_call(spirv, reflection, args, spec)
    dev = resolve_device(device, args)
    b = current_batch(dev)
    if b is not None:
        return record(b, spirv, reflection, grid, args, spec)
    keep = keep and not any(isinstance(value, np.ndarray) for value in args.values())  # (staged: never kept)
    b = Batch(dev, reusable=keep)
    try:
        recorded = record(b, spirv, reflection, grid, args, spec)
    except BaseException:
        b.discard()
        raise
    if keep and recorded is not None:
        return keep_graph(b)
    b.submit()
    return None


def replay(recorded: Recorded, grid: tuple[int, int, int]) -> bool:
    """Record again, into the batch open on its device, a launch that ``launch`` recorded into a batch, for the
    very same argument objects (the caller checks that): True when done; False, with nothing done, when no
    batch is open on the device, one of its arrays was collected or freed, or a descriptor set was freed since."""
    dev, program, pipeline, bound, generation, refs = recorded
    b = current_batch(dev)
    if b is None or not _use(b, generation, refs):
        return False
    b.dispatch(pipeline, program.layout, bound[0], bound[1], grid)
    return True


def record(b: Batch, spirv: bytes, reflection: dict[str, Any], grid: tuple[int, int, int], args: dict[str, Any],
           spec: dict[str, Any] | None = None) -> Recorded | None:
    """Record one dispatch into batch ``b`` (arguments are checked first). Returns what ``replay`` needs
    to record it again when its binding was remembered (resident arrays and plain numbers, or dicts of plain
    numbers for struct push constants; any specialization: the pipeline is remembered with it), else None."""
    program = b.device.program(spirv, reflection)
    pipeline = program.pipeline(spec)
    bound = bind(b, program, args)
    b.dispatch(pipeline, program.layout, bound[0], bound[1], grid)
    memo = program.bound
    if memo is None or memo[3] is not bound:
        return None
    return b.device, program, pipeline, bound, memo[4], tuple(weakref.ref(_alive(r)._base_array()) for r in memo[2])


def _reuse(b: Batch, memo: Bound) -> bool:
    """Whether the remembered binding ``memo`` still holds in batch ``b`` (no descriptor set and none of
    its arrays freed since); if so, its arrays are noted as used by ``b``."""
    return _use(b, memo[4], memo[2])


def _use(b: Batch, generation: int, refs: tuple[weakref.ref[Array], ...]) -> bool:
    """Whether a remembered binding of descriptor-cache ``generation`` over the arrays of ``refs`` still holds in
    batch ``b`` (no descriptor set freed since, every array alive and not freed); if so, the arrays are noted as
    used by ``b``."""
    if generation != b.device.descriptors.generation:
        return False
    arrays = []
    for ref in refs:
        a = ref()
        if a is None or a._buffer is None:
            return False
        arrays.append(a)
    used = b._arrays
    for a in arrays:
        used[id(a)] = a  # b.use(a), inline
    return True


def _alive(ref: weakref.ref[Array]) -> Array:
    """The array of a binding memo made by this very launch (its arguments hold it alive)."""
    a = ref()
    assert a is not None
    return a


def resolve_device(device: Device | None, args: dict[str, Any]) -> Device:
    """``device``, else the device of the first resident array among ``args``, else that of the one open
    batch in this thread, else the default device."""
    if device is not None:
        if not isinstance(device, Device):
            raise LaunchError(f"device must be a coopdsl.runtime.Device, got {type(device).__name__}")
        return device
    for value in args.values():
        if isinstance(value, Array):
            return value.device
    batches = open_batches()
    if len(batches) == 1:
        return next(iter(batches))
    return default_device()


def bind(b: Batch, program: Program, args: dict[str, Any]) -> tuple[DescriptorSet, bytes]:
    """(descriptor set, push-constant bytes) for ``args``; numpy data is staged into ``b``.

    Buffer arguments are all checked before anything is staged.
    """
    if not args.keys() <= program.names:
        unknown = sorted(args.keys() - program.names)
        raise LaunchError(f"unknown argument(s) {unknown}; the kernel takes {sorted(program.names)}")
    bound = _bind_resident(b, program, args)
    if bound is not None:
        return bound
    dev = b.device
    # (binding, resident buffer or None, Array or numpy data)
    checked: list[tuple[dict[str, Any], Buffer | None, Any]] = []
    for slot in program.slots:
        binding = slot[0]
        value = args.get(binding["name"], _MISSING)
        if isinstance(value, Array):
            checked.append((binding, _resident(value, slot, dev), value))
        else:
            checked.append((binding, None, _host_data(b, binding, value)))
    push = _push(b, program, args)
    binds, key = [], [program.set_layout]
    for binding, buf, value in checked:
        if buf is None:
            buf = b.stage(value, write_back=not binding["readonly"])
        else:
            b.use(value)
        rng = bound_bytes(value.nbytes)
        binds.append((binding["binding"], buf, rng))
        key += (buf.uid, rng)
    return dev.descriptors.get(tuple(key), program.descriptor_types, binds), push


def _resident(value: Array, slot: tuple[Any, ...], dev: Device) -> Buffer:
    """The buffer of resident ``value`` for binding ``slot``, checked (device, dtype, size, not freed)."""
    buf = value._buffer
    if buf is None or value.device is not dev or (slot[1] is not None and value.dtype is not slot[1]
                                                  and value.dtype != slot[1]) \
            or value.nbytes % slot[2] or value.nbytes < slot[3]:
        buf = check_resident(slot[0], value, dev)  # raises, naming what is wrong
    return buf


def _bind_resident(b: Batch, program: Program, args: dict[str, Any]) -> tuple[DescriptorSet, bytes] | None:
    """``bind`` when every buffer argument is a resident array (the common case of repeated launches,
    done in one pass); None when one is not, for the general path.

    The result is remembered on the program: a launch with the very same argument objects (the arrays
    not freed, no descriptor set freed since) reuses it, noting the arrays as used by ``b``.
    """
    memo = program.bound
    if memo is not None and memo[0] == tuple(args):
        for value, was in zip(args.values(), memo[1]):
            if (was() if type(was) is weakref.ref else was) is not value:
                break
        else:
            # (a dict changed in place packs anew; a freed array: the general path reports it)
            if memo[5] == dict_contents(args.values()) and _reuse(b, memo):
                return memo[3]
    dev = b.device
    values = []
    for slot in program.slots:
        value = args.get(slot[0]["name"])
        if type(value) is not Array and type(value) is not ArrayView:
            return None
        values.append(value)
    push = _push(b, program, args) if program.push_size else b""
    binds, key = [], [program.set_layout]
    used = b._arrays
    for slot, value in zip(program.slots, values):
        buf = _resident(value, slot, dev)
        used[id(value)] = value  # b.use(value), inline
        rng = bound_bytes(value.nbytes)
        binds.append((slot[0]["binding"], buf, rng))
        key += (buf.uid, rng)
    bound = dev.descriptors.get(tuple(key), program.descriptor_types, binds), push
    if not program.pointer_members and all(type(v) in _SCALARS or type(v) is Array or type(v) is ArrayView
                                           or (type(v) is dict and _plain(v)) for v in args.values()):
        # (arrays held weakly: a loop that only replays this launch must not keep the arrays of another alive)
        program.bound = (tuple(args), tuple(weakref.ref(v) if type(v) is Array or type(v) is ArrayView else v
                                            for v in args.values()),
                         tuple(weakref.ref(v) for v in values), bound, dev.descriptors.generation,
                         dict_contents(args.values()))
    return bound


_SCALARS = (int, float, bool)  # immutable push-constant values: the same object packs to the same bytes


def _plain(d: dict[str, Any]) -> bool:
    """Whether a struct push constant's dict holds plain numbers only (then its contents decide its bytes)."""
    return all(type(v) in _SCALARS for v in d.values())


_MISSING = object()


def _host_data(b: Batch, binding: dict[str, Any], value: Any) -> np.ndarray:
    """The checked numpy data for a binding given a numpy array or a uniform-block dict."""
    if value is _MISSING:
        raise LaunchError(f"missing buffer '{binding['name']}'")
    if value is None and binding["kind"] == "storage_buffer":
        return none_buffer(binding, "launch", LaunchError)
    if binding["kind"] == "uniform_buffer" and isinstance(value, dict):
        block = {"size": binding["size"], "members": binding["members"]}
        check_struct_keys(binding["members"], value, f"uniform block '{binding['name']}'", whole=True)
        value = np.frombuffer(pack_members(block, value, f"uniform block '{binding['name']}' member",
                                           _address(b)), np.uint8)
    return check_array(binding, value)


def _push(b: Batch, program: Program, args: dict[str, Any]) -> bytes:
    if not program.push_size:
        return b""
    if program.push_struct is not None:
        try:
            for n, count in program.push_structs:   # (a dict with another key, or no dict: the general path
                if type(args[n]) is not dict or len(args[n]) != count:   # names it; a numpy array indexed by
                    raise KeyError(n)                                    # a name raised IndexError)
            values = [args[n] if m is None else args[n][m] for n, m in program.push_names]
            # (struct packs True as 1 and 1.0: a bool is for the general path, which refuses it as the
            # interpreter does; numbers struct cannot pack exactly go there too)
            if all(type(v) is int or type(v) is float or isinstance(v, np.integer) or
                   (isinstance(v, np.floating) and v.itemsize <= 8) for v in values):   # (np.longdouble: refused)
                return program.push_struct.pack(*values)
        except (KeyError, struct.error, OverflowError, TypeError):
            pass  # the general path below names the culprit
    raw = pack_members(program.push_block, args, "push constant", _address(b))
    return raw + bytes(program.push_size - len(raw))


def _check_call(spirv: Any, reflection: Any, args: Any, spec: Any) -> bytes:
    """The lower-level launch's own arguments (``Kernel.launch`` makes them right): a TypeError naming the one of
    another type, where they reached ``len()``, a hash or ``.items()`` (the reflection has its own check, where the
    program reads it); returns the module as ``bytes`` (a bytearray is no key of the program cache)."""
    if not isinstance(spirv, (bytes, bytearray)):
        raise TypeError(f"launch: spirv must be the module's bytes, got {type(spirv).__name__}")
    if len(spirv) < 20 or len(spirv) % 4 or spirv[:4] != SPIRV_MAGIC:   # (a driver answers VK_ERROR_UNKNOWN)
        raise LaunchError(f"launch: spirv is not a SPIR-V module ({len(spirv)} bytes; a module is whole 32-bit "
                          f"words, a 5-word header first, starting with the magic number 0x07230203): pass "
                          f"kernel.compile()'s bytes, or a .spv file's")
    if not isinstance(args, dict):
        raise TypeError(f"launch: args must be a dict of argument values by parameter name, got "
                        f"{type(args).__name__}")
    spec_values(spec, "launch")
    return bytes(spirv)


def _address(b: Batch) -> Callable[[Mapping[str, Any], Any], Any]:
    """The device address of an array given for a pointer member (a numpy one staged, and written back after
    the launch when writable, as the kernel may store through the pointer); a number as given, once it is
    known to lie inside a live array of the device (else a LaunchError: reading it would fault the GPU)."""
    def address(m: Mapping[str, Any], v: Any) -> Any:
        if isinstance(v, Array):
            at = resident_buffer(v, b.device, f"pointer '{m['name']}'").address()
            b.use(v)
            return at
        if isinstance(v, np.ndarray):
            if not b.device.has_device_address:
                raise ArrayError(f"pointer '{m['name']}': {b.device!r} has no bufferDeviceAddress feature")
            if not v.flags.c_contiguous:   # (a copy would be staged, and the kernel's stores lost with it)
                raise LaunchError(f"pointer '{m['name']}' must be C-contiguous (use np.ascontiguousarray)")
            return b.stage(v, write_back=v.flags.writeable).address()
        if isinstance(v, int) and v:   # (0: the null pointer)
            if not b.device.addresses.holds(v):
                raise LaunchError(f"pointer '{m['name']}': {v:#x} is not an address inside a live array of "
                                  f"{b.device!r} (a kernel reading it would fault the GPU); pass the array itself, "
                                  f"or an address from its .address (plus an offset within it)")
            b.use_address()
        return v
    return address
