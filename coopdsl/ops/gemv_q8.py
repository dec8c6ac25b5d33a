"""x rounded to 8 bits per block of 32 (ggml's q8_1), and q4_0 / q8_0 blocks read as 32-bit words: what the
integer-dot-product decoding products of :mod:`coopdsl.ops.gemv` ("pre", "prew") and
:mod:`coopdsl.ops.gemv_xregs` share.

:func:`quantize_kernel` writes x's blocks as :data:`Q8_WORDS` i32 words each (:data:`XQ_VECS` ``ivec4`` loads);
:func:`block_words` reads one q4_0 or q8_0 block of a row of W from the words of the row's aligned pairs of
blocks; the products start each integer sum at :data:`MAGIC_BITS`, so that the sum's bits are already the f32
``MAGIC + sum`` (NVIDIA lists int-to-float conversions at a quarter of the integer rate).
"""

from functools import cache
from typing import cast, no_type_check

import coopdsl as cd
from coopdsl import f16, f32, i32, u32, vec2, vec4

MAGIC = 12582912.0   # 1.5 * 2**23: for |v| < 2**22, the low bits of the f32 v + MAGIC hold round(v) (two's complement)
MAGIC_BITS = 0x4B400000   # MAGIC's f32 bits: for an integer |n| < 2**22, the bits MAGIC_BITS + n are the f32 MAGIC + n
Q8_WORDS = 12            # i32 words of one quantized block of 32 activations: 8 of lanes, d, d * sum, two zeros
XQ_VECS = Q8_WORDS // 4  # ... as the ivec4s the products read (16-byte loads: elements 0-15, 16-31, then d, d * sum)
PAIR_WORDS = {"q4_0": 9, "q8_0": 17}   # 32-bit words of two blocks (36 and 68 bytes)
WG = 128                 # the rounding kernel's workgroup: 16 blocks of 8 invocations


def grid(blocks: int) -> tuple[int, int, int]:
    """Workgroups of :func:`quantize_kernel` for ``blocks`` blocks of 32 values."""
    return (-(-blocks // (WG // 8)), 1, 1)


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def block_words(w, base, h, NW):
    """Block ``2 i + h`` of a row of q4_0 (``NW`` 9) or q8_0 (17) weights viewed as 32-bit words, ``base`` the
    first word of the pair ``i`` plus ``(NW // 2) * h``: (its scale as f32, levels 0-15 as a ``uvec4``, levels 16-31
    as a ``uvec4``; q4_0's 16 level bytes are all in the first, the second is zeros).  The scale is the low
    (``h`` 0) or high half of the first word, the levels the next 16 bits on (h 0) or the next word on."""
    t = [w[base + j] for j in cd.static_range(NW // 2 + 1)]
    d = f32(cd.bitcast(t[0] >> (16 * h), vec2[f16]).x)
    q = [cd.select(h == 1, t[j + 1], (t[j] >> 16) | (t[j + 1] << 16)) for j in cd.static_range(NW // 2)]
    if NW == 9:
        return d, vec4[u32](q[0], q[1], q[2], q[3]), vec4[u32](0, 0, 0, 0)
    return d, vec4[u32](q[0], q[1], q[2], q[3]), vec4[u32](q[4], q[5], q[6], q[7])


@cd.func
@no_type_check
def amax4(v):
    """The largest magnitude of a ``vec4`` of f32."""
    return max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w)))


@cd.func
@no_type_check
def q8_scale(a):
    """(``d = a / 127``, ``127 / a`` or 0 for ``a`` 0): a block's scale and what its values are multiplied by
    before rounding, from its largest magnitude ``a``."""
    return a / 127.0, cd.select(a == 0.0, f32(0.0), 127.0 / a)


@cd.func
@no_type_check
def round_pack4(v, inv):
    """Four values ``v`` (``vec4`` of f32) rounded to 8 bits, ``round(v * inv)``: (the i32 word of their four
    lanes, element 0 in the low byte; the sum of the four levels)."""
    q = cd.round(v * inv)
    qi = [i32(q.x), i32(q.y), i32(q.z), i32(q.w)]
    return (qi[0] & 255) | ((qi[1] & 255) << 8) | ((qi[2] & 255) << 16) | (qi[3] << 24), qi[0] + qi[1] + qi[2] + qi[3]


@cache
def quantize_kernel(x_f16: bool = False) -> cd.Kernel:
    """x (f32, or f16) to 8 bits a value, per block of 32 as ggml's q8_1: ``d = max |x| / 127``, ``q =
    round(x / d)``; block ``i`` is :data:`Q8_WORDS` i32 words at ``12 i``: the lanes of elements ``4 k .. 4 k
    + 3`` in word ``k`` (element ``4 k`` in the low byte), then the bits of ``d`` and of ``d * sum(q)`` as
    f32, then two zeros, so that the products read a block as three aligned 16-byte ``ivec4`` loads.  Eight
    invocations a block, one vec4 each; launch ``(ceil(blocks / 16), 1, 1)`` workgroups."""
    xt = vec4[f16] if x_f16 else vec4[f32]

    @cd.kernel(workgroup_size=(WG, 1, 1), subgroup_size=32)
    @no_type_check
    def quantize_q8(x: cd.Buffer[xt], xq: cd.Buffer[i32], blocks: u32):
        t = cd.global_invocation_id.x
        blk = t // 8
        k = t % 8
        v = vec4[f32](x[min(blk, blocks - 1) * 8 + k])
        a = amax4(v)
        for s in cd.static_range(3):                  # the block's 8 invocations are neighbours in the subgroup
            a = max(a, cd.subgroup_shuffle_xor(a, 1 << s))
        d, inv = q8_scale(a)
        word, total = round_pack4(v, inv)
        for s in cd.static_range(3):
            total += cd.subgroup_shuffle_xor(total, 1 << s)
        if blk < blocks:
            xq[blk * Q8_WORDS + k] = word
            if k == 0:
                xq[blk * Q8_WORDS + 8] = cd.bitcast(d, i32)
                xq[blk * Q8_WORDS + 9] = cd.bitcast(d * f32(total), i32)
            if k == 1:
                xq[blk * Q8_WORDS + 10] = i32(0)
                xq[blk * Q8_WORDS + 11] = i32(0)

    quantize_q8.__name__ = quantize_q8.__qualname__ = "quantize_q8" + ("_f16" if x_f16 else "")
    return cast(cd.Kernel, quantize_q8)


