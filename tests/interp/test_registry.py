"""Every IR op kind has a meaning on the interpreter."""

from coopdsl.interp.control import check_complete
from coopdsl.interp.ops import SCHEDULER_KINDS, SEMANTICS
from coopdsl.ir.ops import OPS


def test_every_ir_op_kind_is_executable():
    assert check_complete() == []
    assert set(SEMANTICS) | set(SCHEDULER_KINDS) >= set(OPS)


def test_no_semantics_for_unknown_kinds():
    assert set(SEMANTICS) <= set(OPS)
