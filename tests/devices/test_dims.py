"""Reflection dimensions: evaluation with a launch's spec values, and their kernel-code text."""

import pytest

from coopdsl.devices.dims import DimError, expression, matrix_text, resolve, text

TM = {"spec_id": 0, "name": "TM", "value": 16}


def _op(op, *args):
    return {"op": op, "args": list(args), "expr": expression(op, list(args)), "value": None}


@pytest.mark.parametrize("dim,spec,want", [
    (16, {}, 16), (TM, {}, 16), (TM, {"TM": 32}, 32), (TM, {"TK": 8}, 16),
    (_op("mul", TM, 2), {"TM": 8}, 16), (_op("div", TM, 3), {}, 5), (_op("div", _op("neg", TM), 3), {}, -5),
    (_op("rem", TM, 3), {"TM": -7}, -1), (_op("shl", TM, 1), {}, 32),
    (_op("select", _op("lt", TM, 20), TM, 64), {}, 16),
    (_op("select", _op("lt", TM, 20), TM, 64), {"TM": 32}, 64),
])
def test_resolve(dim, spec, want):
    assert resolve(dim, spec) == want


U32 = {"spec_id": 0, "name": "K", "value": 2, "type": "u32"}
I32 = {"spec_id": 1, "name": "S", "value": -7, "type": "i32"}


@pytest.mark.parametrize("dim,spec,want", [
    # as the device computes OpSpecConstantOp (and the interpreter does): in the constants' type
    (_op("add", _op("mul", U32, 2 ** 31), 1), {}, 1), (_op("div", _op("mul", U32, 2 ** 31), 2 ** 31), {}, 0),
    (_op("sub", U32, 3), {}, 2 ** 32 - 1), (_op("shl", U32, 31), {"K": 3}, 2 ** 31),
    (_op("div", I32, 2), {}, -3), (_op("rem", I32, 2), {}, -1), (_op("shr", I32, 1), {}, -4),
    (_op("mul", I32, 2 ** 30), {"S": 2}, -(2 ** 31)), (_op("shr", _op("neg", U32), 30), {}, 3),
])
def test_resolve_in_the_constants_type(dim, spec, want):
    assert resolve(dim, spec) == want


def test_resolve_errors():
    with pytest.raises(DimError, match="cannot evaluate the operator 'fmod'"):
        resolve({"op": "fmod", "args": [TM, 2], "expr": "fmod(TM, 2)", "value": 0})
    with pytest.raises(DimError, match=r"dimension \(TM // 0\) divides by zero"):
        resolve(_op("div", TM, 0))
    with pytest.raises(DimError, match=r"dimension \(K << 32\) shifts by a negative count or by its width or more"):
        resolve(_op("shl", U32, 32))


def test_text():
    assert text(16) == "16" and text(TM) == "TM"
    assert expression("mul", [TM, 2]) == "(TM * 2)" and expression("neg", [TM]) == "-TM"
    assert expression("select", [1, TM, 2]) == "select(1, TM, 2)"
    assert matrix_text("f16", TM, 16, "A", "Subgroup") == "MatA[f16, TM, 16]"
    assert matrix_text("f32", 64, 64, "Acc", "Workgroup") == "Acc[f32, 64, 64, Workgroup]"
    assert matrix_text("f16", 16, 16, {"spec_id": 1, "name": "U", "value": 0}, "Subgroup") == "CoopMat[f16, 16, 16, U]"
