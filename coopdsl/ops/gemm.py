"""``matmul``: C = A x B for any M, N, K with cooperative matrices.

Each workgroup of four subgroups computes a 64 x 64 block of C (each subgroup
32 x 32: 2 x 2 accumulator tiles of 16 x 16), stepping K by one MulAdd depth
(16 for f16/bf16, 32 for 8-bit integers).  Slices of A and B are copied into
shared memory with bounds checks (zeros outside the matrices), so no size has
to be a tile multiple; blocks entirely inside C are stored directly, edge
blocks through shared memory.  M, N and K are push constants: one pipeline
serves every size.
"""

from __future__ import annotations

from functools import cache
from typing import Any, no_type_check

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, bf16, f16, f32, i8, i32, u8, u32

BLOCK = 64  # edge of the C block one workgroup computes
SUB = 32    # edge of the C block one subgroup computes
WG = 128    # four subgroups of 32

# input kind -> (A/B component type, C type, MulAdd depth, numpy input dtype, numpy output dtype)
KINDS = {
    "f16": (f16, f32, 16, np.float16, np.float32),
    "bf16": (bf16, f32, 16, np.uint16, np.float32),
    "i8": (i8, i32, 32, np.int8, np.int32),
    "u8": (u8, u32, 32, np.uint8, np.uint32),
}


@cache
def kernel(kind: str) -> cd.Kernel:
    """The matmul kernel for input kind ``kind`` (a key of :data:`KINDS`)."""
    ab, acc_t, depth, _, _ = KINDS[kind]
    a_loads = BLOCK * depth // WG  # A elements each invocation copies per K step
    zero = 0 if ab.kind == "int" else 0.0  # Python numbers: typed where they are used
    zero_c = 0 if acc_t.kind == "int" else 0.0

    @cd.kernel(workgroup_size=(WG, 1, 1))
    @no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
    def matmul(a: cd.Buffer[ab], b: cd.Buffer[ab], c: cd.Buffer[acc_t], M: u32, N: u32, K: u32):
        row0 = cd.workgroup_id.y * BLOCK
        col0 = cd.workgroup_id.x * BLOCK
        lid = cd.local_invocation_index
        sg_row = (cd.subgroup_id // 2) * SUB
        sg_col = (cd.subgroup_id % 2) * SUB
        sa = cd.shared(ab, BLOCK * depth)
        sb = cd.shared(ab, depth * BLOCK)
        sc = cd.shared(acc_t, BLOCK * BLOCK)
        acc = [Acc[acc_t, 16, 16].splat(zero_c) for _ in cd.static_range(4)]
        for k0 in range(0, K, depth):
            for t in cd.static_range(a_loads):
                e = lid + t * WG
                r = e // depth      # A: BLOCK rows of `depth`
                col = e % depth
                va = ab(zero)
                if row0 + r < M and k0 + col < K:
                    va = a[(row0 + r) * K + k0 + col]
                sa[e] = va
                rb = e // BLOCK     # B: `depth` rows of BLOCK
                cb = e % BLOCK
                vb = ab(zero)
                if k0 + rb < K and col0 + cb < N:
                    vb = b[(k0 + rb) * N + col0 + cb]
                sb[e] = vb
            cd.barrier()
            for i in cd.static_range(2):
                ta = MatA[ab, 16, depth].load(sa, (sg_row + i * 16) * depth, stride=depth)
                for j in cd.static_range(2):
                    tb = MatB[ab, depth, 16].load(sb, sg_col + j * 16, stride=BLOCK)
                    acc[i * 2 + j] = cd.muladd(ta, tb, acc[i * 2 + j])
            cd.barrier()
        if row0 + BLOCK <= M and col0 + BLOCK <= N:  # uniform: the whole block is inside C
            for i in cd.static_range(2):
                for j in cd.static_range(2):
                    acc[i * 2 + j].store(c, (row0 + sg_row + i * 16) * N + col0 + sg_col + j * 16, stride=N)
        else:
            for i in cd.static_range(2):
                for j in cd.static_range(2):
                    acc[i * 2 + j].store(sc, (sg_row + i * 16) * BLOCK + sg_col + j * 16, stride=BLOCK)
            cd.barrier()
            for t in cd.static_range(BLOCK * BLOCK // WG):
                e = lid + t * WG
                r = e // BLOCK
                col = e % BLOCK
                if row0 + r < M and col0 + col < N:
                    c[(row0 + r) * N + col0 + col] = sc[e]

    return matmul


def matmul(a: Any, b: Any, *, out: Any = None, kind: str | None = None, device: Any = None) -> Any:
    """``a @ b`` on the GPU (or ``device="cpu"``): a is M x K, b is K x N, both row-major.

    ``kind`` is "f16", "bf16" (inputs hold bf16 bit patterns as uint16, see
    :func:`to_bf16`), "i8" or "u8"; by default it follows the dtype of ``a``
    (float16, int8, uint8).  The result is float32 (f16, bf16), int32 (i8) or
    uint32 (u8): a new numpy array, or ``out`` (a numpy array or a resident
    ``coopdsl.runtime.Array`` of that dtype and shape M x N).  Inputs may be
    numpy arrays or resident arrays.
    """
    kind = kind or _kind_of(a)
    if kind not in KINDS:
        raise ValueError(f"matmul: kind must be one of {sorted(KINDS)}, got {kind!r}")
    _, _, _, in_dtype, out_dtype = KINDS[kind]
    (m, k1), (k2, n) = _shape(a, "a"), _shape(b, "b")
    if k1 != k2:
        raise ValueError(f"matmul: a is {m} x {k1} but b is {k2} x {n}")
    for name, x in (("a", a), ("b", b)):
        if np.dtype(x.dtype) != in_dtype:
            raise ValueError(f"matmul({kind}): {name} must be {np.dtype(in_dtype).name}, got {np.dtype(x.dtype).name}")
    if out is None:
        out = np.zeros((m, n), out_dtype)
    elif tuple(out.shape) != (m, n) or np.dtype(out.dtype) != out_dtype:
        raise ValueError(f"matmul: out must be {np.dtype(out_dtype).name} of shape {(m, n)}, got "
                         f"{np.dtype(out.dtype).name} {tuple(out.shape)}")
    grid = (-(-n // BLOCK), -(-m // BLOCK), 1)
    kernel(kind).launch(grid, a, b, out, M=m, N=n, K=k1, device=device)
    return out


def _kind_of(a: Any) -> str:
    dt = np.dtype(a.dtype)
    for name, (_, _, _, in_dtype, _) in KINDS.items():
        if dt == in_dtype and name != "bf16":
            return name
    raise ValueError(f"matmul: no kind for {dt.name} inputs; pass kind= ('bf16' for uint16 bit patterns)")


def _shape(x: Any, name: str) -> tuple[int, int]:
    shape = tuple(x.shape)
    if len(shape) != 2:
        raise ValueError(f"matmul: {name} must be 2-D, got shape {shape}")
    return shape


def to_bf16(x: Any) -> np.ndarray:
    """float values as bf16 bit patterns (uint16), rounded to nearest even."""
    f = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
    nan = (f & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, 0x7FC0, rounded).astype(np.uint16)


def from_bf16(x: Any) -> np.ndarray:
    """bf16 bit patterns (uint16) as float32."""
    return (np.asarray(x, np.uint16).astype(np.uint32) << 16).view(np.float32)
