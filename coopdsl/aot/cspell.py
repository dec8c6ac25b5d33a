"""C spellings: identifiers, types and literal values for the generated headers.

Every value is written so that the header means the same thing in C99 and
C++17: integer literals with width suffixes, floats as exact hexadecimal
literals, 16- and 8-bit floats as their bit patterns.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from typing import Any

from ..ir.types import SCALARS
from ..spirv.module import float_bits
from .errors import InputError

C_KEYWORDS = frozenset("""
    auto bool break case catch char class const constexpr continue default delete do double else enum explicit
    extern false float for friend goto if inline int long mutable namespace new noexcept nullptr operator private
    protected public register restrict return short signed sizeof static struct switch template this throw true
    try typedef typename union unsigned using virtual void volatile while
""".split())

# reflection scalar type -> (C type, byte size); 16- and 8-bit floats travel as their bit patterns
C_TYPES = {"bool": ("uint32_t", 4), "i8": ("int8_t", 1), "i16": ("int16_t", 2), "i32": ("int32_t", 4),
           "i64": ("int64_t", 8), "u8": ("uint8_t", 1), "u16": ("uint16_t", 2), "u32": ("uint32_t", 4),
           "u64": ("uint64_t", 8), "f16": ("uint16_t", 2), "bf16": ("uint16_t", 2), "e4m3": ("uint8_t", 1),
           "e5m2": ("uint8_t", 1), "f32": ("float", 4), "f64": ("double", 8), "ptr": ("uint64_t", 8)}
VECTOR = re.compile(r"vec(\d)<(\w+)>$")


def identifier(name: str) -> str:
    """``name`` as a C identifier: other characters become '_', keywords and leading digits get '_'."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not ident or ident[0].isdigit() or ident in C_KEYWORDS:
        ident = "_" + ident if not ident or ident[0].isdigit() else ident + "_"
    return ident


def macro(*parts: str) -> str:
    """An upper-case macro name from ``parts`` joined by '_' (with a leading '_' where it would start with a digit,
    as :func:`identifier` gives one)."""
    name = "_".join(identifier(p).strip("_") or "_" for p in parts).upper()
    return "_" + name if name[:1].isdigit() else name


def unique(names: list[str], spell: Callable[[str], str], what: str,
           reserved: dict[str, str] | None = None) -> list[str]:
    """``spell`` applied to each name; two names with the same spelling, or a spelling ``reserved`` names (C name
    -> what the header uses it for), are an InputError."""
    seen: dict[str, str] = {}
    out = []
    for n in names:
        s = spell(n)
        if reserved and s in reserved:
            raise InputError(f"{what}: '{n}' becomes the C name {s}, which the header uses for {reserved[s]}; "
                             f"rename it")
        if s in seen:
            raise InputError(f"{what} '{seen[s]}' and '{n}' both become the C name {s}; rename one")
        seen[s] = n
        out.append(s)
    return out


def c_member(type_name: str, size: int) -> tuple[str, str]:
    """(C type, array suffix) of a reflected push-constant or spec-constant type.

    Scalars map to fixed-width types, ``vecN<T>`` to ``T name[N]``; anything
    else becomes ``uint8_t name[size]`` so the layout is still exact.
    """
    if type_name in C_TYPES:
        return C_TYPES[type_name][0], ""
    m = VECTOR.match(type_name)
    if m and m.group(2) in C_TYPES:
        return C_TYPES[m.group(2)][0], f"[{m.group(1)}]"
    return "uint8_t", f"[{size}]"


def string(text: str) -> str:
    """A C string literal (ASCII, with escapes)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append("".join(f"\\x{b:02x}\"\"" for b in ch.encode()))
    return '"' + "".join(out) + '"'


def comment(text: str) -> str:
    """``text`` made safe inside a C block comment."""
    return text.replace("*/", "* /")


def value(type_name: str, v: Any) -> str:
    """The C literal of a spec-constant default ``v`` of reflected scalar type ``type_name``."""
    if type_name == "bool":
        return "1u" if v else "0u"
    if type_name in ("f32", "f64"):
        return _float(type_name, float(v))
    t = SCALARS[type_name]
    if t.is_float:  # f16, bf16, fp8: the bit pattern the module holds
        return f"0x{float_bits(t, float(v)):0{t.width // 4}x}u"
    return _int(t.width, t.signed, int(v))


def _int(width: int, signed: bool, v: int) -> str:
    if not signed:
        return f"UINT64_C({v})" if width == 64 else f"{v}u"
    if v == -(1 << (width - 1)):  # the most negative value has no literal of its own
        return f"(INT64_C({v + 1}) - 1)" if width == 64 else f"({v + 1} - 1)"
    return f"INT64_C({v})" if width == 64 else str(v)


def _float(type_name: str, v: float) -> str:
    suffix = "f" if type_name == "f32" else ""
    if math.isnan(v):
        return f"({'(float)' if suffix else ''}NAN)"
    if math.isinf(v):
        inf = "HUGE_VALF" if suffix else "HUGE_VAL"
        return f"(-{inf})" if v < 0 else inf
    if suffix:
        try:
            v = struct.unpack("<f", struct.pack("<f", v))[0]
        except OverflowError:
            raise InputError(f"{v!r} does not fit an f32") from None
    return v.hex() + suffix


def needs_math_h(type_name: str, v: Any) -> bool:
    """Whether the literal of ``v`` uses a <math.h> macro (infinities and NaNs)."""
    return type_name in ("f32", "f64") and not math.isfinite(float(v))
