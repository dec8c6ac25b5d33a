"""Writing every type-pair variant of a port as the .spv files the peer harness loads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def emit_variants(prefix: str, variants: dict[tuple[str, str], tuple[Any, Any]],
                  variant: Callable[[Any, Any], Any], folder: str | Path) -> list[str]:
    """Write ``<prefix><A>_<C>.spv`` for every (A token, C token) -> (A type, C type) of ``variants`` into
    ``folder`` (the harness's file names); returns the file names."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for (a_tok, c_tok), (a_type, c_type) in variants.items():
        name = f"{prefix}{a_tok}_{c_tok}.spv"
        variant(a_type, c_type).save(out / name)
        names.append(name)
    return names
