"""Kernel parameters go to the handler of their annotation's kind (frontend/params.HANDLERS)."""

from __future__ import annotations

import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.frontend import params as P
from coopdsl.ir import types as T
from coopdsl.lang.structs import UniformParam
from coopdsl.lang.types import BufferParam, ConstParam, PushParam, SpecParam


def test_every_annotation_kind_has_one_handler():
    assert P.HANDLERS == {ConstParam: P._compile_time, UniformParam: P._uniform, BufferParam: P._buffer,
                          SpecParam: P._spec, PushParam: P._push, T.ScalarType: P._push, T.VectorType: P._push,
                          T.StructType: P._push, T.PointerType: P._push}


@cd.kernel(workgroup_size=(32, 1, 1))
def every_kind(x: cd.Buffer[f32], n: u32, scale: cd.Push[f32], v: cd.vec2[f32], K: cd.Spec[u32] = 4,
               R: cd.Const[int] = 2):
    i = cd.global_invocation_id.x
    if i < n:
        x[i] = x[i] * scale + v.x + f32(K + R)


def test_each_kind_becomes_what_it_declares():
    module = every_kind.ir()
    kinds = {g.name: g.role for g in module.globals}
    assert kinds["x"] == "buffer" and kinds["push_constants"] == "push" and "R" not in kinds
    push = next(g for g in module.globals if g.name == "push_constants").type.pointee
    assert [name for name, _ in push.members] == ["n", "scale", "v"] and push.offsets == (0, 4, 8)
    assert [(s.name, s.default) for s in module.spec_consts] == [("K", 4)]


def test_an_annotation_of_no_kind_is_refused():
    @cd.kernel(workgroup_size=(32, 1, 1))
    def odd(x: cd.Buffer[f32], y: list):
        x[0] = 1.0

    with pytest.raises(cd.TypeMismatchError, match=r"parameter 'y': annotation <class 'list'> is not Buffer\[T\]"):
        odd.compile()
