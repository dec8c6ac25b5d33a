"""The SPIR-V binary form: 32-bit words (SPIR-V spec 2.3, "Physical Layout")."""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence

from ._tables import MAGIC

GENERATOR = 0  # no registered tool id; the high 16 bits name the generator


def string_words(text: str) -> list[int]:
    """A literal string: UTF-8, NUL-terminated, NUL-padded to a word boundary."""
    return list(_string_words(text))


@functools.lru_cache(maxsize=4096)  # names of buffers, variables and members: the same ones in every module
def _string_words(text: str) -> tuple[int, ...]:
    data = text.encode("utf-8") + b"\0"
    data += b"\0" * (-len(data) % 4)
    return struct.unpack(f"<{len(data) // 4}I", data)


def instruction(opcode: int, operands: Sequence[int]) -> list[int]:
    """One instruction: word count in the high half of the first word."""
    count = len(operands) + 1
    if count > 0xFFFF:
        raise ValueError(f"instruction with {count} words is too long")
    return [(count << 16) | opcode, *operands]


def header(version: tuple[int, int], bound: int) -> list[int]:
    """The five header words: magic, version, generator, bound, schema."""
    major, minor = version
    return [MAGIC, (major << 16) | (minor << 8), GENERATOR, bound, 0]


def to_bytes(words: list[int]) -> bytes:
    """Little-endian bytes of a word list."""
    return struct.pack(f"<{len(words)}I", *words)


def from_bytes(data: bytes) -> list[int]:
    """Words of a little-endian SPIR-V binary."""
    if len(data) % 4:
        raise ValueError("SPIR-V binary size is not a multiple of 4")
    return list(struct.unpack(f"<{len(data) // 4}I", data))
