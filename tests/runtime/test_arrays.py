"""Resident device arrays: creation, read-back, launches that bind them directly, and every bad use."""

import array as pyarray

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import f16, f32, runtime, u32
from coopdsl.runtime import ArrayError, LaunchError

pytestmark = pytest.mark.vulkan


@cd.kernel(workgroup_size=(64, 1, 1))
def axpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i]


@cd.struct
class Params:
    scale: f32
    shift: f32


@cd.kernel(workgroup_size=(64, 1, 1))
def affine(x: cd.Buffer[f32], p: cd.Uniform[Params], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        x[i] = x[i] * p.scale + p.shift


def test_array_round_trip_and_properties(device):
    data = np.arange(12, dtype=np.float16).reshape(3, 4)
    a = runtime.array(data, device=device)
    assert (a.shape, a.dtype, a.nbytes, a.size, a.device) == ((3, 4), np.float16, 24, 12, device)
    np.testing.assert_array_equal(a.numpy(), data)
    np.testing.assert_array_equal(np.asarray(a), data)  # __array__
    assert "shape=(3, 4) dtype=float16" in repr(a)
    a.write(data * 2)
    np.testing.assert_array_equal(a.numpy(), data * 2)


def test_a_0_d_array_keeps_its_shape(device):
    """np.ascontiguousarray made a numpy scalar (0-d) a device array of shape (1,); numpy's shape is ()."""
    a = runtime.array(np.float32(3), device=device)
    assert a.shape == () and a.numpy().shape == () and a.numpy() == 3
    a.write(np.array(5, np.float32))
    assert a.numpy() == 5
    b = runtime.array(np.arange(6, dtype=np.int32).reshape(2, 3).T, device=device)   # Fortran order: copied
    assert b.shape == (3, 2) and b.numpy().tolist() == [[0, 3], [1, 4], [2, 5]]


def test_arrays_from_the_buffer_protocol_and_array_interface(device):
    a = runtime.array(pyarray.array("f", [1.0, 2.0, 3.0]), device=device)
    assert a.dtype == np.float32 and a.numpy().tolist() == [1.0, 2.0, 3.0]
    b = runtime.array(bytearray(b"\x01\x02\x03\x04"), device=device)
    assert b.dtype == np.uint8 and b.numpy().tolist() == [1, 2, 3, 4]

    class Tensorish:  # e.g. a CPU tensor of another library
        def __array__(self, dtype=None, copy=None):
            return np.full((2, 2), 7, np.int32)

    assert runtime.array(Tensorish(), device=device).numpy().tolist() == [[7, 7], [7, 7]]
    with pytest.raises(ArrayError, match="neither the buffer protocol nor __array__.*np.array"):
        runtime.array([1, 2, 3], device=device)


def test_empty_and_zeros_take_numpy_or_coopdsl_dtypes(device):
    z = runtime.zeros((4, 8), cd.f16, device=device)
    assert z.dtype == np.float16 and not z.numpy().any()
    assert runtime.empty(5, "bf16", device=device).dtype == np.uint16  # bf16 travels as bit patterns
    assert runtime.empty([2, 3], np.int8, device=device).shape == (2, 3)
    with pytest.raises(ArrayError, match="not a dtype"):
        runtime.empty(4, "float13", device=device)
    with pytest.raises(ArrayError, match="shape must be non-negative ints"):
        runtime.empty((2, -1), np.float32, device=device)


def test_launch_binds_resident_arrays_without_copies(device, monkeypatch):
    n = 1000
    x = runtime.array(np.arange(n, dtype=np.float32), device=device)
    y = runtime.zeros(n, np.float32, device=device)

    def no_copies(*args, **kwargs):
        raise AssertionError("a resident-array launch copied data")

    monkeypatch.setattr(runtime.Batch, "upload", no_copies)
    monkeypatch.setattr(runtime.Batch, "download", no_copies)
    for _ in range(3):
        axpy.launch(((n + 63) // 64,), x, y, n, 2.0)  # the device comes from the arrays
    monkeypatch.undo()
    np.testing.assert_array_equal(y.numpy(), 6 * np.arange(n, dtype=np.float32))


def test_resident_arrays_mix_with_numpy_arrays_and_uniform_dicts(device):
    n = 256
    x = runtime.array(np.arange(n, dtype=np.float32), device=device)
    affine.launch((4,), x, {"scale": 2.0, "shift": 1.0}, n)
    y = np.zeros(n, np.float32)
    axpy.launch((4,), x, y, n, 1.0)  # resident input, numpy output
    np.testing.assert_array_equal(y, 2 * np.arange(n) + 1)


def test_wrong_dtype_is_an_array_error_before_dispatch(device):
    x = runtime.array(np.ones(64, np.float16), device=device)
    y = runtime.zeros(64, np.float32, device=device)
    with pytest.raises(ArrayError, match=r"buffer 'x' holds f32; got a float16 array \(pass float32\)"):
        axpy.launch((1,), x, y, 64, 1.0)
    assert not y.numpy().any()


def test_too_small_arrays_are_array_errors(device):
    x = runtime.zeros(64, np.float32, device=device)
    small = runtime.zeros(1, np.float32, device=device)  # 4 bytes for an 8-byte uniform block
    want = "uniform block 'p' needs a dict of its members or an array of at least 8 bytes; 4 bytes given"
    with pytest.raises(ArrayError, match=want):
        affine.launch((1,), x, small, 64)
    with pytest.raises(LaunchError, match=want):
        affine.launch((1,), x, np.zeros(1, np.float32), 64, device=device)  # numpy too


def test_freed_array_is_an_array_error(device):
    x = runtime.zeros(64, np.float32, device=device)
    y = runtime.zeros(64, np.float32, device=device)
    x.free()
    assert x.freed and "freed" in repr(x)
    with pytest.raises(ArrayError, match=r"buffer 'x': the device array \(64,\) float32 was freed"):
        axpy.launch((1,), x, y, 64, 1.0)
    with pytest.raises(ArrayError, match="was freed"):
        x.numpy()
    x.free()  # freeing twice is harmless


def test_array_from_another_device_is_an_array_error(device):
    other = runtime.Device(device.index)
    x = runtime.zeros(64, np.float32, device=other)
    y = runtime.zeros(64, np.float32, device=device)
    with pytest.raises(ArrayError, match=r"buffer 'x': the array lives on .* a different Device object than the "
                                         r"launch's .* \(two coopdsl.runtime.Device objects opened on the same GPU: "
                                         r"make the arrays and launches with one of them"):
        axpy.launch((1,), x, y, 64, 1.0, device=device)
    with pytest.raises(ArrayError, match="buffer 'y': .* different Device object"):
        axpy.launch((1,), x, y, 64, 1.0)  # the launch follows the first array, x: now y is the stranger


def test_write_checks_shape_and_dtype(device):
    a = runtime.zeros((2, 2), np.float32, device=device)
    with pytest.raises(ArrayError, match="cannot write a float64 array of shape \\(2, 2\\) into a device array "
                                         "of float32 and shape \\(2, 2\\)"):
        a.write(np.zeros((2, 2)))
    with pytest.raises(ArrayError, match="cannot write an int64 array of shape"):
        a.write(np.zeros((2, 2), np.int64))
    with pytest.raises(ArrayError, match=r"cannot write into a device array from list: it has neither the buffer "
                                         r"protocol nor __array__ \(for a list, use np.array"):
        a.write([[1.0, 2.0], [3.0, 4.0]])


def test_read_only_numpy_output_fails_before_dispatch(device):
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float32)
    y.flags.writeable = False
    with pytest.raises(LaunchError, match="buffer 'y' is written by the kernel, but the numpy array given for it "
                                          "is read-only"):
        axpy.launch((1,), x, y, 64, 1.0, device=device)
    x.flags.writeable = False  # a read-only *input* is fine
    z = np.zeros(64, np.float32)
    axpy.launch((1,), x, z, 64, 1.0, device=device)
    assert z.sum() == 64


@cd.kernel(workgroup_size=(64, 1, 1))
def halves(src: cd.Buffer[f16], dst: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        dst[i] = f32(src[i]) * 2.0


def test_arrays_work_with_ptr_members(device):
    if not device.has_device_address:
        pytest.skip("no bufferDeviceAddress")
    from tests.runtime.test_lavapipe import through_pointers

    n = 128
    src = runtime.array(np.arange(n, dtype=np.float32), device=device)
    out = runtime.zeros(n, np.float32, device=device)
    through_pointers.launch((2,), out, {"factor": 0.0, "offset": 0.0, "src": src},
                            {"factor": 3.0, "offset": 0.0, "src": src}, n)
    np.testing.assert_array_equal(out.numpy(), 3 * np.arange(n))
    assert src.address == src.address != out.address


def test_half_arrays_launch(device):
    n = 100
    src = runtime.array(np.linspace(-1, 1, n).astype(np.float16), device=device)
    dst = runtime.empty(n, np.float32, device=device)
    halves.launch((2,), src, dst, n)
    np.testing.assert_array_equal(dst.numpy(), 2 * src.numpy().astype(np.float32))


def test_empty_arrays_launch(device):
    y = np.zeros(0, np.float32)
    axpy.launch((1,), np.zeros(0, np.float32), y, 0, 1.0, device=device)
    e = runtime.empty(0, np.float32, device=device)
    axpy.launch((1,), e, e, 0, 1.0)
    assert e.numpy().shape == (0,)


def test_device_arrays_hold_numbers_on_a_device(device):
    # (an object array was uploaded as pointers; device="gpu0" failed with "'str' object has no attribute 'pool'")
    from coopdsl import runtime

    with pytest.raises(runtime.ArrayError, match=r"a device array holds numbers: numpy bool, int, uint or float "
                                                 r"dtypes .*, got object"):
        runtime.array(np.zeros(3, object), device=device)
    with pytest.raises(runtime.ArrayError, match=r"device must be a coopdsl.runtime.Device \(or None for the default "
                                                 r"one\), got str 'gpu0'"):
        runtime.array(np.zeros(4, np.float32), device="gpu0")


def test_a_view_reinterprets_the_memory_in_place(device):
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    a = runtime.array(data, device=device)
    bits = a.view(np.uint32)
    assert (bits.shape, bits.dtype, bits.nbytes) == ((2, 4), np.uint32, 32)
    np.testing.assert_array_equal(bits.numpy(), data.view(np.uint32))
    halves = a.view(np.uint16)
    assert halves.shape == (2, 8)
    y = runtime.zeros(8, np.float32, device=device)
    axpy.launch((1,), a.view(np.float32).view(np.float32), y, 8, 2.0)   # a view binds like its base
    np.testing.assert_array_equal(y.numpy(), 2 * data.reshape(-1))
    bits.write(np.full((2, 4), 0x3F800000, np.uint32))                  # writes land in the base's memory
    np.testing.assert_array_equal(a.numpy(), np.ones((2, 4), np.float32))


def test_a_view_cannot_be_freed_and_dies_with_its_base(device):
    a = runtime.array(np.zeros(6, np.uint8), device=device)
    with pytest.raises(ArrayError, match="not a multiple of 4"):
        a.view(np.uint32)
    v = a.view(np.uint16)
    with pytest.raises(ArrayError, match="free the base array instead"):
        v.free()
    a.free()
    with pytest.raises(ArrayError, match="was freed"):
        v.numpy()


def test_the_same_view_comes_back_and_does_not_keep_its_base_from_being_freed(device):
    import gc
    import weakref

    a = runtime.array(np.zeros(8, np.float32), device=device)
    v = a.view(np.uint32)
    assert a.view(np.uint32) is v and a.view("uint32") is v and a.view(np.dtype(np.uint32)) is v
    assert a.view(np.uint16) is not v
    gone = weakref.ref(a)
    del a, v
    assert gone() is None  # no cycle between a base and its views: freed by reference counting
    gc.collect()


def test_a_uniform_block_array_is_checked_alike_on_the_gpu_path_and_the_interpreter(device):
    # the GPU path refused 100 bytes for an 8-byte block ('has 8-byte elements') that the interpreter took, and the
    # two worded a short array differently (found by a host integrator working from the docs alone): one rule,
    # coopdsl/_packing.uniform_block_problem
    x = np.zeros(64, np.float32)
    for dev in (device, "cpu"):
        with pytest.raises(LaunchError, match="uniform block 'p' needs a dict of its members or an array of at least "
                                              "8 bytes; 4 bytes given"):
            affine.launch((1,), x, np.zeros(1, np.float32), 64, device=dev)
        affine.launch((1,), x, np.zeros(25, np.uint32), 64, device=dev)


def test_sizes_dtypes_and_repeats_past_what_a_device_takes_are_errors_not_crashes(device):
    # each of these crashed the process or reached numpy/Vulkan (found by a check written from the docs alone):
    # a size past 64 bits wrapped to a small buffer (SIGSEGV), an object view handed numpy raw device bytes as
    # objects (SIGSEGV), a bench of 10**9 repeats asked the driver for a query pool it could not make (abort)
    for shape in [(2 ** 64,), (2 ** 32, 2 ** 32), (2 ** 62,)]:
        with pytest.raises(ArrayError, match="more than the device's largest memory heap"):
            runtime.empty(shape, np.uint8, device=device)
    for shape in (3.0, None):
        with pytest.raises(ArrayError, match="shape must be non-negative ints"):
            runtime.zeros(shape, np.float32, device=device)
    a = runtime.array(np.arange(8, dtype=np.float32), device=device)
    for dtype in (object, np.complex64, np.dtype([("a", np.float32)])):
        with pytest.raises(ArrayError, match="a device array holds numbers"):
            a.view(dtype)
    assert a.view(np.uint32).numpy()[1] == 0x3F800000
    y = runtime.zeros(8, np.float32, device=device)
    for repeat, warmup in [(10 ** 9, 0), (2 ** 31, 0), (10, 10 ** 7)]:
        with pytest.raises(LaunchError, match="repeat must be from 1 to 1,000,000 and warmup from 0 to 1,000,000"):
            axpy.bench((1,), a, y, 8, 1.0, repeat=repeat, warmup=warmup)


def test_a_number_for_a_pointer_must_address_a_live_array(device):
    """An int given for a ``Ptr`` member is passed to the kernel as it is; one outside every live buffer of the
    device (a made-up number, a freed array's address) would fault the GPU, so the launch refuses it. An
    address inside an array (its ``.address`` plus an offset) and 0 (the null pointer) are taken."""
    if not device.has_device_address:
        pytest.skip("no bufferDeviceAddress")
    from tests.runtime.test_lavapipe import through_pointers

    n = 64
    src = runtime.array(np.arange(2 * n, dtype=np.float32), device=device)
    out = runtime.zeros(n, np.float32, device=device)
    half = src.address + 4 * n                     # the second half of src
    through_pointers.launch((1,), out, {"factor": 0.0, "offset": 0.0, "src": src},
                            {"factor": 1.0, "offset": 0.0, "src": half}, n)
    np.testing.assert_array_equal(out.numpy(), np.arange(n, 2 * n))
    for bad in (0x1234_5678_0000, src.address + src.nbytes + (1 << 30)):
        with pytest.raises(runtime.LaunchError, match=rf"pointer 'p.src': {bad:#x} is not an address inside a live "
                                                      r"array of .*; pass the array itself"):
            through_pointers.launch((1,), out, {"factor": 0.0, "offset": 0.0, "src": src},
                                    {"factor": 1.0, "offset": 0.0, "src": bad}, n)
    # past the array's end (within the pool's larger buffer), a 0-size array, a freed array (its buffer back in
    # the pool, and taken by the next array: the kernel wrote into that one)
    for bad in (src.address + src.nbytes, runtime.zeros(0, np.float32, device=device).address):
        with pytest.raises(runtime.LaunchError, match=r"pointer 'p.src': 0x[0-9a-f]+ is not an address inside"):
            through_pointers.launch((1,), out, {"factor": 0.0, "offset": 0.0, "src": src},
                                    {"factor": 1.0, "offset": 0.0, "src": bad}, n)
    gone = runtime.array(np.zeros(n, np.float32), device=device)
    at = gone.address
    gone.free()
    victim = runtime.array(np.full(n, 7.0, np.float32), device=device)
    with pytest.raises(runtime.LaunchError, match=rf"pointer 'p.src': {at:#x} is not an address inside a live"):
        through_pointers.launch((1,), out, {"factor": 0.0, "offset": 0.0, "src": src},
                                {"factor": 1.0, "offset": 0.0, "src": at}, n)
    assert (victim.numpy() == 7.0).all()


def test_a_launch_with_a_number_for_a_pointer_is_not_replayed_after_its_array_goes(device):
    """An immediate launch with the same arguments replays its kept command buffer without checks; one that
    was given a number for a pointer is never kept, so the number is checked again (here: its array freed)."""
    if not device.has_device_address:
        pytest.skip("no bufferDeviceAddress")
    from tests.runtime.test_lavapipe import through_pointers

    n = 64
    other = runtime.array(np.ones(n, np.float32), device=device)
    out = runtime.zeros(n, np.float32, device=device)
    gone = runtime.array(np.arange(n, dtype=np.float32), device=device)
    cfg, p = {"factor": 0.0, "offset": 0.0, "src": other}, {"factor": 1.0, "offset": 0.0, "src": gone.address}
    for _ in range(2):
        through_pointers.launch((1,), out, cfg, p, n)
        np.testing.assert_array_equal(out.numpy(), np.arange(n))
    gone.free()
    with pytest.raises(runtime.LaunchError, match=r"pointer 'p.src': 0x[0-9a-f]+ is not an address inside a live"):
        through_pointers.launch((1,), out, cfg, p, n)


@cd.kernel(workgroup_size=(64, 1, 1))
def _increment(y: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = y[i] + 1.0


def test_two_threads_with_their_own_devices_share_a_kernel():
    """A kernel's kept command buffer (its launch memo) was shared by all threads: one thread released the
    command buffer another was submitting (segfaults, a KeyError from inside coopdsl). Each thread now has its
    own memo (found by a check written from the docs alone)."""
    import sys
    import threading
    import traceback

    n, steps = 64, 1000
    devices = [runtime.Device(), runtime.Device()]
    for dev in devices:   # (first launches, the compile and each device's pipeline, here: the threads test the memo)
        _increment.launch((1,), runtime.zeros(n, np.float32, device=dev), n)
    results, errors = {}, []

    def work(k):
        try:
            y = runtime.zeros(n, np.float32, device=devices[k])
            z = runtime.zeros(n, np.float32, device=devices[k])
            for _ in range(steps):
                _increment.launch((1,), y, n)   # kept
                _increment.launch((1,), y, n)   # its kept command buffer again
                _increment.launch((1,), z, n)   # another: this thread's kept one is released
            results[k] = (float(y.numpy()[0]), float(z.numpy()[0]))
        except Exception:   # (reported below, with where: a thread's exception would not fail the test)
            errors.append(traceback.format_exc())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    assert results == {0: (2.0 * steps, steps), 1: (2.0 * steps, steps)}


def test_numpy_asked_not_to_copy_is_told_it_must(device):
    """``np.array(a, copy=False)`` returned a copy that writes never reached (numpy 2's protocol asks for a
    ValueError when a copy cannot be avoided)."""
    a = runtime.array(np.arange(4, dtype=np.float32), device=device)
    with pytest.raises(ValueError, match=r"numpy can only copy them .*copy=False is not possible"):
        np.array(a, copy=False)
    assert np.array(a).tolist() == np.asarray(a).tolist() == [0.0, 1.0, 2.0, 3.0]


@cd.kernel(workgroup_size=(1, 1, 1))
def copy_vec4(out: cd.Buffer[cd.vec4[f32]], src: cd.Buffer[cd.vec4[f32]]):
    out[0] = src[0]


def test_resident_arrays_follow_the_dtype_rules_of_float_vectors_and_uniform_blocks(device):
    """The fast path for resident arrays checked only sizes for vector buffers and uniform blocks: float64 went
    through as bytes. Now each is the numpy path's rule (coopdsl/_packing.py); the dtypes it takes still run,
    on every launch (the fast path's dtype, and the others through the full check)."""
    out = runtime.zeros(4, np.float32, device=device)
    with pytest.raises(ArrayError, match=r"buffer 'src' holds vec4\[f32\]; got a float64 array"):
        copy_vec4.launch((1,), out, runtime.array(np.arange(4.0), device=device), device=device)
    src = runtime.array(np.arange(4, dtype=np.float32), device=device)
    for _ in range(2):
        copy_vec4.launch((1,), out, src, device=device)
    assert out.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    x = runtime.array(np.ones(64, np.float32), device=device)
    with pytest.raises(ArrayError, match=r"uniform block 'p' takes a dict of its members or its raw bytes \(a uint8 "
                                         r"array, or items of at most its widest member's 4 bytes\); got a float64"):
        affine.launch((1,), x, runtime.array(np.array([2.0, 1.0]), device=device), 64, device=device)
    for p in (np.array([2.0, 1.0], np.float32), np.array([2.0, 1.0], np.float32).view(np.uint8)):
        affine.launch((1,), x, runtime.array(p, device=device), 64, device=device)
    assert (x.numpy() == 7.0).all()     # (1 * 2 + 1, then 3 * 2 + 1)
