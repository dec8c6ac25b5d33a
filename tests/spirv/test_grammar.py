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


def test_the_ids_only_shortcut_encodes_as_the_grammar_walk_does():
    """Every instruction, with every operand count the shortcut takes, gives the walk's words and requirements."""
    from coopdsl.spirv import grammar
    from coopdsl.spirv._tables import INSTRUCTIONS

    checked = 0
    for opname in INSTRUCTIONS:
        plan = grammar._id_plan(opname)
        if plan is None:
            continue
        _, fewest, most, number, *_ = plan
        for n in sorted({fewest, min(most, fewest + 1), min(most, fewest + 3)}):
            ids = tuple(range(7, 7 + n)) + (([3, 0xFFFFFFFF],) if number else ())
            fast, walked = Requirements(), Requirements()
            assert encode(opname, *ids, req=fast) == grammar.encode_walking(opname, *ids, req=walked), opname
            assert (fast.capabilities, fast.extensions) == (walked.capabilities, walked.extensions), opname
            checked += 1
    assert checked > 500
    assert grammar._id_plan("OpConstant")[3] and grammar._id_plan("OpCooperativeMatrixLoadKHR")[1:3] == (4, 5)


def test_the_shortcut_leaves_wrong_operands_to_the_grammar_walk():
    with pytest.raises(InternalCompilerError, match="missing operand"):
        encode("OpLoad", 1, 2)  # too few Ids
    with pytest.raises(InternalCompilerError, match="cannot be"):
        encode("OpLoad", 1, 2, 0)  # 0 is no Id
    assert encode("OpLoad", 1, 2, 3, "Volatile")[4] == 1  # a memory operand: the walk


def test_requirements_keep_each_group_once_in_first_seen_order():
    req = Requirements()
    for caps in [("A",), ("B", "C"), ("A",), ("B", "C")]:
        req.need(caps, ("SPV_X",), None)
    assert req.capabilities == [("A",), ("B", "C")] and req.extensions == [(("SPV_X",), None)]
