"""Probe: FA2-style prefill attention, one subgroup = 16 query rows, NV2 subgroup-scope flexible matrices,
K/V loaded straight from global memory as B matrices."""
from functools import cache
import numpy as np
import coopdsl as cd
from coopdsl import Acc, MatA, MatB, ColumnMajor, f16, f32, u32

NEG = -1.0e30
LOG2E = 1.4426950408889634


@cd.func
def keep_first(a, b):
    return a


@cd.func
def exp2_elem(row, col, x):
    return cd.exp2(x)


@cd.func
def larger(row, col, x, y):
    return max(x, y)


@cd.func
def causal_elem(row, col, x, diff):
    # key col of the step vs query row: visible when col <= row + diff  (diff = row0 - j0)
    if cd.i32(col) <= cd.i32(row) + diff:
        return x
    return f32(NEG)


@cache
def kernel(D: int, BC: int = 64, SUBS: int = 4, causal: bool = False):
    WG = 32 * SUBS

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    def fa2(q: cd.Buffer[f16], k: cd.Buffer[f16], v: cd.Buffer[f16], o: cd.Buffer[f32], S: u32, G: u32,
            scale2: f32):
        sub = cd.subgroup_id
        h = cd.workgroup_id.y
        kvh = h // G
        row0 = cd.workgroup_id.x * (16 * SUBS) + sub * 16
        qbase = (h * S + row0) * D
        qa = MatA[f16, 16, D].load(q, qbase, stride=D)
        m = Acc[f32, 16, BC].splat(NEG)
        l = Acc[f32, 16, BC].splat(0.0)
        acc = Acc[f32, 16, D].splat(0.0)
        kbase = kvh * S * D
        nk = S
        if causal:
            nk = row0 + 16
        for j in range(0, nk, BC):
            kt = MatB[f16, D, BC].load(k, kbase + j * D, stride=D, layout=ColumnMajor)
            s = cd.muladd(qa, kt, Acc[f32, 16, BC].splat(0.0)) * scale2
            if causal:
                if j + BC > row0:
                    s = s.map(causal_elem, cd.bitcast(row0, cd.i32) - cd.bitcast(j, cd.i32))
            mn = s.reduce(cd.Row, cd.reduce_max).map(larger, m)
            p = (s - mn).map(exp2_elem)
            em = (m - mn).map(exp2_elem)
            l = l * em + p.reduce(cd.Row, cd.reduce_add)
            m = mn
            emd = em.reduce(cd.Row, keep_first, into=Acc[f32, 16, D])
            vb = MatB[f16, BC, D].load(v, kbase + j * D, stride=D)
            acc = cd.muladd(MatA[f16, 16, BC](p), vb, acc * emd)
        ld = l.reduce(cd.Row, keep_first, into=Acc[f32, 16, D])
        (acc / ld).store(o, qbase, stride=D)

    return fa2


def reference(q, k, v, causal):
    hq, s, d = q.shape
    g = hq // k.shape[0]
    out = np.zeros(q.shape, np.float64)
    for h in range(hq):
        sc = q[h].astype(np.float64) @ k[h // g].astype(np.float64).T / np.sqrt(d)
        if causal:
            sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
        p = np.exp(sc - sc.max(1, keepdims=True))
        out[h] = (p / p.sum(1, keepdims=True)) @ v[h // g].astype(np.float64)
    return out


def run(q, k, v, out, causal, device, BC=64, SUBS=4):
    hq, s, d = q.shape
    kern = kernel(d, BC, SUBS, causal)
    kern.launch((s // (16 * SUBS), hq, 1), q, k, v, out, s, hq // k.shape[0], float(d ** -0.5 * LOG2E),
                device=device)
    return out
