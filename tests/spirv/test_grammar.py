import pytest

from coopdsl.errors import InternalCompilerError
from coopdsl.spirv.grammar import Requirements, encode


def test_encode_checks_operands_and_collects_requirements():
    req = Requirements()
    words = encode("OpCooperativeMatrixLoadKHR", 1, 2, 3, 4, 5, ("Aligned",), 16, req=req)
    assert words[0] == (8 << 16) | 4457
    assert words[1:] == [1, 2, 3, 4, 5, 2, 16]
    assert ("CooperativeMatrixKHR",) in req.capabilities


def test_bitmask_parameters_follow_in_bit_order():
    req = Requirements()
    words = encode("OpLoad", 1, 2, 3, ("MakePointerVisible", "NonPrivatePointer", "Aligned"), 4, 99, req=req)
    # Aligned (0x2) literal first, then MakePointerVisible (0x10) scope id
    assert words[4] == 0x2 | 0x10 | 0x20
    assert words[5:] == [4, 99]
    assert ("VulkanMemoryModel",) in req.capabilities


def test_optional_operands_may_be_left_out():
    assert encode("OpCooperativeMatrixMulAddKHR", 1, 2, 3, 4, 5)[0] == (6 << 16) | 4459


def test_missing_and_extra_operands_are_internal_errors():
    with pytest.raises(InternalCompilerError, match="missing operand"):
        encode("OpIAdd", 1, 2, 3)
    with pytest.raises(InternalCompilerError, match="left over"):
        encode("OpReturn", 7)
    with pytest.raises(InternalCompilerError, match="cannot be"):
        encode("OpName", 1, 2)
    with pytest.raises(InternalCompilerError, match="no enumerant"):
        encode("OpCapability", "NotACapability")
