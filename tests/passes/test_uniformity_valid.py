"""Kernels the uniformity analysis must accept (no false alarms), and the levels it gives values and blocks."""

import runpy
from pathlib import Path

import pytest

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32
from coopdsl.passes.uniformity import DIVERGENT, SUBGROUP, WORKGROUP, analyze

from ..conftest import compile_checked

ROOT = Path(__file__).resolve().parents[2]


# -- levels of values ------------------------------------------------------------------------------------
@cd.kernel(workgroup_size=(64, 1, 1))
def sources(out: cd.Buffer[u32], ro: cd.Buffer[u32], rw: cd.Buffer[u32], n: u32, S: cd.Spec[u32] = 4):
    lid = cd.local_invocation_index
    out[0] = cd.workgroup_id.x                    # workgroup
    out[1] = cd.num_workgroups.y                  # workgroup
    out[2] = cd.subgroup_size                     # workgroup
    out[3] = cd.num_subgroups                     # workgroup
    out[4] = n + S                                # workgroup: push and spec constants
    out[5] = ro[cd.workgroup_id.x]                # workgroup: read-only buffer, uniform address
    out[6] = cd.subgroup_id                       # subgroup
    out[7] = cd.subgroup_add(lid)                 # subgroup
    out[8] = cd.subgroup_broadcast_first(lid)     # subgroup
    out[9] = cd.subgroup_ballot(lid > 3).x        # subgroup
    out[10] = ro[cd.subgroup_id]                  # subgroup: read-only buffer, subgroup-uniform address
    out[11] = lid                                 # divergent
    out[12] = cd.local_invocation_id.x            # divergent
    out[13] = cd.subgroup_invocation_id           # divergent
    out[14] = ro[lid]                             # divergent: divergent address
    out[15] = rw[0]                               # divergent: the kernel writes rw
    out[16] = cd.subgroup_inclusive_add(n)        # divergent: a scan
    out[17] = cd.atomic_add(rw, 1, u32(1))        # divergent: an atomic
    out[18] = cd.local_invocation_id.y            # workgroup: the workgroup is 1 wide along y
    out[19] = cd.global_invocation_id.x // 64     # workgroup: == workgroup_id.x for a 64-wide workgroup
    out[20] = cd.subgroup_broadcast_first(n)      # workgroup: broadcasting a uniform value
    bal = cd.subgroup_ballot(lid > 3)
    out[21] = cd.subgroup_ballot_bit_count(bal)   # subgroup: about the ballot alone
    out[22] = cd.subgroup_ballot_find_msb(bal)    # subgroup
    out[23] = u32(cd.subgroup_ballot_bit_extract(bal, n))  # subgroup: a uniform index
    out[24] = cd.subgroup_ballot_exclusive_bit_count(bal)  # divergent: this invocation's place
    out[25] = u32(cd.subgroup_ballot_bit_extract(bal, lid))  # divergent: a divergent index
    out[26] = cd.subgroup_lt_mask.x               # divergent: a lane mask
    rw[2] = 0


EXPECTED = [WORKGROUP] * 6 + [SUBGROUP] * 5 + [DIVERGENT] * 7 + [WORKGROUP] * 3 + [SUBGROUP] * 3 + [DIVERGENT] * 3


def stored_levels(k) -> list:
    """The uniformity of the value each store into ``out`` writes, in program order."""
    module = k.ir()
    u = analyze(module)
    stores = [op for op in module.entry.ops() if op.kind == "store" and op.operands[0].operands[0].name == "out"]
    return [u.level(op.operands[1]) for op in stores]


def test_levels_of_uniform_and_divergent_sources():
    assert stored_levels(sources) == EXPECTED


def test_levels_of_blocks():
    module = sources.ir()
    u = analyze(module)
    assert [u.block_level(b) for b in module.entry.blocks] == [WORKGROUP]
    ns = runpy.run_path(str(ROOT / "examples" / "gemm_edges.py"))
    module = ns["gemm_any"].ir()
    u = analyze(module)
    levels = {b.name: u.block_level(b) for b in module.entry.blocks}
    muladd = next(op for op in module.entry.ops() if op.kind == "coop_muladd")
    assert levels[muladd.block.name] == WORKGROUP
    assert levels["then"] == DIVERGENT  # the bounds-checked element copy
    assert levels["endif"] == WORKGROUP  # control reconverges after it
    endif = next(b for b in module.entry.blocks if b.name == "endif")
    copied = endif.phis[0]  # va: 0 or the element, depending on the bounds check
    assert u.level(copied) == DIVERGENT


# -- the examples and the documented patterns compile ----------------------------------------------------
@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_examples_pass_the_check(path):
    ns = runpy.run_path(str(path))
    for k in (v for v in ns.values() if isinstance(v, cd.Kernel)):
        analyze(k.ir()).check()


@cd.kernel(workgroup_size=(32, 1, 1))
def edge_tiles(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32], M: u32, N: u32, K: u32,
               TILE: cd.Spec[u32] = 16):
    """Full tiles straight from global memory, edge tiles staged with bounds checks."""
    row0 = cd.workgroup_id.y * TILE
    col0 = cd.workgroup_id.x * TILE
    lid = cd.local_invocation_index
    acc = Acc[f32, 16, 16].splat(0.0)
    if row0 + TILE <= M and col0 + TILE <= N and K % 16 == 0:
        for k0 in range(0, K, 16):
            acc = cd.muladd(MatA[f16, 16, 16].load(a, row0 * K + k0, stride=K),
                            MatB[f16, 16, 16].load(b, k0 * N + col0, stride=N), acc)
        acc.store(c, row0 * N + col0, stride=N)
        return
    sa = cd.shared(f16, 256)
    sb = cd.shared(f16, 256)
    sc = cd.shared(f32, 256)
    for k0 in range(0, K, 16):
        for t in cd.static_range(8):
            e = lid + t * 32
            va = f16(0.0)
            vb = f16(0.0)
            if row0 + e // 16 < M and k0 + e % 16 < K:
                va = a[(row0 + e // 16) * K + k0 + e % 16]
            if k0 + e // 16 < K and col0 + e % 16 < N:
                vb = b[(k0 + e // 16) * N + col0 + e % 16]
            sa[e] = va
            sb[e] = vb
        cd.barrier()
        acc = cd.muladd(MatA[f16, 16, 16].load(sa, 0, stride=16), MatB[f16, 16, 16].load(sb, 0, stride=16), acc)
        cd.barrier()
    acc.store(sc, 0, stride=16)
    cd.barrier()
    for t in cd.static_range(8):
        e = lid + t * 32
        if row0 + e // 16 < M and col0 + e % 16 < N:
            c[(row0 + e // 16) * N + col0 + e % 16] = sc[e]


@cd.kernel(workgroup_size=(32, 1, 1))
def attention(q: cd.Buffer[f16], k: cd.Buffer[f16], v: cd.Buffer[f16], o: cd.Buffer[f32], L: u32):
    """One 16-row query block per workgroup, online softmax with one invocation per row."""
    q0 = cd.workgroup_id.x * 16
    lid = cd.local_invocation_index
    s_sh = cd.shared(f32, 256)
    p_sh = cd.shared(f16, 256)
    o_sh = cd.shared(f32, 256)
    m_sh = cd.shared(f32, 16)
    l_sh = cd.shared(f32, 16)
    qa = MatA[f16, 16, 16].load(q, q0 * 16, stride=16)
    if lid < 16:
        m_sh[lid] = -1e30
        l_sh[lid] = 0.0
    for t in cd.static_range(8):
        o_sh[lid + t * 32] = 0.0
    cd.barrier()
    for kb in range(0, L, 16):
        kt = MatB[f16, 16, 16].load(k, kb * 16, stride=16, layout=cd.ColumnMajor)
        cd.muladd(qa, kt, Acc[f32, 16, 16].splat(0.0)).store(s_sh, 0, stride=16)
        cd.barrier()
        if lid < 16:  # per-row softmax
            row = lid * 16
            mx = m_sh[lid]
            for j in range(16):
                if kb + j < L:
                    mx = max(mx, s_sh[row + j])
            scale = cd.exp(m_sh[lid] - mx)
            total = l_sh[lid] * scale
            for j in range(16):
                p = 0.0
                if kb + j < L:
                    p = cd.exp(s_sh[row + j] - mx)
                total += p
                p_sh[row + j] = f16(p)
                o_sh[row + j] = o_sh[row + j] * scale
            m_sh[lid] = mx
            l_sh[lid] = total
        cd.barrier()
        acc = Acc[f32, 16, 16].load(o_sh, 0, stride=16)
        acc = cd.muladd(MatA[f16, 16, 16].load(p_sh, 0, stride=16), MatB[f16, 16, 16].load(v, kb * 16, stride=16),
                        acc)
        acc.store(o_sh, 0, stride=16)
        cd.barrier()
    for t in cd.static_range(8):
        e = lid + t * 32
        o[q0 * 16 + e] = o_sh[e] / l_sh[e // 16]


@cd.kernel(workgroup_size=(128, 1, 1))
def per_subgroup(a: cd.Buffer[f16], c: cd.Buffer[f32], tiles: cd.Buffer[u32], n: u32):
    """Subgroup-uniform control is enough for subgroup-scope matrices: subgroup ids, votes, broadcasts,
    loads of read-only buffers at subgroup-uniform addresses, loops with uniform trip counts."""
    sg = cd.subgroup_id
    acc = Acc[f32, 16, 16].splat(0.0)
    if sg < 2:
        acc = cd.muladd(MatA[f16, 16, 16].load(a, sg * 256, stride=16), MatB[f16, 16, 16].load(a, 0, stride=16), acc)
    if cd.subgroup_any(a[cd.local_invocation_index] > f16(0.0)):
        acc = acc * 2.0
    for _ in range(tiles[sg]):
        acc = acc + acc
    if cd.subgroup_broadcast_first(a[cd.local_invocation_index]) > f16(1.0):
        acc = acc * 0.5
    for i in range(n):
        if a[i * 128 + cd.local_invocation_index] > f16(0.0):
            break  # a divergent break: control reconverges after the loop
    if cd.workgroup_id.x * 16 >= n:
        return  # a uniform early return
    acc.store(c, sg * 256, stride=16)
    cd.barrier()


@cd.kernel(workgroup_size=(32, 1, 1))
def scalar_divergence(a: cd.Buffer[f32], c: cd.Buffer[f32], n: u32):
    """Divergent branches around scalar code and subgroup operations are fine; matrix elements are changed
    conditionally by writing every one (the write stores and reloads the whole matrix)."""
    acc = Acc[f32, 16, 16].splat(1.0)
    lid = cd.local_invocation_index
    if lid < 16:
        a[lid] = cd.subgroup_add(a[lid])
    for i in range(acc.length()):
        acc[i] = cd.select(acc[i] < 0.0, 0.0, acc[i])
    i = lid
    while i < n:
        c[i] = 0.0
        i += 32
    if cd.global_invocation_id.y < n and cd.global_invocation_id.x // 32 < n:  # uniform for a (32, 1, 1) workgroup
        acc.store(c, 0, stride=16)
    cd.barrier()


@cd.func
def guarded_mma(a, acc, n):
    for i in range(n):
        acc = cd.muladd(MatA[f16, 16, 16].load(a, i * 256, stride=16), MatB[f16, 16, 16].load(a, 0, stride=16), acc)
    return acc


@cd.kernel(workgroup_size=(32, 1, 1))
def helper_calls(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):
    """A device function running matrix ops, called in uniform control with uniform arguments."""
    acc = guarded_mma(a, Acc[f32, 16, 16].splat(0.0), n)
    if cd.workgroup_id.x < n:
        acc = guarded_mma(a, acc, cd.workgroup_id.y)
    acc.store(c, 0, stride=16)


@pytest.mark.parametrize("k", [edge_tiles, attention, per_subgroup, scalar_divergence, helper_calls],
                         ids=lambda k: k.name)
def test_valid_patterns_compile(k):
    compile_checked(k)
