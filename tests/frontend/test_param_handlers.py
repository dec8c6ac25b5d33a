"""Kernel parameters go to the handler of their annotation's kind (frontend/params.HANDLERS)."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, u32
from coopdsl.errors import DeclarationError
from coopdsl.frontend import params as P
from coopdsl.ir import types as T
from coopdsl.lang.structs import UniformParam
from coopdsl.lang.types import BufferParam, ConstParam, PushParam, SpecParam

from ..conftest import expect_error


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

    with pytest.raises(cd.TypeMismatchError, match=r"parameter 'y': annotation list is not Buffer\[T\]"):
        odd.compile()


@cd.struct
class _Scale:
    factor: f32


@cd.kernel(workgroup_size=(1, 1, 1))
def push_default(x: cd.Buffer[f32], n: u32 = -1):  # E:push_default
    x[0] = f32(n)


@cd.kernel(workgroup_size=(1, 1, 1))
def push_marked_default(x: cd.Buffer[f32], s: cd.Push[f32] = 2.5):  # E:push_marked
    x[0] = s


@cd.kernel(workgroup_size=(1, 1, 1))
def buffer_default(K: cd.Spec[u32] = 4, x: cd.Buffer[f32] = 0):  # E:buffer_default
    x[0] = f32(K)


@cd.kernel(workgroup_size=(1, 1, 1))
def uniform_default(x: cd.Buffer[f32], u: cd.Uniform[_Scale] = 1.0):  # E:uniform_default
    x[0] = u.factor


@cd.kernel(workgroup_size=(1, 1, 1))
def none_after_a_default(K: cd.Spec[u32] = 4, x: cd.Buffer[f32] = None, n: u32 = None):
    x[0] = f32(K + n)


def test_a_default_on_a_push_constant_buffer_or_uniform_block_is_refused():
    """``n: u32 = -1`` was accepted and ignored (a launch still said the push constant was missing)."""
    expect_error(push_default, DeclarationError, "push constant 'n' takes no default: every launch gives it",
                 "# E:push_default", 37)
    expect_error(push_marked_default, DeclarationError, "push constant 's' takes no default", "# E:push_marked", 44)
    expect_error(buffer_default, DeclarationError, "buffer 'x' takes no default", "# E:buffer_default", 41)
    expect_error(uniform_default, DeclarationError, "uniform block 'u' takes no default", "# E:uniform_default", 40)


def test_none_stands_for_no_default_where_python_needs_one():
    x = np.zeros(1, np.float32)
    none_after_a_default.launch((1,), x=x, n=3, device="cpu")
    assert x[0] == 7.0
