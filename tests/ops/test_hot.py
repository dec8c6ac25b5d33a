"""coopdsl/ops/hot.py: an op's last call on the same resident arrays is replayed without its checks, and only
then (other arrays, other options, numpy operands or no ``out`` are not); ops.attention's use of it."""

from __future__ import annotations

import numpy as np
import pytest

from coopdsl import runtime
from coopdsl.ops import hot


class _Kernel:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def launch(self, grid, *args, **keywords) -> None:
        self.calls.append((grid, args, keywords))


def test_the_same_resident_arrays_replay_the_launches(device):
    a, b = (runtime.zeros(4, np.float32, device=device) for _ in range(2))
    k = _Kernel()
    h = hot.Hot()
    launches = [(k, (1, 1, 1), (a, b), {"n": 4})]
    h.remember((a, b), ("f16", device), launches)
    assert h.replay((a, b), ("f16", device)) is b
    assert k.calls == [((1, 1, 1), (a, b), {"n": 4})]
    assert h.launches == ((k, (1, 1, 1), (a, b), {"n": 4}),)   # (what benchmarks time: the call's own arrays)
    c = runtime.zeros(4, np.float32, device=device)
    assert h.replay((a, c), ("f16", device)) is None      # another array (equal shape and dtype)
    assert h.replay((a, b), ("f32", device)) is None      # another option
    assert h.replay((a,), ("f16", device)) is None
    assert len(k.calls) == 1


def test_views_of_the_calls_arrays_are_made_again_for_a_replay_and_kept_while_they_live(device):
    """A launch that took a view of one of the call's arrays (ops.gemv reads weights as words) gets a view of the
    same memory on each replay: the one made last while it lives (so that the kernel finds its binding), a new one
    once it was collected; another remembered call with other arrays gets views of its own."""
    import gc

    w, y = runtime.zeros((4, 8), np.uint8, device=device), runtime.zeros(4, np.float32, device=device)
    k = _Kernel()
    h = hot.Hot()
    h.remember((w, y), (), [(k, (1, 1, 1), (w.view(np.uint32), y), {"M": 4, "x": w.view(np.uint16)})])
    assert h.replay((w, y), ()) is y
    (_, (v32, yy), kw), = k.calls
    assert (v32.base, v32.dtype, v32.shape, yy) == (w, np.uint32, (4, 2), y)
    assert (kw["x"].base, kw["x"].dtype, kw["M"]) == (w, np.uint16, 4)
    h.replay((w, y), ())
    assert k.calls[1][1][0] is v32 and k.calls[1][2]["x"] is kw["x"]   # (alive: the same view objects)
    k.calls.clear()
    del v32, yy, kw
    gc.collect()
    h.replay((w, y), ())
    (_, (v32, _), kw), = k.calls
    assert (v32.base, v32.dtype, kw["x"].base, kw["x"].dtype) == (w, np.uint32, w, np.uint16)
    w2 = runtime.zeros((4, 8), np.uint8, device=device)
    h.remember((w2, y), (), [(k, (1, 1, 1), (w2.view(np.uint32), y), {"M": 4, "x": w2.view(np.uint16)})])
    h.replay((w2, y), ())
    assert k.calls[-1][1][0].base is w2 and k.calls[-1][2]["x"].base is w2
    h.replay((w, y), ())
    assert k.calls[-1][1][0] is v32 and k.calls[-1][1][0].base is w


def test_numpy_operands_and_a_missing_out_are_not_remembered(device):
    a = runtime.zeros(4, np.float32, device=device)
    h = hot.Hot()
    k = _Kernel()
    h.remember((a, np.zeros(4, np.float32)), (), [(k, (1, 1, 1), (), {})])
    assert h.replay((a, np.zeros(4, np.float32)), ()) is None
    h.remember((a, None), (), [(k, (1, 1, 1), (), {})])    # (no output array made: see tests/runtime/test_graph.py)
    assert h.replay((a, None), ()) is None
    h.remember((a, a), ([1],), [(k, (1, 1, 1), (), {})])   # options that cannot be a key
    assert h.replay((a, a), ([1],)) is None
    assert k.calls == [] and not h.calls


def test_recent_calls_are_remembered_by_identity_and_forgotten_with_their_arrays(device):
    """Several calls per op (a loop over layers: other weights and outputs each call), the least recently used
    going first past hot.CALLS; a call is forgotten when one of its arrays is collected, and keeps none alive."""
    import gc
    import weakref

    k = _Kernel()
    h = hot.Hot()
    x = runtime.zeros(4, np.float32, device=device)
    layers = [(runtime.zeros(4, np.float32, device=device), runtime.zeros(4, np.float32, device=device))
              for _ in range(3)]
    for w, y in layers:
        h.remember((x, w, y), ("f16",), [(k, (1, 1, 1), (x, w.view(np.uint32), y), {"n": 4})])
    for w, y in layers * 2:
        assert h.replay((x, w, y), ("f16",)) is y
    assert [c[1][2] for c in k.calls] == [y for _, y in layers * 2]
    assert all(c[1][1] is w.view(np.uint32) for c, (w, _) in zip(k.calls, layers * 2))   # views of the call's own
    gone = weakref.ref(layers[0][0])
    w0, y0 = layers.pop(0)
    key_arrays = (x, w0, y0)
    assert h.replay(key_arrays, ("f16",)) is y0
    del w0, key_arrays
    k.calls.clear()                                        # (the stand-in kernel kept its arguments)
    gc.collect()
    assert gone() is None and len(h.calls) == 3 and h.dead  # (its call held it weakly)
    h.remember((x, x), ("next",), [(k, (1, 1, 1), (x,), {})])
    assert len(h.calls) == 3 and not h.dead                # the dead call went at the next remember
    for i in range(hot.CALLS + 5):
        y = runtime.zeros(4, np.float32, device=device)
        layers.append((x, y))
        h.remember((x, y), (i,), [(k, (1, 1, 1), (y,), {})])
    assert len(h.calls) == hot.CALLS


def test_ops_attention_replays_its_last_call_on_the_same_resident_arrays(device, monkeypatch):
    """ops.attention on resident arrays with ``out``: a call with the very arrays and options of the last one
    launches its kernels again without planning; other options, other arrays, numpy operands or an open
    recording plan in full. (Launches are noted, not made: the kernels need a GPU with 32-wide subgroups.)"""
    import coopdsl as cd
    from coopdsl import ops
    from coopdsl.ops import attention_decode as AD
    from coopdsl.ops import attention_nv2 as nv2
    from coopdsl.ops import device_caps as caps

    launched: list[str] = []
    monkeypatch.setattr(cd.Kernel, "launch", lambda self, grid, *a, **kw: launched.append(self.name))
    monkeypatch.setattr(caps, "offers_coopmat", lambda *a, **kw: True)
    monkeypatch.setattr(AD, "takes", lambda dims, dev="cpu": True)      # (llvmpipe's subgroups are 8 wide)
    planned: list[int] = []
    plan = AD.plan
    monkeypatch.setattr(AD, "plan", lambda *a, **kw: planned.append(1) or plan(*a, **kw))
    rng = np.random.default_rng(0)
    q = runtime.array(rng.standard_normal((8, 4, 64)).astype(np.float16), device=device)   # 16 rows a K/V head
    k, v = (runtime.array(rng.standard_normal((2, 300, 64)).astype(np.float16), device=device) for _ in range(2))
    out = runtime.empty((8, 4, 64), np.float32, device=device)
    decode = ["attention_decode_mma_d64", "attention_decode_combine_d64"]
    assert ops.attention(q, k, v, causal=True, out=out) is out
    assert len(planned) == 1 and launched == decode
    assert ops.attention(q, k, v, causal=True, out=out) is out         # replayed
    assert len(planned) == 1 and launched == decode * 2
    ops.attention(q, k, v, causal=False, out=out)                      # other options
    ops.attention(q, k, v, causal=False, out=runtime.empty((8, 4, 64), np.float32, device=device))  # other out
    assert len(planned) == 3
    with nv2.recording() as rec:                                       # a recording sees every launch
        ops.attention(q, k, v, causal=False, out=out)
    assert len(planned) == 4 and [kern.name for kern, *_ in rec] == decode
    host_out = np.zeros((8, 4, 64), np.float32)
    ops.attention(q, k, v, out=host_out)
    ops.attention(q, k, v, out=host_out)                               # numpy out: never remembered
    assert len(planned) == 6


def test_ops_attention_does_not_replay_a_call_that_built_a_cached_mask(device, monkeypatch):
    """Prefill with ggml's kernel: the first call with a window builds its mask and caches it, so it is not
    remembered; the second plans (no build) and is; the third replays the second's launches. A causal mask alone
    is computed by the kernel: nothing is built, and the call after the first replays it."""
    import coopdsl as cd
    from coopdsl import ops
    from coopdsl.ops import attention_nv2 as nv2
    from coopdsl.ops import device_caps as caps
    from coopdsl.ops import flash_attention as FA

    launched: list[str] = []
    monkeypatch.setattr(cd.Kernel, "launch", lambda self, grid, *a, **kw: launched.append(self.name))
    monkeypatch.setattr(caps, "has_nv2", lambda dev: True)
    monkeypatch.setattr(FA, "default_impl", lambda dims, dev: "nv2")
    runs: list[int] = []
    run = nv2.run
    monkeypatch.setattr(nv2, "run", lambda *a, **kw: runs.append(1) or run(*a, **kw))
    nv2.clear_caches()
    rng = np.random.default_rng(1)
    q, k, v = (runtime.array(rng.standard_normal((2, 96, 64)).astype(np.float16), device=device) for _ in range(3))
    out = runtime.empty((2, 96, 64), np.float32, device=device)
    ops.attention(q, k, v, causal=True, window=40, out=out)
    first = list(launched)
    assert first == ["build_mask", "flash_attn_cm2", "fa_split_k_reduce"] and len(runs) == 1   # (f16 Q read as is)
    launched.clear()
    ops.attention(q, k, v, causal=True, window=40, out=out)                       # the mask is cached: not built again
    second = list(launched)
    assert len(runs) == 2 and second == ["flash_attn_cm2", "fa_split_k_reduce"]
    launched.clear()
    ops.attention(q, k, v, causal=True, window=40, out=out)                       # replayed: the second call's launches
    assert len(runs) == 2 and launched == second
    launched.clear()
    ops.attention(q, k, v, causal=True, out=out)                       # causal alone: no mask to build
    assert len(runs) == 3 and launched == ["flash_attn_cm2", "fa_split_k_reduce"]
    ops.attention(q, k, v, causal=True, out=out)                       # replayed
    assert len(runs) == 3 and launched == 2 * ["flash_attn_cm2", "fa_split_k_reduce"]
    nv2.clear_caches()


def test_a_device_without_an_ops_kernels_features_is_named_for_the_op(device):
    """``ops.matmul`` and ``ops.linear`` launch cooperative-matrix or subgroup-of-32 kernels; on a device without
    them (lavapipe) the runtime's DeviceFeatureError named neither the op nor its kernel, and quoted the kernel's
    line in coopdsl's own source. ``hot.run(launches, op)`` says it for the op: its kernel, what it needs, and
    where the op runs instead (the interpreter; for resident operands, on their contents as numpy arrays)."""
    from coopdsl import ops
    from coopdsl.ops import device_caps as caps

    lo, hi = caps.subgroup_sizes(device)
    if caps.offers_coopmat(device, 16, 16, 16) or lo <= 32 <= hi:
        pytest.skip(f"{device.info.name} runs these kernels")
    a = np.ones((32, 32), np.float16)
    with pytest.raises(runtime.DeviceFeatureError,
                       match=r"^matmul: its kernel '\w+' cannot run here: .* cannot run this module .*missing: "
                             r"extension VK_KHR_cooperative_matrix.*; the CPU interpreter runs ops.matmul: "
                             r'device="cpu"') as e:
        ops.matmul(a, a, device=device)
    assert e.value.loc is None and "coopdsl/ops" not in str(e.value)   # (no kernel line of coopdsl's own)
    w = ops.quantize(np.ones((32, 64), np.float32), "q4_0")
    x = np.ones((1, 64), np.float32)
    with pytest.raises(runtime.DeviceFeatureError, match=r"^linear: its kernel '\w+' cannot run here: the kernel "
                                                         r"requires subgroups of 32 invocations") as e:
        ops.linear(x, w, "q4_0", device=device)
    assert e.value.mismatches and e.value.loc is None and "coopdsl/ops" not in str(e.value)
    rx, rw = runtime.array(x, device=device), runtime.array(w, device=device)
    with pytest.raises(runtime.DeviceFeatureError, match=r"the CPU interpreter runs ops.linear on numpy arrays: pass "
                                                         r"the arrays' contents \(arr.numpy\(\)\) with "
                                                         r'device="cpu"$'):
        ops.linear(rx, rw, "q4_0")
    q = runtime.array(np.ones((2, 4, 64), np.float16), device=device)
    with pytest.raises(runtime.DeviceFeatureError, match=r"^attention: .* runs none of ops.attention's kernels: .*"
                                                         r"the CPU interpreter runs ops.attention on numpy arrays"):
        ops.attention(q, q, q)


def test_resident_arrays_sent_to_the_interpreter_by_the_environment_are_told_why(device, monkeypatch):
    from coopdsl import ops

    monkeypatch.setenv("COOPDSL_DEVICE", "cpu")
    w = runtime.array(ops.quantize(np.ones((32, 64), np.float32), "q4_0"), device=device)
    x = runtime.array(np.ones((1, 64), np.float32), device=device)
    with pytest.raises(ValueError, match=r"linear: resident coopdsl.runtime.Arrays cannot run on the CPU interpreter "
                                         r"\(COOPDSL_DEVICE=cpu in the environment sends calls that name no device "
                                         r"there\); pass numpy arrays \(arr.numpy\(\)\), or device=arr.device"):
        ops.linear(x, w, "q4_0")
