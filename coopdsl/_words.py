"""English for messages, shared by every layer that words one (stdlib only): the compiler's errors
(``coopdsl.errors``) and the argument packer of the runtime and the interpreter (``coopdsl._packing``)."""

from __future__ import annotations


def with_article(word: object) -> str:
    """``word`` with its indefinite article: "an i32", "a u32", "an int", "a float", "an int32", "a uint8"."""
    text = str(word)
    return f"{'an' if text[:1].lower() in 'aeio' else 'a'} {text}"
