"""The interpreter reports what the specs leave undefined instead of running it silently (issue 24, class 3):
a tensor load's or store's Pointer that is not a multiple of 16 bytes (SPV_NV_cooperative_matrix2: an error
when it is not even aligned to what it reads, a warning otherwise, which NVIDIA's implementation accepts and
ggml's flash attention relies on), and a runtime QCOM slice start that is not a multiple of the K of the
matrix it becomes (SPV_QCOM_cooperative_matrix_conversion)."""

import warnings

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i32, u8, u32
from coopdsl.interp import InterpreterError
from coopdsl.interp.ops.tensor import TensorPointerWarning

from ..conftest import marker_line


@cd.kernel(workgroup_size=(32, 1, 1))
def f16_tensor(src: cd.Buffer[f16], dst: cd.Buffer[f32], at: u32):
    L = cd.tensor_layout(2).dimension(16, 16)
    m = Acc[f16, 16, 16].load_tensor(src, at, L)  # E:f16
    Acc[f32, 16, 16](m).store(dst, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def byte_tensor(src: cd.Buffer[u8], dst: cd.Buffer[f32], at: u32):
    L = cd.tensor_layout(2).dimension(16, 16)
    m = Acc[f16, 16, 16].load_tensor(src, at, L)  # E:bytes
    Acc[f32, 16, 16](m).store(dst, 0, stride=16)


@cd.kernel(workgroup_size=(32, 1, 1))
def byte_store(dst: cd.Buffer[u8], at: u32):
    Acc[f32, 16, 16](1.0).store_tensor(dst, at, cd.tensor_layout(2).dimension(16, 16))  # E:store


def _src(n=16 * 16 + 16):
    return np.arange(n, dtype=np.float16)


def test_an_aligned_runtime_tensor_start_runs_silently():
    dst = np.zeros((16, 16), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f16_tensor.launch((1,), _src(), dst, 8, device="cpu")  # 8 f16: 16 bytes
    np.testing.assert_array_equal(dst, _src()[8:8 + 256].reshape(16, 16))


def test_a_tensor_pointer_short_of_16_bytes_is_a_warning_naming_the_value_and_the_rule():
    dst = np.zeros((16, 16), np.float32)
    rule = r"SPV_NV_cooperative_matrix2 requires the Pointer of a tensor load or store to be a multiple of 16B"
    with pytest.warns(TensorPointerWarning, match=r"tensor load: its Pointer, at device address 0x[0-9a-f]*6, is "
                                                  r"not a multiple of 16 bytes; " + rule) as w:
        f16_tensor.launch((1,), _src(), dst, 3, device="cpu")  # 3 f16: 6 bytes (the reproducer)
    assert w[0].lineno == marker_line("# E:f16")
    np.testing.assert_array_equal(dst, _src()[3:3 + 256].reshape(16, 16))  # read as NVIDIA's implementation does


def test_a_tensor_pointer_not_aligned_to_its_components_is_an_error():
    src = np.zeros(2 * 256 + 16, np.uint8)
    with pytest.raises(InterpreterError, match=r"tensor load: its Pointer, at device address 0x[0-9a-f]*3, is not "
                                               r"a multiple of 16 bytes, nor even of the 2 bytes of a f16 component; "
                                               r"SPV_NV_cooperative_matrix2 requires") as e:
        byte_tensor.launch((1,), src, np.zeros(256, np.float32), 3, device="cpu")
    assert e.value.loc.line == marker_line("# E:bytes")
    with pytest.raises(InterpreterError, match=r"tensor store: its Pointer, at device address 0x[0-9a-f]*2, is not "
                                               r"a multiple of 16 bytes, nor even of the 4 bytes of a f32") as e:
        byte_store.launch((1,), np.zeros(4 * 256 + 16, np.uint8), 2, device="cpu")
    assert e.value.loc.line == marker_line("# E:store")


@cd.kernel(workgroup_size=(32, 1, 1))
def sliced_rows(src: cd.Buffer[f16], out: cd.Buffer[f16], at: i32):
    lane = cd.subgroup_invocation_id
    row = cd.array(f16, 32)
    for i in cd.static_range(32):
        row[i] = src[lane * 32 + i]
    MatA[f16, 16, 16].from_rows(cd.sub_array(row, at, 16)).store(out, 0, stride=16)  # E:krow


@cd.kernel(workgroup_size=(32, 1, 1))
def sliced_words(src: cd.Buffer[u32], out: cd.Buffer[f16], at: i32):
    lane = cd.subgroup_invocation_id
    words = cd.array(u32, 16)
    for i in cd.static_range(16):
        words[i] = src[lane * 16 + i]
    half = cd.bitcast_array(cd.sub_array(words, at, 8), f16)  # 8 words: 16 f16 components
    MatB[f16, 16, 32].from_cols(half).store(out, 0, stride=32)  # E:kcol


@cd.kernel(workgroup_size=(32, 1, 1))
def sliced_acc(src: cd.Buffer[f32], out: cd.Buffer[f32], at: i32):
    lane = cd.subgroup_invocation_id
    row = cd.array(f32, 16)
    for i in cd.static_range(16):
        row[i] = src[lane * 16 + i]
    Acc[f32, 16, 8].from_rows(cd.sub_array(row, at, 8)).store(out, 0, stride=8)  # no K: any start


def test_a_runtime_qcom_slice_start_must_be_a_multiple_of_k():
    src = np.arange(32 * 32, dtype=np.float16)
    out = np.zeros((16, 16), np.float16)
    sliced_rows.launch((1,), src, out, 16, device="cpu")
    np.testing.assert_array_equal(out, src.reshape(32, 32)[:16, 16:])
    with pytest.raises(InterpreterError, match=r"the sub-array that becomes a row of MatA\[f16, 16, 16\] starts at "
                                               r"4 \(line \d+\), not a multiple of its length 16 \(K\): "
                                               r"SPV_QCOM_cooperative_matrix_conversion requires") as e:
        sliced_rows.launch((1,), src, out, 4, device="cpu")
    assert e.value.loc.line == marker_line("# E:krow")
    words = np.arange(32 * 16, dtype=np.uint32)
    with pytest.raises(InterpreterError, match=r"becomes a column of MatB\[f16, 16, 32\] starts at 3 .*length 8 "
                                               r"\(K\)") as e:
        sliced_words.launch((1,), words, np.zeros((16, 32), np.float16), 3, device="cpu")
    assert e.value.loc.line == marker_line("# E:kcol")
    sliced_words.launch((1,), words, np.zeros((16, 32), np.float16), 8, device="cpu")
    sliced_acc.launch((1,), np.zeros(32 * 16, np.float32), np.zeros((16, 8), np.float32), 5, device="cpu")
