"""The Builder's ``function_operand``: a @cd.func compiled for given parameter types, without a call site."""

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.ir import types as T
from coopdsl.ir.core import FuncRef
from coopdsl.lang.registry import make_builtin

SEEN: dict = {}


def _probe(cg, args, kwargs):
    """A test builtin: compile its argument as a function operand several ways and record the results."""
    fn, n = args
    SEEN["first"] = cg.function_operand(fn, [T.f32, T.u32], {"scale": 2.0, "n": n})
    SEEN["again"] = cg.function_operand(fn, [T.f32, T.u32], {"scale": 2.0, "n": n})
    SEEN["other"] = cg.function_operand(fn, [T.f32, T.u32], {"scale": 3.0, "n": n})
    SEEN["default"] = cg.function_operand(fn, [T.f32, T.u32, T.f32], {"n": n})
    return None


PROBE = make_builtin("probe", _probe, "test only", "(fn, n)")


@cd.func
def weigh(x, i, scale=1.0, n=0):
    return x * f32(scale) + f32(i + n)


@cd.kernel(workgroup_size=(1, 1, 1))
def uses_probe(o: cd.Buffer[f32], n: u32):
    PROBE(weigh, n)
    o[0] = 1.0


def test_function_operands_are_compiled_per_types_and_bindings():
    SEEN.clear()
    text = uses_probe.disassemble()
    first, again, other, default = SEEN["first"], SEEN["again"], SEEN["other"], SEEN["default"]
    assert isinstance(first, FuncRef) and first.type == T.FunctionType(T.f32, (T.f32, T.u32))
    assert again.func is first.func and other.func is not first.func
    assert default.func.type == T.FunctionType(T.f32, (T.f32, T.u32, T.f32))  # scale passed, not bound
    assert [p.name for p in first.func.params] == ["x", "i"]
    # the push constant n is read in the kernel and again inside each function; no OpFunctionCall names them
    assert text.count("OpFunctionCall") == 0
    assert text.count("OpAccessChain %_ptr_PushConstant_uint %push_constants %uint_0") == 4
    for name in ("weigh", "weigh_1", "weigh_2"):
        assert f"%{name} = OpFunction %float" in text
