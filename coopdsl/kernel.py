"""``@coopdsl.kernel``: a Python function that compiles to a SPIR-V compute kernel.

Compilation is lazy and cached per target environment: the first call to
:meth:`Kernel.compile` (or ``save``/``disassemble``/``reflect``) parses the
function's source, builds and verifies the IR, writes SPIR-V and runs
``spirv-val`` on it.  Mistakes in the kernel raise :class:`CompileError`
pointing at the user's line; the traceback holds no compiler frame.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import CompileError, CoopDSLError, InternalCompilerError, SourceLoc
from .ir.core import Module, SpecConst
from .ir.printer import print_module
from .spirv import tools
from .spirv.words import to_bytes

WorkgroupSize = Sequence["int | str"]


class Kernel:
    """A compiled-on-demand compute kernel (see :func:`kernel`)."""

    def __init__(self, fn: Callable, workgroup_size: WorkgroupSize = (1, 1, 1),
                 target_env: str = tools.DEFAULT_TARGET_ENV, consts: dict | None = None):
        self.fn = fn
        self.consts = dict(consts or {})
        self._specialized: dict = {}
        self.name = fn.__name__
        self.workgroup_size = _check_wg(fn, workgroup_size)
        if target_env not in tools.TARGET_ENVS:
            raise ValueError(f"target_env must be one of {sorted(tools.TARGET_ENVS)}, got {target_env!r}")
        self.target_env = target_env
        self._cache: dict[tuple, tuple[Module, bytes]] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel '{self.name}' runs on a GPU: use .launch(...) or compile it with .compile()")

    def __repr__(self) -> str:
        extra = "".join(f" {k}={v!r}" for k, v in sorted(self.consts.items()))
        return f"<coopdsl.kernel {self.name} workgroup_size={self.workgroup_size}{extra}>"

    def specialize(self, **consts: Any) -> "Kernel":
        """The kernel with ``Const`` parameters set; each distinct set of values compiles once (cached)."""
        import inspect

        from .lang.types import ConstParam

        annotations = inspect.get_annotations(self.fn, eval_str=True)
        for name in consts:
            if not isinstance(annotations.get(name), ConstParam):
                raise ValueError(f"{self.name} has no Const parameter '{name}'")
        merged = {**self.consts, **consts}
        key = tuple(sorted((k, repr(v)) for k, v in merged.items()))
        if key not in self._specialized:
            self._specialized[key] = Kernel(self.fn, self.workgroup_size, self.target_env, merged)
        return self._specialized[key]

    # -- compiling ------------------------------------------------------------------
    def _build(self, target_env: str | None, spec: dict | None = None) -> tuple[Module, bytes]:
        env = target_env or self.target_env
        if env not in tools.TARGET_ENVS:
            raise ValueError(f"target_env must be one of {sorted(tools.TARGET_ENVS)}, got {env!r}")
        key = (env, tuple(sorted((spec or {}).items())))
        if key not in self._cache:
            try:
                self._cache[key] = _compile(self, env, spec or {})
            except CoopDSLError as e:
                raise e.with_traceback(None) from None
        return self._cache[key]

    def compile(self, target_env: str | None = None, spec: dict[str, int | float | bool] | None = None) -> bytes:
        """The validated SPIR-V module (bytes) for ``target_env`` (default: the kernel's).

        ``spec`` replaces the *default* values of specialization constants by
        name (the host can still override them at pipeline creation).
        """
        return self._build(target_env, spec)[1]

    def ir(self, target_env: str | None = None) -> Module:
        """The kernel's IR module (after passes)."""
        return self._build(target_env)[0]

    def print_ir(self, target_env: str | None = None, spec: dict | None = None) -> str:
        """Text form of the IR, for debugging."""
        return print_module(self._build(target_env, spec)[0])

    def save(self, path: str | Path, target_env: str | None = None) -> Path:
        """Write the SPIR-V binary to ``path``; returns the path."""
        p = Path(path)
        p.write_bytes(self.compile(target_env))
        return p

    def disassemble(self, target_env: str | None = None) -> str:
        """spirv-dis text of the module."""
        return tools.disassemble(self.compile(target_env))

    def reflect(self, target_env: str | None = None, spec: dict | None = None) -> dict[str, Any]:
        """Bindings, push constants, spec constants, workgroup size, capabilities (see docs/runtime.md)."""
        from .reflect import reflect

        module, binary = self._build(target_env, spec)
        return reflect(module, binary)


    # -- running ----------------------------------------------------------------------
    def _bind(self, args: tuple, kwargs: dict) -> tuple[dict, dict]:
        """Split call-style arguments into (buffer/push-constant args, spec-constant values)."""
        import inspect

        from .lang.types import ConstParam, SpecParam

        sig = inspect.signature(self.fn)
        try:
            bound = sig.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}.launch: {e}") from None
        annotations = inspect.get_annotations(self.fn, eval_str=True)
        values, spec = {}, {}
        for name, value in bound.arguments.items():
            if isinstance(annotations.get(name), ConstParam):
                raise TypeError(f"{self.name}: '{name}' is a compile-time parameter; "
                                f"use {self.name}.specialize({name}=...).launch(...)")
            (spec if isinstance(annotations.get(name), SpecParam) else values)[name] = value
        return values, spec

    def launch(self, grid: Sequence[int], *args: Any, device: Any = None, subgroup_size: int | None = None,
               **kwargs: Any) -> None:
        """Run the kernel once on a Vulkan GPU (see docs/runtime.md), or on the CPU interpreter.

        Arguments follow the kernel's parameters, by position or name:
        numpy arrays for buffers (written back in place unless read-only),
        numbers for push constants and for specialization constants (those
        left out keep their defaults). ``grid`` is the number of workgroups
        (1 to 3 ints). ``device="cpu"``, or ``COOPDSL_DEVICE=cpu`` in the
        environment, runs it on the interpreter (docs/interpreter.md), with
        ``subgroup_size`` invocations per subgroup (default 32).
        """
        from . import interp

        values, spec = self._bind(args, kwargs)
        if interp.wants_cpu(device):
            interp.launch(self, _grid(grid), values, spec, subgroup_size)
            return
        if subgroup_size is not None:
            raise ValueError("subgroup_size= applies to device='cpu' only (a GPU has its own subgroup size)")
        from . import runtime

        binary = self.compile()
        runtime.launch(binary, self.reflect(), _grid(grid), values, spec=spec, device=device)

    def bench(self, grid: Sequence[int], *args: Any, device: Any = None, warmup: int = 5, repeat: int = 20,
              flops: float | None = None, **kwargs: Any):
        """Time the kernel with GPU timestamps; returns ``runtime.BenchResult`` (median, spread, TFLOP/s)."""
        from . import runtime

        values, spec = self._bind(args, kwargs)
        return runtime.bench(self.compile(), self.reflect(), _grid(grid), values, spec=spec, warmup=warmup,
                             repeat=repeat, flops=flops, device=device)


def _grid(grid) -> tuple[int, int, int]:
    g = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(g) <= 3 or not all(isinstance(x, int) and x > 0 for x in g):
        raise ValueError(f"grid must be 1 to 3 positive ints, got {grid!r}")
    return g + (1,) * (3 - len(g))


def kernel(fn: Callable | None = None, *, workgroup_size: WorkgroupSize = (1, 1, 1),
           target_env: str = tools.DEFAULT_TARGET_ENV):
    """Decorate a function as a coopdsl compute kernel.

    ``workgroup_size`` is up to three positive ints (missing ones are 1); an
    entry may instead name a ``Spec[u32]`` parameter, making that dimension a
    specialization constant (``OpExecutionModeId LocalSizeId``).
    ``target_env`` is one of vulkan1.1, vulkan1.2, vulkan1.3 (default), vulkan1.4.

    Usage::

        @coopdsl.kernel(workgroup_size=(32, 1, 1))
        def k(a: coopdsl.Buffer[coopdsl.f32]): ...
    """
    if fn is None:
        return lambda f: Kernel(f, workgroup_size, target_env)
    return Kernel(fn, workgroup_size, target_env)


def _check_wg(fn, size) -> tuple:
    if isinstance(size, (int, str)):
        size = (size,)
    size = tuple(size)
    if not 1 <= len(size) <= 3:
        raise ValueError(f"{fn.__name__}: workgroup_size takes 1 to 3 entries, got {size!r}")
    for s in size:
        if isinstance(s, bool) or not (isinstance(s, str) or (isinstance(s, int) and s > 0)):
            raise ValueError(f"{fn.__name__}: workgroup_size entries must be positive ints or Spec parameter names, "
                             f"got {s!r}")
    return size + (1,) * (3 - len(size))


def _compile(k: Kernel, env: str, spec: dict) -> tuple[Module, bytes]:
    from .frontend.codegen import CodeGen
    from .frontend.source import parse_function
    from .passes import run_pipeline
    from .spirv.writer import write

    src = parse_function(k.fn)
    module = Module(k.name, source_file=src.file, target_version=tools.TARGET_ENVS[env])
    CodeGen(k.fn, src, module).run(k.consts)
    module.workgroup_size = tuple(_wg_entry(module, s, src) for s in k.workgroup_size)
    _apply_spec_defaults(module, spec)
    run_pipeline(module)
    binary = to_bytes(write(module, tools.TARGET_ENVS[env]))
    message = tools.validation_message(binary, env)
    if message is not None:
        raise InternalCompilerError(
            f"coopdsl produced a module that spirv-val rejects (please report this):\n{message}",
            SourceLoc(src.file, src.tree.lineno, 1))
    return module, binary


def _wg_entry(module: Module, s, src):
    if isinstance(s, int):
        return s
    for sc in module.spec_consts:
        if sc.name == s:
            if sc.type.kind != "int" or sc.type.width != 32:
                raise CompileError(f"workgroup size '{s}' must be a Spec[u32] or Spec[i32] parameter",
                                   src.loc(src.tree))
            return sc
    raise CompileError(f"workgroup_size names '{s}', which is not a Spec parameter of {module.name}",
                       src.loc(src.tree))


def _apply_spec_defaults(module: Module, spec: dict) -> None:
    by_name = {s.name: s for s in module.spec_consts}
    for name, value in spec.items():
        sc = by_name.get(name)
        if sc is None:
            raise ValueError(f"{module.name} has no specialization constant '{name}' "
                             f"(it has: {', '.join(by_name) or 'none'})")
        kind = sc.type.kind
        if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool)) or \
                kind == "float" and not isinstance(value, (int, float)) or kind == "bool" and not isinstance(value, bool):
            raise ValueError(f"specialization constant '{name}' is {sc.type}, got {value!r}")
        sc.default = float(value) if kind == "float" else value
