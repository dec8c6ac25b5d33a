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

from dataclasses import field
from typing import Any, NoReturn

from .._records import record
from ..errors import InternalCompilerError
from ._tables import ENUMS, INSTRUCTIONS, OPERAND_KINDS, EnumerantRow
from .words import instruction, string_words

Operand = Any
"""An operand as :func:`encode` takes it (an id or literal ``int``, a ``str``, an enumerant name, a tuple of
bit-enum names, a list of words): the grammar walk checks each against its kind, so it is typed loosely."""


@record
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
    """The first-listed enumerant name of ``kind`` with ``value``: the grammar's own name, not one of its aliases
    (the tables list each enumerant's aliases after it): ``UniformAndStorageBuffer16BitAccess``, not
    ``StorageUniform16``."""
    for name, row in ENUMS[kind].items():
        if row[0] == value:
            return name
    raise KeyError(f"{kind} has no enumerant {value}")


INFINITE = 1 << 16  # more operands than any instruction can hold


def _id_plan(opname: str) -> tuple[Any, ...] | None:
    """How to encode ``opname`` without walking its operand list, or None.

    (opcode, fewest, most, number, caps, exts, version): the grammar asks for a
    prefix of ``fewest`` Ids, then up to ``most - fewest`` optional (or
    repeated) Ids, and nothing else that is required; with ``number`` it
    instead asks for exactly ``fewest`` Ids and a LiteralContextDependentNumber
    (OpConstant, OpSpecConstant), given as a list of words.
    """
    code, kinds, caps, exts, version = INSTRUCTIONS[opname]
    required = 0
    while required < len(kinds) and kinds[required][1] == "" and OPERAND_KINDS[kinds[required][0]] == "Id":
        required += 1
    if kinds[required:] == (("LiteralContextDependentNumber", "", "Value"),):
        return code, required, required, True, caps, exts, version
    end, unbounded = required, False
    while end < len(kinds) and kinds[end][1] in ("?", "*") and OPERAND_KINDS[kinds[end][0]] == "Id":
        unbounded |= kinds[end][1] == "*"
        end += 1
    if any(quant == "" for _, quant, _ in kinds[end:]):
        return None  # a required operand that is not an Id: the walk
    return code, required, INFINITE if unbounded else end, False, caps, exts, version


_ID_PLANS: dict[str, tuple[Any, ...] | None] = {}
_UNPLANNED = ()  # no plan made yet (None: the walk)


def encode(opname: str, *operands: Operand, req: Requirements | None = None) -> list[int]:
    """Words of ``opname`` with ``operands`` checked against the grammar."""
    words: list[int] = []
    encode_into(words, opname, operands, req)
    return words


def encode_into(words: list[int], opname: str, operands: tuple[Operand, ...],
                req: Requirements | None = None) -> None:
    """:func:`encode`, appending the words to ``words`` (what the module builder's ``emit`` does for every
    instruction): instructions given only Ids where the grammar wants only Ids are encoded by their plan,
    the others by walking the grammar (:func:`encode_walking`)."""
    plan = _ID_PLANS.get(opname, _UNPLANNED)
    if plan is _UNPLANNED:
        if opname not in INSTRUCTIONS:
            raise InternalCompilerError(f"unknown SPIR-V instruction {opname}")
        plan = _ID_PLANS[opname] = _id_plan(opname)
    if plan is not None:
        code, fewest, most, number, caps, exts, version = plan
        if number:
            if len(operands) == fewest + 1 and type(operands[-1]) in (list, tuple) and \
                    all(type(v) is int and v > 0 for v in operands[:-1]):
                if req is not None:
                    req.need(caps, exts, version)
                words.extend(instruction(code, [*operands[:-1], *operands[-1]]))
                return
        elif fewest <= len(operands) <= most:
            for v in operands:
                if type(v) is not int or v <= 0:
                    break
            else:  # only Ids, where the grammar wants Ids
                if req is not None and (caps or exts):  # (need() records nothing else)
                    req.need(caps, exts, version)
                count = len(operands) + 1
                if count > 0xFFFF:
                    raise ValueError(f"instruction with {count} words is too long")
                words.append((count << 16) | code)
                words.extend(operands)
                return
    _walk_into(words, opname, operands, req)


def encode_walking(opname: str, *operands: Operand, req: Requirements | None = None) -> list[int]:
    """:func:`encode` by walking the grammar's operand list (every instruction goes this way but those
    given only Ids where the grammar wants only Ids)."""
    words: list[int] = []
    _walk_into(words, opname, operands, req)
    return words


# opname -> (opcode, operands with their kinds' categories, caps, exts, version)
_WALKS: dict[str, tuple[Any, ...]] = {}


def _walk_plan(opname: str) -> tuple[Any, ...]:
    """The grammar's row for ``opname`` with each operand's category looked up once per instruction."""
    plan = _WALKS.get(opname)
    if plan is None:
        code, kinds, caps, exts, version = INSTRUCTIONS[opname]
        steps = tuple((kind, quant, name, OPERAND_KINDS[kind]) for kind, quant, name in kinds)
        plan = _WALKS[opname] = (code, steps, caps, exts, version)
    return plan


def _walk_into(words: list[int], opname: str, operands: tuple[Operand, ...], req: Requirements | None) -> None:
    """Append the words of ``opname`` to ``words``, walking its operand list (the first word, count and
    opcode, is set last)."""
    code, steps, caps, exts, version = _walk_plan(opname)
    if req is not None and (caps or exts):
        req.need(caps, exts, version)
    values = list(operands)
    start = len(words)
    words.append(0)
    for kind, quant, name, category in steps:
        if quant == "":
            if not values:
                raise InternalCompilerError(f"{opname}: missing operand {name or kind}")
        elif quant == "?":
            if not values:
                continue
        else:  # '*'
            while values:
                _encode_one(opname, kind, values, words, req, category)
            continue
        if category == "Id" and type(values[0]) is int and values[0] > 0:
            words.append(values.pop(0))  # _encode_one's first case, the most common one
        else:
            _encode_one(opname, kind, values, words, req, category)
    if values:
        raise InternalCompilerError(f"{opname}: {len(values)} operand(s) left over: {values!r}")
    count = len(words) - start
    if count > 0xFFFF:
        raise ValueError(f"instruction with {count} words is too long")
    words[start] = (count << 16) | code


def _encode_one(opname: str, kind: str, values: list[Operand], words: list[int], req: Requirements | None,
                category: str | None = None) -> None:
    """Encode the next of ``values`` as an operand of ``kind`` (whose category the walk may pass along)."""
    value = values.pop(0)
    if category is None:
        category = OPERAND_KINDS[kind]
    if category == "Id":
        if not (isinstance(value, int) and value > 0):
            _fail(opname, kind, value)
        words.append(value)
    elif kind == "LiteralString":
        if not isinstance(value, str):
            _fail(opname, kind, value)
        words.extend(string_words(value))
    elif kind == "LiteralSpecConstantOpInteger":
        # the opcode of the operation; its operand ids follow (not described by the grammar)
        if not isinstance(value, int):
            _fail(opname, kind, value)
        words.append(value)
        while values:
            operand = values.pop(0)
            if not (isinstance(operand, int) and operand > 0):
                _fail(opname, "IdRef", operand)
            words.append(operand)
    elif kind == "LiteralContextDependentNumber":
        if not isinstance(value, (list, tuple)):
            _fail(opname, kind, value)
        words.extend(value)
    elif category == "Literal":
        if not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:   # (one word: never wrapped)
            _fail(opname, kind, value)
        words.append(value)
    elif category == "Composite":  # PairIdRefLiteralInteger etc.: two plain words
        if not (isinstance(value, tuple) and len(value) == 2):
            _fail(opname, kind, value)
        words.extend(value)
    elif category == "ValueEnum":
        number, params = _enumerant(opname, kind, value, req)
        words.append(number)
        for pkind in params:
            _encode_one(opname, pkind, values, words, req)
    elif category == "BitEnum":
        names = (value,) if isinstance(value, (str, int)) else tuple(value)
        mask, bits = 0, []
        for n in names:
            bit, p = _enumerant(opname, kind, n, req)
            mask |= bit
            bits.append((bit, p))
        words.append(mask)
        for _, p in sorted(bits):  # parameters follow in bit order (spec 2.2.2)
            for pkind in p:
                _encode_one(opname, pkind, values, words, req)
    else:  # pragma: no cover - grammar categories are closed
        raise InternalCompilerError(f"{opname}: cannot encode operand kind {kind}")


# operand kind -> its enumerants (ENUMS decodes each kind once, behind a call)
_ENUM_TABLES: dict[str, dict[str, EnumerantRow]] = {}


def _enumerant(opname: str, kind: str, value: Operand, req: Requirements | None) -> tuple[int, tuple[str, ...]]:
    table = _ENUM_TABLES.get(kind)
    if table is None:
        table = _ENUM_TABLES[kind] = ENUMS[kind]
    row: tuple[int, tuple[str, ...], tuple[str, ...], tuple[str, ...], str | None] | None
    if isinstance(value, int):
        row = next((r for r in table.values() if r[0] == value), None)
        if row is None:
            return value, ()
    else:
        row = table.get(value)
        if row is None:
            raise InternalCompilerError(f"{opname}: {kind} has no enumerant {value!r}")
    number, params, caps, exts, version = row
    if req is not None and (caps or exts):  # (need() records nothing else)
        req.need(caps, exts, version)
    return number, params


def _fail(opname: str, kind: str, value: object) -> NoReturn:
    raise InternalCompilerError(f"{opname}: operand of kind {kind} cannot be {value!r}")
