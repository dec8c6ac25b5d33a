"""Reflection: what a host needs to drive a compiled kernel, as plain data.

The dict (schema in docs/runtime.md) lists descriptor bindings, the
push-constant block layout, specialization constants (id, name, type,
default), the workgroup size (with the spec ids of any dimensions that are
specialization constants), the required subgroup size, the bytes of its
shared (Workgroup) arrays, and the module's capabilities and extensions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .devices.dims import DimError, expression, matrix_text, resolve
from .ir import types as T
from .ir.core import GlobalVar, Module, Op, SpecConst
from .ir.layout import STD430, flat_members, size_of, uses_scalar_layout
from .ir.literals import stored
from .ir.ops.base import matrix
from .ir.vocab import MATRIX_SCOPES, ScalarKind, matrix_scope, matrix_use
from .spirv.grammar import enum_name
from .spirv.words import from_bytes


def module_capabilities(binary: bytes) -> tuple[list[str], list[str]]:
    """(capabilities, extensions) declared by a SPIR-V binary."""
    words = from_bytes(binary)
    caps, exts, i = [], [], 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if opcode == 17:  # OpCapability
            caps.append(enum_name("Capability", words[i + 1]))
        elif opcode == 10:  # OpExtension
            raw = b"".join(w.to_bytes(4, "little") for w in words[i + 1:i + count])
            exts.append(raw.split(b"\0", 1)[0].decode())
        elif opcode not in (17, 10):
            if caps:
                break
        i += max(count, 1)
    return caps, exts


def reflect(module: Module, binary: bytes, subgroup_size: int | None = None, subgroup_size_loc: str | None = None,
            workgroup_size_loc: str | None = None) -> dict[str, Any]:
    """The reflection dict of ``module`` compiled to ``binary``; ``subgroup_size`` is the kernel's required
    subgroup size (``@kernel(subgroup_size=...)``, None for any) and ``subgroup_size_loc`` where it was given;
    ``workgroup_size_loc`` is where the workgroup size was given (device checks point there)."""
    bindings, push = [], {"size": 0, "members": []}
    referenced = {id(v) for f in module.functions for op in f.ops() for v in op.operands}
    for g in module.globals:
        if g.role == "buffer":
            data = T.block_array(g.type)
            elem = data.elem
            scalar = T.scalar_of(elem) if not isinstance(elem, T.StructType) else T.u8
            bindings.append({
                "name": g.name, "set": g.info["set"], "binding": g.info["binding"],
                "kind": "storage_buffer", "element_type": scalar.name,
                "components": elem.count if isinstance(elem, T.VectorType) else
                size_of(elem) if isinstance(elem, T.StructType) else 1,
                "stride": data.stride, "readonly": bool(g.info.get("readonly")),
                "used": id(g) in referenced,   # (False: no instruction reads or writes it; a launch may give None)
            })
        elif g.role == "uniform":
            bindings.append({"name": g.name, "set": g.info["set"], "binding": g.info["binding"],
                             "kind": "uniform_buffer", "element_type": "u8",
                             "components": size_of(g.type.pointee), "readonly": True,
                             "size": size_of(g.type.pointee),
                             "members": flat_members(T.pointee_struct(g.type))})
        elif g.role == "push":
            st = T.pointee_struct(g.type)
            push["members"] = flat_members(st)
            push["size"] = size_of(st)
    caps, exts = module_capabilities(binary)
    size = module.workgroup_size
    return {
        "entry_point": module.entry.name,
        "workgroup_size": [s.default if isinstance(s, SpecConst) else s for s in size],
        "workgroup_size_spec_ids": [s.spec_id if isinstance(s, SpecConst) else None for s in size],
        "subgroup_size": subgroup_size,
        "subgroup_size_loc": subgroup_size_loc,
        "workgroup_size_loc": workgroup_size_loc,
        "bindings": bindings,
        "push_constants": push,
        "spec_constants": [{"id": s.spec_id, "name": s.name, "type": s.type.name, "default": _stored(s)}
                           for s in module.spec_consts],
        "capabilities": caps,
        "extensions": exts,
        "cooperative_matrices": cooperative_matrices(module),
        "muladds": muladds(module),
        "scalar_block_layout": uses_scalar_layout(module),
        "shared_memory": shared_memory(module),
    }


# -- cooperative matrices ------------------------------------------------------------------
MULADD_OP = "coop_muladd"  # IR op kind of a cooperative-matrix multiply-add (the one place that names it)
SIGNED_OPERAND = {"A": "a", "B": "b", "C": "c", "Result": "result"}  # reflection key -> op's ``signed`` names


def _stored(s: SpecConst) -> Any:
    """A specialization constant's default as the module holds it (a float rounded to its type)."""
    return stored(s.default, s.type) if isinstance(s.type, T.ScalarType) else s.default


def cooperative_matrices(module: Module) -> list[dict[str, Any]]:
    """Every distinct cooperative-matrix type the module uses, with the first user line that uses it."""
    seen: dict[T.CoopMatType, dict[str, Any]] = {}
    for f in module.functions:
        for op in f.ops():
            for t in _coop_types(op):
                if t not in seen:
                    entry = {"component": t.elem.name, "rows": _dim(t.rows, module), "cols": _dim(t.cols, module),
                             "use": _use(t.use, module), "scope": _scope(t.scope, module)}
                    seen[t] = {"type": matrix_text(**entry), **entry, "loc": str(_first(op.loc, module, t))}
    return list(seen.values())


def _first(loc: Any, module: Module, t: T.Type) -> Any:
    """``loc`` (the first op using ``t``), or the line of a constant of ``t`` made before it (a constant splat,
    which no op carries: ``Acc[...].splat(0.0)`` before the loop whose phi is the type's first op)."""
    made = module.const_locs.get(t)
    if made is not None and made.file == loc.file and (made.line, made.col) < (loc.line, loc.col):
        return made
    return loc


def muladds(module: Module) -> list[dict[str, Any]]:
    """Every distinct MulAdd combination (M, N, K, A/B/C/Result types, scope, saturating), first line each.

    Integer component types carry the signedness the MulAdd gives them (its
    ``signed`` operands: MatrixASignedComponentsKHR ... in SPIR-V), which is
    what a device's configurations are matched against.
    """
    out: dict[str, dict[str, Any]] = {}
    seen: set[tuple[Any, ...]] = set()  # (types, signed, saturate) already described: the same entry again
    for f in module.functions:
        for op in f.ops():
            if op.kind != MULADD_OP:
                continue
            ta, tb, tc = (matrix(op, i) for i in range(3))
            signed = op.attrs["signed"]
            raw = (ta, tb, tc, op.type, signed, op.attrs["saturate"])
            if raw in seen:
                continue
            seen.add(raw)
            entry = {"M": _dim(ta.rows, module), "N": _dim(tb.cols, module), "K": _dim(ta.cols, module),
                     **{k: _signed_as(T.scalar_of(t), SIGNED_OPERAND[k] in signed)
                        for k, t in (("A", ta), ("B", tb), ("C", tc), ("Result", op.type))},
                     "scope": _scope(tc.scope, module), "saturating": op.attrs["saturate"]}
            key = repr(sorted(entry.items()))
            out.setdefault(key, {**entry, "loc": str(op.loc)})
    return list(out.values())


# -- shared memory -------------------------------------------------------------------------
def shared_memory(module: Module) -> dict[str, Any]:
    """The bytes of the module's Workgroup variables (its shared arrays) as a dimension (an int, or an
    expression of specialization constants for spec-sized arrays), and each array's.

    Only arrays some op uses count: the SPIR-V writer declares a variable at its first use, so an unused
    one is not in the module.  Sizes are coopdsl's layout (coopdsl/ir/layout.py, std430: a ``vec3``
    element takes 16 bytes), the one the interpreter allocates; the variables are arrays of scalars, vectors,
    structs or arrays (a struct or array element described by its bytes, ``u8``, as a buffer's struct), whose
    sizes are multiples of their alignment, so no padding lies between them.
    """
    arrays = [_shared_array(g, loc, module) for g, loc in _used_shared(module)]
    total: Any = sum(a["bytes"] for a in arrays if isinstance(a["bytes"], int))
    for a in arrays:
        if not isinstance(a["bytes"], int):
            total = _plus(total, a["bytes"])
    return {"bytes": total, "arrays": arrays}


def _used_shared(module: Module) -> list[tuple[GlobalVar, str]]:
    """The shared variables some op uses, in declaration order, with where each was declared (``cd.shared``; the
    first op using it for a variable built without that place)."""
    first: dict[int, str] = {}
    for f in module.functions:
        for op in f.ops():
            for v in op.operands:
                if isinstance(v, GlobalVar) and v.role == "shared":
                    first.setdefault(id(v), str(v.info.get("loc") or op.loc))
    return [(g, first[id(g)]) for g in module.globals if id(g) in first]


def _shared_array(g: GlobalVar, loc: str, module: Module) -> dict[str, Any]:
    t = g.type.pointee
    assert isinstance(t, T.ArrayType)  # (cd.shared declares an array)
    stride = STD430.stride(t)
    length = _dim(t.length, module)
    elem = t.elem
    struct = isinstance(elem, (T.StructType, T.ArrayType))   # (by its bytes, as a buffer of structs is)
    return {"name": g.name, "element_type": "u8" if struct else T.scalar_of(elem).name,
            "components": size_of(elem) if struct else elem.count if isinstance(elem, T.VectorType) else 1,
            "stride": stride, "length": length, "bytes": _times(length, stride), "loc": loc}


def _times(d: Any, n: int) -> Any:
    """The byte count ``d * n`` (host arithmetic: never wrapped)."""
    if isinstance(d, int):
        return d * n
    return _node("mul", [d, n], host=True)


def _plus(a: Any, b: Any) -> Any:
    """The byte count ``a + b`` (0 + b is b; host arithmetic: never wrapped)."""
    return b if a == 0 else _node("add", [a, b], host=True)


def _node(op: str, args: list[Any], host: bool = False) -> dict[str, Any]:
    """An expression dimension; its ``value`` at the defaults is None where it cannot be evaluated there
    (a division by zero: a port's defaults may be placeholders that a launch replaces).  ``host``: a count the
    host computes (a shared array's bytes, their sum), on unbounded ints, where the module's own expressions are
    computed in their constants' type as the device computes them."""
    node: dict[str, Any] = {"op": op, "args": args, "expr": expression(op, args)}
    if host:
        node["host"] = True
    try:
        node["value"] = resolve(node)
    except DimError:
        node["value"] = None
    return node


def _coop_types(op: Op) -> Iterator[T.CoopMatType]:
    for t in [op.type, op.attrs.get("mat_type"), *(getattr(v, "type", None) for v in op.operands)]:
        while isinstance(t, (T.PointerType, T.ArrayType, T.RuntimeArrayType)):
            t = t.pointee if isinstance(t, T.PointerType) else t.elem
        if isinstance(t, T.CoopMatType):
            yield t


def _signed_as(elem: T.ScalarType, signed: bool) -> str:
    return T.ScalarType(ScalarKind.INT, elem.width, signed).name if elem.is_int else elem.name


def _use(d: T.Dim, module: Module) -> Any:
    """A matrix use as reflection names it: "A", "B", "Acc" (another number as its text)."""
    use = matrix_use(d)
    if use is not None:
        return use.name
    return str(int(d)) if isinstance(d, int) else _dim(d, module)


def _scope(d: T.Dim, module: Module) -> Any:
    """A matrix scope as reflection names it: "Subgroup", "Workgroup" (another number as its text)."""
    scope = matrix_scope(d)
    if scope is not None and scope in MATRIX_SCOPES:
        return scope.name
    return str(int(d)) if isinstance(d, int) else _dim(d, module)


def _dim(d: T.Dim, module: Module) -> Any:
    """A type parameter as reflection data (see coopdsl/devices/dims.py)."""
    if isinstance(d, int):
        return d
    if d.op == "spec":
        sc = next(s for s in module.spec_consts if s.spec_id == d.args[0])
        return {"spec_id": sc.spec_id, "name": sc.name, "value": sc.default, "type": sc.type.name}
    return _node(d.op, [_dim(a, module) for a in d.args])
