"""``@record`` makes the classes ``@dataclass`` makes: the same methods, signatures, errors and fields."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from coopdsl._records import record


def _pair(decorate_a, decorate_b):
    """The same class bodies under two decorators."""
    def make(decorate):
        @decorate(frozen=True)
        class Point:
            """A point."""

            x: int
            y: float = 0.5
            tags: tuple = ()
            note: str = field(default="", repr=False, compare=False)
            KIND: ClassVar[str] = "point"

        @decorate(frozen=True, repr=False)
        class Labelled(Point):
            label: str = "p"

        @decorate
        class Bag:
            items: list = field(default_factory=list)
            size: int = 0

            def __post_init__(self) -> None:
                self.size = len(self.items)

        class Undocumented:
            a: int
            b: Bag | None = None

        return Point, Labelled, Bag, decorate(frozen=True)(Undocumented)

    return make(decorate_a), make(decorate_b)


def test_record_makes_what_dataclass_makes():
    theirs, ours = _pair(dataclass, record)
    for d, r in zip(theirs, ours):
        assert str(inspect.signature(d)) == str(inspect.signature(r))
        assert d.__doc__.replace(".<locals>", "") == r.__doc__.replace(".<locals>", "")
        assert [(f.name, f.type, f.repr, f.compare) for f in dataclasses.fields(d)] == \
            [(f.name, f.type, f.repr, f.compare) for f in dataclasses.fields(r)]
        assert d.__match_args__ == r.__match_args__
        assert (d.__hash__ is None) == (r.__hash__ is None)
        assert d.__init__.__annotations__ == r.__init__.__annotations__
        assert {k for k in vars(d) if not k.startswith("__")} == {k for k in vars(r) if not k.startswith("__")}
    (dp, dl, db, du), (rp, rl, rb, ru) = theirs, ours
    nan = float("nan")  # one object: its hash is its identity's, and tuples compare it equal to itself
    for make in (lambda P: P(1), lambda P: P(2, 1.5, (3,), note="n"), lambda P: P(x=nan)):
        a, b = make(dp), make(rp)
        assert repr(a).replace("Point", "") == repr(b).replace("Point", "")
        assert hash(a) == hash(b)
        assert (a == make(dp)) == (b == make(rp))
        assert b == b and (b != make(rp)) == (a != make(dp))
    assert rp(1, note="a") == rp(1, note="b") and rp(1) != rp(2) and rp(1) != (1, 0.5, ())
    assert rp(1).__eq__(object()) is NotImplemented
    assert repr(rl(1)) == repr(dl(1)) and "label" not in repr(rl(1))  # repr=False: Point's repr, inherited
    assert rl(1, label="q") != rl(1) and rl(1) != rp(1)
    assert rb().items == [] and rb().items is not rb().items and rb([1, 2]).size == 2
    assert rb([1]) == rb([1]) and rb.__hash__ is None
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        rp(1).x = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del rp(1).y
    assert dataclasses.replace(rp(1, tags=(1,)), x=5) == rp(5, tags=(1,))
    assert dataclasses.asdict(rl(1)) == {"x": 1, "y": 0.5, "tags": (), "note": "", "label": "p"}
    assert dataclasses.is_dataclass(rp) and rp.KIND == "point"
    cyclic = ru(1)
    object.__setattr__(cyclic, "b", cyclic)
    assert repr(cyclic).endswith("(a=1, b=...)")


def test_record_refuses_what_it_does_not_make():
    with pytest.raises(TypeError, match="init=False"):
        @record
        class Late:
            a: int = field(init=False, default=0)
    with pytest.raises(TypeError, match="__setattr__"):
        @record(frozen=True)
        class Custom:
            a: int

            def __setattr__(self, name, value):
                pass


def test_a_frozen_record_keeps_its_hash_but_pickles_and_copies_without_it():
    import copy
    import pickle

    from coopdsl.ir import types as T

    (dp, *_), (rp, *_) = _pair(dataclass, record)
    r = rp(3, 1.5, (1, 2))
    assert hash(r) == hash(dp(3, 1.5, (1, 2))) == hash(r)  # the dataclass's hash, kept after the first time
    t = T.PointerType(T.ArrayType(T.f16, T.SymDim("spec", (1, "K", "u32", 256))), "Workgroup")
    h = hash(t)
    for other in (pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t)):
        assert "_record_hash" not in vars(other)  # (made again where it is hashed)
        assert other == t and hash(other) == h
    with pytest.raises(TypeError):
        hash(rp([1]))  # an unhashable field still fails, every time
    with pytest.raises(TypeError):
        hash(rp([1]))
