"""Flash-attention layer merge with SPV_QCOM_cooperative_matrix_conversion: O = softmax(Q K^T / sqrt(D)) V.

The third workload of the VK_QCOM_cooperative_matrix_conversion proposal.  Q is Nq x D, K and V are Nk x D,
O is Nq x D (f32, row-major), D = 32.  Each workgroup is one subgroup of 32 invocations owning 32 query
rows; invocation i owns query i.  For every tile of 32 keys:

1. S = Q K^T for the tile (``Acc[f32, 32, 32]``, four 32 x 8 by 8 x 32 multiply-adds).
2. ``s = S.to_rows()``: each invocation gets its query's 32 scores as an f32[32] (OpCompositeExtractCoopMatQCOM).
3. Online softmax on that per-invocation vector: the row max and row sum are loops over the array, and the
   running max m and sum live in registers.  When any query's max grew (``cd.subgroup_any``, a
   subgroup reduction that keeps the branch uniform across the subgroup) the output accumulator's rows
   are rescaled by exp(m_old - m_new): extract, scale, construct again.
4. The probabilities are fed back as A, 8 keys at a time: ``cd.sub_array(p, 8 * j, 8)`` is the 8-wide
   slice (OpExtractSubArrayQCOM) and ``MatA[f32, 32, 8].from_rows(...)`` the matrix; O += P_j V_j.

At the end each invocation divides its row of O by the running sum and stores it.  Nq and Nk multiples of 32; 32-wide
subgroups.  Dispatch (Nq / 32, 1, 1).  ``python examples/qcom_flash_attention.py`` runs it on the CPU
interpreter against numpy.
"""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, f32

TQ = TK = D = 32  # query rows per subgroup, keys per tile, head dimension
DK = 8            # K of every multiply-add: an f32 row of A is 8 elements (256 bits)


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)  # rows of the matrices are the 32 invocations
def attention(q: cd.Buffer[f32], k: cd.Buffer[f32], v: cd.Buffer[f32], o: cd.Buffer[f32],
              NK: cd.Spec[cd.u32] = 64):
    q0 = cd.workgroup_id.x * TQ
    lane = cd.subgroup_invocation_id
    scale = f32(1.0 / D ** 0.5)
    m = f32(-1.0e30)                           # running max of this query's scores
    denom = f32(0.0)                           # running sum of exp(score - m)
    acc = Acc[f32, TQ, D].splat(0.0)           # unnormalised output rows
    for k0 in range(0, NK, TK):
        s_tile = Acc[f32, TQ, TK].splat(0.0)
        for d0 in cd.static_range(0, D, DK):
            qa = MatA[f32, TQ, DK].load(q, q0 * D + d0, stride=D)
            kb = MatB[f32, DK, TK].load(k, k0 * D + d0, stride=D, layout=ColumnMajor)  # K^T
            s_tile = cd.muladd(qa, kb, s_tile)
        s = s_tile.to_rows()                   # this query's TK scores
        m_new = m
        for j in cd.static_range(TK):
            m_new = cd.max(m_new, s[j] * scale)
        p = cd.array(f32, TK)
        total = f32(0.0)
        for j in cd.static_range(TK):
            p[j] = cd.exp(s[j] * scale - m_new)
            total += p[j]
        alpha = cd.exp(m - m_new)
        if cd.subgroup_any(m_new > m):         # some query's max grew: rescale the output rows
            rows = acc.to_rows()
            for j in cd.static_range(D):
                rows[j] = rows[j] * alpha
            acc = Acc[f32, TQ, D].from_rows(rows)
        denom = denom * alpha + total
        m = m_new
        for j in cd.static_range(TK // DK):
            pa = MatA[f32, TQ, DK].from_rows(cd.sub_array(p, j * DK, DK))   # keys 8j..8j+7 as A
            vb = MatB[f32, DK, D].load(v, (k0 + j * DK) * D, stride=D)
            acc = cd.muladd(pa, vb, acc)
    out = acc.to_rows()
    for j in cd.static_range(D):
        o[(q0 + lane) * D + j] = out[j] / denom


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """numpy: softmax(q k^T / sqrt(D)) v in float64."""
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def run(nq=64, nk=96, rng=None, device="cpu"):
    """Attention of nq random queries over nk random keys/values; (O, numpy reference)."""
    rng = rng or np.random.default_rng(0)
    q, k, v = (rng.uniform(-1, 1, (n, D)).astype(np.float32) for n in (nq, nk, nk))
    q *= 2.0  # sharper rows: the running max changes between key tiles
    o = np.zeros((nq, D), np.float32)
    attention.launch((nq // TQ, 1, 1), q, k, v, o, NK=nk, device=device)
    return o, reference(q, k, v)


if __name__ == "__main__":
    out, ref = run()
    print(f"max |O - numpy| = {np.abs(out - ref).max():.2e}")
