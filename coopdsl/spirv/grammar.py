"""Grammar-checked instruction encoding, and what each instruction requires.

``encode(opname, *operands)`` walks the operand list that the SPIR-V grammar
gives for ``opname`` and turns Python values into words:

* Id kinds take ``int`` ids; ``LiteralString`` a ``str``; ``LiteralInteger``
  an ``int``; ``LiteralContextDependentNumber`` a list of words;
* ValueEnum kinds take an enumerant name (``"RowMajorKHR"``) or a number;
* BitEnum kinds take a name, a tuple of names (OR-ed) or a number, followed by
  the operands the set bits declare (e.g. ``Aligned`` takes one literal).

It also returns the capabilities and extensions the instruction and each
enumerant used need, straight from the grammar tables, so the module builder
can declare them while writing.  A wrong operand list is an internal error
(the writer's bug), caught here instead of by spirv-val later.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InternalCompilerError
from ._tables import ENUMS, INSTRUCTIONS, OPERAND_KINDS
from .words import instruction, string_words


@dataclass
class Requirements:
    """Capability alternatives and extensions gathered while encoding."""

    capabilities: list[tuple[str, ...]] = field(default_factory=list)  # any-of groups
    extensions: list[tuple[tuple[str, ...], str | None]] = field(default_factory=list)

    def need(self, caps: tuple[str, ...], exts: tuple[str, ...], version: str | None) -> None:
        """Record a requirement (each distinct one once, in the order first seen)."""
        if caps and caps not in self.capabilities:
            self.capabilities.append(caps)
        if exts and (exts, version) not in self.extensions:
            self.extensions.append((exts, version))


def opcode(opname: str) -> int:
    """The opcode number of ``opname``."""
    return INSTRUCTIONS[opname][0]


def enum_value(kind: str, name: str) -> int:
    """The value of enumerant ``name`` of operand kind ``kind``."""
    return ENUMS[kind][name][0]


def enum_name(kind: str, value: int) -> str:
    """The first-listed enumerant name of ``kind`` with ``value``."""
    for name, row in ENUMS[kind].items():
        if row[0] == value:
            return name
    raise KeyError(f"{kind} has no enumerant {value}")


INFINITE = 1 << 16  # more operands than any instruction can hold


def _id_plan(opname: str) -> tuple | None:
    """(opcode, fewest, most operands, caps, exts, version) for encoding ``opname`` when every operand
    given is an Id: the operand counts for which the grammar asks only for Ids (a required Id prefix,
    then optional or repeated Ids), so no per-operand walk is needed; None for instructions whose
    required operands are not all Ids."""
    code, kinds, caps, exts, version = INSTRUCTIONS[opname]
    required = 0
    while required < len(kinds) and kinds[required][1] == "" and OPERAND_KINDS[kinds[required][0]] == "Id":
        required += 1
    rest = kinds[required:]
    if any(quant == "" for _, quant, _ in rest):
        return None  # a required non-Id operand: the general path
    if all(OPERAND_KINDS[kind] == "Id" for kind, _, _ in rest):
        most = INFINITE if any(quant == "*" for _, quant, _ in rest) else required + len(rest)
    else:
        most = required  # optional non-Id operands (memory operands...): only without them
    return code, required, most, caps, exts, version


_ID_PLANS: dict[str, tuple | None] = {}


def encode(opname: str, *operands, req: Requirements | None = None) -> list[int]:
    """Words of ``opname`` with ``operands`` checked against the grammar."""
    if opname not in _ID_PLANS:
        if opname not in INSTRUCTIONS:
            raise InternalCompilerError(f"unknown SPIR-V instruction {opname}")
        _ID_PLANS[opname] = _id_plan(opname)
    plan = _ID_PLANS[opname]
    if plan is not None and plan[1] <= len(operands) <= plan[2] and \
            all(type(v) is int and v > 0 for v in operands):  # only Ids, where the grammar wants Ids
        if req is not None:
            req.need(*plan[3:])
        return instruction(plan[0], list(operands))
    return encode_walking(opname, *operands, req=req)


def encode_walking(opname: str, *operands, req: Requirements | None = None) -> list[int]:
    """:func:`encode` by walking the grammar's operand list (every instruction goes this way but those
    given only Ids where the grammar wants only Ids)."""
    code, kinds, caps, exts, version = INSTRUCTIONS[opname]
    if req is not None:
        req.need(caps, exts, version)
    values = list(operands)
    words: list[int] = []
    for kind, quant, name in kinds:
        if quant == "":
            if not values:
                raise InternalCompilerError(f"{opname}: missing operand {name or kind}")
            _encode_one(opname, kind, values, words, req)
        elif quant == "?":
            if values:
                _encode_one(opname, kind, values, words, req)
        else:  # '*'
            while values:
                _encode_one(opname, kind, values, words, req)
    if values:
        raise InternalCompilerError(f"{opname}: {len(values)} operand(s) left over: {values!r}")
    return instruction(code, words)


def _encode_one(opname: str, kind: str, values: list, words: list[int], req) -> None:
    value = values.pop(0)
    category = OPERAND_KINDS[kind]
    if category == "Id":
        _check(isinstance(value, int) and value > 0, opname, kind, value)
        words.append(value)
    elif kind == "LiteralString":
        _check(isinstance(value, str), opname, kind, value)
        words.extend(string_words(value))
    elif kind == "LiteralSpecConstantOpInteger":
        # the opcode of the operation; its operand ids follow (not described by the grammar)
        _check(isinstance(value, int), opname, kind, value)
        words.append(value)
        while values:
            operand = values.pop(0)
            _check(isinstance(operand, int) and operand > 0, opname, "IdRef", operand)
            words.append(operand)
    elif kind == "LiteralContextDependentNumber":
        _check(isinstance(value, (list, tuple)), opname, kind, value)
        words.extend(value)
    elif category == "Literal":
        _check(isinstance(value, int), opname, kind, value)
        words.append(value & 0xFFFFFFFF)
    elif category == "Composite":  # PairIdRefLiteralInteger etc.: two plain words
        _check(isinstance(value, tuple) and len(value) == 2, opname, kind, value)
        words.extend(value)
    elif category == "ValueEnum":
        number, params = _enumerant(opname, kind, value, req)
        words.append(number)
        for pkind in params:
            _encode_one(opname, pkind, values, words, req)
    elif category == "BitEnum":
        names = (value,) if isinstance(value, (str, int)) else tuple(value)
        mask, params = 0, []
        for n in names:
            bit, p = _enumerant(opname, kind, n, req)
            mask |= bit
            params.append((bit, p))
        words.append(mask)
        for _, p in sorted(params):  # parameters follow in bit order (spec 2.2.2)
            for pkind in p:
                _encode_one(opname, pkind, values, words, req)
    else:  # pragma: no cover - grammar categories are closed
        raise InternalCompilerError(f"{opname}: cannot encode operand kind {kind}")


def _enumerant(opname: str, kind: str, value, req) -> tuple[int, tuple[str, ...]]:
    table = ENUMS[kind]
    if isinstance(value, int):
        for row in table.values():
            if row[0] == value:
                break
        else:
            return value, ()
    else:
        row = table.get(value)
        if row is None:
            raise InternalCompilerError(f"{opname}: {kind} has no enumerant {value!r}")
    number, params, caps, exts, version = row
    if req is not None:
        req.need(caps, exts, version)
    return number, params


def _check(ok: bool, opname: str, kind: str, value) -> None:
    if not ok:
        raise InternalCompilerError(f"{opname}: operand of kind {kind} cannot be {value!r}")
