"""Structs for buffer, uniform and push-constant layouts, uniform blocks, and
buffer device addresses (``Ptr[T]``: pointers to PhysicalStorageBuffer data).

``@cd.struct`` turns an annotated class into a struct type laid out with
std430 rules (``layout_rule="scalar"`` packs members at their scalar alignment,
VK_EXT_scalar_block_layout).  Members are scalars, vectors, fixed arrays
(``cd.array[T, N]``, see :mod:`.blocks`), ``Ptr[T]`` or other structs.  A
``Ptr[T]`` points at an array of ``T``: index it (``p[i]``, ``p[i] = v``),
offset it (``p + n``), or load cooperative matrices through it; every
load/store through it carries ``Aligned``.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any, overload

from .._records import record
from .._sources import file_tree, find_class
from ..errors import DeclarationError, SourceLoc, caller_loc
from ..ir import types as T
from ..ir.layout import array_block, laid_out
from ..ir.vocab import StorageClass
from .types import named


def ptr_type(elem: T.Type) -> T.PointerType:
    """The IR type of ``Ptr[elem]``: a PhysicalStorageBuffer pointer to ``{ elem data[]; }``."""
    return T.PointerType(array_block(f"ptr_{_name(elem)}", elem), StorageClass.PhysicalStorageBuffer)


def _name(t: T.Type) -> str:
    return t.name if isinstance(t, (T.ScalarType, T.StructType)) else str(t).replace("<", "_").replace(">", "") \
        .replace(", ", "_").replace("[", "_").replace("]", "")


def is_data_ptr(t: object) -> bool:
    return isinstance(t, T.PointerType) and t.storage.is_physical and \
        isinstance(t.pointee, T.StructType) and t.pointee.name.startswith("ptr_")


def ptr_elem(t: T.Type) -> T.Type:
    """The element type of a ``Ptr[...]`` type (``is_data_ptr(t)``)."""
    return T.block_array(t).elem


class _PtrFamily:
    def __getitem__(self, elem: object) -> T.PointerType:
        if not isinstance(elem, (T.ScalarType, T.VectorType, T.StructType)) or \
                isinstance(elem, T.ScalarType) and elem.is_bool:
            raise DeclarationError(f"Ptr[...] points at a numeric scalar, vector or struct type, not {named(elem)}",
                                   caller_loc("Ptr["))
        return ptr_type(elem)

    def __repr__(self) -> str:
        return "Ptr"


Ptr = _PtrFamily()


def layout(name: str, members: list[tuple[str, T.Type]], scalar: bool = False,
           where: Callable[[str], SourceLoc] = lambda member: caller_loc(member)) -> T.StructType:
    """A struct type with std430 (or scalar) member offsets and array strides (coopdsl/ir/layout.py);
    ``where(member)`` locates a bad member."""
    typed = []
    for mname, mt in members:
        if not isinstance(mt, (T.ScalarType, T.VectorType, T.PointerType, T.StructType, T.ArrayType)) or \
                isinstance(T.elem_of(mt), T.ScalarType) and T.scalar_of(mt).is_bool:
            what = f"is annotated {type(mt).__name__.removesuffix('Param')}[...], which declares a kernel " \
                f"parameter" if type(mt).__name__.endswith("Param") else f"has unsupported type {named(mt)}"
            raise DeclarationError(f"struct {name}: member '{mname}' {what} "
                                   f"(use numeric scalars, vectors, cd.array[T, N], Ptr[T] or structs)",
                                   where(mname))
        if isinstance(mt, T.ArrayType) and (not isinstance(mt.length, int) or isinstance(mt.elem, T.ArrayType)):
            raise DeclarationError(f"struct {name}: member '{mname}' is {mt}; a struct's array members have a "
                                   f"compile-time length and scalar or vector elements", where(mname))
        typed.append((mname, mt))
    return laid_out(name, typed, "scalar" if scalar else "std430")


def _class_node(cls: type) -> tuple[str, ast.ClassDef] | None:
    """The file and ``class`` statement of ``cls``.  ``inspect`` finds a class through its module, which a
    module run from a file without an import (``runpy``, ``exec``) does not register: then the statement is
    the first of that name at or after the decorator's line (the user's frame)."""
    try:
        file = inspect.getsourcefile(cls) or "<unknown>"
        first = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        at = caller_loc()
        file, first = at.file, at.line
    tree = file_tree(file) if first > 0 else None
    node = None if tree is None else find_class(tree, cls.__name__, first)
    return None if node is None else (file, node)


def _member_loc(cls: type, member: str) -> SourceLoc:
    """The line declaring ``member`` in class ``cls`` (its decorator's line when the source is unavailable)."""
    found = _class_node(cls)
    if found is not None:
        file, node = found
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == member:
                return SourceLoc(file, stmt.lineno, stmt.col_offset + 1)
    return caller_loc(member)


def _member_types(cls: type) -> dict[str, Any]:
    """The class's member annotations, evaluated (``from __future__ import annotations`` leaves strings)."""
    raw = dict(cls.__dict__.get("__annotations__", {}))
    module = inspect.getmodule(cls)
    scope = dict(vars(module)) if module is not None else {}
    out = {}
    for name, ann in raw.items():
        if isinstance(ann, str):
            try:
                ann = eval(ann, scope, dict(vars(cls)))  # noqa: S307 - the user's own annotation
            except Exception as e:
                raise DeclarationError(f"struct {cls.__name__}: cannot evaluate the annotation of member '{name}' "
                                       f"({type(e).__name__}: {e}); without `from __future__ import annotations` "
                                       f"annotations may name local variables", _member_loc(cls, name)) from None
        out[name] = ann
    return out


@overload
def struct(cls: type, *, layout_rule: str = ...) -> T.StructType: ...


@overload
def struct(cls: None = None, *, layout_rule: str = ...) -> Callable[[type], T.StructType]: ...


def struct(cls: type | None = None, *, layout_rule: str = "std430") -> T.StructType | Callable[[type], T.StructType]:
    """Declare a struct from an annotated class: ``@cd.struct class Params: M: u32; alpha: f32``."""
    def make(c: type) -> T.StructType:
        if not isinstance(c, type):
            raise DeclarationError(f"@coopdsl.struct decorates a class with annotated members, got "
                                   f"{type(c).__name__} {c!r}", caller_loc("struct"))
        if layout_rule not in ("std430", "scalar"):
            raise DeclarationError(f"struct {c.__name__}: layout_rule must be 'std430' or 'scalar' (std140 is for "
                                   f"uniform blocks in GLSL; coopdsl lays uniform blocks out as std430 or scalar), "
                                   f"got {layout_rule!r}", caller_loc("layout_rule"))
        members = list(_member_types(c).items())
        if not members:
            raise DeclarationError(f"struct {c.__name__} has no annotated members (a SPIR-V struct needs at least "
                                   f"one)", caller_loc("class"))
        struct_type = layout(c.__name__, members, scalar=layout_rule == "scalar",
                             where=lambda m: _member_loc(c, m))
        for mname, _ in members:
            if mname in c.__dict__:   # (``b: f32 = 1.0``: a class attribute a struct value would never use)
                raise DeclarationError(f"struct {c.__name__}: member '{mname}' takes no default: every "
                                       f"construction gives it ({c.__name__}({', '.join(m for m, _ in members)})); "
                                       f"remove '= {c.__dict__[mname]!r}'", _member_loc(c, mname))
        return struct_type
    return make(cls) if cls is not None else make


@record(frozen=True)
class UniformParam:
    """A uniform block parameter holding one struct."""

    type: T.StructType

    def __str__(self) -> str:
        return f"Uniform[{self.type}]"


class _UniformFamily:
    def __getitem__(self, t: object) -> UniformParam:
        if not isinstance(t, T.StructType):
            raise DeclarationError(f"Uniform[...] takes a @coopdsl.struct type, got {named(t)}",
                                   caller_loc("Uniform["))
        return UniformParam(t)

    def __repr__(self) -> str:
        return "Uniform"


Uniform = _UniformFamily()
