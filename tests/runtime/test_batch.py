"""Batches (many launches, one submission, one wait) and the caches that make launches cheap."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f32, runtime, u32
from coopdsl.runtime import ArrayError, LaunchError, descriptors, memory
from coopdsl.runtime.program import Program

pytestmark = pytest.mark.vulkan


@cd.kernel(workgroup_size=(64, 1, 1))
def axpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i]


@cd.kernel(workgroup_size=(64, 1, 1))
def square(x: cd.Buffer[f32], n: u32, OFFSET: cd.Spec[u32] = 0):
    i = cd.global_invocation_id.x
    if i < n:
        x[i] = x[i] * x[i] + f32(OFFSET)


@pytest.fixture
def submissions(device, monkeypatch):
    """Counts the device's queue submissions that wait (``submit_and_wait``); ``submissions.handed`` counts
    those handed over without waiting (a batch's chunks, ``submit``)."""

    class Count(list):
        handed = 0

    count = Count([0])
    real, real_submit = device.submit_and_wait, device.submit

    def counting(cb, *args):
        count[0] += 1
        real(cb, *args)

    def handing(cb):
        count.handed += 1
        real_submit(cb)

    monkeypatch.setattr(device, "submit_and_wait", counting)
    monkeypatch.setattr(device, "submit", handing)
    return count


def test_a_batch_runs_dependent_launches_in_order_with_one_submission(device, submissions):
    n = 500
    x = runtime.array(np.full(n, 1.5, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    submissions[0] = 0
    with runtime.batch(device, flush_every=None) as b:
        for _ in range(100):
            axpy.launch((8,), x, y, n, 1.0)      # y += x: each reads the previous one's result
        square.launch((8,), y, n)                # a different pipeline reading y
        axpy.launch((8,), y, x, n, 1.0, device=device)  # and back into x
        assert submissions[0] == 0               # recorded, not run
    assert submissions[0] == 1 and submissions.handed == 0 and b.launches == 102
    np.testing.assert_array_equal(y.numpy(), np.full(n, 150.0 ** 2))
    np.testing.assert_array_equal(x.numpy(), np.full(n, 150.0 ** 2 + 1.5))


def test_a_long_batch_hands_chunks_to_the_gpu_and_waits_once(device, submissions):
    n = 500
    x = runtime.array(np.full(n, 1.5, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    xs, ys = np.ones(n, np.float32), np.zeros(n, np.float32)  # numpy ones: staged once, written back at the end
    submissions[0] = 0
    with runtime.batch(device, flush_every=3) as b:
        for i in range(10):
            axpy.launch((8,), x, y, n, 1.0)      # each reads the previous one's result, across chunks too
            axpy.launch((8,), xs, ys, n, 1.0)
            if i == 1:                           # 4 dispatches: one chunk of 3 handed over, none waited for
                assert (submissions[0], submissions.handed) == (0, 1)
        square.launch((8,), y, n)
        assert submissions[0] == 0
    assert b.launches == 21 and submissions.handed == 7 and submissions[0] == 1
    np.testing.assert_array_equal(y.numpy(), np.full(n, 15.0 ** 2))
    np.testing.assert_array_equal(ys, np.full(n, 10.0))
    assert device.recording == 0
    with runtime.batch(device) as b:           # the default hands over every 64 dispatches
        for _ in range(130):
            axpy.launch((8,), x, y, n, 1.0)
    assert b.flush_every == 64 and submissions.handed == 9 and submissions[0] == 3  # (y.numpy() waited too)
    np.testing.assert_array_equal(y.numpy(), np.full(n, 15.0 ** 2 + 130 * 1.5))


def test_flush_every_must_be_a_positive_int_or_none(device):
    for bad in (0, -1, 2.0, "8", True):
        with pytest.raises(ValueError, match="flush_every must be a positive int or None, got"):
            runtime.batch(device, flush_every=bad)


def test_an_exception_after_a_chunk_was_handed_over_keeps_what_ran(device, submissions):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    submissions[0] = 0
    with pytest.raises(LaunchError, match="holds f32; got a float64 array"):
        with runtime.batch(device, flush_every=2):
            for _ in range(3):
                axpy.launch((1,), x, y, n, 1.0)  # the first two are handed over, the third is not
            axpy.launch((1,), x, np.zeros(n), n, 1.0)
    assert submissions.handed == 1 and submissions[0] == 0
    assert device.recording == 0
    np.testing.assert_array_equal(y.numpy(), np.full(n, 2.0))


def test_writes_inside_a_batch_are_recorded_in_order(device):
    n = 64
    x = runtime.zeros(n, np.float32, device=device)
    y = runtime.zeros(n, np.float32, device=device)
    with runtime.batch(device):
        x.write(np.ones(n, np.float32))
        axpy.launch((1,), x, y, n, 1.0)
        x.write(np.full(n, 10.0, np.float32))   # after the first launch has read x
        axpy.launch((1,), x, y, n, 1.0)
    np.testing.assert_array_equal(y.numpy(), np.full(n, 11.0))


def test_numpy_arrays_in_a_batch_are_uploaded_once_and_written_back_at_the_end(device, submissions):
    n = 64
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    with runtime.batch(device):
        for _ in range(5):
            axpy.launch((1,), x, y, n, 2.0, device=device)
        assert not y.any()                        # not yet: written back at submission
    assert submissions[0] == 1 and submissions.handed == 0
    np.testing.assert_array_equal(y, np.full(n, 10.0))


def test_submit_inside_the_block_runs_what_is_recorded(device):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    with runtime.batch(device) as b:
        axpy.launch((1,), x, y, n, 1.0)
        with pytest.raises(ArrayError, match="cannot read a device array whose memory work recorded in the open "
                                             "batch uses"):
            y.numpy()
        with pytest.raises(ArrayError, match="cannot free"):
            y.free()
        b.submit()
        assert y.numpy()[0] == 1.0
        axpy.launch((1,), x, y, n, 1.0)
    assert y.numpy()[0] == 2.0


def test_a_view_in_an_open_batch_keeps_its_base_and_other_views_pending(device):
    """A launch on a view noted only the view: its base could be read (the old contents) or freed inside the
    batch, and the batch then ran on memory given back to the pool (a process killed by SIGSEGV once the pool
    destroyed a large buffer). Reading or freeing the base, or reading another view, is now the ArrayError."""
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    with runtime.batch(device):
        axpy.launch((1,), x, y.view(np.uint32).view(np.float32), n, 1.0)
        for array in (y, y.view(np.int32)):
            with pytest.raises(ArrayError, match="cannot read a device array whose memory work recorded in the "
                                                 "open batch uses"):
                array.numpy()
        with pytest.raises(ArrayError, match="cannot free a device array whose memory"):
            y.free()
    np.testing.assert_array_equal(y.numpy(), np.ones(n))
    with runtime.batch(device):
        axpy.launch((1,), x.view(np.uint32).view(np.float32), y, n, 1.0)   # a view read, its base freed
        with pytest.raises(ArrayError, match="cannot free"):
            x.free()
    np.testing.assert_array_equal(y.numpy(), np.full(n, 2.0))


def test_an_exception_in_the_block_discards_the_batch(device, submissions):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    submissions[0] = 0
    with pytest.raises(LaunchError, match="holds f32; got a float64 array"):
        with runtime.batch(device):
            axpy.launch((1,), x, y, n, 1.0)
            axpy.launch((1,), x, np.zeros(n), n, 1.0)
    assert submissions[0] == 0 and not y.numpy().any()
    assert device.recording == 0
    axpy.launch((1,), x, y, n, 1.0)  # the device is usable afterwards
    assert y.numpy()[0] == 1.0


def test_batches_do_not_nest_and_bench_refuses_to_run_in_one(device):
    x = np.ones(64, np.float32)
    with runtime.batch(device):
        with pytest.raises(LaunchError, match="a batch is already open for .* batches do not nest"):
            with runtime.batch(device):
                pass
        with pytest.raises(LaunchError, match="bench times its own submission"):
            axpy.bench((1,), x, x.copy(), 64, 1.0, device=device)
    with pytest.raises(TypeError, match="batch\\(\\) takes a coopdsl.runtime.Device, got str"):
        runtime.batch("gpu0")


def test_launches_without_a_device_follow_the_open_batch(device, submissions):
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    with runtime.batch(device):
        axpy.launch((1,), x, y, 64, 3.0)  # numpy only, no device=: the open batch's device
    assert submissions[0] == 1 and y[0] == 3.0


def test_pipelines_descriptor_sets_buffers_and_command_buffers_are_reused(device, monkeypatch):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    square.launch((1,), y, n)
    square.launch((1,), y, n, OFFSET=1)
    axpy.launch((1,), x, y, n, 1.0)
    axpy.launch((1,), np.ones(n, np.float32), np.zeros(n, np.float32), n, 1.0, device=device)
    made = {"pipelines": 0, "sets": 0, "buffers": 0, "command buffers": 0}
    real_create, real_alloc = Program._create, descriptors.DescriptorCache._allocate
    real_buffer, real_cb = memory.Buffer.__init__, device.acquire_command_buffer

    def counted(key, real):
        def wrapper(*args, **kwargs):
            made[key] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(Program, "_create", counted("pipelines", real_create))
    monkeypatch.setattr(descriptors.DescriptorCache, "_allocate", counted("sets", real_alloc))
    monkeypatch.setattr(memory.Buffer, "__init__", counted("buffers", real_buffer))
    cbs = []
    monkeypatch.setattr(device, "acquire_command_buffer", lambda: cbs.append(real_cb()) or cbs[-1])
    for _ in range(20):
        square.launch((1,), y, n)
        square.launch((1,), y, n, OFFSET=1)
        axpy.launch((1,), x, y, n, 1.0)
        axpy.launch((1,), np.ones(n, np.float32), np.zeros(n, np.float32), n, 1.0, device=device)
    assert made == {"pipelines": 0, "sets": 0, "buffers": 0, "command buffers": 0}
    assert len(set(cbs)) == 3  # reused: the one recorded, and the ones the two kernels keep for their last
    #                            launches (coopdsl/runtime/graph.py; given back when the kernel's next launch differs)


def test_destroying_a_buffer_drops_its_descriptor_sets(device, monkeypatch):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    axpy.launch((1,), x, y, n, 1.0)
    uid = x.buffer().uid
    naming = len(device.descriptors._by_buffer[uid])
    before = len(device.descriptors)
    monkeypatch.setattr(device.pool, "limit", 0)  # a full pool destroys what it is given
    x.free()
    assert len(device.descriptors) == before - naming and uid not in device.descriptors._by_buffer
    axpy.launch((1,), runtime.array(np.ones(n, np.float32), device=device), y, n, 1.0)
    assert y.numpy()[0] == 2.0


def test_descriptor_cache_is_trimmed_to_its_limit(device, monkeypatch):
    monkeypatch.setattr(device.descriptors, "limit", 3)
    x = runtime.array(np.ones(64, np.float32), device=device)
    ys = [runtime.zeros(64, np.float32, device=device) for _ in range(6)]
    with runtime.batch(device):
        for y in ys:
            axpy.launch((1,), x, y, 64, 1.0)
        assert len(device.descriptors) >= 6  # never freed while a batch records
    assert len(device.descriptors) == 3
    for y in ys:  # evicted sets are re-made on demand
        axpy.launch((1,), x, y, 64, 1.0)
        assert y.numpy()[0] == 2.0


def test_buffer_pool_reuses_by_size_class_and_caps_idle_memory(device, monkeypatch):
    from coopdsl.runtime.memory import size_class

    assert [size_class(n) for n in (1, 256, 257, 4096, (1 << 20) + 1)] == [256, 256, 512, 4096, 2 << 20]
    pool = device.pool
    a = pool.take(1000, host_visible=False)
    pool.give(a)
    assert pool.take(700, host_visible=False) is a  # same size class
    monkeypatch.setattr(pool, "limit", 0)
    destroyed = []
    monkeypatch.setattr(a, "destroy", lambda: destroyed.append(a))
    pool.give(a)
    assert destroyed == [a]


def test_a_repeated_launch_reuses_its_binding_until_an_argument_changes(device):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    alpha = 1.0
    axpy.launch((1,), x, y, n, alpha)
    program = device.program(axpy.compile(), axpy.reflect())
    remembered = program.bound
    assert remembered is not None and [r() for r in remembered[2]] == [x, y]   # (held weakly)
    axpy.launch((1,), x, y, n, alpha)                 # the same objects: the remembered set and push bytes
    assert program.bound is remembered
    axpy.launch((1,), x, y, n, 2.0)                   # another push value is bound afresh
    np.testing.assert_array_equal(y.numpy(), np.full(n, 4.0))
    with pytest.raises(LaunchError, match="push constant 'n' \\(u32\\) cannot be 64.0"):
        axpy.launch((1,), x, y, float(n), 2.0)        # equal to n, but a float: still checked
    z = runtime.array(np.full(n, 3.0, np.float32), device=device)
    axpy.launch((1,), z, y, n, 2.0)                   # another array
    np.testing.assert_array_equal(y.numpy(), np.full(n, 10.0))
    axpy.launch((1,), x, y, n, alpha)
    x.free()
    with pytest.raises(ArrayError, match="buffer 'x': the device array \\(64,\\) float32 was freed"):
        axpy.launch((1,), x, y, n, alpha)             # freed after it was remembered
    with runtime.batch(device):
        axpy.launch((1,), z, y, n, 2.0)
        axpy.launch((1,), z, y, n, 2.0)               # remembered, and still noted as used by the batch
        with pytest.raises(ArrayError, match="cannot read a device array whose memory work recorded"):
            z.numpy()
    np.testing.assert_array_equal(y.numpy(), np.full(n, 23.0))  # 10 + 1 + 2 * 6


def test_a_freed_descriptor_set_is_never_reused_from_a_remembered_binding(device, monkeypatch):
    n = 64
    monkeypatch.setattr(device.descriptors, "limit", 1)
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    axpy.launch((1,), x, y, n, 1.0)
    program = device.program(axpy.compile(), axpy.reflect())
    old_set = program.bound[3][0]
    others = [runtime.zeros(n, np.float32, device=device) for _ in range(3)]
    for o in others:                                   # other sets push the remembered one out of the cache
        square.launch((1,), o, n)
    assert old_set not in device.descriptors._sets.values()
    axpy.launch((1,), x, y, n, 1.0)
    assert program.bound[3][0] is not old_set
    np.testing.assert_array_equal(y.numpy(), np.full(n, 2.0))


def test_a_launch_repeated_in_a_batch_with_the_same_objects_is_replayed(device, monkeypatch):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    calls = []
    real = runtime.launch

    def counting(*args, **kw):
        calls.append(args[2])
        return real(*args, **kw)

    monkeypatch.setattr(runtime, "launch", counting)
    device.program(axpy.compile(), axpy.reflect())       # an equal reflection, another object: still replayed
    with runtime.batch(device, flush_every=4) as b:
        for _ in range(10):
            axpy.launch((1,), x, y, n, 1.0)              # bound once, then replayed
        assert len(calls) == 1
        axpy.launch((2, 1, 1), x, y, n, 1.0)             # another grid: replayed with it
        axpy.launch((1,), x, y, n, 2.0)                  # another number: bound afresh
        axpy.launch((1,), y, x, n, 1.0)                  # other arrays: bound afresh
        axpy.launch((1,), x, y, n, 1.0, device=device)   # another device argument: bound afresh
        assert len(calls) == 4 and b.launches == 14
    np.testing.assert_array_equal(x.numpy(), np.full(n, 14.0))   # 1 + (10 + 1 + 2)
    np.testing.assert_array_equal(y.numpy(), np.full(n, 27.0))   # 13 + 14
    with runtime.batch(device):                          # a new batch: replayed into it, not into the old one
        axpy.launch((1,), x, y, n, 1.0, device=device)
    assert len(calls) == 4
    np.testing.assert_array_equal(y.numpy(), np.full(n, 41.0))
    with runtime.batch(device) as b:
        axpy.launch((1,), x, y, n, 1.0, device=device)
        b.submit()                                       # the same batch stays open
        x.free()
        with pytest.raises(ArrayError, match="buffer 'x': the device array \\(64,\\) float32 was freed"):
            axpy.launch((1,), x, y, n, 1.0, device=device)
        assert len(calls) == 5                           # the freed array sent it down the checked path


def _counted_launches(monkeypatch) -> list:
    """The grids of the launches that reach runtime.launch (bound, not replayed), from now on."""
    calls: list = []
    real = runtime.launch
    monkeypatch.setattr(runtime, "launch", lambda *a, **kw: calls.append(a[2]) or real(*a, **kw))
    return calls


def _steps_in_two_batches(device, layers, launch) -> None:
    """``launch(x, y)`` for every layer, three steps a batch, two batches."""
    for _ in range(2):
        with runtime.batch(device):
            for _ in range(3):
                for x, y in layers:
                    launch(x, y)


def test_launches_on_several_sets_of_arrays_in_turn_are_each_replayed(device, monkeypatch):
    """A loop over a model's layers launches one kernel on each layer's arrays in turn: each launch is recorded
    again from its own binding (the kernel remembers its last HOT_LAUNCHES launches), in this batch and the next,
    and the memo keeps none of the arrays alive."""
    import gc
    import importlib
    import weakref

    kernel_module = importlib.import_module("coopdsl.kernel")   # (coopdsl.kernel is also the decorator's name)
    n = 64
    layers = [(runtime.array(np.full(n, float(i + 1), np.float32), device=device),
               runtime.zeros(n, np.float32, device=device)) for i in range(5)]
    calls = _counted_launches(monkeypatch)
    _steps_in_two_batches(device, layers, lambda x, y: axpy.launch((1,), x, y, n, 1.0))
    assert len(calls) == len(layers)                      # each layer bound once, then replayed
    for i, (_, y) in enumerate(layers):
        np.testing.assert_array_equal(y.numpy(), np.full(n, 6.0 * (i + 1)))
    # the least recently used goes first: more layers than the memo holds are bound every time
    monkeypatch.setattr(kernel_module, "HOT_LAUNCHES", 3)
    others = [(runtime.zeros(n, np.float32, device=device), runtime.zeros(n, np.float32, device=device))
              for _ in range(4)]
    calls.clear()
    with runtime.batch(device):
        for _ in range(2):
            for x, y in others:
                axpy.launch((1,), x, y, n, 1.0)
    assert len(calls) == 2 * len(others)
    # the memo holds the arrays weakly
    x, y = layers.pop()
    refs = weakref.ref(x), weakref.ref(y)
    del x, y
    gc.collect()
    assert refs[0]() is None and refs[1]() is None


def test_a_launch_on_views_made_anew_each_time_is_replayed(device, monkeypatch):
    """The ops pass views of their arrays (``Array.view``), which are made anew once the last one is collected: a
    remembered launch knows a view by its base array, dtype and shape, and keeps neither alive."""
    import gc
    import weakref

    n = 64
    layers = [(runtime.array(np.full(n, float(i + 1), np.float32), device=device),
               runtime.zeros(n, np.uint32, device=device)) for i in range(3)]
    calls = _counted_launches(monkeypatch)

    def launch(x, y):
        axpy.launch((1,), x, y.view(np.float32), n, 1.0)   # a new view object each time
        gc.collect()
    _steps_in_two_batches(device, layers, launch)
    assert len(calls) == len(layers)
    for i, (_, y) in enumerate(layers):
        np.testing.assert_array_equal(y.view(np.float32).numpy(), np.full(n, 6.0 * (i + 1)))
    x, y = layers.pop(0)
    refs = weakref.ref(x), weakref.ref(y)
    del x, y
    gc.collect()
    assert refs[0]() is None and refs[1]() is None


def test_a_loop_of_replays_does_not_keep_the_arrays_of_an_earlier_launch(device):
    """The program's binding memo holds its arrays weakly: replays do not update it, so a loop that only replays
    one launch must not keep another launch's arrays (and their memory) alive."""
    import gc
    import weakref

    n = 64
    a, b = runtime.zeros(n, np.float32, device=device), runtime.zeros(n, np.float32, device=device)
    c, d = runtime.zeros(n, np.float32, device=device), runtime.zeros(n, np.float32, device=device)
    with runtime.batch(device):
        axpy.launch((1,), a, b, n, 1.0)
        axpy.launch((1,), c, d, n, 1.0)       # bound: the program's memo is this launch's
        axpy.launch((1,), a, b, n, 1.0)       # replayed
    refs = weakref.ref(c), weakref.ref(d)
    del c, d
    gc.collect()
    assert refs[0]() is None and refs[1]() is None


def test_a_replayed_launch_still_follows_coopdsl_device(device, monkeypatch):
    n = 64
    x = runtime.array(np.ones(n, np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)
    sent = []
    from coopdsl import interp

    monkeypatch.setattr(interp, "launch", lambda kernel, grid, *a: sent.append(grid))
    with runtime.batch(device):
        axpy.launch((1,), x, y, n, 1.0)
        axpy.launch((1,), x, y, n, 1.0)
        monkeypatch.setenv("COOPDSL_DEVICE", "cpu")
        axpy.launch((1,), x, y, n, 1.0)                  # to the interpreter, not replayed on the GPU
    assert sent == [(1, 1, 1)]
    monkeypatch.delenv("COOPDSL_DEVICE")
    np.testing.assert_array_equal(y.numpy(), np.full(n, 2.0))
