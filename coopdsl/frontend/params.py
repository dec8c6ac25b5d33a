"""Kernel parameters become module globals: buffers, spec constants, push constants.

* ``Buffer[T]``: a StorageBuffer ``Block`` struct ``{ T data[]; }`` at
  descriptor set 0, bindings numbered in parameter order.  Buffers the kernel
  never writes are decorated NonWritable (and reported read-only).
* ``Spec[T]`` / ``Spec[T, id]``: OpSpecConstant with SpecId ``id`` (default:
  the next id after the largest explicit or previous one); the Python default
  value is the constant's default (0 if none).
* ``Push[T]`` or a bare scalar/vector annotation: a member of the kernel's one
  push-constant block, laid out with std430 alignment in parameter order (coopdsl/ir/layout.py).

Buffers, uniform blocks and push constants take no default (``= None`` only, where Python's order of
parameters needs one): every launch gives them.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from .._records import record
from ..errors import CompileError, DeclarationError, TypeMismatchError, UnsupportedSyntaxError, with_article
from ..ir import types as T
from ..ir.core import GlobalVar, Module, SpecConst
from ..ir.layout import array_block, laid_out, uniform_problem
from ..ir.literals import LiteralError, fit, fit_host, python_value
from ..ir.vocab import StorageClass
from ..lang.structs import UniformParam
from ..lang.types import BufferParam, ConstParam, Enumerant, PushParam, SpecParam, named
from ..lang.values import BufferRef

if TYPE_CHECKING:
    from .source import Source


@record
class KernelParams:
    """What a kernel's parameters became: buffers, specialization constants, push constants, uniforms."""

    buffers: list[BufferRef] = field(default_factory=list)
    specs: list[SpecConst] = field(default_factory=list)
    push: list[tuple[str, T.Type, int]] = field(default_factory=list)  # name, type, offset
    push_var: GlobalVar | None = None
    uniforms: list[tuple[Any, ...]] = field(default_factory=list)  # (name, variable, struct type)


def parameter_annotations(fn: Callable[..., Any], src: Source) -> dict[str, Any]:
    """The evaluated annotations of ``fn``'s parameters (string annotations too, with closure variables in
    scope); a located error naming the one that does not evaluate."""
    kept = getattr(fn, "__coopdsl_annotation_scope__", None)   # (kernel._keep_annotation_scope)
    try:
        return inspect.get_annotations(fn, eval_str=True, locals=kept)
    except Exception:  # a string annotation that does not evaluate: find which, and say where
        pass
    raw = inspect.get_annotations(fn)
    scope = {**fn.__globals__, **(kept or {}), **_closure(fn)}
    out: dict[str, Any] = {}
    for arg in src.tree.args.args:
        text = raw.get(arg.arg)
        try:
            out[arg.arg] = eval(text, scope) if isinstance(text, str) else text  # noqa: S307 - the user's own annotation
        except Exception as e:
            loc = src.loc(arg.annotation) if arg.annotation is not None else src.loc(arg)
            if isinstance(e, CompileError):  # a declaration error: keep its words, point at the annotation
                raise type(e)(e.message, loc) from None
            raise UnsupportedSyntaxError(f"cannot evaluate the annotation of '{arg.arg}': {type(e).__name__}: {e}",
                                         loc) from None
    return out


def _closure(fn: Callable[..., Any]) -> dict[str, Any]:
    names = fn.__code__.co_freevars
    cells = fn.__closure__ or ()
    out: dict[str, Any] = {}
    for name, cell in zip(names, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


@record
class _Building:
    """What building one kernel's parameters keeps between them: the results so far, and what a parameter's
    handler reads (defaults, compile-time values, specialization ids taken)."""

    fn: Any
    src: Any
    module: Module
    consts: dict[str, Any]
    defaults: dict[str, Any]
    used_ids: set[int]
    params: KernelParams = field(default_factory=KernelParams)
    bindings: dict[str, Any] = field(default_factory=dict)
    next_id: int = 0  # the next specialization constant id to try
    push: list[tuple[str, T.Type]] = field(default_factory=list)  # push-constant members, in parameter order


def build_params(fn: Callable[..., Any], src: Source, module: Module,
                 consts: dict[str, Any] | None = None) -> tuple[KernelParams, dict[str, Any]]:
    """Create globals for ``fn``'s parameters; return them and the name bindings.  Each parameter goes to
    the handler of its annotation's kind (:data:`HANDLERS`)."""
    tree = src.tree
    a = tree.args
    if a.vararg or a.kwarg or a.posonlyargs or a.kwonlyargs:
        bad = a.vararg or a.kwarg or (a.posonlyargs or a.kwonlyargs)[0]
        raise UnsupportedSyntaxError("kernel parameters must be plain named parameters", src.loc(bad))
    annotations = parameter_annotations(fn, src)
    defaults = dict(zip([x.arg for x in a.args][len(a.args) - len(a.defaults):],
                        (python_value(d) for d in fn.__defaults__ or ())))   # (np.int64(5): 5, as a launch takes it)
    used_ids = {ann.spec_id for ann in annotations.values() if isinstance(ann, SpecParam) and ann.spec_id is not None}
    b = _Building(fn, src, module, consts or {}, defaults, used_ids)
    for arg in a.args:
        name = arg.arg
        ann = annotations.get(name)
        if ann is None:
            raise TypeMismatchError(
                f"parameter '{name}' needs an annotation: Buffer[T], Spec[T], Push[T] or a scalar type", src.loc(arg))
        handler = next((HANDLERS[c] for c in type(ann).__mro__ if c in HANDLERS), None)
        if handler is None:
            raise TypeMismatchError(
                f"parameter '{name}': annotation {named(ann)} is not Buffer[T], Spec[T], Push[T] or a scalar type",
                src.loc(arg))
        handler(b, name, ann, arg)
    params = b.params
    if b.push:  # one block, std430 in parameter order
        struct = laid_out(f"{tree.name}_push", b.push, "std430", block=True)
        params.push = [(n, t, o) for (n, t), o in zip(struct.members, struct.offsets)]
        params.push_var = GlobalVar(T.PointerType(struct, StorageClass.PushConstant), "push_constants", "push")
        module.globals.append(params.push_var)
    return params, b.bindings


def _compile_time(b: _Building, name: str, ann: ConstParam, arg: ast.arg) -> None:
    """``Const[T]``: the value given to specialize() or the default, bound to the name (no global)."""
    if name in b.consts:
        value = b.consts[name]
    elif name in b.defaults:
        value = b.defaults[name]
    else:
        raise TypeMismatchError(f"compile-time parameter '{name}' has no value: give a default or "
                                f"use {b.fn.__name__}.specialize({name}=...)", b.src.loc(arg))
    if not ann.accepts(value):
        assert ann.type is not None   # (a Const without a type accepts everything)
        raise TypeMismatchError(f"compile-time parameter '{name}' must be {with_article(ann.type.__name__)}, "
                                f"got {value!r}", b.src.loc(arg))
    b.bindings[name] = value


def _no_default(b: _Building, name: str, what: str, arg: ast.arg) -> None:
    """A buffer, uniform block or push constant has no default: each launch gives it (``= None``, which
    Python's order of parameters asks for after one with a default, says so)."""
    if b.defaults.get(name) is not None:
        raise DeclarationError(f"{what} '{name}' takes no default: every launch gives it (a specialization "
                               f"constant, cd.Spec[T] = value, has one); write '= None' where Python needs a "
                               f"default after a parameter with one", b.src.loc(arg))


def _uniform(b: _Building, name: str, ann: UniformParam, arg: ast.arg) -> None:
    """``Uniform[S]``: a Uniform block holding the struct, at the next binding."""
    _no_default(b, name, "uniform block", arg)
    binding = len(b.params.buffers) + len(b.params.uniforms)
    st = ann.type
    problem = uniform_problem(st)
    if problem:
        raise DeclarationError(
            f"uniform block '{name}' (struct {st.name}): {problem} (std140). Use vec4 elements or padding "
            f"members, pass the struct as a cd.Buffer[{st.name}] (std430), or declare it with "
            f"@cd.struct(layout_rule=\"scalar\")", b.src.loc(arg))
    block = T.StructType(f"{name}_ubo", st.members, st.offsets, block=True, rule=st.rule)
    var = GlobalVar(T.PointerType(block, StorageClass.Uniform), name, "uniform", set=0, binding=binding)
    b.module.globals.append(var)
    b.params.uniforms.append((name, var, st))


def _buffer(b: _Building, name: str, ann: BufferParam, arg: ast.arg) -> None:
    """``Buffer[T]``: a StorageBuffer block ``{ T data[]; }`` at the next binding."""
    _no_default(b, name, "buffer", arg)
    elem = ann.elem
    while isinstance(elem, T.ArrayType):
        elem = elem.elem
    if isinstance(elem, (T.ScalarType, T.VectorType)) and T.scalar_of(elem).is_bool:
        raise TypeMismatchError(f"buffer '{name}' cannot hold {ann.elem}: SPIR-V has no bool in storage buffers (as "
                                f"in struct members and push constants); store a u32 (0 or 1) and test it "
                                f"(`if {name}[i] != 0:`)", b.src.loc(arg))
    binding = len(b.params.buffers) + len(b.params.uniforms)
    var = GlobalVar(T.PointerType(array_block(f"{name}_block", ann.elem), StorageClass.StorageBuffer), name,
                    "buffer", set=0, binding=binding)
    b.module.globals.append(var)
    ref = BufferRef(name, var, ann.elem)
    b.params.buffers.append(ref)
    b.bindings[name] = ref


def _spec(b: _Building, name: str, ann: SpecParam, arg: ast.arg) -> None:
    """``Spec[T]`` / ``Spec[T, id]``: a specialization constant (the next free id unless given)."""
    src = b.src
    sid = ann.spec_id
    if sid is None:
        while b.next_id in b.used_ids:
            b.next_id += 1
        sid = b.next_id
        b.used_ids.add(sid)
    b.next_id = max(b.next_id, sid + 1)
    if sid > 0xFFFFFFFF:  # (the next free id after one at the very top)
        raise TypeMismatchError(f"no 32-bit specialization constant id is left for '{name}' (the ids above "
                                f"it are taken); give it one, e.g. Spec[u32, 0]", src.loc(arg))
    if any(s.spec_id == sid for s in b.params.specs):
        raise TypeMismatchError(f"specialization constant id {sid} is used twice", src.loc(arg))
    default = b.defaults.get(name, False if ann.type.is_bool else 0)
    default = _check_default(ann.type, default, name, src, arg)
    if name in b.module.spec_overrides:  # compile(spec=...): the rules see this value (if it fits;
        try:                             # Kernel.compile reports a value that does not)
            default = fit_host(b.module.spec_overrides[name], ann.type)
        except LiteralError:
            pass
    sc = SpecConst(ann.type, name, sid, default)
    b.module.spec_consts.append(sc)
    b.params.specs.append(sc)
    b.bindings[name] = sc


def _push(b: _Building, name: str, ann: PushParam | T.Type, arg: ast.arg) -> None:
    """``Push[T]`` or a bare scalar, vector, struct or pointer type: a member of the push-constant block."""
    _no_default(b, name, "push constant", arg)
    t = ann.type if isinstance(ann, PushParam) else ann
    if isinstance(t, (T.ScalarType, T.VectorType)) and not T.scalar_of(t).is_ieee and T.scalar_of(t).is_float:
        raise TypeMismatchError(f"push constant '{name}' cannot be {t}", b.src.loc(arg))   # (vec2[bf16] too)
    if isinstance(t, (T.ScalarType, T.VectorType)) and T.scalar_of(t).is_bool:
        raise TypeMismatchError(f"push constant '{name}' cannot be {t}: SPIR-V has no bool in push-constant "
                                f"blocks (as in struct members); pass a u32 and test it (`if {name} != 0:`), "
                                f"or make it a Spec[cd.boolean] specialization constant", b.src.loc(arg))
    b.push.append((name, t))


# annotation kind -> what its parameter becomes (an annotation's class, or the nearest base class listed)
HANDLERS: dict[type, Callable[[_Building, str, Any, ast.arg], None]] = {
    ConstParam: _compile_time, UniformParam: _uniform, BufferParam: _buffer, SpecParam: _spec,
    PushParam: _push, T.ScalarType: _push, T.VectorType: _push, T.StructType: _push, T.PointerType: _push,
}


def _check_default(t: T.ScalarType, value: Any, name: str, src: Source, arg: ast.arg) -> bool | int | float:
    if isinstance(value, Enumerant) and t.is_int:  # Spec[u32] = cd.ClampToEdge: its value, as in GLSL
        value = value.value                        # (const uint C = gl_CooperativeMatrixClampModeConstantNV)
    try:
        return fit(value, t)
    except LiteralError as e:
        raise TypeMismatchError(f"default of specialization constant '{name}': {e}", src.loc(arg)) from None
