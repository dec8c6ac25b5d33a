"""The operation kinds of the IR, declared once as data.

Each :class:`OpDef` says how many operands the op takes (``None`` = any),
whether it has side effects (``pure`` ops with unused results are removed by
the ``dce`` pass), whether it ends a block, and a one-line meaning.  The
verifier, the printer, the DCE pass and the SPIR-V writer all look kinds up
here, so adding an op starts with one line in this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpDef:
    operands: int | None
    pure: bool = True
    terminator: bool = False
    doc: str = ""


ELEMENTWISE_BINARY = ("add", "sub", "mul", "div", "rem",
                      "and", "or", "xor", "shl", "shr")
COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")

OPS: dict[str, OpDef] = {
    **{k: OpDef(2, doc=f"element-wise {k}") for k in ELEMENTWISE_BINARY},
    **{k: OpDef(2, doc=f"comparison {k}, bool result") for k in COMPARISONS},
    "neg": OpDef(1, doc="arithmetic negation"),
    "not": OpDef(1, doc="bitwise complement (ints) / logical not (bool)"),
    "land": OpDef(2, doc="logical and of bools"),
    "lor": OpDef(2, doc="logical or of bools"),
    "select": OpDef(3, doc="cond ? a : b"),
    "mat_times_scalar": OpDef(2, doc="cooperative matrix times a scalar of its component type"),
    "convert": OpDef(1, doc="numeric conversion to the result type (F/S/U convert, F<->I)"),
    "bitcast": OpDef(1, doc="reinterpret bits as the result type"),
    "extract": OpDef(1, doc="composite extract; attrs: index"),
    "extract_dyn": OpDef(2, doc="vector component at a runtime index"),
    "insert": OpDef(2, doc="composite insert (object, composite); attrs: index"),
    "insert_dyn": OpDef(3, doc="vector with the component at a runtime index replaced (vector, value, index)"),
    "construct": OpDef(None, doc="vector from components"),
    "shuffle": OpDef(2, doc="OpVectorShuffle of two vectors (swizzles); attrs: components"),
    "splat": OpDef(1, doc="cooperative matrix or vector with every component = operand"),
    "access": OpDef(None, doc="pointer to an element: base pointer, then indices"),
    "load": OpDef(1, pure=False, doc="load through a pointer; attrs: memory access"),
    "store": OpDef(2, pure=False, doc="store (pointer, value); attrs: memory access"),
    "coop_load": OpDef(None, pure=False,
                       doc="OpCooperativeMatrixLoadKHR (pointer[, stride]); attrs: layout, memory"),
    "coop_store": OpDef(None, pure=False,
                        doc="OpCooperativeMatrixStoreKHR (pointer, matrix[, stride]); attrs: layout, memory"),
    "coop_muladd": OpDef(3, doc="OpCooperativeMatrixMulAddKHR (A, B, C); attrs: operands"),
    "coop_length": OpDef(0, doc="OpCooperativeMatrixLengthKHR; attrs: mat_type"),
    "ext_inst": OpDef(None, doc="GLSL.std.450 instruction; attrs: name"),
    "dot": OpDef(2, doc="OpDot"),
    "ptr_to_u64": OpDef(1, doc="OpConvertPtrToU (PhysicalStorageBuffer address)"),
    "u64_to_ptr": OpDef(1, doc="OpConvertUToPtr"),
    "fmod": OpDef(2, doc="OpFMod (GLSL mod)"),
    "isnan": OpDef(1, doc="OpIsNan"),
    "isinf": OpDef(1, doc="OpIsInf"),
    "any": OpDef(1, doc="OpAny"),
    "all": OpDef(1, doc="OpAll"),
    "call": OpDef(None, pure=False, doc="call a helper function; attrs: func"),
    "barrier": OpDef(0, pure=False, doc="OpControlBarrier; attrs: exec_scope, mem_scope, semantics"),
    "phi": OpDef(None, doc="SSA phi; attrs: incoming (blocks, one per operand)"),
    "br": OpDef(0, pure=False, terminator=True, doc="branch; attrs: targets [dest]"),
    "cond_br": OpDef(1, pure=False, terminator=True, doc="conditional branch; attrs: targets [t, f]"),
    "return": OpDef(None, pure=False, terminator=True, doc="return [value]"),
    "unreachable": OpDef(0, pure=False, terminator=True, doc="unreachable"),
}


def opdef(kind: str) -> OpDef:
    """The definition of ``kind`` (KeyError for an unknown kind)."""
    return OPS[kind]


def register_op(kind: str, definition: OpDef) -> None:
    """Add an op kind (feature modules declare their ops next to their builtins)."""
    if kind in OPS and OPS[kind] != definition:
        raise ValueError(f"op kind {kind!r} is already defined differently")
    OPS[kind] = definition
