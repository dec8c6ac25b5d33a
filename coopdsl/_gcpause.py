"""Pausing Python's cyclic garbage collector while coopdsl makes many short-lived objects.

Importing coopdsl and compiling a kernel allocate tens of thousands of objects (AST nodes, IR ops,
dataclass machinery) and free nearly all of them by reference counting; the cyclic collector, which
runs every few hundred allocations, took about a third of a ``coopdsl emit``.  :func:`paused` turns it
off for the duration, when it was on, and back on afterwards; cycles made meanwhile are found at the
next collection.  Nested or concurrent pauses only ever leave it as the outermost caller found it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Run the body with the cyclic garbage collector off (restored even when the body raises)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
