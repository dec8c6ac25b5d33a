"""Callbacks (per-element and decode functions) may be called more than once per element, unordered
(SPV_NV_cooperative_matrix2), so an atomic read-modify-write in one, or in a function it calls, is a located
error (hardening class 6: it was accepted); plain stores, which ggml's flash attention makes, stay allowed."""

from __future__ import annotations

import coopdsl as cd
from coopdsl import Acc, f32, u32
from coopdsl.errors import ArgumentError

from ..conftest import expect_error


@cd.func
def bump(counter):
    cd.atomic_add(counter, 0, u32(1))  # E:atomic


@cd.func
def counting(r, c, x, counter):
    bump(counter)
    return x


@cd.func
def storing(r, c, x, out):
    out[r * 16 + c] = x
    return x


@cd.kernel(workgroup_size=(32, 1, 1))
def k_atomic(o: cd.Buffer[f32], n: cd.Buffer[u32]):
    m = Acc[f32, 16, 16].splat(1.0).map(cd.partial(counting, counter=n))
    m.store(o, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def k_store(o: cd.Buffer[f32], copy: cd.Buffer[f32]):
    m = Acc[f32, 16, 16].splat(1.0).map(cd.partial(storing, out=copy))
    m.store(o, 0, stride=16)



def test_an_atomic_in_a_callback_is_located_where_it_is():
    err = expect_error(k_atomic, ArgumentError, "an atomic read-modify-write cannot run inside the function of "
                       "m.map counting, through the call of bump", "# E:atomic", 5)
    assert '"calls may occur more than once"' in err.message


def test_a_plain_store_in_a_callback_is_allowed():
    assert "OpCooperativeMatrixPerElementOpNV" in k_store.disassemble()
