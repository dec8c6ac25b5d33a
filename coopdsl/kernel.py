"""``@coopdsl.kernel``: a Python function that compiles to a SPIR-V compute kernel.

Compilation is lazy and cached per target environment: the first call to
:meth:`Kernel.compile` (or ``save``/``disassemble``/``reflect``) parses the
function's source, builds and verifies the IR, writes SPIR-V and runs
``spirv-val`` on it.  Mistakes in the kernel raise :class:`CompileError`
pointing at the user's line; the traceback holds no compiler frame.
"""

from __future__ import annotations

import ast
import functools
import math
import numbers
import re
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn, cast, overload

from ._gcpause import paused
from ._grid import grid3
from ._numbers import python_value
from .errors import (
    CompileError,
    CoopDSLError,
    InternalCompilerError,
    LaunchCallError,
    LaunchError,
    SourceLoc,
    with_article,
)
from .ir import types as T
from .ir.core import Module, SpecConst
from .ir.literals import LiteralError, fit_host
from .spirv import tools
from .spirv.words import to_bytes

if TYPE_CHECKING:
    from .frontend.source import Source
    from .runtime.timing import BenchResult

WorkgroupSize = Sequence["int | str"]
_MISSING = object()   # (an argument a launch did not give)


class Kernel:
    """A compiled-on-demand compute kernel (see :func:`kernel`)."""

    def __init__(self, fn: Callable[..., Any], workgroup_size: WorkgroupSize = (1, 1, 1),
                 target_env: str = tools.DEFAULT_TARGET_ENV, consts: dict[str, Any] | None = None,
                 subgroup_size: int | None = None, entry_point: str | None = None):
        _check_function(fn)
        _keep_annotation_scope(fn, _caller_frame(2))
        self.fn = fn
        self.consts = dict(consts or {})
        self._specialized: dict[tuple[tuple[str, str], ...], Kernel] = {}
        self.name = fn.__name__
        self.workgroup_size = _check_wg(fn, workgroup_size)
        self.subgroup_size = _check_subgroup_size(fn, subgroup_size)
        self.entry_point = _check_entry_point(fn, entry_point)
        if not isinstance(target_env, str) or target_env not in tools.TARGET_ENVS:
            raise CompileError(f"{fn.__name__}: target_env must be one of {', '.join(sorted(tools.TARGET_ENVS))}, "
                               f"got {target_env!r}", _decorator_loc(fn, "target_env"))
        self.target_env = target_env
        self._cache: dict[tuple[str, tuple[tuple[str, Any], ...]], tuple[Module, bytes]] = {}
        functools.update_wrapper(self, fn)

    @property
    def __name__(self) -> str:
        """The kernel's name (``name``), as reports and errors show it.
        ``k.__name__ = "other"`` renames the kernel, as it would a function (kernels a factory makes)."""
        return self.name

    @__name__.setter
    def __name__(self, value: str) -> None:
        if not isinstance(value, str) or not value.isidentifier():
            raise ValueError(f"a kernel's name must be an identifier, got {value!r}")
        self.name = value
        self._cache.clear()

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"kernel '{self.name}' runs on a GPU: use .launch(...) or compile it with .compile()")

    def __repr__(self) -> str:
        extra = f" subgroup_size={self.subgroup_size}" if self.subgroup_size else ""
        extra += "".join(f" {k}={v!r}" for k, v in sorted(self.consts.items()))
        return f"<coopdsl.kernel {self.name} workgroup_size={self.workgroup_size}{extra}>"

    def specialize(self, **consts: Any) -> Kernel:
        """The kernel with ``Const`` parameters set; each distinct set of values compiles once (cached).  A numpy
        scalar counts as its Python value (``np.int64(3)`` for a ``Const[int]``), as a launch's numbers do."""
        consts = {k: python_value(v) for k, v in consts.items()}
        merged = {**self.consts, **consts}
        key = tuple(sorted((k, _value_key(v)) for k, v in merged.items()))
        if key in self._specialized:  # checked already: no parse on the hot path of a host op
            return self._specialized[key]
        from .frontend.params import parameter_annotations
        from .frontend.source import parse_function
        from .lang.types import ConstParam, SpecParam

        annotations = parameter_annotations(self.fn, parse_function(self.fn))
        for name in consts:
            if isinstance(annotations.get(name), SpecParam):
                raise ValueError(f"{self.name}: '{name}' is a Spec parameter, whose value a launch or "
                                 f"compile(spec=...) gives; specialize fixes Const parameters")
            ann = annotations.get(name)
            if not isinstance(ann, ConstParam):
                raise ValueError(f"{self.name} has no Const parameter '{name}'")
            if not ann.accepts(consts[name]):   # (the rule the compile applies: here, at the caller's line)
                assert ann.type is not None   # (a Const without a type accepts everything)
                raise ValueError(f"{self.name}: Const parameter '{name}' takes {with_article(ann.type.__name__)}, "
                                 f"got {consts[name]!r}")
        if key not in self._specialized:
            variant = Kernel(self.fn, self.workgroup_size, self.target_env, merged, self.subgroup_size,
                             self.entry_point)
            variant.name = self.name   # (a renamed kernel's variants keep its name)
            self._specialized[key] = variant
        return self._specialized[key]

    # -- compiling ------------------------------------------------------------------
    def _build(self, target_env: str | None, spec: dict[str, Any] | None = None,
               caller: str = "reflect") -> tuple[Module, bytes]:
        env = self.target_env if target_env is None else target_env
        if not isinstance(env, str) or env not in tools.TARGET_ENVS:   # (a list or an array: not a hash or a bool)
            raise ValueError(f"target_env must be one of {sorted(tools.TARGET_ENVS)}, got {env!r}")
        if spec is not None and not isinstance(spec, dict):   # (compile, reflect, print_ir alike)
            from ._packing import spec_values  # (numpy's: not loaded by emitting SPIR-V)

            spec_values(spec, f"{self.name}.{caller}")
        key = (env, tuple(sorted((k, _value_key(v)) for k, v in (spec or {}).items())))
        if key not in self._cache:
            with _COMPILING:   # (one compile at a time in the process: the registries load and caches fill once)
                if key not in self._cache:
                    try:
                        with paused():  # the compile frees nearly everything it makes by reference counting
                            self._cache[key] = _compile(self, env, spec or {})
                    except CoopDSLError as e:
                        raise e.with_traceback(None) from None
        return self._cache[key]

    def compile(self, target_env: str | None = None, spec: dict[str, int | float | bool] | None = None,
                device: Any = None) -> bytes:
        """The validated SPIR-V module (bytes) for ``target_env`` (default: the kernel's).

        ``spec`` replaces the *default* values of specialization constants by
        name (the host can still override them at pipeline creation); a name
        the kernel lacks, or a value its constant's type cannot hold, is a
        ValueError before anything compiles (a host argument, as for
        :meth:`specialize`), and a rule the kernel breaks at those values a
        located CompileError.
        ``device`` (a shipped profile name such as ``"nvidia-h100"``, a
        ``coopdsl devices --json`` file or dict, or a runtime Device) also
        checks that the device offers every cooperative-matrix type and MulAdd
        the kernel uses, with their scopes and workgroup sizes, and its
        required subgroup size: ``coopdsl.devices.DeviceMismatchError`` (a
        CompileError) at the offending line otherwise (docs/devices.md).
        """
        module, binary = self._build(target_env, spec, "compile")
        if device is not None:
            from .devices.check import verify

            try:
                verify(self._reflection(module, binary), device)
            except CoopDSLError as e:
                raise e.with_traceback(None) from None
        return binary

    def ir(self, target_env: str | None = None) -> Module:
        """The kernel's IR module (after passes)."""
        return self._build(target_env)[0]

    def print_ir(self, target_env: str | None = None, spec: dict[str, Any] | None = None) -> str:
        """Text form of the IR, for debugging."""
        from .ir.printer import print_module

        return print_module(self._build(target_env, spec, "print_ir")[0])

    def save(self, path: str | Path, target_env: str | None = None) -> Path:
        """Write the SPIR-V binary to ``path``; returns the path."""
        p = Path(path)
        p.write_bytes(self.compile(target_env))
        return p

    def disassemble(self, target_env: str | None = None) -> str:
        """spirv-dis text of the module."""
        return tools.disassemble(self.compile(target_env))

    def reflect(self, target_env: str | None = None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
        """Bindings, push constants, spec constants, workgroup and subgroup size, capabilities
        (see docs/runtime.md)."""
        return self._reflection(*self._build(target_env, spec))

    def _reflection(self, module: Module, binary: bytes) -> dict[str, Any]:
        from .reflect import reflect

        where = str(_decorator_loc(self.fn, "subgroup_size")) if self.subgroup_size else None
        return reflect(module, binary, self.subgroup_size, where, str(_decorator_loc(self.fn, "workgroup_size")))


    # -- running ----------------------------------------------------------------------
    def _launch_info(self) -> tuple[bytes, dict[str, Any], dict[str, Any]]:
        """(SPIR-V, reflection, parameter plan) for launching, made once: the kernel's default module never
        changes (a specialization is another Kernel)."""
        info: tuple[bytes, dict[str, Any], dict[str, Any]] | None = self.__dict__.get("_launch_cache")
        if info is None:     # (repeated launches take the cached tuple: their hot path)
            with _COMPILING:
                info = self.__dict__.get("_launch_cache")
                if info is None:
                    reflection = self.reflect()
                    plan = self._param_plan()
                    plan["buffers"] = {b["name"]: b for b in reflection["bindings"] if b["kind"] == "storage_buffer"}
                    plan["unused"] = {name for name, b in plan["buffers"].items() if not b["used"]}
                    info = self.__dict__["_launch_cache"] = (self.compile(), reflection, plan)
        return info

    def _param_plan(self) -> dict[str, Any]:
        """Parameter names and kinds, so that binding launch arguments needs no ``inspect`` per call."""
        import inspect

        from .frontend.params import parameter_annotations
        from .frontend.source import parse_function
        from .lang.types import ConstParam, SpecParam

        sig = inspect.signature(self.fn)
        annotations = parameter_annotations(self.fn, parse_function(self.fn))
        return {"signature": sig, "names": tuple(sig.parameters),
                "simple": all(p.kind is p.POSITIONAL_OR_KEYWORD for p in sig.parameters.values()),
                "spec": {n for n, a in annotations.items() if isinstance(a, SpecParam)},
                "const": {n for n, a in annotations.items() if isinstance(a, ConstParam)}}

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any],
              plan: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Split call-style arguments into (buffer/push-constant args, spec-constant values)."""
        names = plan["names"]
        if plan["simple"] and len(args) <= len(names) and (
                not kwargs or all(k in names[len(args):] for k in kwargs)):
            bound = dict(zip(names, args))
            bound.update(kwargs)
        else:
            try:
                bound = plan["signature"].bind_partial(*args, **kwargs).arguments
            except TypeError as e:
                raise LaunchCallError(f"{self.name}.launch: {e}") from None
        if not plan["spec"] and not plan["const"]:
            return bound, {}
        values: dict[str, Any] = {}
        spec: dict[str, Any] = {}
        for name, value in bound.items():
            if name in plan["const"]:
                raise LaunchCallError(f"{self.name}: '{name}' is a compile-time parameter; "
                                      f"use {self.name}.specialize({name}=...).launch(...)")
            (spec if name in plan["spec"] else values)[name] = value
        return values, spec

    def launch(self, grid: Sequence[int], *args: Any, device: Any = None, subgroup_size: int | None = None,
               **kwargs: Any) -> None:
        """Run the kernel once on a Vulkan GPU (see docs/runtime.md), or on the CPU interpreter.

        Arguments follow the kernel's parameters, by position or name:
        numpy arrays (written back in place unless read-only) or resident
        ``coopdsl.runtime.Array`` objects (bound directly) for buffers,
        numbers for push constants, dicts for struct push constants and
        uniform blocks, numbers for specialization constants (those left out
        keep their defaults). ``grid`` is the number of workgroups (1 to 3
        ints). Inside ``with coopdsl.runtime.batch(...)`` the launch is
        recorded and runs when the block ends. A launch again with the very
        same argument objects holding the same values (a dict compared by what
        it holds) is not checked or bound again: outside a batch it submits
        the command buffer kept from the kernel's last launch, inside one it is
        recorded from the binding of that launch among the kernel's last
        :data:`HOT_LAUNCHES` in batches (docs/runtime.md, "What is cached, and
        what a launch costs"). ``device="cpu"``, or
        ``COOPDSL_DEVICE=cpu`` in the environment, runs it on the CPU
        interpreter instead (docs/interpreter.md), with ``subgroup_size``
        invocations per subgroup (default: the kernel's own ``subgroup_size``,
        else 32).
        """
        # recent launches (recorded into a batch, or run) of this thread: the same objects? (per thread: a Device is
        # one thread's at a time, and another thread's kept command buffer is not this one's to run or release)
        local = self.__dict__.get("_local")
        if local is None:
            local = self.__dict__.setdefault("_local", threading.local())
        hots = getattr(local, "hots", None)
        key = None
        if hots is not None and subgroup_size is None and (device is not None or not _interp().wants_cpu(None)):
            key = _launch_key(device, args, kwargs)
            hot = hots.get(key)
            if hot is not None and _same(hot[1], args) and _same(hot[2], kwargs.values()):
                if hot[4] and hot[4] != _dict_contents(args, kwargs):   # a struct's dict changed in place
                    pass
                elif type(hot[0]) is tuple:  # recorded into a batch: recorded again in the open one, for this grid
                    if _runtime().replay(hot[0], _grid(grid)):
                        hots.move_to_end(key)
                        return
                elif _grid(grid) == hot[3] and hot[0].run():  # run at once: its command buffer again
                    return
        binary, reflection, plan = self._launch_info()
        values, spec = self._bind(args, kwargs, plan)
        if plan["unused"] or any(v is None for v in values.values()):
            self._optional_buffers(values, plan)
        if spec:
            self._check_spec(spec)
        if (device is None or isinstance(device, str)) and _interp().wants_cpu(device):
            interp = _interp()   # (its argument errors are LaunchArgumentErrors, the grid's too)
            interp.launch(self, grid3(grid, least=1, error=interp.LaunchArgumentError), values, spec, subgroup_size)
            return
        if subgroup_size is not None:
            raise LaunchError("subgroup_size= applies to device='cpu' only (a GPU has its own subgroup size; "
                              "@coopdsl.kernel(subgroup_size=...) requires one)")
        grid = _grid(grid)
        recorded = _runtime().launch(binary, reflection, grid, values, spec=spec, device=device, keep=True)
        if hots is None:
            hots = local.hots = OrderedDict()
        kept = getattr(local, "kept", None)   # (one command buffer kept per kernel, the last launch's: this one
        if kept is not None:                  # replaces it; the key of the one entry that is not a batch's)
            old = hots.get(kept)
            if old is not None and type(old[0]) is not tuple:
                del hots[kept]
                old[0].release()
            local.kept = None
        if key is None or _VIEW[0] is None:   # (the first launch: _ident knows views once the runtime is loaded)
            _resident_types()
            key = _launch_key(device, args, kwargs)
        hots.pop(key, None)
        if recorded is not None:
            hots[key] = (recorded, _refs(args), _refs(kwargs.values()), grid, _dict_contents(args, kwargs))
            if type(recorded) is not tuple:
                local.kept = key
            while len(hots) > HOT_LAUNCHES:
                gone = hots.popitem(last=False)[1][0]
                if type(gone) is not tuple:
                    gone.release()
                    local.kept = None

    def batch_recording(self, *args: Any, device: Any = None, **kwargs: Any) -> Any:
        """What the runtime needs to record this kernel's launch with these very argument objects into a batch
        again (``coopdsl.runtime.launch.replay``), when its last such launch was recorded into a batch and is
        remembered (:data:`HOT_LAUNCHES`); else None.  For callers that record the same launches step after
        step and check the arguments themselves (``coopdsl/ops/hot.py``); a dict argument's contents are not
        followed (None for a launch with one)."""
        hots = getattr(self.__dict__.get("_local"), "hots", None)
        if hots is None or _VIEW[0] is None:
            return None
        hot = hots.get(_launch_key(device, args, kwargs))
        if hot is None or type(hot[0]) is not tuple or hot[4] or not _same(hot[1], args) or \
                not _same(hot[2], kwargs.values()):
            return None
        return hot[0]

    def _optional_buffers(self, values: dict[str, Any], plan: dict[str, Any]) -> None:
        """A storage buffer no instruction uses (a branch on a ``Const`` this variant does not take) may be given
        None, or left out: a zeroed element is bound for it; None for a buffer the kernel uses is a LaunchError
        that says so."""
        from ._packing import none_buffer  # (numpy's: not loaded by emitting SPIR-V)

        for name, binding in plan["buffers"].items():   # None given, or unused and left out, default None
            if values.get(name, _MISSING) is None or name not in values and name in plan["unused"] and \
                    plan["signature"].parameters[name].default is None:
                values[name] = none_buffer(binding, self.name, LaunchError)

    def _check_spec(self, spec: dict[str, Any]) -> None:
        """The rules a kernel's specialization constants obey at their defaults hold at the values a launch
        gives them too: the kernel is compiled once per set of values that differ from the defaults (cached;
        the SPIR-V is not used, the driver specializes the default module), and a value that breaks a rule
        is the same located CompileError ``compile(spec=...)`` raises."""
        defaults = self.__dict__.get("_spec_defaults")
        if defaults is None:
            defaults = self.__dict__["_spec_defaults"] = {sc.name: sc.default for sc in self.ir().spec_consts}
        # (a value that is not a number is left to the launch's packing, which names it: LaunchArgumentError)
        changed = {n: v for n, v in spec.items() if n in defaults and isinstance(v, numbers.Number)
                   and v != defaults[n]}
        if changed:
            try:
                self._build(None, changed)
            except ValueError:  # a value that does not fit the constant's type: the runtime's packing says so
                pass

    def statistics(self, device: Any = None, **spec: Any) -> list[dict[str, Any]]:
        """What the GPU's driver reports about the kernel's compiled pipeline for these specialization
        constant values (VK_KHR_pipeline_executable_properties): one dict per executable with ``name``,
        ``description``, ``subgroup_size`` and ``statistics`` ({name: value}; on NVIDIA e.g. the
        register count and the shared and local memory in bytes). ``device`` is a
        ``coopdsl.runtime.Device`` (default: the default device).
        """
        rt = _runtime()
        binary, reflection, _ = self._launch_info()
        dev = device if device is not None else rt.default_device()
        if not isinstance(dev, rt.Device):
            raise TypeError(f"{self.name}.statistics: device must be a coopdsl.runtime.Device, "
                            f"got {type(dev).__name__}")
        return cast("list[dict[str, Any]]", dev.program(binary, reflection).statistics(spec))

    def bench(self, grid: Sequence[int], *args: Any, device: Any = None, warmup: int = 5, repeat: int = 20,
              flops: float | None = None, **kwargs: Any) -> BenchResult:
        """Time the kernel with GPU timestamps; returns ``runtime.BenchResult`` (median, spread, TFLOP/s).
        The CPU interpreter does not time kernels: ``device="cpu"`` is a LaunchError saying so."""
        from . import runtime

        if isinstance(device, str):
            raise LaunchError(f"{self.name}.bench times kernels on a Vulkan device with GPU timestamps; device="
                              f"{device!r} is the CPU interpreter, which does not time them (pass a "
                              f"coopdsl.runtime.Device, or none for the default one)")
        binary, reflection, plan = self._launch_info()
        values, spec = self._bind(args, kwargs, plan)
        if plan["unused"] or any(v is None for v in values.values()):
            self._optional_buffers(values, plan)
        return runtime.bench(binary, reflection, _grid(grid), values, spec=spec, warmup=warmup,
                             repeat=repeat, flops=flops, device=device)


@functools.cache
def _interp() -> ModuleType:
    """coopdsl.interp, imported on first use."""
    from . import interp

    return interp


def _value_key(value: Any) -> Any:
    """A Const or specialization value's identity for the kernel's caches: the launch memos' key
    (:func:`coopdsl._packing.value_key`: a float by its bits, a bool apart from the int it equals), or, for a
    value that cannot be hashed (a list given to a Const), its type and repr."""
    from ._packing import value_key  # (numpy's: not loaded by `import coopdsl` or by emitting SPIR-V)

    key = value_key(value)
    try:
        hash(key)
    except TypeError:
        return (type(value), repr(value))
    return key


# compiling (the frontend's registries load on first need, and caches fill) is one thread's at a time: kernels
# launched from several threads, each with its own Device, compile safely (a first compile in two threads at
# once failed with "dictionary changed size during iteration")
_COMPILING = threading.RLock()
# launches remembered per kernel (the least recently used goes first): a loop over a model's layers launches
# one kernel on each layer's arrays in turn, and each is recorded again from its own binding; a decoding step of an
# 80-layer model launches one product kernel 160 times (its K and V projections), so a loop of fewer launches than
# a step would remember none of them
HOT_LAUNCHES = 1024


def _refs(values: Iterable[Any]) -> tuple[Any, ...]:
    """A remembered launch's argument objects: resident arrays held weakly (the memo keeps none alive), a view
    (``Array.view``) as its base array held weakly with its dtype and shape (views are made anew once the last one
    is collected), the rest (numbers, dicts) as they are."""
    array, view = _resident_types()
    out: list[Any] = []
    for v in values:
        if type(v) is view:
            a: Any = v   # (an ArrayView)
            out.append(_ViewRef(weakref.ref(a.base), a.dtype, a.shape))
        else:
            out.append(weakref.ref(v) if isinstance(v, array) else v)
    return tuple(out)


class _ViewRef:
    """A remembered view: its base array (weakly), dtype and shape."""

    __slots__ = ("base", "dtype", "shape")

    def __init__(self, base: weakref.ref[Any], dtype: Any, shape: tuple[int, ...]):
        self.base, self.dtype, self.shape = base, dtype, shape


def _launch_key(device: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """A launch's key among its kernel's remembered launches: the device, each argument by :func:`_ident`, the
    keywords' names and their values by :func:`_ident`."""
    return (id(device), *map(_ident, args), *kwargs, *map(_ident, kwargs.values()))


def _ident(value: Any) -> Any:
    """A launch argument's part of a remembered launch's key: a view by its base array, dtype and shape, anything
    else by the object's id (:func:`_same` then checks it is the very object)."""
    if type(value) is _VIEW[0]:
        return (id(value.base), value.dtype.str, value.shape)
    return id(value)


def _same(refs: tuple[Any, ...], values: Iterable[Any]) -> bool:
    """Whether ``values`` are the very objects of ``refs`` (:func:`_refs`; a collected array's id may be reused), a
    view another view of the same base array, dtype and shape."""
    for r, v in zip(refs, values):
        t = type(r)
        if t is weakref.ref:
            if r() is not v:
                return False
        elif t is _ViewRef:
            if type(v) is not _VIEW[0] or v.base is not r.base() or v.dtype != r.dtype or v.shape != r.shape:
                return False
        elif r is not v:
            return False
    return True


_VIEW: list[Any] = [None]   # coopdsl.runtime's ArrayView, once a launch has reached the runtime


@functools.cache
def _resident_types() -> tuple[type, type]:
    """coopdsl.runtime's resident array types (imported on first use): (Array, ArrayView)."""
    from .runtime.array import Array, ArrayView

    _VIEW[0] = ArrayView
    return Array, ArrayView


def _dict_contents(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """:func:`coopdsl._packing.dict_contents` of a launch's positional and keyword arguments."""
    from ._packing import dict_contents  # (with numpy: not imported for compiling)

    return dict_contents((*args, *kwargs.values()))



@functools.cache
def _runtime() -> ModuleType:
    """coopdsl.runtime, imported on first use (compiling needs no Vulkan)."""
    from . import runtime

    return runtime


def _grid(grid: Any) -> tuple[int, int, int]:
    """The launch's grid as three counts (:func:`coopdsl._grid.grid3`; a bad one is a LaunchError)."""
    return grid3(grid, least=1, error=LaunchError)




@overload
def kernel(fn: Callable[..., Any], *, workgroup_size: WorkgroupSize = ..., target_env: str = ...,
           subgroup_size: int | None = ..., entry_point: str | None = ...) -> Kernel: ...


@overload
def kernel(fn: None = None, *, workgroup_size: WorkgroupSize = ..., target_env: str = ...,
           subgroup_size: int | None = ...,
           entry_point: str | None = ...) -> Callable[[Callable[..., Any]], Kernel]: ...


def kernel(fn: Callable[..., Any] | None = None, *, workgroup_size: WorkgroupSize = (1, 1, 1),
           target_env: str = tools.DEFAULT_TARGET_ENV, subgroup_size: int | None = None,
           entry_point: str | None = None) -> Kernel | Callable[[Callable[..., Any]], Kernel]:
    """Decorate a function as a coopdsl compute kernel.

    ``workgroup_size`` is up to three positive ints (missing ones are 1); an
    entry may instead name a ``Spec[u32]`` parameter, making that dimension a
    specialization constant (``OpExecutionModeId LocalSizeId``).
    ``target_env`` is one of vulkan1.1, vulkan1.2, vulkan1.3 (default), vulkan1.4.

    ``subgroup_size`` (a power of two from 1 to 128; default: none) makes
    the kernel require subgroups of exactly that many invocations, as HLSL's
    ``[WaveSize(N)]`` does: give it when the kernel's index arithmetic
    assumes a subgroup size.  Otherwise a Vulkan driver may choose any size
    from the device's ``minSubgroupSize`` to ``maxSubgroupSize`` for a
    SPIR-V 1.6 module (RADV runs compute in wave64 by default, Intel ANV at
    SIMD8 to SIMD32).  The runtime requests the size when it creates the
    pipeline (``requiredSubgroupSize``, Vulkan 1.3 subgroup size control) and
    refuses a device that cannot run it; the interpreter runs at that size;
    ``compile(device=...)`` reports a device that cannot, at the decorator;
    reflection carries it for host code (``subgroup_size``).

    ``entry_point`` names the module's ``OpEntryPoint`` (default: the
    function's name), as glslang's ``--source-entrypoint``/``-e`` and DXC's
    ``-E`` do: a host that creates its pipelines with a fixed name (ggml uses
    ``"main"``) can load the module as it is.

    Usage::

        @coopdsl.kernel(workgroup_size=(32, 1, 1))
        def k(a: coopdsl.Buffer[coopdsl.f32]): ...
    """
    if fn is None:
        return lambda f: Kernel(f, workgroup_size, target_env, subgroup_size=subgroup_size, entry_point=entry_point)
    return Kernel(fn, workgroup_size, target_env, subgroup_size=subgroup_size, entry_point=entry_point)


ANNOTATION_SCOPE = "__coopdsl_annotation_scope__"   # the attribute _keep_annotation_scope sets on a kernel's function


def _caller_frame(depth: int) -> Any:
    """The frame ``depth`` calls above the caller, or None where the stack is not that deep."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


def _keep_annotation_scope(fn: Callable[..., Any], frame: Any) -> None:
    """Keep, on ``fn``, the values that its string annotations name from the function that defines it
    (``frame``, the decorator's caller): under ``from __future__ import annotations`` a name a factory's kernel
    uses only in an annotation (``x: cd.Buffer[t]``) is no closure variable, so it would not evaluate later."""
    if frame is None or hasattr(fn, ANNOTATION_SCOPE) or frame.f_locals is getattr(fn, "__globals__", None):
        return
    texts = [a for a in getattr(fn, "__annotations__", {}).values() if isinstance(a, str)]
    if not texts:
        return
    names: set[str] = set()
    for text in texts:
        try:
            names.update(n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name))
        except SyntaxError:
            continue   # (reported, located, when the annotations are read)
    scope = {n: frame.f_locals[n] for n in names if n in frame.f_locals}
    if scope:
        try:
            setattr(fn, ANNOTATION_SCOPE, scope)
        except (AttributeError, TypeError):
            pass


def _decorator_loc(fn: Callable[..., Any], word: str) -> SourceLoc:
    """Where ``word`` appears in the decorator lines of ``fn`` (else the first line's first character)."""
    code = fn.__code__
    first = SourceLoc(code.co_filename, code.co_firstlineno, 1).source_line()
    line, text = code.co_firstlineno, first
    while word not in text and not text.lstrip().startswith(("def ", "async def ")) \
            and line < code.co_firstlineno + 20:
        line += 1
        text = SourceLoc(code.co_filename, line, 1).source_line()
        if not text:
            break
    if word in text:
        return SourceLoc(code.co_filename, line, text.find(word) + 1)
    return SourceLoc(code.co_filename, code.co_firstlineno, len(first) - len(first.lstrip()) + 1)


MAX_WORKGROUP_DIM = 0xFFFFFFFF  # LocalSize operands are 32-bit literals
SUBGROUP_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)  # requiredSubgroupSize: a power of two (Vulkan allows up to 128)


def _check_function(fn: Any) -> None:
    """@kernel decorates a plain Python function (not a kernel, a class, a lambda's result...)."""
    import inspect

    from .errors import DeclarationError, caller_loc

    if inspect.isfunction(fn):
        if fn.__name__.isidentifier():
            return
        raise DeclarationError(f"@coopdsl.kernel decorates a def function (def name(params): ...), not a "
                               f"{'lambda' if fn.__name__ == '<lambda>' else repr(fn.__name__)}",
                               caller_loc("kernel"))
    what = (f"kernel '{fn.name}' (decorated twice?)" if isinstance(fn, Kernel)
            else f"class {fn.__name__}" if isinstance(fn, type) else f"{type(fn).__name__} {fn!r}")
    raise DeclarationError(f"@coopdsl.kernel decorates a function (def name(params): ...), got {what}",
                           caller_loc("kernel"))


def _check_entry_point(fn: Callable[..., Any], name: Any) -> str | None:
    """The entry point's name, or None (the function's); a located CompileError (at the decorator)
    when it is not a non-empty string of printable ASCII without spaces."""
    if name is None:
        return None
    if not isinstance(name, str) or not name or not all(33 <= ord(c) < 127 for c in name):
        raise CompileError(f"{fn.__name__}: entry_point must be a non-empty name of printable ASCII "
                           f"characters without spaces (or None), got {name!r}", _decorator_loc(fn, "entry_point"))
    return name


def _check_subgroup_size(fn: Callable[..., Any], size: Any) -> int | None:
    """The required subgroup size, or None; a located CompileError (at the decorator) when it is not valid."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size not in SUBGROUP_SIZES:
        raise CompileError(f"{fn.__name__}: subgroup_size must be a power of two from 1 to 128 "
                           f"(or None), got {size!r}", _decorator_loc(fn, "subgroup_size"))
    return size


def _check_wg(fn: Callable[..., Any], size: Any) -> tuple[int | str, ...]:
    """The workgroup size as three entries; a located CompileError (at the decorator) when it is not valid."""
    where = _decorator_loc(fn, "workgroup_size")
    if isinstance(size, (int, str, float)):
        size = (size,)
    try:
        size = tuple(size)
    except TypeError:
        raise CompileError(f"{fn.__name__}: workgroup_size takes 1 to 3 entries, got {size!r}", where) from None
    if not 1 <= len(size) <= 3:
        raise CompileError(f"{fn.__name__}: workgroup_size takes 1 to 3 entries, got {size!r}", where)
    for s in size:
        if isinstance(s, bool) or not (isinstance(s, str) or (isinstance(s, int) and 0 < s <= MAX_WORKGROUP_DIM)):
            raise CompileError(f"{fn.__name__}: workgroup_size entries must be ints from 1 to {MAX_WORKGROUP_DIM} "
                               f"or Spec parameter names, got {s!r}", where)
    fixed = [s for s in size if isinstance(s, int)]
    if len(fixed) > 1 and math.prod(fixed) > MAX_WORKGROUP_DIM:
        raise CompileError(f"{fn.__name__}: workgroup_size {tuple(size)} has {math.prod(fixed)} invocations; "
                           f"the product must fit in 32 bits (devices allow at most "
                           f"maxComputeWorkGroupInvocations, 1024 on most)", where)
    return cast("tuple[int | str, ...]", size + (1,) * (3 - len(size)))


def _compile(k: Kernel, env: str, spec: dict[str, Any]) -> tuple[Module, bytes]:
    from .frontend import compile_kernel
    from .frontend.source import parse_function
    from .passes import run_pipeline
    from .spirv.writer import write_with_locations

    src = parse_function(k.fn)
    module = Module(k.name, source_file=src.file, target_version=tools.TARGET_ENVS[env])
    module.spec_overrides = dict(spec)
    given = T.GIVEN_SPECS.set(frozenset(spec))   # (the rules on spec-sized dimensions check these values)
    try:
        compile_kernel(k.fn, src, module, k.consts)
    finally:
        T.GIVEN_SPECS.reset(given)
    if k.entry_point is not None:
        module.entry.name = k.entry_point
    module.workgroup_size = tuple(_wg_entry(module, s, src) for s in k.workgroup_size)
    _apply_spec_defaults(module, spec)
    for sc in module.workgroup_size:   # a spec-sized workgroup given a value: at least 1 along each axis (a
        # default alone is not checked, as for spec-sized dimensions (ir.types.dim_problem): a port's defaults
        # may be placeholders the host replaces; a launch checks the value it runs with)
        if isinstance(sc, SpecConst) and sc.name in spec and sc.default < 1:
            raise CompileError(f"workgroup size '{sc.name}' is {sc.default} (the value given to compile(spec=...), "
                               f"launch or bench): each size must be at least 1",
                               _decorator_loc(k.fn, "workgroup_size"))
    run_pipeline(module)
    words, locations = write_with_locations(module, tools.TARGET_ENVS[env])
    binary = to_bytes(words)
    from .ir.layout import uses_scalar_layout

    message = tools.validation_message(binary, env, scalar_block_layout=uses_scalar_layout(module))
    if message is not None:
        raise InternalCompilerError(
            f"coopdsl produced a module that spirv-val rejects (please report this):\n{message}",
            _rejected_at(message, locations) or SourceLoc(src.file, src.tree.lineno, 1))
    family = sys.modules.get("coopdsl.ir.ops.subgroup")   # (loaded once a kernel used a subgroup operation)
    if k.subgroup_size and family is not None:
        wide = family.cluster_problems(module, k.subgroup_size)
        if wide:
            raise CompileError(*wide[0])
    wx = module.workgroup_size[0]
    if k.subgroup_size and (not isinstance(wx, SpecConst) or wx.name in spec):
        # the device rule the kernel's own subgroup size decides (devices/check.py); a spec-sized x is checked
        # at the value given, not at a default a host may replace (as above)
        from .devices.check import declared_problems

        found = declared_problems(k._reflection(module, binary), spec)
        if found:
            raise CompileError(found[0].message, found[0].loc)
    return module, binary


def _rejected_at(message: str, locations: dict[int, SourceLoc]) -> SourceLoc | None:
    """The user line of the instruction spirv-val names ("line N" counts instructions)."""
    m = re.search(r"\bline (\d+):", message)
    return locations.get(int(m.group(1))) if m else None


def _wg_entry(module: Module, s: int | str, src: Source) -> int | SpecConst:
    if isinstance(s, int):
        return s
    for sc in module.spec_consts:
        if sc.name == s:
            if not sc.type.is_int or sc.type.width != 32:
                raise CompileError(f"workgroup size '{s}' must be a Spec[u32] or Spec[i32] parameter",
                                   _wg_name_loc(src, s))
            return sc
    raise CompileError(f"workgroup_size names '{s}', which is not a Spec parameter of {module.name}",
                       _wg_name_loc(src, s))


def _wg_name_loc(src: Source, name: str) -> SourceLoc:
    """Where the decorator's ``workgroup_size`` gives ``name`` (else that argument, else the function)."""
    import ast

    tree = src.tree
    for deco in getattr(tree, "decorator_list", ()):
        for kw in getattr(deco, "keywords", ()):
            if kw.arg == "workgroup_size":
                hit = next((n for n in ast.walk(kw.value) if isinstance(n, ast.Constant) and n.value == name),
                           kw.value)
                return src.loc(hit)
    return src.loc(tree)


def _apply_spec_defaults(module: Module, spec: dict[str, Any]) -> None:
    by_name = {s.name: s for s in module.spec_consts}
    for name, value in spec.items():
        sc = by_name.get(name)
        if sc is None:
            raise ValueError(f"{module.name} has no specialization constant '{name}' "
                             f"(it has: {', '.join(by_name) or 'none'})")
        try:
            sc.default = fit_host(value, sc.type)   # (a bool takes 1 and 0 too, as a launch does)
        except LiteralError as e:
            raise ValueError(f"specialization constant '{name}': {e}") from None
