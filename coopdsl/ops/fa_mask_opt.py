"""ggml's ``flash_attn_mask_opt.comp`` in coopdsl: two bits per Br x Bc block of an f16 attention mask,
which :mod:`coopdsl.ops.ggml_flash_attn` reads (spec constant ``Flags`` bit 0) to skip blocks whose
mask is all -inf and to leave out the mask load where it is all 0.

For each block: ``MASK_OPT_ALL_NEG_INF`` (1) when every value in bounds is <= -FLT_MAX/2, or
``MASK_OPT_ALL_ZERO`` (2) when all are 0 (a block with no value in bounds gets 1). One workgroup
covers 16 blocks of a row of blocks and writes one u32 (block ``x`` at bits ``2x``), at
``i0 + i1 * nbd1 + i2 * nbd2 + i3 * nbd3`` for block column group ``i0``, block row ``i1``, mask
head ``i2`` and batch ``i3``; :func:`coopdsl.ops.ggml_host.mask_opt` is the numpy model.

The interface is ggml's ``fa_mask_opt`` pipeline (ggml-vulkan.cpp, commit d99724f2): entry point
``main``; bindings 0 (the f16 mask) and 1 (the u32 result); push constants ``nem0 nem1 nem2 nbm1
nbm2 nbm3 nbd1 nbd2 nbd3`` (strides in elements); spec constants 0 ``BLOCK_SIZE`` (the workgroup
size, 128), 1 ``NUM_SUBGROUPS`` (BLOCK_SIZE / 32), 2 ``Br``, 3 ``Bc``; subgroups of 32. Grid:
``(ceil(nem0 / (16 Bc)), ceil(nem1 / Br), nem2 * nem3)``. Only the GLSL's general path is written
(scalar loads with bounds checks); its f16vec4 fast path for aligned masks gives the same bits. The order
is coopdsl's (the same bits): a workgroup issues the loads of all its 16 blocks (unrolled) before its one
barrier, where ggml's takes a block at a time with two barriers each, and any ``BLOCK_SIZE`` that is a
multiple of 32 up to 1024 works (``ops.attention`` launches 512: a mask shared by all heads of a short
prompt is only a few workgroups).
"""

from __future__ import annotations

import struct as _struct
from typing import no_type_check

import coopdsl as cd
from coopdsl import f16, f32, u32

FLT_MAX_OVER_2: float = _struct.unpack("<f", _struct.pack("<I", 0x7EFFFFFF))[0]
MASK_OPT_ALL_NEG_INF = 1
MASK_OPT_ALL_ZERO = 2
BLOCK_SIZE = 128


@cd.kernel(workgroup_size=("BLOCK_SIZE", 1, 1), subgroup_size=32, entry_point="main")
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def fa_mask_opt(data_a: cd.Buffer[f16], data_d: cd.Buffer[u32], nem0: u32, nem1: u32, nem2: u32,
                nbm1: u32, nbm2: u32, nbm3: u32, nbd1: u32, nbd2: u32, nbd3: u32,
                BLOCK_SIZE: cd.Spec[u32, 0] = 128, NUM_SUBGROUPS: cd.Spec[u32, 1] = 4,
                Br: cd.Spec[u32, 2] = 32, Bc: cd.Spec[u32, 3] = 32):
    tid = cd.local_invocation_index
    i0 = cd.workgroup_id.x
    i1 = cd.workgroup_id.y
    i2 = cd.workgroup_id.z % nem2
    i3 = cd.workgroup_id.z // nem2
    # coopdsl's order (the same bits): every block's loads first, in unrolled loops with no barrier between
    # blocks, so that many loads are in flight (ggml's loop is one block at a time, two barriers each); each
    # subgroup's minimum and maximum of block x go to shared memory at x * NUM_SUBGROUPS + subgroup
    minsh = cd.shared(f32, 16 * NUM_SUBGROUPS)
    maxsh = cd.shared(f32, 16 * NUM_SUBGROUPS)
    base = i2 * nbm2 + i3 * nbm3

    for block_x in cd.static_range(16):
        min_v = f32(FLT_MAX_OVER_2)
        max_v = f32(-FLT_MAX_OVER_2)
        for i in cd.range(0, Br * Bc, BLOCK_SIZE, unroll=True):
            if i + tid < Br * Bc:
                j0 = (i + tid) % Bc + (i0 * 16 + block_x) * Bc
                j1 = (i + tid) // Bc + i1 * Br
                if j0 < nem0 and j1 < nem1:
                    f = f32(data_a[base + j0 + j1 * nbm1])
                    min_v = min(min_v, f)
                    max_v = max(max_v, f)
        min_v = cd.subgroup_min(min_v)
        max_v = cd.subgroup_max(max_v)
        if cd.subgroup_invocation_id == 0:
            minsh[block_x * NUM_SUBGROUPS + cd.subgroup_id] = min_v
            maxsh[block_x * NUM_SUBGROUPS + cd.subgroup_id] = max_v
    cd.barrier()

    # the first subgroup folds the subgroups' values, lane x (< 16) those of block x, and ORs the lanes' bits
    if cd.subgroup_id == 0:
        lane = cd.subgroup_invocation_id
        bits = u32(0)
        if lane < 16:
            min_v = f32(FLT_MAX_OVER_2)
            max_v = f32(-FLT_MAX_OVER_2)
            for s in range(NUM_SUBGROUPS):
                min_v = min(min_v, minsh[lane * NUM_SUBGROUPS + s])
                max_v = max(max_v, maxsh[lane * NUM_SUBGROUPS + s])
            if max_v <= -FLT_MAX_OVER_2:
                bits |= u32(MASK_OPT_ALL_NEG_INF) << (2 * lane)
            if min_v == 0.0 and max_v == 0.0:
                bits |= u32(MASK_OPT_ALL_ZERO) << (2 * lane)
        result = cd.subgroup_or(bits)
        if lane == 0:
            data_d[i0 + i1 * nbd1 + i2 * nbd2 + i3 * nbd3] = result


def dims(nem0: int, nem1: int, nem2: int, nem3: int, Br: int, Bc: int) -> tuple[int, int, int, int]:
    """(u32 words per block row, block rows, nem2, nem3): the shape of the result."""
    return -(-nem0 // (16 * Bc)), -(-nem1 // Br), nem2, nem3


def launch_args(nem: tuple[int, int, int, int], Br: int, Bc: int,
                block_size: int = BLOCK_SIZE) -> tuple[tuple[int, int, int], dict[str, int]]:
    """(grid, push and spec values) for a packed f16 mask of ggml shape ``nem`` = (nem0, nem1, nem2, nem3);
    ``block_size``: the workgroup's invocations (ggml's 128; a multiple of 32, at most 1024: each subgroup of 32
    writes its own slots, a ValueError otherwise)."""
    if block_size % 32 or not 32 <= block_size <= 1024:
        raise ValueError(f"fa_mask_opt: block_size must be a multiple of 32 from 32 to 1024, got {block_size}")
    nem0, nem1, nem2, nem3 = nem
    nd, rows, _, _ = dims(nem0, nem1, nem2, nem3, Br, Bc)
    values = dict(nem0=nem0, nem1=nem1, nem2=nem2, nbm1=nem0, nbm2=nem0 * nem1, nbm3=nem0 * nem1 * nem2,
                  nbd1=nd, nbd2=nd * rows, nbd3=nd * rows * nem2,
                  BLOCK_SIZE=block_size, NUM_SUBGROUPS=block_size // 32, Br=Br, Bc=Bc)
    return (nd, rows, nem2 * nem3), values
