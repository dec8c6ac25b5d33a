"""ggml's ``flash_attn_split_k_reduce.comp`` in coopdsl: combines the split_k partial results of
:mod:`coopdsl.ops.ggml_flash_attn` into the attention output.

With ``k_num > 1`` the flash-attention kernel splits the keys of each row into ``k_num`` ranges
and stores, per range, the unnormalised output O (``[HSV, ne1, k_num, ne2, ne3]`` floats, inner
to outer) followed by each row's sum L and maximum M (``[ne1, 2, k_num, ne2, ne3]``). This kernel
takes the largest M of a row, rescales each range's L and O by ``exp(M_k - M_max)``, adds them,
applies the optional attention sink and divides by L (an empty row gives 0):

    dst[i3][i2][n][d] = sum_k exp(M_k - M) O_k[d] / sum_k exp(M_k - M) L_k

The interface is ggml's ``fa_split_k_reduce`` pipeline (ggml-vulkan.cpp, commit d99724f2), so
ggml could load it in place of its own: entry point ``main``; bindings 0 (``data_a``, the f32
scratch), 1 (``data_s``, f32 sinks, read when ``sinks != 0``), 2 (``data_d``, the output);
the push constants ``D ne1 ne2 ne3 k_num sinks`` (six ``u32``); spec constant 0 ``BLOCK_SIZE``,
the workgroup size (ggml: the subgroup size). Grid: ``(ne1, ceil(D / BLOCK_SIZE), ne2 * ne3)``.
:func:`kernel` with ``out_f16=True`` stores the output as f16 instead (``ops.attention``'s
``out_dtype=np.float16``); the default is ggml's f32.
"""

from __future__ import annotations

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import f16, f32, u32

FLT_MAX = 3.4028234663852886e38  # uintBitsToFloat(0x7F7FFFFF)
NEG_INF = float("-inf")
BLOCK_SIZE = 32  # ggml: the device's subgroup size


@cache
def kernel(out_f16: bool = False, sink_batch: bool = False) -> cd.Kernel:
    """The reduce kernel writing f32 (ggml's) or, with ``out_f16``, f16 output; ``sink_batch``: the sink of a row
    is that of its batch index ``i3`` (``ops.attention`` passes query heads there when Sq > 1), where ggml's reads
    the sink of its head ``n``."""
    out_t = f16 if out_f16 else f32

    @cd.kernel(workgroup_size=("BLOCK_SIZE", 1, 1), entry_point="main")
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def fa_split_k_reduce(data_a: cd.Buffer[f32], data_s: cd.Buffer[f32], data_d: cd.Buffer[out_t],
                          D: u32, ne1: u32, ne2: u32, ne3: u32, k_num: u32, sinks: u32,
                          BLOCK_SIZE: cd.Spec[u32, 0] = 32):
        n = cd.workgroup_id.x  # each workgroup handles a row
        tid = cd.local_invocation_id.x
        i2 = cd.workgroup_id.z % ne2
        i3 = cd.workgroup_id.z // ne2
        tmpsh = cd.shared(f32, BLOCK_SIZE)

        lm_base = D * ne1 * ne2 * ne3 * k_num + ne1 * 2 * (k_num * (i2 + ne2 * i3))
        l_offset = lm_base + n
        m_offset = lm_base + ne1 + n
        lm_stride = ne1 * 2

        # the largest M of the row
        m_max = f32(NEG_INF)
        k = u32(0)
        while k + tid < k_num:
            m_max = max(m_max, data_a[m_offset + (k + tid) * lm_stride])
            k += BLOCK_SIZE
        tmpsh[tid] = m_max
        cd.barrier()
        s = BLOCK_SIZE // 2
        while s > 0:
            if tid < s:
                m_max = max(m_max, tmpsh[tid + s])
                tmpsh[tid] = m_max
            cd.barrier()
            s = s >> 1
        m_max = tmpsh[0]
        cd.barrier()

        # L rescaled to m_max
        L = f32(0.0)
        k = u32(0)
        while k + tid < k_num:
            l_k = data_a[l_offset + (k + tid) * lm_stride]
            m_k = data_a[m_offset + (k + tid) * lm_stride]
            L += cd.exp(m_k - m_max) * l_k
            k += BLOCK_SIZE
        tmpsh[tid] = L
        cd.barrier()
        s = BLOCK_SIZE // 2
        while s > 0:
            if tid < s:
                L += tmpsh[tid + s]
                tmpsh[tid] = L
            cd.barrier()
            s = s >> 1
        L = tmpsh[0]

        sink = f32(0.0)
        if sinks != 0:
            if sink_batch:
                sink = data_s[i3]
            else:
                sink = data_s[n]
            ms = f32(1.0)
            vs = f32(1.0)
            if sink > m_max:
                ms = cd.exp(m_max - sink)
            else:
                vs = cd.exp(sink - m_max)
            L = L * ms + vs

        inv = f32(0.0)
        if L != 0.0:
            inv = 1.0 / L

        d = tid + cd.workgroup_id.y * BLOCK_SIZE  # D is split across workgroups in y
        if d < D:
            o = f32(0.0)
            for kk in range(k_num):
                o_offset = D * ne1 * (kk + k_num * (i2 + ne2 * i3)) + D * n + d
                m_k = data_a[m_offset + kk * lm_stride]
                o += cd.exp(m_k - m_max) * data_a[o_offset]
            if sinks != 0 and sink > m_max:
                o *= cd.exp(m_max - sink)
            o *= inv
            o = cd.clamp(o, -FLT_MAX, FLT_MAX)
            data_d[(i3 * ne2 + i2) * ne1 * D + D * n + d] = out_t(o)

    return cast(cd.Kernel, fa_split_k_reduce)


def grid(D: int, ne1: int, ne2: int, ne3: int, block_size: int = BLOCK_SIZE) -> tuple[int, int, int]:
    """ggml's dispatch of the reduce: one workgroup per row and ``block_size`` columns of D."""
    return ne1, -(-D // block_size), ne2 * ne3
