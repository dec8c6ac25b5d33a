"""The ops' repeated calls on resident arrays against numpy on a real GPU (run with -m gpu).

A call repeated on the same resident arrays replays its kept command buffer (``coopdsl.ops.hot``); these tests
change what the arrays hold between calls (``Array.write``), toggle the options that pick other kernels, alternate
more sets of arrays than the op remembers (64 calls), keep and collect the results of calls without ``out`` (so
that the pool hands their memory to the next call, or to arrays of the user's), rebuild the caches, and run the
calls inside batches, then compare every result with numpy: matmul (f16, bf16, int8), linear in every weight
format (with ``q8`` switching the kernel), attention (decode and prefill, causal, masks, windows, scales, soft-cap,
f16 Q and output, bf16 K/V) and a linear -> attention -> linear chain in one batch.  About a thousand
comparisons; a failure names the case."""

import gc

import numpy as np
import pytest

from coopdsl import ops, runtime
from coopdsl.ops import attention_nv2 as nv2
from coopdsl.ops import from_bf16, to_bf16
from coopdsl.ops import gemv as G
from coopdsl.ops.flash_attention import reference as aref

pytestmark = pytest.mark.gpu


class Checks:
    """Random inputs and comparisons of one test; ``done`` asserts that none failed and that there were some."""

    def __init__(self, device, seed):
        self.rng = np.random.default_rng(seed)
        self.device = device
        self.counts: dict[str, int] = {}
        self.failed: list[str] = []

    def h(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float16)

    def f(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def arr(self, a):
        return runtime.array(a, device=self.device)

    def zeros(self, shape, dtype):
        return runtime.zeros(shape, dtype, device=self.device)

    def check(self, what, got, ref, tol, case=""):
        self.counts[what] = self.counts.get(what, 0) + 1
        g = np.asarray(got.numpy() if hasattr(got, "numpy") else got, np.float64)
        r = np.asarray(ref, np.float64)
        err = np.abs(g - r).max() / max(np.abs(r).max(), 1e-30) if g.shape == r.shape else np.inf
        if not err <= tol:
            self.failed.append(f"{what} {case}: relative error {err:.3g} (shapes {g.shape}, {r.shape})")

    def done(self, least):
        assert not self.failed, "\n".join(self.failed[:20])
        assert sum(self.counts.values()) >= least, self.counts


def _mm(a, b, t):
    return a.astype(np.float32) @ (b.T if t else b).astype(np.float32)


def test_matmul_replays_follow_writes_options_kept_results_and_seventy_sets(device):
    c = Checks(device, 0)
    for m, k in [(64, 128), (50, 70)]:
        ah, bh = c.h(m, k), c.h(k, k)
        a, b, out = c.arr(ah), c.arr(bh), c.zeros((m, k), np.float32)
        for it in range(8):
            t = it % 3 == 1
            ops.matmul(a, b, out=out, transpose_b=t)
            c.check("matmul out=", out, _mm(ah, bh, t), 3e-3, f"{m} {it}")
            c.check("matmul new", ops.matmul(a, b, transpose_b=not t), _mm(ah, bh, not t), 3e-3, f"{m} {it}")
            if it % 2:
                ah = c.h(m, k)
                a.write(ah)
            else:
                bh = c.h(k, k)
                b.write(bh)
        kept = []
        for _ in range(6):
            ah = c.h(m, k)
            a.write(ah)
            kept.append((ops.matmul(a, b), _mm(ah, bh, False)))
        for i, (r, ref) in enumerate(kept):
            c.check("matmul kept", r, ref, 3e-3, f"{m} {i}")
        for it in range(6):
            ah = c.h(m, k)
            a.write(ah)
            c.check("matmul dropped", ops.matmul(a, b), _mm(ah, bh, False), 3e-3, f"{m} {it}")
    for it in range(4):
        xi = c.rng.integers(-128, 128, (64, 128)).astype(np.int8)
        wi = c.rng.integers(-128, 128, (128, 128)).astype(np.int8)
        if it == 0:
            xa, wa = c.arr(xi), c.arr(wi)
        else:
            xa.write(xi)
            wa.write(wi)
        t = bool(it % 2)
        c.check("matmul int8", ops.matmul(xa, wa, transpose_b=t),
                xi.astype(np.int64) @ (wi.T if t else wi).astype(np.int64), 0, f"{it}")
    sets = [[c.h(16, 64), c.h(128, 64)] for _ in range(70)]          # more than the 64 calls an op remembers
    sets = [s + [c.arr(s[0]), c.arr(s[1]), c.zeros((16, 128), np.float32)] for s in sets]
    for rnd in range(3):
        for i, s in enumerate(sets):
            if rnd == 1 and i % 3 == 0:
                s[0] = c.h(16, 64)
                s[2].write(s[0])
            ops.matmul(s[2], s[3], out=s[4], transpose_b=True)
            c.check("matmul 70 sets", s[4], _mm(s[0], s[1], True), 3e-3, f"{rnd}/{i}")
    ab, bb = to_bf16(c.f(32, 64)), to_bf16(c.f(64, 128))
    abd, bbd = c.arr(ab), c.arr(bb)
    for it in range(4):
        c.check("matmul bf16", ops.matmul(abd, bbd, kind="bf16"), from_bf16(ab) @ from_bf16(bb), 1e-3, f"{it}")
        ab = to_bf16(c.f(32, 64))
        abd.write(ab)
    c.done(270)


def test_linear_replays_in_every_format_with_q8_switching_views_and_collected_arrays(device):
    c = Checks(device, 1)
    k, m = 256, 64
    for fmt in [None, "q4_0", "q8_0", "q4_K"]:
        def make(fmt=fmt):
            w32 = c.f(m, k)
            wq = w32.astype(np.float16) if fmt is None else ops.quantize(w32, fmt)
            return wq, (wq.astype(np.float32) if fmt is None else ops.dequantize(wq, fmt, k))
        wq, wref = make()
        wd = c.arr(wq)
        for n in [1, 3, 8, 20]:
            xh = c.f(n, k) if n <= 16 else c.h(n, k)
            xd, yd = c.arr(xh), c.zeros((n, m), np.float32)
            for it, q8 in enumerate([None, False, True, False, None, None]):
                if (q8 is True and fmt is None) or (n > 16 and q8 is not None):
                    continue
                tol = 1e-3 if fmt is None else (1e-4 if q8 is False else 2e-2)
                ref = xh.astype(np.float32) @ wref.T
                ops.linear(xd, wd, fmt, out=yd, q8=q8)
                c.check("linear out=", yd, ref, tol, f"{fmt} rows {n} call {it} q8={q8}")
                c.check("linear new", ops.linear(xd, wd, fmt, q8=q8), ref, tol, f"{fmt} rows {n} call {it} q8={q8}")
                xh = c.f(n, k) if n <= 16 else c.h(n, k)
                xd.write(xh)
                if it == 3:
                    wq, wref = make()
                    wd.write(wq)
        xh = c.f(2, k)
        c.check("linear mixed", ops.linear(xh, wd, fmt, q8=False), xh @ wref.T, 1e-4, f"{fmt} numpy x")
        xd = c.arr(xh)
        c.check("linear mixed", ops.linear(xd, wq, fmt, q8=False), xh @ wref.T, 1e-4, f"{fmt} numpy w")
        c.check("linear mixed", ops.linear(xd, wd, fmt, q8=False), xh @ wref.T, 1e-4, f"{fmt} resident")
    wq = ops.quantize(c.f(m, k), "q4_0")           # q4_0's bytes held in a float16 array, viewed as uint8
    base, xh = c.arr(wq.view(np.float16)), c.f(1, k)
    xd, yd = c.arr(xh), c.zeros((1, m), np.float32)
    for it in range(5):
        v = base.view(np.uint8)
        ops.linear(xd, v, "q4_0", out=yd, q8=False)
        c.check("linear view", yd, xh @ ops.dequantize(wq, "q4_0", k).T, 1e-4, f"{it}")
        wq = ops.quantize(c.f(m, k), "q4_0")
        base.write(wq.view(np.float16))
        if it % 2:
            del v
            gc.collect()
    for it in range(20):                            # new arrays of one shape each time, freed or collected
        wq, xh = ops.quantize(c.f(m, k), "q8_0"), c.f(2, k)
        wd, xd, yd = c.arr(wq), c.arr(xh), c.zeros((2, m), np.float32)
        ops.linear(xd, wd, "q8_0", out=yd, q8=False)
        c.check("linear collected", yd, xh @ ops.dequantize(wq, "q8_0", k).T, 1e-4, f"{it}")
        if it % 3 == 0:
            wd.free()
            xd.free()
            yd.free()
        del wd, xd, yd
        gc.collect()
    w16 = c.h(64, 128)
    w16d, xd = c.arr(w16), c.zeros((2, 128), np.float32)
    for it in range(6):
        xh = c.f(2, 128)
        xd.write(xh)
        c.check("gemv", G.gemv(w16d, xd, "f16"), xh @ w16.astype(np.float32).T, 1e-3, f"{it}")
    c.done(200)


def test_attention_replays_with_every_option_switching_a_chain_in_a_batch_and_seventy_sets(device):
    c = Checks(device, 2)
    d, skv = 64, 96
    for hq, hkv, sq in [(4, 2, 1), (8, 2, 3), (4, 2, 24)]:
        qh, kh, vh = c.f(hq, sq, d), c.h(hkv, skv, d), c.h(hkv, skv, d)
        q, k, v = c.arr(qh), c.arr(kh), c.arr(vh)
        q16h = qh.astype(np.float16)
        q16 = c.arr(q16h)
        mh = np.where(c.rng.random((sq, skv)) < 0.3, -np.inf, 0).astype(np.float16)
        md = c.arr(mh)
        o, o16 = c.zeros((hq, sq, d), np.float32), c.zeros((hq, sq, d), np.float16)
        opts = [{}, {"causal": True}, {}, {"causal": True, "window": 20}, {"mask": "M"},
                {"mask": "M", "causal": True}, {"scale": 0.3}, {"scale": 0.05}, {"softcap": 2.0}, {},
                {"causal": True}, {"causal": True}, {"mask": "M"}]
        for it, op in enumerate(opts * 2):
            op, ref_op = dict(op), dict(op)
            if "mask" in op:
                op["mask"], ref_op["mask"] = md, mh.astype(np.float32)
            qq, qr = (q16, q16h) if it % 4 == 3 else (q, qh)
            ref = aref(qr, kh, vh, **ref_op)
            case = f"{hq}/{hkv} heads, {sq} rows, call {it}, {sorted(op)}"
            ops.attention(qq, k, v, out=o, **op)
            c.check("attention out=", o, ref, 1e-2, case)
            if it % 3 == 0:
                ops.attention(qq, k, v, out=o16, out_dtype=np.float16, **op)
                c.check("attention f16 out", o16, ref, 1e-2, case)
            c.check("attention new", ops.attention(qq, k, v, **op), ref, 1e-2, case)
            j = it % 4
            if j == 0:
                qh = c.f(hq, sq, d)
                q.write(qh)
                q16h = qh.astype(np.float16)
                q16.write(q16h)
            elif j == 1:
                kh = c.h(hkv, skv, d)
                k.write(kh)
            elif j == 2:
                vh = c.h(hkv, skv, d)
                v.write(vh)
            else:
                mh = np.where(c.rng.random((sq, skv)) < 0.3, -np.inf, 0).astype(np.float16)
                md.write(mh)
    kdim, dh = 64, 64                               # linear -> attention -> linear, in a batch or not
    w1h, w2h = c.h(dh, kdim), c.h(32, dh)
    w1, w2 = c.arr(w1h), c.arr(w2h)
    kh, vh = c.h(40, dh), c.h(40, dh)
    k, v = c.arr(kh), c.arr(vh)
    xh = c.f(2, kdim)
    x = c.arr(xh)
    y1, y2, y3 = c.zeros((2, dh), np.float32), c.zeros((2, dh), np.float32), c.zeros((2, 32), np.float32)
    for rnd in range(6):
        causal = bool(rnd % 2)

        def body(causal=causal):
            ops.linear(x, w1, out=y1, q8=False)
            ops.attention(y1, k, v, out=y2, causal=causal)
            ops.linear(y2, w2, out=y3, q8=False)
        if rnd % 3 == 2:
            body()
        else:
            with runtime.batch(device):
                body()
        r1 = xh @ w1h.astype(np.float32).T
        r2 = aref(r1, kh, vh, causal=causal)
        r3 = r2 @ w2h.astype(np.float32).T
        c.check("chain", y1, r1, 1e-3, f"y1 {rnd}")
        c.check("chain", y2, r2, 1e-2, f"y2 {rnd}")
        c.check("chain", y3, r3, 1e-2, f"y3 {rnd}")
        xh = c.f(2, kdim)
        x.write(xh)
        if rnd == 3:
            kh = c.h(40, dh)
            k.write(kh)
    sets = [[c.f(4, 1, d), c.h(2, 50, d), c.h(2, 50, d)] for _ in range(70)]
    sets = [s + [c.arr(s[0]), c.arr(s[1]), c.arr(s[2]), c.zeros((4, 1, d), np.float32)] for s in sets]
    for rnd in range(3):
        with runtime.batch(device):
            for s in sets:
                ops.attention(s[3], s[4], s[5], out=s[6])
        for i, s in enumerate(sets):
            c.check("attention 70 sets", s[6], aref(s[0], s[1], s[2]), 1e-2, f"{rnd}/{i}")
        for i, s in enumerate(sets):
            if (i + rnd) % 2:
                s[0] = c.f(4, 1, d)
                s[3].write(s[0])
            else:
                s[1] = c.h(2, 50, d)
                s[4].write(s[1])
    c.done(400)


def test_results_collected_between_replays_cleared_caches_and_bf16_kv(device):
    c = Checks(device, 4)
    wq = ops.quantize(c.f(64, 256), "q4_0")
    wref, wd = ops.dequantize(wq, "q4_0", 256), c.arr(wq)
    ka = c.h(2, 80, 64)
    k = c.arr(ka)
    bh = c.h(64, 128)
    b = c.arr(bh)
    state = {}

    def linear():
        return ops.linear(state["x"], wd, "q4_0", q8=False), state["xh"] @ wref.T, (1, 64)

    def attention():
        return (ops.attention(state["x4"], k, k), aref(state["xh"].reshape(4, 1, 64), ka, ka), (4, 1, 64))

    def matmul():
        return ops.matmul(state["xa"], b), state["ah"] @ bh.astype(np.float32), (32, 128)

    for name, call in (("linear", linear), ("attention", attention), ("matmul", matmul)):
        tol = 1e-2 if name == "attention" else 1e-3
        for it in range(12):
            state["xh"] = c.f(1, 256)
            state["x"] = c.arr(state["xh"])
            state["x4"] = c.arr(state["xh"].reshape(4, 1, 64))
            state["ah"] = c.h(32, 64)
            state["xa"] = c.arr(state["ah"])
            y, ref, shape = call()
            c.check("rebound", y, ref, tol, f"{name} {it}")
            if it % 3 == 2:                         # the result's memory goes to the user's arrays
                del y
                gc.collect()
                thieves = [c.zeros(shape, np.float32) for _ in range(3)]
                for t in thieves:
                    t.write(np.full(shape, 7.0, np.float32))
                y2, ref, _ = call()
                c.check("rebound", y2, ref, tol, f"{name} {it} after collection")
                for j, t in enumerate(thieves):
                    c.check("the user's arrays untouched", t, np.full(shape, 7.0), 0, f"{name} {it} {j}")
                del thieves, y2
                gc.collect()
    sets = []
    for _ in range(5):
        qh, kb, vb = c.f(4, 1, 64), to_bf16(c.f(2, 60, 64)), to_bf16(c.f(2, 60, 64))
        sets.append([qh, kb, vb, c.arr(qh), c.arr(kb), c.arr(vb), c.zeros((4, 1, 64), np.float32)])
    for rnd in range(4):
        def run_all():
            for s in sets:
                ops.attention(s[3], s[4], s[5], out=s[6])
        if rnd % 2:
            with runtime.batch(device):
                run_all()
        else:
            run_all()
        for i, s in enumerate(sets):
            ref = aref(s[0], from_bf16(s[1]).astype(np.float16), from_bf16(s[2]).astype(np.float16))
            c.check("bf16 K/V", s[6], ref, 1e-2, f"{rnd}/{i}")
            s[1] = to_bf16(c.f(2, 60, 64))
            s[4].write(s[1])
    qs = {s: (c.f(4, s, 64), c.h(2, 96, 64)) for s in (24, 40)}
    qd = {s: (c.arr(v[0]), c.arr(v[1]), c.zeros((4, s, 64), np.float32)) for s, v in qs.items()}
    for rnd in range(8):
        for s in (24, 40):
            qh, kh = qs[s]
            qq, kk, oo = qd[s]
            for causal in (True, False, True):
                ops.attention(qq, kk, kk, causal=causal, out=oo)
                c.check("caches cleared", oo, aref(qh, kh, kh, causal=causal), 1e-2, f"{rnd} {s} rows {causal}")
            if rnd % 2:
                nv2.clear_caches()
                gc.collect()
            qh = c.f(4, s, 64)
            qq.write(qh)
            qs[s] = (qh, kh)
    c.done(150)


def test_a_decoding_step_of_ops_captured_as_a_graph_follows_writes(device):
    """A decoding step recorded in a batch costs the host its launches' recording (a step of 64 q4_0 calls: 41.6 us a
    call on the H200, benchmarks/ops_unseen_third.py): ``runtime.graph.capture`` records a step of ops once and
    ``Graph.run`` submits it again. The results follow what ``Array.write`` puts in x and the K/V cache between runs
    (an f16 product, one token's attention over the cache, a q4_0 product of its output)."""
    from coopdsl.runtime import graph

    c = Checks(device, 9)
    kdim, dh, m2 = 256, 64, 32
    w1h = c.h(dh, kdim)
    w2f = c.f(m2, dh)
    w2q = ops.quantize(w2f, "q4_0")
    w2d = ops.dequantize(w2q, "q4_0", dh)
    kh, vh = c.h(40, dh), c.h(40, dh)
    w1, w2, k, v = c.arr(w1h), c.arr(w2q), c.arr(kh), c.arr(vh)
    xh = c.f(1, kdim)
    x = c.arr(xh)
    y1, y2, y3 = c.zeros((1, dh), np.float32), c.zeros((1, dh), np.float32), c.zeros((1, m2), np.float32)

    def step():
        ops.linear(x, w1, out=y1)
        ops.attention(y1, k, v, out=y2)
        ops.linear(y2, w2, "q4_0", out=y3)

    g = graph.capture(device, step)
    assert g is not None
    try:
        for rnd in range(5):
            r1 = xh @ w1h.astype(np.float32).T
            r2 = aref(r1, kh, vh)
            r3 = r2 @ w2d.T
            c.check("graph", y1, r1, 1e-3, f"y1 {rnd}")
            c.check("graph", y2, r2, 1e-2, f"y2 {rnd}")
            c.check("graph", y3, r3, 3e-2, f"y3 {rnd}")    # (x rounded to 8 bits for q4_0)
            xh = c.f(1, kdim)
            x.write(xh)
            if rnd == 2:
                kh, vh = c.h(40, dh), c.h(40, dh)
                k.write(kh)
                v.write(vh)
            assert g.run()
    finally:
        g.release()
    c.done(15)


def test_the_graph_example_of_docs_ops_md_runs(device):
    """docs/ops.md's decoding step captured as a graph: after its last run the output is the float64 model of the
    four layers on the last x written (q4_0 products, one head's attention over 4096 keys)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "ops.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "graph.capture(dev, step)" in b]
    block = block.replace("g.release()", "")   # (the arrays are read below)
    ns: dict = {}
    exec(compile(block, "docs/ops.md", "exec"), ns)
    h = ns["x"].numpy().astype(np.float64)
    for L in ns["layers"]:
        wq = ops.dequantize(L["wq"].numpy(), "q4_0", 4096).astype(np.float64)
        wo = ops.dequantize(L["wo"].numpy(), "q4_0", 128).astype(np.float64)
        q = h @ wq.T
        h = aref(q, L["k"].numpy(), L["v"].numpy()) @ wo.T
    got = ns["out"].astype(np.float64)
    assert np.abs(got - h).max() <= 5e-2 * np.abs(h).max()   # (x rounded to 8 bits for each q4_0 product)
    ns["g"].release()
