"""Every op is declared once and checked against its declaration by the verifier."""

from __future__ import annotations

import pytest

from coopdsl.errors import InternalCompilerError
from coopdsl.ir import types as T
from coopdsl.ir.attrs import Layout, MemoryAccess, Scope, Semantics
from coopdsl.ir.core import Op
from coopdsl.ir.ops import OPS
from coopdsl.ir.verifier import verify

from .helpers import LOC, buffer, kernel_module

A = T.CoopMatType(T.f16, 3, 16, 16, 0)
B = T.CoopMatType(T.f16, 3, 16, 16, 1)
C = T.CoopMatType(T.f32, 3, 16, 16, 2)


def test_every_op_is_declared_with_a_doc_and_a_type_rule():
    for kind, d in OPS.items():
        assert d.kind == kind and d.doc, kind
        assert d.verify is not None or d.terminator or kind in ("variable",) or d.operands == (0, 0) or \
            kind == "return", f"{kind} has no type rule"


def test_no_op_attribute_is_a_spirv_spelling():
    # attributes are typed values (ir.attrs) or plain data, never opcode / instruction names
    for d in OPS.values():
        for name in d.attrs:
            assert name not in ("spirv", "opname", "name", "group_op", "matrix_operands"), (d.kind, name)


def _bad(build, message: str):
    m, em = kernel_module()
    build(m, em)
    em.terminate("return")
    with pytest.raises(InternalCompilerError) as info:
        verify(m)
    assert message in info.value.message
    assert info.value.loc == LOC


def test_binary_operands_must_agree():
    _bad(lambda m, em: em.op("add", T.f32, [em.const(T.f32, 1.0), em.const(T.i32, 1)]), "operand types differ")


def test_result_type_is_checked():
    _bad(lambda m, em: em.op("add", T.f16, [em.const(T.f32, 1.0), em.const(T.f32, 2.0)]), "result is f16")


def test_comparison_gives_bools():
    _bad(lambda m, em: em.op("lt", T.i32, [em.const(T.i32, 1), em.const(T.i32, 2)]), "expected bool")


def test_load_result_is_the_pointee():
    def build(m, em):
        g = buffer(m, "x", T.f32, 0)
        ptr = em.op("access", T.PointerType(T.f32, "StorageBuffer"), [g, em.const(T.u32, 0), em.const(T.u32, 0)])
        em.op("load", T.i32, [ptr])
    _bad(build, "result is i32, expected f32")


def test_muladd_checks_uses():
    def build(m, em):
        a, b, c = (em.op("splat", t, [em.const(t.elem, 0.0)]) for t in (A, B, C))
        em.op("coop_muladd", C, [b, a, c], signed=frozenset(), saturate=False)
    _bad(build, "the first operand of muladd must have use A (MatA), but MatB[f16, 16, 16] has use B (MatB)")


def test_missing_unknown_and_mistyped_attributes():
    _bad(lambda m, em: em.op("control_barrier", T.void, [], exec_scope=Scope.Workgroup,
                             mem_scope=Scope.Workgroup), "needs attribute 'semantics'")
    _bad(lambda m, em: em.op("control_barrier", T.void, [], exec_scope="Workgroup", mem_scope=Scope.Workgroup,
                             semantics=Semantics()), "must be Scope")
    _bad(lambda m, em: em.op("neg", T.f32, [em.const(T.f32, 1.0)], spirv="OpFNegate"), "unknown attributes")


def test_operand_count():
    m, em = kernel_module()
    op = Op("neg", T.f32, [], LOC)
    em.block.ops.append(op)
    em.terminate("return")
    with pytest.raises(InternalCompilerError, match="neg takes 1..1 operands"):
        verify(m)


def test_select_on_matrices_is_refused_and_the_builder_branches_instead():
    def build(m, em):
        a = em.op("splat", C, [em.const(T.f32, 0.0)])
        op = Op("select", C, [em.const(T.boolean, True), a, a], LOC)
        op.block = em.block
        em.block.ops.append(op)
    _bad(build, "cannot select between cooperative matrices")
    m, em = kernel_module()
    a = em.op("splat", C, [em.const(T.f32, 0.0)])
    chosen = em.op("select", C, [em.const(T.boolean, True), a, a])
    assert chosen.kind == "phi" and len(m.functions[0].blocks) == 4


def test_attribute_values_validate_themselves():
    with pytest.raises(ValueError):
        MemoryAccess(aligned=3)
    with pytest.raises(ValueError):
        Semantics(("Acquire", "Release"))
    assert str(MemoryAccess(16, available=Scope.Device)) == "[aligned 16, available Device]"
    assert Layout(1) is Layout.ColumnMajor
