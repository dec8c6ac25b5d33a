"""Typed attribute values of IR ops: what an op *means*, not how SPIR-V spells it.

Scopes, layouts, memory semantics, memory-access qualifiers, matrix-operand
signedness and loop-control hints are small frozen values here; the SPIR-V
lowering (``coopdsl.spirv.lower``) turns them into enumerants from the
generated grammar tables.
"""

from __future__ import annotations

import enum

from .._records import record
from .targets import Availability
from .vocab import Scope as Scope  # scopes are part of the IR's vocabulary (vocab.py); named here too


class Layout(enum.Enum):
    """How a cooperative matrix lies in memory."""

    RowMajor = 0
    ColumnMajor = 1

    def __str__(self) -> str:
        return self.name


ORDERINGS = ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent")
STORAGE_CLASSES = ("UniformMemory", "WorkgroupMemory", "ImageMemory", "OutputMemory")
SEMANTIC_FLAGS = ("MakeAvailable", "MakeVisible", "Volatile")


@record(frozen=True)
class Semantics:
    """Memory semantics of a barrier or atomic: at most one ordering, the memory it orders, flags."""

    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        allowed = ORDERINGS + STORAGE_CLASSES + SEMANTIC_FLAGS
        bad = [n for n in self.names if n not in allowed]
        if bad or sum(n in ORDERINGS for n in self.names) > 1:
            raise ValueError(f"invalid memory semantics {self.names!r}")

    def __str__(self) -> str:
        return "|".join(self.names) or "None"


@record(frozen=True)
class MemoryAccess:
    """Qualifiers of one memory access (a load or store of an element or a matrix).

    ``aligned`` is a byte alignment (power of two); ``available``/``visible``
    make the access available/visible at a scope (Vulkan memory model).
    """

    aligned: int | None = None
    nontemporal: bool = False
    volatile: bool = False
    available: Scope | None = None
    visible: Scope | None = None

    def __post_init__(self) -> None:
        if self.aligned is not None and (self.aligned <= 0 or self.aligned & (self.aligned - 1)):
            raise ValueError(f"alignment must be a power of two, got {self.aligned}")
        if self.available is not None and self.visible is not None:
            raise ValueError("one access is either made available or visible")

    def with_alignment(self, aligned: int) -> MemoryAccess:
        """The same access with ``aligned`` bytes, unless an alignment is already given."""
        if self.aligned is not None:
            return self
        return MemoryAccess(aligned, self.nontemporal, self.volatile, self.available, self.visible)

    def __str__(self) -> str:
        parts = [f"aligned {self.aligned}"] if self.aligned is not None else []
        parts += [n for n in ("nontemporal", "volatile") if getattr(self, n)]
        parts += [f"{n} {getattr(self, n)}" for n in ("available", "visible") if getattr(self, n) is not None]
        return "[" + ", ".join(parts) + "]"


MATRIX_OPERANDS = ("a", "b", "c", "result")


PARTIAL_COUNT = Availability((1, 4), "the PartialCount loop control", "unroll=<count>")


@record(frozen=True)
class LoopHint:
    """A loop-control hint: unroll fully (True), never (False), or ``partial`` times (SPIR-V 1.4's
    PartialCount: :attr:`availability`, which the builder checks where it places the loop merge)."""

    unroll: bool | None = None
    partial: int | None = None

    @property
    def availability(self) -> Availability | None:
        """What the hint needs of the target (None: what every target has)."""
        return PARTIAL_COUNT if self.partial is not None else None

    def __str__(self) -> str:
        if self.partial is not None:
            return f"unroll={self.partial}"
        return "" if self.unroll is None else f"unroll={self.unroll}"
