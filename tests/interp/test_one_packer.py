"""The GPU runtime and the interpreter pack kernel arguments with one packer (coopdsl/_packing.py) from one
layout (coopdsl/ir/layout.py): the same push-constant and uniform bytes for the same arguments, and the same
words for arguments that do not fit."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f16, f32, u32, vec2, vec3
from coopdsl.errors import TypeMismatchError
from coopdsl.interp.bind import allocate_arguments
from coopdsl.interp.errors import LaunchArgumentError
from coopdsl.interp.lanes import Lanes
from coopdsl.interp.layout import Layout
from coopdsl.interp.memory import DeviceMemory
from coopdsl.interp.spec import SpecValues
from coopdsl.runtime import LaunchError
from coopdsl.runtime.packing import check_struct_keys, pack_members, pack_push


@cd.struct
class Inner:
    w: vec2[f32]
    k: u32


@cd.struct
class Job:
    n: u32
    scale: f16
    inner: Inner
    taps: cd.array[u32, 3]
    pairs: cd.array[vec2[f32], 2]
    data: cd.Ptr[f32]


@cd.struct(layout_rule="scalar")
class Cfg:
    a: f32
    v: vec3[f32]
    b: u32


@cd.kernel(workgroup_size=(1, 1, 1))
def k_args(out: cd.Buffer[f32], cfg: cd.Uniform[Cfg], h: f16, v: vec3[f32], job: Job, m: u32):
    out[0] = f32(h) + v.y + f32(job.scale) + job.inner.w.x + f32(job.taps[2]) + job.pairs[1].y + job.data[0] \
        + cfg.v.z + f32(cfg.b + m)


GOOD = {"h": 0.5, "v": [1.0, 2.0, 3.0], "m": 7,
        "job": {"n": 3, "scale": 1.5, "inner": {"w": np.array([4.0, 5.0], np.float32), "k": 9},
                "taps": [1, 2, 3], "pairs": np.arange(4, dtype=np.float32), "data": 0x1122334455667788}}
CFG = {"a": 1.0, "v": (2.0, 3.0, 4.0), "b": 5}


def _interpreter(push: dict, cfg) -> tuple[bytes, bytes]:
    """The push-constant and uniform bytes the interpreter places in its device memory."""
    module = k_args.ir()
    layout = Layout(SpecValues(module, {}), Lanes((1, 1, 1), 32, np.zeros((1, 3), np.int64), (1, 1, 1)))
    device = DeviceMemory()
    allocate_arguments(module, layout, {"out": np.zeros(1, np.float32), "cfg": cfg, **push}, device)
    region = device.finish()
    got = {a.label: bytes(region.data[a.start:a.start + a.size]) for a in device.allocations}
    return got["push constants"], got["uniform block 'cfg'"]


def _runtime(push: dict, cfg) -> tuple[bytes, bytes]:
    """The push-constant and uniform bytes the GPU runtime packs from the kernel's reflection."""
    r = k_args.reflect()
    binding = next(b for b in r["bindings"] if b["kind"] == "uniform_buffer")
    check_struct_keys(binding["members"], cfg, "uniform block 'cfg'", whole=True)
    block = {"size": binding["size"], "members": binding["members"]}
    return pack_push(r, push), pack_members(block, cfg, "uniform block 'cfg' member")


def test_the_runtime_and_the_interpreter_pack_the_same_bytes():
    push, uniform = _runtime(GOOD, CFG)
    assert (push, uniform) == _interpreter(GOOD, CFG)
    # and they are where std430 (push constants) and the scalar layout (Cfg) put them
    assert struct.unpack_from("<e", push, 0) == (0.5,)
    assert struct.unpack_from("<3f", push, 16) == (1.0, 2.0, 3.0)
    # job (aligned 8, like its widest member) at 32: n, scale; inner at 8; taps at 24; pairs at 40; data at 56
    base = 32
    assert struct.unpack_from("<Ie", push, base) == (3, 1.5)
    assert struct.unpack_from("<2fI", push, base + 8) == (4.0, 5.0, 9)
    assert struct.unpack_from("<3I", push, base + 24) == (1, 2, 3)
    assert struct.unpack_from("<4f", push, base + 40) == (0.0, 1.0, 2.0, 3.0)
    assert struct.unpack_from("<Q", push, base + 56) == (0x1122334455667788,)
    assert struct.unpack_from("<I", push, base + 64) == (7,)
    assert struct.unpack("<f3fI", uniform[:20]) == (1.0, 2.0, 3.0, 4.0, 5)


BAD = {
    "missing member": ({**GOOD, "job": {k: v for k, v in GOOD["job"].items() if k != "scale"}}, CFG),
    "misspelt member": ({**GOOD, "job": {**GOOD["job"], "scael": 1}}, CFG),
    "nested not a dict": ({**GOOD, "job": {**GOOD["job"], "inner": 3}}, CFG),
    "out of range": ({**GOOD, "m": -1}, CFG),
    "float for an int": ({**GOOD, "m": 2.5}, CFG),
    "f16 overflow": ({**GOOD, "h": 1e6}, CFG),
    "vector length": ({**GOOD, "v": [1.0, 2.0]}, CFG),
    "vector nested": ({**GOOD, "v": [[1.0, 2.0, 3.0]]}, CFG),   # (was flattened into the vector)
    "vector element": ({**GOOD, "job": {**GOOD["job"], "inner": {"w": [1.0, 1e300], "k": 1}}}, CFG),
    "array length": ({**GOOD, "job": {**GOOD["job"], "taps": [1, 2]}}, CFG),
    "array element": ({**GOOD, "job": {**GOOD["job"], "taps": [1, 2, -3]}}, CFG),
    "pointer pointee": ({**GOOD, "job": {**GOOD["job"], "data": np.zeros(4, np.float64)}}, CFG),
    "negative address": ({**GOOD, "job": {**GOOD["job"], "data": -5}}, CFG),
    "pointer not a number": ({**GOOD, "job": {**GOOD["job"], "data": "x"}}, CFG),
    "uniform missing": (GOOD, {"a": 1.0, "v": (1.0, 2.0, 3.0)}),
    "uniform extra key": (GOOD, {**CFG, "zz": 1}),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_runtime_and_the_interpreter_refuse_alike(case):
    push, cfg = BAD[case]
    with pytest.raises(LaunchError) as rt:
        _runtime(push, cfg)
    with pytest.raises(LaunchArgumentError) as it:
        _interpreter(push, cfg)
    assert str(rt.value) == str(it.value)


def test_the_words():
    got = {}
    for case in ("missing member", "nested not a dict", "vector length", "vector nested", "array element",
                 "pointer pointee", "uniform missing"):
        with pytest.raises(LaunchArgumentError) as e:
            _interpreter(*BAD[case])
        got[case] = str(e.value)
    assert got == {
        "missing member": "missing push constant 'job.scale' (f16)",
        "nested not a dict": "push constant 'job.inner' is a struct: give a dict of its members",
        "vector length": "push constant 'v' (vec3<f32>) cannot be [1.0, 2.0]: give 3 numbers",
        "vector nested": "push constant 'v' (vec3<f32>) cannot be [[1.0, 2.0, 3.0]]: give 3 numbers",
        "array element": "push constant 'job.taps[2]' (u32) cannot be -3: the literal -3 does not fit in u32 "
                         "(0..4294967295)",
        "pointer pointee": "push constant 'job.data' points to f32; got a float64 array (pass float32)",
        "uniform missing": "missing uniform block 'cfg' member 'b' (u32)",
    }


@cd.kernel(workgroup_size=(1, 1, 1))
def k_buffers(a: cd.Buffer[f32], b: cd.Buffer[vec3[f32]], j: cd.Buffer[Inner], out: cd.Buffer[u32]):
    out[0] = u32(a[0] + b[0].y + j[0].w.x) + j[0].k


def _good_buffers() -> dict:
    return {"a": np.zeros(4, np.float32), "b": np.zeros((2, 4), np.float32), "j": np.zeros(16, np.uint8),
            "out": np.zeros(2, np.uint32)}


def _read_only(n: int) -> np.ndarray:
    x = np.zeros(n, np.uint32)
    x.flags.writeable = False
    return x


BAD_BUFFERS = {
    "dtype": {"a": np.zeros(4, np.float64)},
    "vec3 rows packed tightly": {"b": np.zeros((2, 3), np.float32)},
    "part of an element": {"b": np.zeros(6, np.float32)},
    "part of a struct": {"j": np.zeros(12, np.uint8)},   # (Inner: 16 bytes in std430)
    "not contiguous": {"a": np.zeros(8, np.float32)[::2]},
    "read-only array for a written buffer": {"out": _read_only(2)},
}


@pytest.mark.parametrize("case", sorted(BAD_BUFFERS))
def test_the_runtime_and_the_interpreter_refuse_a_buffer_alike(case):
    """A storage buffer's array is checked by one rule (coopdsl/_packing.py's ``buffer_problem``) on both
    paths: the same message for the same array."""
    from coopdsl.runtime.packing import check_array

    values = {**_good_buffers(), **BAD_BUFFERS[case]}
    name = next(iter(BAD_BUFFERS[case]))
    binding = next(b for b in k_buffers.reflect()["bindings"] if b["name"] == name)
    with pytest.raises(LaunchError) as rt:
        check_array(binding, values[name])
    module = k_buffers.ir()
    layout = Layout(SpecValues(module, {}), Lanes((1, 1, 1), 32, np.zeros((1, 3), np.int64), (1, 1, 1)))
    with pytest.raises(LaunchArgumentError) as it:
        allocate_arguments(module, layout, values, DeviceMemory())
    assert str(rt.value) == str(it.value)
    assert f"buffer '{name}'" in str(it.value)


def test_good_buffers_pass_both_paths():
    from coopdsl.runtime.packing import check_array

    values = _good_buffers()
    for b in k_buffers.reflect()["bindings"]:
        check_array(b, values[b["name"]])
    module = k_buffers.ir()
    layout = Layout(SpecValues(module, {}), Lanes((1, 1, 1), 32, np.zeros((1, 3), np.int64), (1, 1, 1)))
    allocate_arguments(module, layout, values, DeviceMemory())


@cd.struct
class Halves:
    h: vec2[cd.bf16]
    n: u32


@cd.kernel(workgroup_size=(1, 1, 1))
def k_bf16_member(out: cd.Buffer[f32], p: Halves):
    out[0] = f32(p.h.x) + f32(p.n)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_bf16_vector(out: cd.Buffer[f32], v: vec2[cd.bf16]):  # BF16 VECTOR
    out[0] = f32(v.x)


def test_a_bf16_vector_push_constant_is_refused_as_a_scalar_one_is():
    """A vec2[bf16] member was packed with int(x) (1.5 became the pattern 1, 70000 numpy's OverflowError); like a
    bf16 scalar it has no host type: refused when compiled as a parameter, and as a struct member at launch on
    both paths with one message."""
    from tests.conftest import expect_error

    expect_error(k_bf16_vector, TypeMismatchError, "push constant 'v' cannot be vec2[bf16]", "# BF16 VECTOR", 40)
    r = k_bf16_member.reflect()
    for value in ((1.5, 2.0), (70000, 1)):
        with pytest.raises(LaunchError) as rt:
            pack_push(r, {"p": {"h": value, "n": 1}})
        module = k_bf16_member.ir()
        layout = Layout(SpecValues(module, {}), Lanes((1, 1, 1), 32, np.zeros((1, 3), np.int64), (1, 1, 1)))
        with pytest.raises(LaunchArgumentError) as it:
            allocate_arguments(module, layout, {"out": np.zeros(1, np.float32), "p": {"h": value, "n": 1}},
                               DeviceMemory())
        assert str(rt.value) == str(it.value) == f"push constant 'p.h' (vec2<bf16>) cannot be {value!r}: no host " \
                                                 f"type holds bf16"
