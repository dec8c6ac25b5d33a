"""Memory layout: the size, alignment, array stride and member offsets of IR types (the one place that decides).

Every other place reads this module (as naga's ``proc::Layouter`` is read): the IR types' laid-out
arrays and blocks, ``@cd.struct`` and uniform/push-constant/buffer blocks, the interpreter's memory,
reflection, and the argument packer the Vulkan runtime and the interpreter share
(``coopdsl/_packing.py``, fed by :func:`flat_members`).

The rules are GLSL's, as glslang computes them (``TIntermediate::getBaseAlignment`` for std430,
``getScalarAlignment`` for GL_EXT_scalar_block_layout); a struct's members are laid out under the one
rule of the block they are declared for, which the struct type records (``StructType.rule``):

* **std430** -- a scalar aligns to its size (bool, which has no size in SPIR-V, is laid out as a
  32-bit int); ``vecN`` aligns to N scalars, except ``vec3``, which aligns like ``vec4`` (and is 3
  scalars big); an array aligns like its element and strides by the element's size rounded up to its
  alignment (a ``vec3`` array strides 4 scalars); a struct aligns like its most aligned member and its
  size is rounded up to that alignment; a member's offset is the running offset rounded up to the
  member's alignment.
* **scalar** -- everything aligns like the scalar it is made of (a struct like its most aligned
  member); sizes are as in std430 except that a struct's size is not rounded up (the next member may
  sit in its tail padding); an array strides by its element's size rounded up to that alignment.
* A struct declared under the scalar rule is measured under it in either layout (its members sit at
  scalar offsets; std430's rounding would not describe it): an array of it strides by its scalar size.
* A pointer (``PhysicalStorageBuffer64``) is an 8-byte address aligned to 8 in both.
* Not in GLSL: a cooperative matrix in memory takes ``length()`` components of one invocation (the
  interpreter's local memory, resolved by the ``coop_length`` a :class:`Layouter` is given) and
  aligns like its component; an array whose length is a specialization constant has the length the
  ``dim`` resolver gives (the interpreter's, for one launch); without one its size is unknown
  (``TypeError``), as is a runtime array's.

An explicit ``ArrayStride`` on an array type and explicit member offsets on a struct type are used as
given; they were computed here when the type was declared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import types as T

Rule = T.LayoutRule
RULES: tuple[Rule, ...] = ("std430", "scalar")
POINTER_SIZE = 8  # PhysicalStorageBuffer64 addresses


def round_up(n: int, align: int) -> int:
    """``n`` rounded up to a multiple of ``align``."""
    return (n + align - 1) // align * align


def _fixed_dim(d: T.Dim) -> int:
    if isinstance(d, int):
        return d
    raise TypeError(f"the length {d} is a specialization constant: no fixed size")


def _no_coop_length(t: T.CoopMatType) -> int:
    raise TypeError(f"type {t} has no fixed size")


class Layouter:
    """Sizes, alignments, strides and offsets of IR types under one rule.

    ``dim`` resolves an array length that is a specialization constant (default: such an array has no
    fixed size); ``coop_length`` gives the components one invocation holds of a cooperative matrix
    (default: none has a size).  Answers are cached per type.
    """

    def __init__(self, rule: Rule = "std430", dim: Callable[[T.Dim], int] | None = None,
                 coop_length: Callable[[T.CoopMatType], int] | None = None) -> None:
        if rule not in RULES:
            raise ValueError(f"layout rule must be one of {', '.join(RULES)}, got {rule!r}")
        self.rule: Rule = rule
        self._dim: Callable[[T.Dim], int] = dim or _fixed_dim
        self._coop_length: Callable[[T.CoopMatType], int] = coop_length or _no_coop_length
        self._sizes: dict[T.Type, int] = {}
        self._aligns: dict[T.Type, int] = {}
        self._offsets: dict[T.StructType, tuple[int, ...]] = {}
        self._scalar: Layouter | None = self if rule == "scalar" else None

    def _rule_of(self, t: T.StructType) -> Layouter:
        """The layouter that measures struct ``t``: this one, or the scalar one for a struct laid out scalar."""
        if t.rule != "scalar" or self.rule == "scalar":
            return self
        if self._scalar is None:
            self._scalar = Layouter("scalar", self._dim, self._coop_length)
        return self._scalar

    def align(self, t: T.Type) -> int:
        """The base alignment of ``t`` in bytes."""
        a = self._aligns.get(t)
        if a is None:
            a = self._aligns[t] = self._align(t)
        return a

    def _align(self, t: T.Type) -> int:
        if isinstance(t, T.ScalarType):
            return t.nbytes
        if isinstance(t, T.VectorType):
            if self.rule == "scalar":
                return t.elem.nbytes
            return t.elem.nbytes * (4 if t.count == 3 else t.count)
        if isinstance(t, (T.ArrayType, T.RuntimeArrayType)):
            return self.align(t.elem)
        if isinstance(t, T.StructType):
            lay = self._rule_of(t)
            return max((lay.align(m) for _, m in t.members), default=1)
        if isinstance(t, T.CoopMatType):
            return t.elem.nbytes
        return POINTER_SIZE  # pointers; opaque handles (tensor layouts and views) are laid out like them

    def size(self, t: T.Type) -> int:
        """The size of ``t`` in bytes (``TypeError`` for a runtime array or an unresolved length)."""
        s = self._sizes.get(t)
        if s is None:
            s = self._sizes[t] = self._size(t)
        return s

    def _size(self, t: T.Type) -> int:
        if isinstance(t, T.ScalarType):
            return t.nbytes
        if isinstance(t, T.VectorType):
            return t.elem.nbytes * t.count
        if isinstance(t, T.PointerType):
            return POINTER_SIZE
        if isinstance(t, T.CoopMatType):
            return self._coop_length(t) * t.elem.nbytes
        if isinstance(t, T.ArrayType):
            return self.stride(t) * self._dim(t.length)
        if isinstance(t, T.StructType) and t.members:
            lay = self._rule_of(t)
            end = lay.offsets(t)[-1] + lay.size(t.members[-1][1])
            return end if lay.rule == "scalar" else round_up(end, self.align(t))
        raise TypeError(f"type {t} has no fixed size")

    def element_stride(self, elem: T.Type) -> int:
        """The stride of an array of ``elem``: its size rounded up to its alignment."""
        return round_up(self.size(elem), self.align(elem))

    def stride(self, t: T.ArrayType | T.RuntimeArrayType) -> int:
        """Bytes from one element of array type ``t`` to the next (its ArrayStride when it has one)."""
        return t.stride or self.element_stride(t.elem)

    def length(self, t: T.ArrayType) -> int:
        """The number of elements of a fixed-size array type (a specialization constant resolved)."""
        return self._dim(t.length)

    def offsets(self, t: T.StructType) -> tuple[int, ...]:
        """The byte offsets of the members of struct ``t`` (its own when it is laid out explicitly)."""
        if t.offsets:
            return t.offsets
        out = self._offsets.get(t)
        if out is None:
            out = self._offsets[t] = self._rule_of(t).member_offsets([m for _, m in t.members])
        return out

    def offset(self, t: T.StructType, index: int) -> int:
        """The byte offset of member ``index`` of struct ``t``."""
        return self.offsets(t)[index]

    def member_offsets(self, members: Sequence[T.Type]) -> tuple[int, ...]:
        """Offsets of consecutive members of these types: each at the running offset rounded up to its
        alignment."""
        out, at = [], 0
        for m in members:
            at = round_up(at, self.align(m))
            out.append(at)
            at += self.size(m)
        return tuple(out)


STD430 = Layouter("std430")
SCALAR = Layouter("scalar")
LAYOUTERS: dict[Rule, Layouter] = {"std430": STD430, "scalar": SCALAR}


def size_of(t: T.Type, rule: Rule = "std430") -> int:
    """The byte size of ``t`` (arrays of known length only; a pointer is an 8-byte address)."""
    return LAYOUTERS[rule].size(t)


def align_of(t: T.Type, rule: Rule = "std430") -> int:
    """The base alignment of ``t`` (std430: ``vec3`` aligns like ``vec4``)."""
    return LAYOUTERS[rule].align(t)


def array_stride(elem: T.Type, rule: Rule = "std430") -> int:
    """The stride of an array of ``elem``: its size rounded up to its alignment (std430: ``vec3`` strides 16)."""
    return LAYOUTERS[rule].element_stride(elem)


def access_alignment(t: T.Type) -> int:
    """An alignment every object of ``t`` in device memory has, whatever the layout: its widest scalar (8 for
    a pointer), the scalar rule's alignment.  Loads and stores through device pointers carry it as
    ``Aligned``."""
    return SCALAR.align(t)


def laid_out(name: str, members: Sequence[tuple[str, T.Type]], rule: Rule = "std430",
             block: bool = False) -> T.StructType:
    """A struct type whose members sit at ``rule``'s offsets; a fixed array member gets ``rule``'s stride
    (decorated ArrayStride)."""
    lay = LAYOUTERS[rule]
    typed = tuple((n, T.ArrayType(t.elem, t.length, lay.element_stride(t.elem)) if isinstance(t, T.ArrayType)
                   else t) for n, t in members)
    return T.StructType(name, typed, lay.member_offsets([t for _, t in typed]), block=block, rule=rule)


def uniform_problem(st: T.StructType, prefix: str = "") -> str | None:
    """Why a std430 struct cannot be a Uniform block as laid out, or None: Vulkan's uniform blocks follow the
    (relaxed) std140 rules unless the device's uniformBufferStandardLayout is asked for, and std140 puts arrays
    and structs at multiples of 16, strides arrays by multiples of 16 and starts the member after an array or
    a struct at the next multiple of 16 (spirv-val's "relaxed uniform buffer layout rules")."""
    if st.rule != "std430":
        return None                     # (scalar-layout blocks: the device's scalarBlockLayout covers them)
    end = 0                             # where the next member may start under std140
    for (name, t), offset in zip(st.members, st.offsets or STD430.member_offsets([t for _, t in st.members])):
        what = f"member '{prefix}{name}' ({t})"
        if offset < end:
            return f"{what} is at offset {offset}, inside the 16-byte rounding std140 gives the array or struct " \
                   f"before it (a uniform block needs it at {end})"
        if isinstance(t, (T.ArrayType, T.StructType)) and offset % 16:
            return f"{what} is at offset {offset}; a uniform block needs arrays and structs at multiples of 16"
        if isinstance(t, T.ArrayType):
            stride = t.stride or array_stride(t.elem)
            if stride % 16:
                return f"{what} strides by {stride} bytes; a uniform block needs array strides of multiples of 16"
        if isinstance(t, T.StructType):
            inner = uniform_problem(t, f"{prefix}{name}.")
            if inner:
                return inner
        end = round_up(offset + size_of(t), 16) if isinstance(t, (T.ArrayType, T.StructType)) else offset
    return None


def unlaid(t: T.Type) -> T.Type:
    """``t`` without explicit layout (array strides, struct member offsets, Block), for a Function or Private
    variable, where Vulkan forbids layout decorations (VUID-StandaloneSpirv-None-10684): a value read from a
    push-constant or buffer struct is spilled there to be indexed at run time. ``t`` itself when it has none."""
    if isinstance(t, T.ArrayType):
        elem = unlaid(t.elem)
        return t if t.stride is None and elem is t.elem else T.ArrayType(elem, t.length)
    if isinstance(t, T.StructType):
        members = tuple((n, unlaid(m)) for n, m in t.members)
        if not t.offsets and not t.block and all(a is b for (_, a), (_, b) in zip(members, t.members)):
            return t
        return T.StructType(t.name, members)
    return t


def array_block(name: str, elem: T.Type) -> T.StructType:
    """The Block struct ``{ elem data[]; }`` a storage buffer or a ``Ptr[elem]`` addresses (std430 stride; a
    scalar-layout struct strides by its scalar size)."""
    return T.StructType(name, (("data", T.RuntimeArrayType(elem, STD430.element_stride(elem))),), (0,), block=True)


# -- the flat member table the argument packer reads ----------------------------------------------------------


def type_name(t: T.Type) -> str:
    """A member type as reflection names it: ``u32``, ``vec4<f32>``, ``ptr``, ``u8[16]``, ``vec2<f32>[3]``
    (other types: as IR text)."""
    if isinstance(t, T.ScalarType):
        return t.name
    if isinstance(t, T.VectorType):
        return f"vec{t.count}<{t.elem.name}>"
    if isinstance(t, T.PointerType):
        return "ptr"
    if isinstance(t, T.ArrayType) and isinstance(t.length, int):
        return f"{type_name(t.elem)}[{t.length}]"
    return str(t)


def flat_members(st: T.StructType, prefix: str = "", base: int = 0,
                 layouter: Layouter = STD430) -> list[dict[str, Any]]:
    """The members of struct ``st`` with absolute offsets, nested struct members under dotted names
    (``p.M``): ``name``, ``offset``, ``type`` (:func:`type_name`), ``size``; a pointer member also its
    ``pointee`` (the scalar or vector an array passed for it must hold, None for a struct), an array
    member its ``stride`` and ``length``.  What reflection lists and the argument packer fills."""
    out: list[dict[str, Any]] = []
    for (name, t), off in zip(st.members, layouter.offsets(st)):
        if isinstance(t, T.StructType):
            out += flat_members(t, f"{prefix}{name}.", base + off, layouter)
            continue
        entry: dict[str, Any] = {"name": prefix + name, "offset": base + off, "type": type_name(t),
                                 "size": layouter.size(t)}
        if isinstance(t, T.PointerType):
            elem = T.data_elem(t)
            entry["pointee"] = type_name(elem) if elem is not None else None
        elif isinstance(t, T.ArrayType):
            entry["stride"], entry["length"] = layouter.stride(t), layouter.length(t)
        out.append(entry)
    return out


def uses_scalar_layout(module: Any) -> bool:
    """Whether a block of ``module`` (a buffer, uniform or push-constant block, or a struct a device pointer
    points at, as a global's or a function parameter's type holds it) is laid out by the scalar rule: the
    module then needs the scalarBlockLayout feature (and spirv-val's ``--scalar-block-layout``)."""
    seen: set[int] = set()

    def scalar(t: T.Type) -> bool:
        if id(t) in seen:
            return False
        seen.add(id(t))
        if isinstance(t, T.StructType):
            return t.rule == "scalar" or any(scalar(m) for _, m in t.members)
        if isinstance(t, T.PointerType):
            return scalar(t.pointee)
        if isinstance(t, (T.ArrayType, T.RuntimeArrayType)):
            return scalar(t.elem)
        return False

    return any(scalar(g.type) for g in module.globals) or \
        any(scalar(p.type) for f in module.functions for p in f.params)
