"""The IR's vocabulary (coopdsl/ir/vocab.py) and every enumerant kernels name agree with the SPIR-V grammar.

The values come from the generated grammar tables (coopdsl/spirv/_tables.json), not from a second copy
typed here; and the enums print and hash as the strings and ints they replaced, so output stays the same.
"""

from __future__ import annotations

import pytest

import coopdsl
from coopdsl.ir import types as T
from coopdsl.ir.attrs import Layout
from coopdsl.ir.ops.coopmat2 import ReduceMode
from coopdsl.ir.vocab import (
    MATRIX_SCOPES,
    FloatEncoding,
    MatrixUse,
    ScalarKind,
    Scope,
    StorageClass,
    matrix_scope,
    matrix_use,
)
from coopdsl.lang.types import Enumerant
from coopdsl.spirv._tables import ENUMS


def _value(kind: str, name: str) -> int:
    return ENUMS[kind][name][0]


@pytest.mark.parametrize("member", list(StorageClass), ids=str)
def test_storage_classes_are_grammar_enumerants(member):
    assert member.value in ENUMS["StorageClass"]


@pytest.mark.parametrize("member", list(FloatEncoding), ids=str)
def test_float_encodings_are_grammar_enumerants(member):
    assert member.value in ENUMS["FPEncoding"]


@pytest.mark.parametrize("member", list(Scope), ids=str)
def test_scopes_have_the_grammar_values(member):
    assert _value("Scope", member.name) == member.value


@pytest.mark.parametrize("member", list(MatrixUse), ids=lambda m: m.name)
def test_matrix_uses_have_the_grammar_values(member):
    assert _value("CooperativeMatrixUse", member.spirv_name) == member.value


@pytest.mark.parametrize("member", list(Layout), ids=str)
def test_layouts_have_the_grammar_values(member):
    assert _value("CooperativeMatrixLayout", f"{member.name}KHR") == member.value


def test_reduce_modes_and_clamp_modes_have_the_grammar_values():
    names = {ReduceMode.Row: "Row", ReduceMode.Column: "Column", ReduceMode.Quad2x2: "2x2"}
    for mode, name in names.items():
        assert _value("CooperativeMatrixReduce", name) == mode.value
    for value, name in T.CLAMP_NAMES.items():
        assert _value("TensorClampMode", name) == value


def _user_enumerants() -> list[tuple[str, Enumerant]]:
    return [(n, getattr(coopdsl, n)) for n in dir(coopdsl) if isinstance(getattr(coopdsl, n, None), Enumerant)]


def test_kernels_name_enumerants():
    names = {n for n, _ in _user_enumerants()}
    assert {"RowMajor", "ColumnMajor", "Subgroup", "Workgroup", "UseA", "UseB", "UseAcc", "ClampToEdge",
            "Row", "Column", "Reduce2x2"} <= names


@pytest.mark.parametrize("name,e", _user_enumerants(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_user_facing_enumerant_has_its_grammar_value(name, e):
    assert _value(e.kind, e.name) == e.value, f"coopdsl.{name}"


@pytest.mark.parametrize("name,e", _user_enumerants(), ids=lambda x: x if isinstance(x, str) else "")
def test_user_facing_scopes_and_uses_are_the_vocabulary(name, e):
    if e.kind == "Scope":
        assert Scope[e.name] == e.value
    elif e.kind == "CooperativeMatrixUse":
        assert MatrixUse(e.value).spirv_name == e.name


def test_members_print_and_hash_as_the_values_they_replace():
    assert str(ScalarKind.INT) == f"{ScalarKind.INT}" == "int" and hash(ScalarKind.INT) == hash("int")
    assert str(StorageClass.Function) == "Function" and f"{StorageClass.Function:>10}" == "  Function"
    assert hash(StorageClass.PhysicalStorageBuffer) == hash("PhysicalStorageBuffer")
    assert str(FloatEncoding.BFloat16KHR) == "BFloat16KHR"
    assert str(MatrixUse.B) == f"{MatrixUse.B}" == "1" and hash(MatrixUse.B) == hash(1) and MatrixUse.B == 1
    assert str(Scope.Subgroup) == f"{Scope.Subgroup}" == "Subgroup" and Scope.Subgroup == 3
    assert {"int": 1}[ScalarKind.INT] == 1 and {2: "x"}[MatrixUse.Acc] == "x"


def test_predicates():
    assert ScalarKind.INT.is_int and ScalarKind.FLOAT.is_float and ScalarKind.BOOL.is_bool
    assert not ScalarKind.BOOL.is_numeric and ScalarKind.INT.is_numeric
    assert StorageClass.PhysicalStorageBuffer.is_physical and StorageClass.PhysicalStorageBuffer.is_device
    assert StorageClass.Input.is_interface and StorageClass.Output.is_interface
    assert not StorageClass.StorageBuffer.is_interface and StorageClass.Workgroup.is_shared
    assert StorageClass.Function.is_invocation_local and StorageClass.Private.is_invocation_local
    assert FloatEncoding.BFloat16KHR.is_bfloat and not FloatEncoding.BFloat16KHR.is_fp8
    assert FloatEncoding.Float8E4M3EXT.is_fp8 and not FloatEncoding.Float8E4M3EXT.has_infinities
    assert [e.type_name for e in FloatEncoding] == ["bf16", "e4m3", "e5m2"]
    assert MatrixUse.A.is_operand and MatrixUse.B.is_operand and MatrixUse.Acc.is_accumulator
    assert [u.family for u in MatrixUse] == ["MatA", "MatB", "Acc"]
    assert Scope.Subgroup.is_subgroup and Scope.Workgroup.is_workgroup and MATRIX_SCOPES == (3, 2)
    assert matrix_use(2) is MatrixUse.Acc and matrix_use(7) is None and matrix_use(T.SymDim("spec", ())) is None
    assert matrix_scope(2) is Scope.Workgroup and matrix_scope(9) is None


def test_types_hold_members_whatever_spelling_they_are_given():
    t = T.ScalarType("int", 32, True)
    assert t == T.i32 and hash(t) == hash(T.i32) and t.kind is ScalarKind.INT
    assert T.ScalarType("float", 16, encoding="BFloat16KHR").encoding is FloatEncoding.BFloat16KHR
    p = T.PointerType(T.f32, "Function")
    assert p.storage is StorageClass.Function and p == T.PointerType(T.f32, StorageClass.Function)
    assert str(p) == "ptr<Function, f32>"
    assert str(T.CoopMatType(T.f16, 3, 16, 16, MatrixUse.B)) == str(T.CoopMatType(T.f16, 3, 16, 16, 1)) == \
        "MatB[f16, 16, 16]"
    assert str(T.CoopMatType(T.f16, Scope.Workgroup, 16, 16, 2)) == "Acc[f16, 16, 16, Workgroup]"
    assert str(T.CoopMatType(T.f16, 1, 16, 16, 7)) == "CoopMat<use=7>[f16, 16, 16, 1]"
