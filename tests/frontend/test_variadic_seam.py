"""The builtin seam's variadic parameters (``*values``): bind() gathers the extra positional arguments into a
tuple under the parameter's name and the declared conversion receives it (the tensor-layout setters use it)."""

from __future__ import annotations

import pytest

import coopdsl as cd
from coopdsl import f16
from coopdsl.errors import ArgumentError
from coopdsl.lang import registry as R

from ..conftest import expect_error


def test_a_variadic_parameter_is_parsed_and_bound_as_a_tuple():
    params = R.parse_signature("(a, *rest, k=None)")
    assert [(p.name, p.variadic, p.keyword_only) for p in params] == [("a", False, False), ("rest", True, False),
                                                                       ("k", False, True)]
    seen = []

    class Tuple(R.Conversion):
        __slots__ = ()

        def __call__(self, cg, v, name, param):
            seen.append(v)
            return list(v)

    b = R.make_builtin("f", lambda cg, **p: p, "", "(a, *rest, k=None)", {"rest": Tuple()})
    assert R.bind(None, b, [1, 2, 3], {"k": 4}) == {"a": 1, "rest": [2, 3], "k": 4}
    assert R.bind(None, b, [1], {}) == {"a": 1, "rest": []}
    assert seen == [(2, 3), ()]


@cd.kernel(workgroup_size=(32, 1, 1))
def k_keyword(a: cd.Buffer[f16]):
    cd.tensor_layout(2).dimension(16, dims=16)  # E:kw


@cd.kernel(workgroup_size=(32, 1, 1))
def k_bad_value(a: cd.Buffer[f16]):
    cd.tensor_layout(2).dimension(16, 1.5)  # E:value


def test_the_setters_take_their_values_through_the_seam():
    expect_error(k_keyword, ArgumentError, "dimension(*dims) has no argument 'dims'", "# E:kw", 5)
    with pytest.raises(cd.CompileError) as info:
        k_bad_value.compile()
    assert "dimension's value 1" in info.value.message
