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
