"""Hand-built IR lowers to valid SPIR-V: array values, function operands, typed attributes."""

from __future__ import annotations

import re

import pytest

from coopdsl.errors import InternalCompilerError
from coopdsl.ir import types as T
from coopdsl.ir.attrs import Layout, LoopHint, MemoryAccess
from coopdsl.ir.builder import Emitter
from coopdsl.ir.core import FuncRef, Function, Param
from coopdsl.ir.printer import print_module
from coopdsl.spirv.writer import Writer, write

from .helpers import LOC, buffer, kernel_module, lower

ARR = T.ArrayType(T.u32, 4)


def test_array_values_load_store_extract_insert_and_parameters():
    m, em = kernel_module()
    out = buffer(m, "out", T.u32, 0)
    # a helper taking an array by value and returning one element
    p = Param(ARR, "values")
    helper = Function("pick", T.FunctionType(T.u32, (ARR,)), [p], loc=LOC)
    m.functions.append(helper)
    hem = Emitter(m, helper, LOC)
    hem.start(hem.new_block("entry"))
    hem.terminate("return", [hem.op("extract", T.u32, [p], index=2)])
    # entry: build an array, store it whole into a variable, load it whole, update it, pass it
    var = em.op("variable", T.PointerType(ARR, "Function"), [])
    arr = em.op("construct", ARR, [em.const(T.u32, i) for i in range(4)])
    em.op("store", T.void, [var, arr])
    loaded = em.op("load", ARR, [var])
    updated = em.op("insert", ARR, [em.const(T.u32, 40), loaded], index=2)
    result = em.op("call", T.u32, [updated], func=helper)
    ptr = em.op("access", T.PointerType(T.u32, "StorageBuffer"), [out, em.const(T.u32, 0), em.const(T.u32, 0)])
    em.op("store", T.void, [ptr, result])
    em.terminate("return")
    _, text = lower(m)
    for pattern in (r"OpTypeArray %uint %uint_4", r"OpFunctionParameter %_arr_uint_uint_4",
                    r"OpLoad %_arr_uint_uint_4", r"OpCompositeInsert %_arr_uint_uint_4 %uint_40 %\w+ 2",
                    r"OpCompositeExtract %uint %\w+ 2", r"OpCompositeConstruct %_arr_uint_uint_4"):
        assert re.search(pattern, text), (pattern, text)


def test_a_function_as_an_operand_lowers_to_its_id():
    m, em = kernel_module()
    cb = Function("combine", T.FunctionType(T.f32, (T.f32, T.f32)), [Param(T.f32, "x"), Param(T.f32, "y")],
                  loc=LOC)
    m.functions.append(cb)
    cem = Emitter(m, cb, LOC)
    cem.start(cem.new_block("entry"))
    cem.terminate("return", [cem.op("add", T.f32, list(cb.params))])
    ref = FuncRef(cb)
    assert ref.type == cb.type
    em.terminate("return")
    w = Writer(m, (1, 6))
    assert w.write()
    assert w.id(ref) == w.function_id(cb)  # an operand naming a function is the function's id
    assert "func combine(@x: f32, @y: f32) -> f32" in print_module(m)


def test_typed_attributes_lower_to_enumerants_and_print_readably():
    m, em = kernel_module()
    a = buffer(m, "a", T.f16, 0)
    mat = T.CoopMatType(T.f16, 3, 16, 16, 0)
    ptr = em.op("access", T.PointerType(T.f16, "StorageBuffer"), [a, em.const(T.u32, 0), em.const(T.u32, 0)])
    em.op("coop_load", mat, [ptr, em.const(T.u32, 16)], layout=Layout.ColumnMajor, memory=MemoryAccess(16))
    em.terminate("return")
    text = print_module(m)
    assert "layout=ColumnMajor memory=[aligned 16]" in text
    m.functions[0].blocks[0].merge = None
    _, dis = lower(m)
    assert re.search(r"OpCooperativeMatrixLoadKHR %\S+ %\S+ %uint_1 %uint_16 Aligned 16", dis), dis


def test_loop_hints_lower_to_loop_control():
    from coopdsl.spirv.writer import _loop_control

    assert _loop_control(LoopHint()) == (("None",),)
    assert _loop_control(LoopHint(unroll=False)) == (("DontUnroll",),)
    assert _loop_control(LoopHint(partial=4)) == (("PartialCount",), 4)


def test_a_lowering_failure_names_the_ops_line():
    m, em = kernel_module()
    em.op("math", T.u32, [em.const(T.u32, 4)], fn="exp")  # exp has no integer form
    em.terminate("return")
    with pytest.raises(InternalCompilerError) as info:
        write(m, (1, 6))
    assert info.value.loc == LOC
    assert "cannot lower math" in info.value.message


def test_a_module_spirv_val_rejects_is_reported_at_the_instructions_line():
    from coopdsl.kernel import _rejected_at
    from coopdsl.spirv import tools
    from coopdsl.spirv.words import to_bytes
    from coopdsl.spirv.writer import write_with_locations

    m, em = kernel_module()
    mat = T.CoopMatType(T.f16, 3, 16, 16, 0)
    var = em.op("variable", T.PointerType(T.ArrayType(T.f16, 256), "Function"), [])
    ptr = em.op("access", T.PointerType(T.f16, "Function"), [var, em.const(T.u32, 0)])
    em.loc = type(LOC)("hand-built.py", 42, 9)
    em.op("coop_load", mat, [ptr, em.const(T.u32, 16)], layout=Layout.RowMajor)  # Vulkan forbids Function
    em.terminate("return")
    words, locations = write_with_locations(m, (1, 6))
    message = tools.validation_message(to_bytes(words), "vulkan1.3")
    assert "OpCooperativeMatrixLoadKHR" in message
    assert _rejected_at(message, locations) == type(LOC)("hand-built.py", 42, 9)
