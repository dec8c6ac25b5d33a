"""Operands that are not values never reach the compiler's internals (hardening issue, class 1).

A table of things that are not runtime values or numbers (types, enums, builtins, device functions,
struct types, tuples, None, strings, layouts, views, matrix families) is put in every operand position of
arithmetic, unary operators, math builtins, select, conversions and constructors, matrix arithmetic and
the subgroup exchanges; each combination must be a located CompileError (never an InternalCompilerError
or a foreign exception) at the line of the operation.
"""

from __future__ import annotations

import itertools
import textwrap

import pytest

import coopdsl as cd
from coopdsl.errors import CompileError, InternalCompilerError
from tests.conftest import exec_source

NOT_VALUES = {
    "type": "f32",
    "matrix_family": "Acc",
    "enum": "cd.Row",
    "scope": "cd.Workgroup",
    "builtin": "cd.exp",
    "device_function": "helper",
    "struct_type": "Pair",
    "tuple": "(1.0, 2.0)",
    "none": "None",
    "string": "'x'",
    "layout": "cd.tensor_layout(2)",
    "view": "cd.tensor_view(2)",
}

CONTEXTS = {  # X is the operand under test; o[0] a runtime f32, m a runtime matrix
    "add_right": "y = o[0] + X",
    "add_left": "y = X + o[0]",
    "neg": "y = -(X)",
    "max_second": "y = cd.max(o[0], X)",
    "max_first": "y = cd.max(X, o[0])",
    "py_min": "y = min(o[0], X)",
    "clamp": "y = cd.clamp(o[0], X, 1.0)",
    "fma": "y = cd.fma(o[0], X, o[1])",
    "pow": "y = cd.pow(o[0], X)",
    "select": "y = cd.select(o[0] > 0.0, X, o[1])",
    "to_f32": "y = f32(X)",
    "to_vec2": "y = vec2[f32](X, 1.0)",
    "matrix_times": "y = m * X",
    "matrix_plus": "y = X + m",
    "shuffle": "y = cd.subgroup_shuffle(X, 1)",
    "broadcast_first": "y = cd.subgroup_broadcast_first(X)",
    "isnan": "y = cd.isnan(X)",
}

TEMPLATE = '''
import coopdsl as cd
from coopdsl import *


@cd.struct
class Pair:
    a: f32
    b: f32


@cd.func
def helper(x):
    return x


@cd.kernel(workgroup_size=(32, 1, 1))
def k(o: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].splat(0.0)
    {body}  # THE LINE
'''


@pytest.mark.parametrize("context,operand", list(itertools.product(CONTEXTS, NOT_VALUES)))
def test_a_non_value_operand_is_a_located_error(context, operand, tmp_path, monkeypatch):
    src = textwrap.dedent(TEMPLATE).replace("{body}", CONTEXTS[context].replace("X", NOT_VALUES[operand]))
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace = exec_source(src, tmp_path / f"k_{context}_{operand}.py")
    with pytest.raises(CompileError) as e:
        namespace["k"].compile()
    assert not isinstance(e.value, InternalCompilerError), str(e.value)
    assert e.value.loc.line == src.splitlines().index(next(x for x in src.splitlines() if "THE LINE" in x)) + 1


@pytest.mark.parametrize("code,message", [
    ("y = cd.max(o[1], f32)", "max(): expected a number or a runtime scalar, vector or cooperative matrix, "
                              "got the type f32"),
    ("y = f32(None)", "f32(x): expected a number or a runtime scalar, vector or cooperative matrix, got None"),
    ("y = -(f32)", "unary '-': expected a number or a runtime scalar, vector or cooperative matrix, got the type f32"),
    ("y = f32(int((1.0, 2.0)))", "int() of compile-time (1.0, 2.0)"),
    ("y = Acc[f32, 16, 16].splat(0.0) * cd.tensor_layout(2)", "'*' combines Acc[f32, 16, 16] with a scalar or a "
                                                              "matrix of the same type, not a runtime TensorLayout"),
    ("y = cd.subgroup_shuffle(Acc[f32, 16, 16].splat(0.0), 1)", "subgroup_shuffle() takes a scalar or vector of "
                                                                "numbers or bools (not Acc[f32, 16, 16])"),
    ("y = cd.isnan(Acc[f32, 16, 16].splat(0.0))", "isnan() takes float scalars or vectors, got Acc[f32, 16, 16]"),
])
def test_the_messages_name_the_rule_and_the_operand(code, message, tmp_path):
    src = textwrap.dedent(TEMPLATE).replace("{body}", code)
    namespace = exec_source(src, tmp_path / "k_msg.py")
    with pytest.raises(cd.CompileError) as e:
        namespace["k"].compile()
    assert message in str(e.value)
