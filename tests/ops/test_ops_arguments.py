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


# --- found by a check that fed each op one mistake at a time (2026-11-28) ---------------------------------------
def test_weights_of_one_format_given_as_another_are_refused_not_misread():
    """gemv read float16 weights as bf16 bit patterns (and the reverse) and returned wrong numbers."""
    from coopdsl.ops import gemv

    w = np.ones((32, 64), np.float16)
    x = np.ones((2, 64), np.float32)
    with pytest.raises(ValueError, match="gemv: bf16 weights are uint16 arrays, got float16"):
        gemv.gemv(w, x, "bf16", device="cpu")
    with pytest.raises(ValueError, match="gemv: f16 weights are float16 arrays, got uint16"):
        gemv.gemv(ops.to_bf16(w), x, "f16", device="cpu")
    with pytest.raises(ValueError, match="gemv: q4_0 weights are uint8 arrays, got float16"):
        gemv.gemv(np.ones((32, 18), np.float16), x[:, :32], "q4_0", device="cpu")
    with pytest.raises(ValueError, match="linear: q8_0 weights are uint8 arrays, got float16"):
        ops.linear(x, w, "q8_0", device="cpu")


@pytest.mark.parametrize(("call", "exc", "pattern"), [
    (lambda: ops.quantize(np.ones((1, 32), np.float32), ["q4_0"]), TypeError,
     r"quantize: the format must be a string, one of q4_0, q8_0, q4_K; got list"),
    (lambda: ops.dequantize(np.zeros((1, 34), np.uint8), None, 32), TypeError, "dequantize: the format must be a"),
    (lambda: ops.linear(np.ones((1, 64), np.float32), np.ones((4, 64), np.float16), ("f16",), device="cpu"),
     TypeError, "linear: the weight format must be a string"),
    (lambda: ops.matmul(np.ones((2, 16), np.float16), np.ones((16, 16), np.float16), kind="", device="cpu"),
     ValueError, "matmul: unknown kind ''; expected one of bf16, f16, i8, u8"),
    (lambda: ops.matmul(np.ones((2, 16), np.float16), np.ones((16, 16), np.float16), kind=0, device="cpu"),
     TypeError, "matmul: the kind must be a string"),
])
def test_a_format_or_kind_is_a_known_name(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_the_documented_choice_helpers_check_their_arguments():
    import importlib

    from coopdsl.ops import gemv

    linear_mod = importlib.import_module("coopdsl.ops.linear")
    with pytest.raises(ValueError, match="gemv.choice: unknown weight format 'q4_1'"):
        gemv.choice("q4_1", 1)
    with pytest.raises(TypeError, match="gemv.choice: the weight format must be a string"):
        gemv.choice(None, 1)
    for rows in (0, 17, -1, 2.0, True):
        with pytest.raises(ValueError, match="gemv.choice: rows of x must be an int, 1 to 16"):
            gemv.choice("q4_0", rows)
    with pytest.raises(ValueError, match="gemv.choice: k must be an int, 1 or more; got 0"):
        gemv.choice("q4_0", 2, None, 64, 0)
    with pytest.raises(ValueError, match="prefill_choice: M must be an int, 1 or more; got 0"):
        linear_mod.prefill_choice("q4_0", 0, 64, 64, 132)
    with pytest.raises(ValueError, match="prefill_choice: cores must be an int, 1 or more; got -1"):
        linear_mod.prefill_choice("q4_0", 64, 64, 64, -1)
    assert linear_mod.prefill_choice("q4_0", 4096, 512, 14336, 132) == ("l", 2)


def test_arrays_in_the_other_byte_order_are_named_as_such():
    a = np.ones((2, 16), np.float16)
    with pytest.raises(ValueError, match=r"matmul: a is float16 in the other byte order \(>f2\); convert it"):
        ops.matmul(a.astype(">f2"), np.ones((16, 16), np.float16), device="cpu")
    q = np.ones((1, 4, 64), np.float16)
    with pytest.raises(ValueError, match="attention: q is float16 in the other byte order"):
        ops.attention(q.astype(">f2"), q, q, device="cpu")
    with pytest.raises(ValueError, match="linear: w is uint16 in the other byte order"):
        ops.linear(np.ones((1, 64), np.float32), ops.to_bf16(np.ones((4, 64))).astype(">u2"), "bf16", device="cpu")


def test_attention_scale_and_softcap_must_fit_f32():
    q = np.ones((1, 4, 64), np.float16)
    with pytest.raises(ValueError, match=r"attention: scale must be .* got 1e\+39 \(the kernels take it as f32"):
        ops.attention(q, q, q, scale=1e39, device="cpu")
    with pytest.raises(ValueError, match=r"attention: softcap must be .* got 1e\+300 \(the kernels take it as f32"):
        ops.attention(q, q, q, softcap=1e300, device="cpu")
    assert ops.attention(q, q, q, scale=0.5, softcap=3.0e38, device="cpu").shape == q.shape   # within f32: runs


@pytest.mark.parametrize(("call", "exc", "pattern"), [
    (lambda: ops.to_bf16(None), TypeError, "to_bf16: x must be an array of numbers, got NoneType"),
    (lambda: ops.to_bf16("1.0"), TypeError, "to_bf16: x must be an array of numbers, got str"),
    (lambda: ops.to_bf16([[1.0], [1.0, 2.0]]), ValueError, "to_bf16: numpy cannot read x as one rectangular array"),
    (lambda: ops.from_bf16([[1], [1, 2]]), ValueError, "from_bf16: numpy cannot read x as one rectangular array"),
    (lambda: ops.quantize([[1.0] * 32, [1.0]], "q8_0"), ValueError,
     "quantize: numpy cannot read w as one rectangular array"),
    (lambda: ops.dequantize(None, "q8_0", 32), TypeError, "dequantize: q must be an array of numbers"),
])
def test_the_host_helpers_name_what_numpy_cannot_read(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_the_host_helpers_take_bf16_weights_and_empty_lists():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32)
    wb = w.astype(ml_dtypes.bfloat16)
    assert np.array_equal(ops.quantize(wb, "q8_0"), ops.quantize(wb.astype(np.float32), "q8_0"))
    assert ops.from_bf16([]).shape == (0,) and ops.from_bf16([]).dtype == np.float32


def test_attention_with_no_k_v_heads_says_so():
    z = np.zeros((0, 4, 64), np.float16)
    with pytest.raises(ValueError, match=r"attention: k and v have 0 heads \(shape \(0, 4, 64\)\): attention needs at "
                                         r"least one K/V head"):
        ops.attention(np.zeros((2, 4, 64), np.float16), z, z, device="cpu")
    assert ops.attention(z, z, z, device="cpu").shape == (0, 4, 64)   # no query heads either: nothing to compute


def test_gemv_with_nothing_to_multiply_says_so():
    from coopdsl.ops import gemv

    for w, x in ((np.zeros((4, 0), np.float16), np.zeros((1, 0), np.float32)),
                 (np.zeros((0, 64), np.float16), np.zeros((1, 64), np.float32))):
        with pytest.raises(ValueError, match=r"gemv: x \(1, \d+\) and w \(\d, \d+\) leave nothing to multiply"):
            gemv.gemv(w, x, "f16", device="cpu")


def test_the_gemv_lookup_helpers_check_their_arguments():
    from coopdsl.ops import gemv

    assert [gemv.bucket(n) for n in (1, 2, 3, 4, 5, 16)] == [1, 2, 2, 4, 5, 5]
    for bad in (0, 17, "x", None):
        with pytest.raises(ValueError, match="gemv.bucket: rows of x must be an int, 1 to 16"):
            gemv.bucket(bad)
    with pytest.raises(ValueError, match="gemv.xregs_layout: unknown weight format 'q4_1'"):
        gemv.xregs_layout("q4_1", 4, 64)
    with pytest.raises(ValueError, match="gemv.xregs_layout: k must be an int, 1 or more; got -64"):
        gemv.xregs_layout("q4_0", 4, -64)
    assert gemv.xregs_layout("q4_0", 12, 4096) is None and gemv.xregs_layout("f16", 4, 4096) is None
