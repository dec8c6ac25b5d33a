"""Every combination of good and bad arguments to the ops (arrays of each dimension and dtype, lists, numbers,
None, bad options) either runs or raises a ValueError / TypeError / LaunchError of coopdsl's naming the problem:
never a foreign exception (AttributeError, IndexError, an unpacking error) from inside an op.  On the
interpreter; about 4,000 calls in 2 s."""

import itertools
import warnings

import numpy as np
import pytest

from coopdsl import ops
from coopdsl.runtime import LaunchError

_RNG = np.random.default_rng(0)
ARRAYS = {
    "f16": _RNG.standard_normal((16, 64)).astype(np.float16),
    "f32": _RNG.standard_normal((16, 64)).astype(np.float32),
    "f16 1-D": np.zeros(64, np.float16),
    "f16 3-D": np.zeros((2, 16, 64), np.float16),
    "f16 empty": np.zeros((0, 64), np.float16),
    "f16 transposed": _RNG.standard_normal((64, 16)).astype(np.float16).T,
    "u8 blocks": np.zeros((16, 36), np.uint8),
    "u16": np.zeros((16, 64), np.uint16),
    "i32": np.zeros((16, 64), np.int32),
    "f64": np.zeros((16, 64)),
    "bool": np.zeros((16, 64), bool),
    "list": [[1.0] * 64] * 16,
    "int": 3,
    "str": "x",
    "None": None,
    "f16 odd": _RNG.standard_normal((3, 40)).astype(np.float16),
    "f16 K 96": _RNG.standard_normal((2, 96)).astype(np.float16),
}
LINEAR_OPTIONS = [{}, {"fmt": "q4_0"}, {"fmt": "q9"}, {"fmt": 3}, {"q8": True}, {"q8": 1},
                  {"out": np.zeros((1,), np.float32)}, {"tune": "yes"}, {"device": 5}, {"device": "gpu"}]
FOREIGN = ("object has no attribute", "values to unpack", "index out of", "not subscriptable")


def _calls():
    pairs = list(itertools.product(ARRAYS.items(), repeat=2))
    for (an, a), (bn, b) in pairs:
        for o in LINEAR_OPTIONS:
            yield f"linear({an}, {bn}, {o})", lambda a=a, b=b, o=o: ops.linear(a, b, **{"device": "cpu", **o})
        yield f"matmul({an}, {bn})", lambda a=a, b=b: ops.matmul(a, b, device="cpu")
        yield f"matmul({an}, {bn}, transpose_b)", lambda a=a, b=b: ops.matmul(a, b, device="cpu", transpose_b=True)
        yield f"attention({an}, {bn})", lambda a=a, b=b: ops.attention(a, b, b, device="cpu")
    for an, a in ARRAYS.items():
        for f in ("q4_0", "q8_0", "q4_K", "f16", 3):
            yield f"quantize({an}, {f})", lambda a=a, f=f: ops.quantize(a, f)
            yield f"dequantize({an}, {f})", lambda a=a, f=f: ops.dequantize(a, f, 64)
            yield f"dequantize({an}, {f}, -1)", lambda a=a, f=f: ops.dequantize(a, f, -1)


def test_no_argument_reaches_a_foreign_exception():
    bad, calls = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in _calls():
            calls += 1
            try:
                call()
            except (ValueError, TypeError, LaunchError) as e:
                if not str(e) or any(s in str(e) for s in FOREIGN):
                    bad.append(f"{name}: {type(e).__name__}: {e}")
            except Exception as e:  # noqa: BLE001 (what the test looks for)
                bad.append(f"{name}: {type(e).__name__}: {e}")
    assert calls > 3500
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("option", ["tune", "causal"])
def test_a_yes_no_option_is_a_bool(option):
    q = np.zeros((2, 4, 32), np.float16)
    with pytest.raises(TypeError, match=rf"attention: {option} must be True or False, got 'yes'"):
        ops.attention(q, q, q, device="cpu", **{option: "yes"})


def test_a_device_that_is_none_is_named_by_every_op():
    x, w = np.zeros((2, 64), np.float32), np.zeros((8, 64), np.float16)
    q = np.zeros((2, 4, 32), np.float16)
    for op, call in (("linear", lambda: ops.linear(x, w, device=5)),
                     ("linear", lambda: ops.linear(np.zeros((20, 64), np.float32), w, device=5)),
                     ("matmul", lambda: ops.matmul(w, w.T.copy(), device=5)),
                     ("attention", lambda: ops.attention(q, q, q, device=5))):
        with pytest.raises(TypeError, match=rf"{op}: device must be None, 'cpu' or a coopdsl.runtime.Device, got "
                                            r"int 5"):
            call()


def test_an_unknown_device_string_is_named_by_every_op():
    """'gpu' was a LaunchError without the op's name (device=5 had it); 'CPU' is the interpreter in any case."""
    x, w = np.zeros((2, 64), np.float32), np.zeros((8, 64), np.float16)
    q = np.zeros((2, 4, 32), np.float16)
    for op, call in (("linear", lambda d: ops.linear(x, w, device=d)),
                     ("matmul", lambda d: ops.matmul(w, w.T.copy(), device=d)),
                     ("attention", lambda d: ops.attention(q, q, q, device=d))):
        with pytest.raises(LaunchError, match=rf"^{op}: device must be 'cpu', None or a coopdsl.runtime.Device, got "
                                              r"'gpu'$"):
            call("gpu")
        assert call("CPU").shape


def test_resident_arrays_cannot_go_to_the_interpreter(device):
    from coopdsl import runtime

    x = runtime.array(np.zeros((2, 64), np.float32), device=device)
    w = runtime.array(np.zeros((8, 64), np.float16), device=device)
    q = runtime.array(np.zeros((2, 4, 32), np.float16), device=device)
    for op, call in (("linear", lambda: ops.linear(x, w, device="cpu")),
                     ("matmul", lambda: ops.matmul(w, w, device="cpu", transpose_b=True)),
                     ("attention", lambda: ops.attention(q, q, q, device="cpu"))):
        with pytest.raises(ValueError, match=rf"{op}: resident coopdsl.runtime.Arrays cannot run on the CPU "
                                             r"interpreter; pass numpy arrays"):
            call()
