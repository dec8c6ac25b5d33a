"""Whether a Python number fits an IR scalar type: the one place that decides.

Every path that turns a Python value into a typed constant (kernel literals,
splats, specialization-constant defaults and overrides, ``--spec``/``--const``
on the command line) asks :func:`fit`, and the runtime's packing of push
constants and specialization data asks the same decision
(:mod:`coopdsl._numbers`); none wraps or rounds a value silently into a type
it does not fit.
"""

from __future__ import annotations

from .._numbers import LiteralError, fit_number, stored_float
from .._numbers import host_bool as host_bool  # (the host's bool rule, for the front end's compile(spec=) values)
from .._numbers import int_range as _int_range
from .._numbers import python_value as python_value  # (a numpy scalar's Python value, for globals as for launches)
from . import types as T

__all__ = ["LiteralError", "fit", "int_range"]


def int_range(t: T.ScalarType) -> tuple[int, int]:
    """The smallest and largest value of integer type ``t``."""
    return _int_range(t.width, t.signed)


def fit(value: object, t: T.ScalarType) -> bool | int | float:
    """``value`` as a constant of scalar type ``t``; :class:`LiteralError` when it does not fit.

    bools fit only ``bool``; ints fit integer types within their range and
    float types; floats fit float types whose finite range holds them after
    rounding (infinities and NaN are kept as they are), never integer types.
    (The decision is :func:`coopdsl._numbers.fit_number`'s, which the runtime asks too.)
    """
    return fit_number(value, t.kind, t.width, t.signed, t.encoding, t.name)


def fit_host(value: object, t: T.ScalarType) -> bool | int | float:
    """:func:`fit` for a value the host gives a specialization constant (``compile(spec=...)``, ``emit --spec``):
    a bool constant also takes 1 and 0, as a launch does (:func:`coopdsl._numbers.host_bool`)."""
    flag = host_bool(value) if t.is_bool else None
    return fit(value if flag is None else flag, t)


def stored(value: object, t: T.ScalarType) -> object:
    """What a module holds for ``value`` (already :func:`fit`) of type ``t``: a float rounded to ``t``'s format (an
    f16 0.1 is 0.0999755859375), anything else as it is. Reflection reports this, as a reader of the module sees."""
    if t.is_float and isinstance(value, float):
        return stored_float(value, t.width, t.encoding.value if t.encoding is not None else None)
    return value
