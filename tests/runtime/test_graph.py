"""coopdsl/runtime/graph.py: launches recorded once into a command buffer and submitted again, and the ops'
replay of their last call (coopdsl/ops/hot.py) through it: the same results with one submission and no
recording, and a fresh recording whenever the kept command buffer may name something gone."""

from __future__ import annotations

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, runtime, u32
from coopdsl.interp import LaunchArgumentError
from coopdsl.ops import hot
from coopdsl.runtime import ArrayError, LaunchError
from coopdsl.runtime.batch import open_batches
from coopdsl.runtime.graph import capture
from tests.runtime.test_batch import axpy  # y = alpha x + y

pytestmark = pytest.mark.vulkan


@pytest.fixture
def counts(device, monkeypatch):
    """[waited submissions, Kernel.launch calls]"""
    c = [0, 0]
    real_wait, real_launch = device.submit_and_wait, cd.Kernel.launch

    def waiting(cb, *args):
        c[0] += 1
        real_wait(cb, *args)

    def launching(self, *args, **kw):
        c[1] += 1
        real_launch(self, *args, **kw)

    monkeypatch.setattr(device, "submit_and_wait", waiting)
    monkeypatch.setattr(cd.Kernel, "launch", launching)
    return c


def _arrays(device, n=300):
    x = runtime.array(np.arange(n, dtype=np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    return x, y


def test_a_graph_runs_its_launches_again_with_one_submission_and_no_recording(device, counts):
    n = 300
    x, y = _arrays(device, n)
    counts[:] = [0, 0]
    launches = lambda: (axpy.launch((5,), x, y, n, 2.0), axpy.launch((5,), x, y, n, 1.0))  # noqa: E731
    g = capture(device, launches)
    assert g is not None and counts == [1, 2]
    for _ in range(3):
        assert g.run()
    assert counts == [4, 2]                       # three submissions, no launch recorded
    np.testing.assert_array_equal(y.numpy(), 12.0 * np.arange(n))   # (2 + 1) x, four times, in order
    g.release()
    assert not g.run()


def test_a_graph_ends_when_an_array_is_freed_or_a_descriptor_set_is_freed(device):
    x, y = _arrays(device)
    g = capture(device, lambda: axpy.launch((5,), x, y, 300, 1.0))
    assert g is not None and g.valid()
    device.descriptors.generation += 1            # (as freeing any set does: it may be one the graph binds)
    assert not g.valid() and not g.run()
    g = capture(device, lambda: axpy.launch((5,), x, y, 300, 1.0))
    x.free()
    assert not g.run()
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(300))   # the two captures ran, nothing else


def test_a_graph_does_not_run_while_a_batch_is_open_and_capture_refuses_one(device):
    x, y = _arrays(device)
    g = capture(device, lambda: axpy.launch((5,), x, y, 300, 1.0))
    with runtime.batch(device):
        assert not g.run()                        # (it would run before the batch's earlier launches)
        with pytest.raises(LaunchError, match="a batch is open"):
            capture(device, lambda: None)
    assert g.run()
    np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(300))


def test_launches_with_numpy_data_run_but_are_not_kept(device, counts):
    x = np.arange(300, dtype=np.float32)
    y = runtime.zeros(300, np.float32, device=device)
    assert capture(device, lambda: axpy.launch((5,), x, y, 300, 1.0)) is None
    assert capture(device, lambda: None) is None  # nothing recorded
    np.testing.assert_array_equal(y.numpy(), np.arange(300))


def test_an_error_while_capturing_runs_nothing_and_closes_the_batch(device):
    x, y = _arrays(device)

    def bad():
        axpy.launch((5,), x, y, 300, 1.0)
        axpy.launch((5,), x, y, "300", 1.0)

    with pytest.raises(LaunchError):
        capture(device, bad)
    assert device not in open_batches()          # (closed: the next capture works)
    assert capture(device, lambda: axpy.launch((5,), x, y, 300, 1.0)) is not None
    np.testing.assert_array_equal(y.numpy(), np.arange(300))


def test_an_ops_replay_goes_through_a_graph_from_its_second_replay(device, counts):
    """hot.Hot: the call remembered ran its launches; the first replay records them into a kept command buffer
    (one submission), the next ones submit it again with no launch recorded; inside a batch the launches are
    recorded into the batch; a freed array ends the graph and the replay's launch then reports it."""
    n = 300
    x, y = _arrays(device, n)
    counts[:] = [0, 0]
    launches = [(axpy, (5,), (x, y, n, 1.0), {}), (axpy, (5,), (x, y), {"n": n, "alpha": 2.0})]
    h = hot.Hot()
    hot.run(launches)
    h.remember((x, y), ("opt",), launches)
    assert counts == [2, 2]
    assert h.replay((x, y), ("opt",)) is y
    assert counts == [3, 4] and h.graph is not None    # recorded once, one submission
    assert h.replay((x, y), ("opt",)) is y and h.replay((x, y), ("opt",)) is y
    assert counts == [5, 4]                              # submitted again, nothing recorded
    with runtime.batch(device):
        assert h.replay((x, y), ("opt",)) is y
    assert counts == [6, 6]
    np.testing.assert_array_equal(y.numpy(), 15.0 * np.arange(n))   # five calls of x + 2x
    assert h.graph is not None                           # kept through the batch: outside it, submitted again
    assert h.replay((x, y), ("opt",)) is y and counts == [8, 6]   # (the read of y above was one submission)
    np.testing.assert_array_equal(y.numpy(), 18.0 * np.arange(n))
    y2 = runtime.zeros(n, np.float32, device=device)
    h.remember((x, y2), ("opt",), [(axpy, (5,), (x, y2, n, 1.0), {})])
    assert h.graph is None                               # a new call: the old graph is given back
    x.free()
    with pytest.raises(ArrayError):
        h.replay((x, y2), ("opt",))


@cd.kernel(workgroup_size=(64, 1, 1))
def scaled(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i]


def test_a_call_without_out_replays_into_a_new_output_each_time(device, counts):
    """hot.Hot with ``made``: the remembered call made its output; a call again with the same arrays gets a new
    array of the same shape, dtype and device in its place (and in place of its views) in the launches, so that
    results the caller keeps are not overwritten; once the caller lets results go, their memory comes back from
    the pool and the command buffer kept for it runs again, with no launch recorded."""
    n = 300
    x = runtime.array(np.arange(n, dtype=np.float32), device=device)
    made = runtime.empty(n, np.float32, device=device)
    launches = [(scaled, (5,), (x, made, n, 3.0), {}), (axpy, (5,), (x, made.view(np.uint32).view(np.float32)),
                                                         {"n": n, "alpha": 1.0})]
    hot.run(launches)
    h = hot.Hot()
    h.remember((x, None), ("opt",), launches, made=made)
    del launches
    kept = [made]
    for _ in range(3):
        kept.append(h.replay((x, None), ("opt",)))
    assert len({id(r) for r in kept}) == 4 and len({r.buffer().uid for r in kept}) == 4
    for r in kept:
        assert isinstance(r, runtime.Array) and r.shape == (n,) and r.device is device
        np.testing.assert_array_equal(r.numpy(), 4.0 * np.arange(n))
    del kept, made, r
    counts[:] = [0, 0]
    for i in range(6):
        r = h.replay((x, None), ("opt",))
        np.testing.assert_array_equal(r.numpy(), 4.0 * np.arange(n), err_msg=f"call {i}")
        del r
    print("launches", counts)
    assert counts[0] == 12 and counts[1] <= 4         # (6 calls, 6 reads; the memory comes back: kept buffers run)
    assert len(h.last.graphs) <= hot.GRAPHS
    assert h.replay((x, x), ("opt",)) is None
    h.remember((x, None), ("other",), [(scaled, (5,), (x, x, n, 3.0), {})])   # no array made: not remembered
    assert h.replay((x, None), ("other",)) is None


@pytest.fixture
def recorded(monkeypatch):
    """[launches recorded into a command buffer (coopdsl.runtime.launch.record calls)]"""
    import importlib

    L = importlib.import_module("coopdsl.runtime.launch")
    count = [0]
    real = L.record

    def counting(*a, **kw):
        count[0] += 1
        return real(*a, **kw)
    monkeypatch.setattr(L, "record", counting)
    return count


def test_kernel_launch_runs_its_last_command_buffer_again_for_the_same_arguments(device, recorded):
    """Kernel.launch outside a batch keeps the command buffer of a launch on resident arrays and plain numbers;
    a launch again with the very same argument objects (by position and by keyword) and grid submits it again,
    recording nothing; anything else (another grid, another object, numpy data, an open batch, a freed array)
    takes the checked path."""
    n, one = 300, 1.0
    x, y = _arrays(device, n)
    for _ in range(5):
        axpy.launch((5,), x, y, n, one)
    assert recorded[0] == 1                                   # recorded once, submitted five times
    axpy.launch((6,), x, y, n, one)                           # another grid: recorded (and kept)
    axpy.launch((6,), x, y, n, one)
    assert recorded[0] == 2
    axpy.launch((6,), x, y, n=n, alpha=one)                   # keywords: recorded (kept for the same keywords)
    axpy.launch((6,), x, y, n, one)                           # the same objects, not as keywords: recorded
    assert recorded[0] == 4
    with runtime.batch(device):
        axpy.launch((6,), x, y, n, one)                       # inside a batch: recorded into it
    assert recorded[0] == 5
    np.testing.assert_array_equal(y.numpy(), 10.0 * np.arange(n))
    xh = np.arange(n, dtype=np.float32)
    axpy.launch((5,), xh, y, n, one)
    axpy.launch((5,), xh, y, n, one)                          # numpy data: staged each time, never kept
    assert recorded[0] == 7
    np.testing.assert_array_equal(y.numpy(), 12.0 * np.arange(n))
    axpy.launch((5,), x, y, n, one)
    x.free()
    with pytest.raises(ArrayError, match="freed"):
        axpy.launch((5,), x, y, n, one)                       # the kept command buffer does not run


def test_capture_takes_the_default_device_for_none_and_refuses_a_bad_device_or_function_before_running(device):
    x, y = _arrays(device)
    if runtime.default_device() is device:
        g = capture(None, lambda: axpy.launch((5,), x, y, 300, 1.0))
        assert g is not None and g.device is device
        np.testing.assert_array_equal(y.numpy(), np.arange(300))
    ran = []
    with pytest.raises(TypeError, match="capture: device must be a coopdsl.runtime.Device or None, got str"):
        capture("cpu", lambda: ran.append(1))
    with pytest.raises(TypeError, match="capture: record must be a function that makes the launches, got int"):
        capture(device, 5)
    assert ran == []



def test_a_loop_over_layers_replays_each_layer_s_call_from_its_own_command_buffer(device, counts):
    """hot.Hot with several calls (a layer loop: one x, each layer its own weights and output): from the second
    token on nothing is recorded, and every output follows the input written before the token."""
    n = 300
    x = runtime.zeros(n, np.float32, device=device)
    layers = [(runtime.array(np.full(n, float(i + 1), np.float32), device=device),
               runtime.zeros(n, np.float32, device=device)) for i in range(3)]
    h = hot.Hot()

    def call(w, y):
        got = h.replay((x, w, y), ("layer",))
        if got is None:   # the op's first call: plan, launch, remember
            launches = [(scaled, (5,), (w, y, n, 1.0), {}), (axpy, (5,), (x, y, n, 2.0), {})]
            hot.run(launches)
            h.remember((x, w, y), ("layer",), launches)
            got = y
        return got

    for token in range(4):
        x.write(np.full(n, float(token), np.float32))
        if token == 2:
            counts[:] = [0, 0]
        for w, y in layers:
            assert call(w, y) is y
        for i, (_, y) in enumerate(layers):
            np.testing.assert_array_equal(y.numpy(), np.full(n, i + 1 + 2.0 * token), err_msg=f"token {token}")
    assert counts[1] == 0                                  # tokens 2 and 3: no launch recorded
    assert all(len(c.graphs) == 1 for c in h.calls.values())


@cd.struct
class Affine:
    a: f32
    b: f32


@cd.kernel(workgroup_size=(64, 1, 1))
def affine(y: cd.Buffer[f32], n: u32, p: Affine, SHIFT: cd.Spec[u32] = 0):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = y[i] * p.a + p.b + f32(SHIFT)


def test_launches_with_a_struct_dict_and_specialization_keywords_are_kept_and_follow_the_dict(device, recorded):
    """A launch with a struct push constant given as a dict and specialization constants as keywords (how ggml's
    kernels are launched) is kept and run again for the very same objects, in a batch and outside; the dict
    is mutable, so what it holds is compared too: changed in place, the launch is packed and recorded again."""
    n = 300
    y = runtime.zeros(n, np.float32, device=device)
    p = {"a": 1.0, "b": 1.0}
    shift2, shift3 = 2, 3
    for _ in range(3):
        affine.launch((5,), y, n, p, SHIFT=shift2)
    assert recorded[0] == 1 and (y.numpy() == 9.0).all()
    p["b"] = 5.0                                       # the same dict, another value: packed and recorded again
    affine.launch((5,), y, n, p, SHIFT=shift2)
    assert recorded[0] == 2 and (y.numpy() == 16.0).all()
    affine.launch((5,), y, n, p, SHIFT=shift3)         # another specialization: another pipeline
    assert recorded[0] == 3 and (y.numpy() == 24.0).all()
    with runtime.batch(device):
        for _ in range(3):
            affine.launch((5,), y, n, p, SHIFT=shift3)  # recorded once, then recorded again from its memo
        p["b"] = 0.0
        affine.launch((5,), y, n, p, SHIFT=shift3)
    assert recorded[0] == 5 and (y.numpy() == 24.0 + 3 * 8.0 + 3.0).all()
    p["c"] = 1.0                                        # a member Affine does not have: refused as before
    with pytest.raises(LaunchError, match="'c'"):
        affine.launch((5,), y, n, p, SHIFT=shift3)
    del p["c"]
    p["a"] = True                                       # a bool for an f32 member: refused as before
    with pytest.raises(LaunchError, match="cannot be True"):
        affine.launch((5,), y, n, p, SHIFT=shift3)


@cd.kernel(workgroup_size=(1, 1, 1))
def signs(y: cd.Buffer[f32], p: Affine, Z: cd.Spec[f32] = 1.0):
    y[0] = p.b
    y[1] = Z


def test_a_kept_launch_and_a_specialization_tell_minus_zero_from_zero(device):
    # memos compare a float by its bits (coopdsl._packing.value_key): 0.0 == -0.0 in Python, not in the bytes
    y = runtime.zeros(2, np.float32, device=device)
    p = {"a": 1.0, "b": 0.0}
    for b, z in [(0.0, 0.0), (-0.0, 0.0), (-0.0, -0.0), (0.0, -0.0), (0.0, 0.0)]:
        p["b"] = b
        signs.launch((1,), y, p, Z=z)
        assert list(np.signbit(y.numpy())) == [np.signbit(b), np.signbit(z)]
        with runtime.batch(device):
            signs.launch((1,), y, p, Z=z)
            p["b"] = -b                       # after the launch: not what it packed
        assert list(np.signbit(y.numpy())) == [np.signbit(b), np.signbit(z)]



@cd.kernel(workgroup_size=(1, 1, 1))
def nan_bits(y: cd.Buffer[u32], p: Affine, Z: cd.Spec[f32] = 1.0, C: cd.Const[float] = 1.0):
    y[0] = cd.bitcast(p.b, u32)
    y[1] = cd.bitcast(Z, u32)
    y[2] = cd.bitcast(f32(C), u32)


def test_memos_tell_nans_of_other_payloads_apart(device):
    # a float by its 64 bits (coopdsl._numbers.float_key): float.hex() is 'nan' for every NaN
    import struct

    def nan(bits):
        return struct.unpack("<f", struct.pack("<I", bits))[0]

    y = runtime.zeros(3, np.uint32, device=device)
    p = {"a": 1.0, "b": 0.0}
    for bits in (0x7FC00001, 0x7FC00002, 0xFFC00005, 0x7FC00001):
        p["b"] = nan(bits)                                  # the same dict, changed in place
        kern = nan_bits.specialize(C=nan(bits))             # a Const: one variant per payload
        kern.launch((1,), y, p, Z=nan(bits))                # a specialization constant: one pipeline per payload
        assert [int(v) for v in y.numpy()] == [bits] * 3
        with runtime.batch(device):
            kern.launch((1,), y, p, Z=nan(bits))
        assert [int(v) for v in y.numpy()] == [bits] * 3
    assert nan_bits.specialize(C=nan(0x7FC00001)) is not nan_bits.specialize(C=nan(0x7FC00002))


def test_a_kernel_keeps_one_command_buffer_beside_the_launches_it_remembers_from_batches(device, counts):
    """An immediate launch keeps its command buffer, replacing the kernel's one kept before; the launches recorded
    into batches (HOT_LAUNCHES of them, a model's layers) stay remembered beside it."""
    pairs = [_arrays(device) for _ in range(5)]
    with runtime.batch(device):
        for x, y in pairs:
            axpy.launch((5,), x, y, 300, 1.0)
    hots = axpy._local.hots
    batched = sum(type(h[0]) is tuple for h in hots.values())     # (earlier tests' launches too)
    (xa, ya), (xb, yb) = _arrays(device), _arrays(device)
    axpy.launch((5,), xa, ya, 300, 1.0)

    def kept():
        return [h[0] for h in hots.values() if type(h[0]) is not tuple]

    (first,) = kept()
    axpy.launch((5,), xb, yb, 300, 1.0)
    (second,) = kept()
    assert second is not first and not first.run()            # (released: the new one replaced it)
    assert sum(type(h[0]) is tuple for h in hots.values()) == batched >= 5
    counts[:] = [0, 0]
    axpy.launch((5,), xb, yb, 300, 1.0)
    assert counts == [1, 1] and kept() == [second]             # one submission of the kept command buffer
    with runtime.batch(device):
        for x, y in pairs:
            axpy.launch((5,), x, y, 300, 1.0)                  # replayed from their bindings
    for _, y in pairs:
        np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(300))
    np.testing.assert_array_equal(yb.numpy(), 2.0 * np.arange(300))


def test_inside_a_batch_an_ops_replay_records_its_launches_again_from_their_recordings(device, counts, monkeypatch):
    """hot.Hot inside a batch: the first replay records the launches through Kernel.launch and keeps what the
    runtime needs to record them again; the next replays record them from that without Kernel.launch, with the
    same results; a descriptor set freed since, or the environment sending launches to the interpreter, takes the
    launches back through Kernel.launch; a call that makes its output never records from a recording (the output
    is a new array each time)."""
    n = 300
    x, y = _arrays(device, n)
    yv = y.view(np.uint32).view(np.float32)                 # (a view, as the ops launch views)
    launches = [(axpy, (5,), (x, yv, n, 1.0), {}), (axpy, (5,), (x, y), {"n": n, "alpha": 2.0})]
    h = hot.Hot()
    hot.run(launches)
    h.remember((x, y), ("opt",), launches)
    counts[:] = [0, 0]
    with runtime.batch(device):
        for _ in range(3):
            assert h.replay((x, y), ("opt",)) is y
    assert counts == [1, 2] and h.last.recorded is not None   # through Kernel.launch once, then from recordings
    np.testing.assert_array_equal(y.numpy(), 12.0 * np.arange(n))   # four calls of x + 2x
    counts[:] = [0, 0]
    device.descriptors.generation += 1                      # (as freeing any set does)
    with runtime.batch(device):
        h.replay((x, y), ("opt",))
        assert counts[1] == 2 and h.last.recorded is not None   # taken anew
        h.replay((x, y), ("opt",))
    assert counts[1] == 2
    np.testing.assert_array_equal(y.numpy(), 18.0 * np.arange(n))
    with monkeypatch.context() as m:
        m.setenv("COOPDSL_DEVICE", "cpu")
        with runtime.batch(device), pytest.raises(LaunchArgumentError, match="needs a numpy array, got Array"):
            h.replay((x, y), ("opt",))                      # (as a first call would: the interpreter refuses)
    made = runtime.zeros(n, np.float32, device=device)
    h.remember((x, None), ("made",), [(axpy, (5,), (x, made, n, 1.0), {})], made=made)
    with runtime.batch(device):
        for _ in range(2):
            out = h.replay((x, None), ("made",))
            assert out is not made and out.shape == made.shape
    assert h.last.recorded is None


def test_an_ops_replay_with_a_struct_dict_goes_through_kernel_launch_and_follows_the_dict(device, counts):
    """A launch with a dict argument (a struct push constant, ggml's interface) is never recorded again from a
    recording inside a batch (the dict may change in place): the call notes that once and goes through
    Kernel.launch, which compares what the dict holds."""
    n = 300
    y = runtime.zeros(n, np.float32, device=device)
    p = {"a": 1.0, "b": 1.0}
    launches = [(affine, (5,), (y, n, p), {"SHIFT": 2})]
    h = hot.Hot()
    hot.run(launches)
    h.remember((y,), ("struct",), launches)
    counts[:] = [0, 0]
    with runtime.batch(device):
        h.replay((y,), ("struct",))
        assert h.last.recorded == ()                        # noted once: not taken again
        p["b"] = 5.0
        h.replay((y,), ("struct",))
    assert counts[1] == 2 and h.last.recorded == ()
    np.testing.assert_array_equal(y.numpy(), np.full(n, 3.0 + 3.0 + 7.0, np.float32))   # 0+3, +3, +7
