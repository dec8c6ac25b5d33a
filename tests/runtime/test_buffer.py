"""Host access to ``runtime.Buffer``: mapped buffers read and write, device-local ones refuse with a message
(they used to hand ctypes a null pointer)."""

import pytest

from coopdsl.runtime import DeviceFeatureError, vk


def test_host_visible_buffer_round_trip(device):
    buf = device.buffer(16, vk.BUFFER_USAGE_STORAGE_BUFFER, host_visible=True)
    try:
        buf.write(b"coopdsl!")
        assert buf.read(8) == b"coopdsl!"
    finally:
        buf.destroy()


def test_device_local_buffer_refuses_host_access(device):
    buf = device.buffer(16, vk.BUFFER_USAGE_STORAGE_BUFFER, host_visible=False)
    try:
        with pytest.raises(ValueError, match="the buffer is not host-visible: create it with host_visible=True"):
            buf.write(b"1234")
        with pytest.raises(ValueError, match="not host-visible"):
            buf.read(4)
    finally:
        buf.destroy()


def test_device_feature_error_without_matrix_mismatches():
    err = DeviceFeatureError("missing feature shaderInt8")
    assert str(err) == "missing feature shaderInt8"
    assert err.mismatches == [] and err.loc is None


def test_address_ranges_hold_live_arrays_only_and_forget_the_dead():
    """``Device.addresses`` (the ranges a pointer number may point into): an address inside a live array's bytes
    is held, past its end or after it was freed (its buffer given to another array) not; past PRUNE_FROM entries
    the dead ones go, so that a long run does not keep every buffer it ever handed out."""
    from coopdsl.runtime.memory import AddressRanges

    class Fake:      # what the ranges read of an Array: its buffer (None once freed)
        def __init__(self, buffer):
            self._buffer = buffer

    ranges = AddressRanges()
    buf = object()
    live = Fake(buf)
    ranges.add(1000, 64, live, buf)
    assert ranges.holds(1000) and ranges.holds(1063) and not ranges.holds(1064) and not ranges.holds(999)
    live._buffer = object()                      # freed, its buffer now another array's
    assert not ranges.holds(1000)
    keep = [Fake(object()) for _ in range(10)]
    for i, a in enumerate(keep):
        ranges.add(10_000 + 100 * i, 8, a, a._buffer)
    for i in range(AddressRanges.PRUNE_FROM * 3):   # arrays that die at once
        a = Fake(object())
        ranges.add(1_000_000 + 100 * i, 8, a, a._buffer)
        del a
    assert len(ranges) <= AddressRanges.PRUNE_FROM + 1
    assert all(ranges.holds(10_000 + 100 * i + 7) for i in range(10))
    assert not ranges.holds(1_000_000)
