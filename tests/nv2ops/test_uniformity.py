"""An element of a matrix reduced with cd.Row | cd.Column is the same in the matrix's whole scope.

llama.cpp's flash attention reduces the mask tile that way and skips a block when ``mvmax[0]`` is -inf.
"""

import coopdsl as cd
from coopdsl import Acc, UniformityError, f32

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(128, 1, 1))
def skip_block(s: cd.Buffer[f32], o: cd.Buffer[f32]):
    tile = Acc[f32, 64, 64, cd.Workgroup].load(s, 0, stride=64)
    top = tile.reduce(cd.Row | cd.Column, cd.reduce_max)
    if top[0] > -1.0e30:  # workgroup-uniform: every element of top is the maximum
        cd.barrier()
        (tile * 2.0).store(o, 0, stride=64)


def test_a_whole_matrix_reduction_is_uniform_in_the_matrix_scope():
    compile_checked(skip_block, r"OpCooperativeMatrixReduceNV %\w+ %\w+ Row\|Column", r"OpControlBarrier")


@cd.kernel(workgroup_size=(64, 1, 1))
def subgroup_only(s: cd.Buffer[f32], o: cd.Buffer[f32]):
    tile = Acc[f32, 16, 16].load(s, 0, stride=16)
    top = tile.reduce(cd.Row | cd.Column, cd.reduce_max)
    if top[0] > 0.0:
        (tile * 2.0).store(o, 0, stride=16)  # fine: the same in each subgroup
        cd.barrier()  # E:barrier


@cd.kernel(workgroup_size=(32, 1, 1))
def row_only(s: cd.Buffer[f32], o: cd.Buffer[f32]):
    tile = Acc[f32, 16, 16].load(s, 0, stride=16)
    top = tile.reduce(cd.Row, cd.reduce_max)
    if top[0] > 0.0:
        (tile * 2.0).store(o, 0, stride=16)  # E:row


def test_only_the_matrix_scope_and_only_whole_matrix_reductions():
    expect_error(subgroup_only, UniformityError, "an element of a subgroup-scope matrix reduced with cd.Row | "
                 "cd.Column", "# E:barrier", 9)
    expect_error(row_only, UniformityError, "an element of a cooperative matrix", "# E:row", 10)
