"""``attention``: forward scaled-dot-product attention, optionally causal (flash-attention style).

For each head, O = softmax(scale * Q K^T [+ causal mask]) V with Q, K, V of
shape (heads, S, D), f16, and O float32.  One workgroup (one subgroup) takes
16 queries of one head and walks the keys in blocks of 16: S = Q K^T with
cooperative matrices (K read column-major from shared memory as K^T), an
online softmax per query row in scalar code (running max and sum, the running
output rescaled), then O += P V with cooperative matrices.  Rows and keys past
S are zero-filled and masked, so S need not be a multiple of 16; D is a
compile-time parameter (a multiple of 16).  Only the element copies and the
per-row softmax branch; every matrix operation stays in uniform control flow.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f16, f32, u32

NEG = -1.0e30  # the running max's start and the score of masked keys (finite: exp(NEG - m) is 0)


@cache
def kernel(d: int) -> cd.Kernel:
    """The attention kernel for head size ``d`` (a multiple of 16)."""
    nd = d // 16
    tile_loads = 16 * d // 32  # elements of a 16 x d tile each invocation copies

    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def attention(q: cd.Buffer[f16], k: cd.Buffer[f16], v: cd.Buffer[f16], o: cd.Buffer[f32],
                  S: u32, scale: f32, causal: u32):
        q0 = cd.workgroup_id.x * 16
        base = cd.workgroup_id.y * S * d
        lid = cd.local_invocation_index
        sq = cd.shared(f16, 16 * d)
        sk = cd.shared(f16, 16 * d)
        sv = cd.shared(f16, 16 * d)
        so = cd.shared(f32, 16 * d)
        ss = cd.shared(f32, 256)
        sp = cd.shared(f16, 256)
        row_max = cd.shared(f32, 16)
        row_sum = cd.shared(f32, 16)
        rescale = cd.shared(f32, 16)
        for t in cd.static_range(tile_loads):
            e = lid + t * 32
            r = e // d
            val = f16(0.0)
            if q0 + r < S:
                val = q[base + (q0 + r) * d + e % d]
            sq[e] = val
            so[e] = 0.0
        if lid < 16:
            row_max[lid] = NEG
            row_sum[lid] = 0.0
        end = S
        if causal != 0 and q0 + 16 < S:  # later key blocks are all masked
            end = q0 + 16
        cd.barrier()
        for j0 in range(0, end, 16):
            for t in cd.static_range(tile_loads):
                e = lid + t * 32
                r = e // d
                kv = f16(0.0)
                vv = f16(0.0)
                if j0 + r < S:
                    kv = k[base + (j0 + r) * d + e % d]
                    vv = v[base + (j0 + r) * d + e % d]
                sk[e] = kv
                sv[e] = vv
            cd.barrier()
            scores = Acc[f32, 16, 16].splat(0.0)
            for c in cd.static_range(nd):  # S = Q K^T: K^T's column j is K's row j
                scores = cd.muladd(MatA[f16, 16, 16].load(sq, c * 16, stride=d),
                                   MatB[f16, 16, 16].load(sk, c * 16, stride=d, layout=ColumnMajor), scores)
            scores.store(ss, 0, stride=16)
            cd.barrier()
            if lid < 16:  # online softmax of row `lid`
                m_old = row_max[lid]
                m_new = m_old
                for c in cd.static_range(16):
                    s = ss[lid * 16 + c] * scale
                    if j0 + c >= S or (causal != 0 and j0 + c > q0 + lid):
                        s = NEG
                    ss[lid * 16 + c] = s
                    m_new = max(m_new, s)
                total = 0.0
                for c in cd.static_range(16):
                    p = cd.exp(ss[lid * 16 + c] - m_new)
                    sp[lid * 16 + c] = f16(p)
                    total += p
                a = cd.exp(m_old - m_new)
                rescale[lid] = a
                row_sum[lid] = row_sum[lid] * a + total
                row_max[lid] = m_new
            cd.barrier()
            for t in cd.static_range(tile_loads):
                e = lid + t * 32
                so[e] = so[e] * rescale[e // d]
            cd.barrier()
            p_tile = MatA[f16, 16, 16].load(sp, 0, stride=16)
            for c in cd.static_range(nd):
                acc = Acc[f32, 16, 16].load(so, c * 16, stride=d)
                acc = cd.muladd(p_tile, MatB[f16, 16, 16].load(sv, c * 16, stride=d), acc)
                acc.store(so, c * 16, stride=d)
            cd.barrier()
        for t in cd.static_range(tile_loads):
            e = lid + t * 32
            r = e // d
            if q0 + r < S:
                o[base + (q0 + r) * d + e % d] = so[e] / row_sum[r]

    return attention


def attention(q: Any, k: Any, v: Any, *, causal: bool = False, scale: float | None = None, out: Any = None,
              device: Any = None) -> Any:
    """softmax(scale * q k^T) v per head; q, k, v are float16 of shape (heads, S, D) or (S, D).

    ``causal=True`` masks keys after each query.  ``scale`` defaults to
    1/sqrt(D).  D must be a multiple of 16 (up to 256); S is any length.
    Returns float32 of q's shape (or fills ``out``).
    """
    shape = tuple(q.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"attention: q must be (heads, S, D) or (S, D), got shape {shape}")
    heads, s, d = (1, *shape) if len(shape) == 2 else shape
    for name, x in (("q", q), ("k", k), ("v", v)):
        if tuple(x.shape) != shape:
            raise ValueError(f"attention: {name} has shape {tuple(x.shape)}, q has {shape}")
        if np.dtype(x.dtype) != np.float16:
            raise ValueError(f"attention: {name} must be float16, got {np.dtype(x.dtype).name}")
    if d % 16 or not 16 <= d <= 256:
        raise ValueError(f"attention: the head size D must be a multiple of 16 from 16 to 256, got {d}")
    if out is None:
        out = np.zeros(shape, np.float32)
    elif tuple(out.shape) != shape or np.dtype(out.dtype) != np.float32:
        raise ValueError(f"attention: out must be float32 of shape {shape}")
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    kernel(d).launch((-(-s // 16), heads, 1), q, k, v, out, S=s, scale=scale, causal=int(bool(causal)),
                     device=device)
    return out


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False, scale: float | None = None):
    """The numpy model the op is checked against (float32 arithmetic, f16 probabilities as the kernel)."""
    q32, k32, v32 = (np.asarray(x, np.float32) for x in (q, k, v))
    d = q32.shape[-1]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    s = np.einsum("...qd,...kd->...qk", q32, k32) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("...qk,...kd->...qd", p, v32) / p.sum(axis=-1, keepdims=True)
