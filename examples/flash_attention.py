"""Forward flash attention with SPV_NV_cooperative_matrix2, as llama.cpp's flash_attn_cm2.comp computes it.

O = softmax(Q K^T * scale) V for each head, with Q (n_q x D), K and V
(n_kv x D), f16 inputs and an f32 output, all row-major and heads one after
the other.  Each workgroup of 128 invocations owns BR = 64 query rows of one
head, as workgroup-scope matrices, and walks the keys BC = 64 at a time:

* S = Q K^T * scale (K^T is K loaded column-major as a B matrix);
* keys past ``n_kv`` (in the last step) become -inf through a per-element
  function (``S.map(mask_keys, n_kv - j0)``);
* the running row maximum M = max(M_old, row max of S) (a Row reduction,
  then a per-element max with M_old as an extra matrix operand);
* P = exp(S - M) and eM = exp(M_old - M) (per-element functions);
* P is converted from an f32 accumulator to an f16 A matrix (component and
  use change); its row sums come from multiplying by an all-ones B matrix, as
  llama.cpp does: L = eM * L + P x 1;
* the running output is rescaled and accumulated: O = eM' * O + P V, where
  eM' is eM "smeared" from BR x BC to BR x D by a Row reduction whose combine
  function keeps its first argument;
* finally O / L' (L smeared the same way) is stored.

M, L and eM are BR x BC accumulators whose rows hold one value each, exactly
as in llama.cpp.  D (64 or 128) is a compile-time parameter:
``flash_attention.specialize(D=128)``.  Dispatch (q_rows / 64, heads, 1).

Until tensor layouts are available in coopdsl, the loads and stores are
SPV_KHR_cooperative_matrix ones, so the buffers are padded: each head holds
``q_rows`` query rows and ``kv_rows`` key/value rows, multiples of 64 (extra
rows may hold anything finite; output rows past n_q are not meaningful), and
``n_kv`` says how many keys are real.  With tensor layouts the padding goes
away: K and V are read through a ``Constant``-clamp layout of n_kv rows
(clamp value -inf for the mask, as llama.cpp sets 0xfc00), so the mask
function is no longer needed, and O is stored through a clamped layout that
discards rows past n_q.
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32

BR = 64     # query rows per workgroup
BC = 64     # keys per step
WG = 128    # invocations per workgroup (the device's flexible workgroup-scope shapes are given for it)
W = cd.Workgroup
NEG_INF = float("-inf")


@cd.func
def mask_keys(row, col, s, valid):
    """-inf for the keys of this step that are past the end of the sequence (column >= valid)."""
    if col < valid:
        return s
    return f32(NEG_INF)


@cd.func
def exp_elem(row, col, x):
    return cd.exp(x)


@cd.func
def larger(row, col, x, y):
    return max(x, y)


@cd.func
def keep_first(a, b):
    """The "smear" combine: every element of a row is the same, so keeping either resizes the matrix."""
    return a


@cd.kernel(workgroup_size=(WG, 1, 1))
def flash_attention(q: cd.Buffer[f16], k: cd.Buffer[f16], v: cd.Buffer[f16], o: cd.Buffer[f32],
                    n_kv: u32, q_rows: u32, kv_rows: u32, scale: f32, D: cd.Const[int] = 64):
    head = cd.workgroup_id.y
    q_base = (head * q_rows + cd.workgroup_id.x * BR) * D
    kv_base = head * kv_rows * D
    Q = MatA[f16, BR, D, W].load(q, q_base, stride=D)
    ones = MatB[f16, BC, BC, W](1.0)
    O_acc = Acc[f32, BR, D, W](0.0)
    M = Acc[f32, BR, BC, W](NEG_INF)
    L = Acc[f32, BR, BC, W](0.0)
    for j0 in range(0, n_kv, BC):
        Kt = MatB[f16, D, BC, W].load(k, kv_base + j0 * D, stride=D, layout=cd.ColumnMajor)
        S = cd.muladd(Q, Kt, Acc[f32, BR, BC, W](0.0)) * scale
        if j0 + BC > n_kv:
            S = S.map(mask_keys, n_kv - j0)
        M_old = M
        M = S.reduce(cd.Row, cd.reduce_max).map(larger, M_old)
        P = (S - M).map(exp_elem)
        eM = (M_old - M).map(exp_elem)
        P_A = MatA[f16, BR, BC, W](P)
        L = eM * L + cd.muladd(P_A, ones, Acc[f32, BR, BC, W](0.0))
        V = MatB[f16, BC, D, W].load(v, kv_base + j0 * D, stride=D)
        eM_wide = eM.reduce(cd.Row, keep_first, into=Acc[f32, BR, D, W])
        O_acc = eM_wide * O_acc + cd.muladd(P_A, V, Acc[f32, BR, D, W](0.0))
    O_acc = O_acc / L.reduce(cd.Row, keep_first, into=Acc[f32, BR, D, W])
    O_acc.store(o, q_base, stride=D)
