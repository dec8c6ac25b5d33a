"""Neural texture decompression: a two-layer MLP per texel with SPV_QCOM_cooperative_matrix_conversion.

Every texel has 16 latent features (f16, stored as 8 packed u32 words); the decoder is
out = W1 x relu(W0 x latent) with two 16 x 16 f16 weight matrices (the second workload of the
VK_QCOM_cooperative_matrix_conversion proposal: construct, multiply-add, extract, construct again).

Each workgroup is one subgroup of 32 invocations decoding 32 texels.  Invocation i owns texel i: its packed
latent row ``u32[8]`` becomes row i of A (``MatA[f16, 32, 16].from_rows(packed)``, the implicit f16 bitcast),
the first layer's accumulator comes back as each texel's hidden features (``h.to_rows()``: f16[16]), the
ReLU runs per invocation on that array, and the result is row i of the second layer's A.  The output
accumulator is extracted packed (``to_rows(u32)``: an f16 accumulator row of 16 is ``u32[8]``) and each
invocation writes its texel's 8 words.  The weights are ordinary cooperative-matrix loads; nothing goes
through shared memory.

Buffers: latent (texels x 8 u32 = texels x 16 f16), w0 and w1 (16 x 16 f16, row-major, in x out: layer
y = x @ w), out (texels x 8 u32 = texels x 16 f16).  Texels a multiple of 32; 32-wide subgroups.  Dispatch
(texels / 32, 1, 1).  ``python examples/qcom_ntc_mlp.py`` runs it on the CPU interpreter against numpy.
"""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, u32

TEXELS_PER_TILE, FEATURES = 32, 16  # an f16 row of A is 16 elements (256 bits)


@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)  # rows of the matrices are the 32 invocations
def ntc_decode(latent: cd.Buffer[u32], w0: cd.Buffer[f16], w1: cd.Buffer[f16], out: cd.Buffer[u32]):
    texel = cd.workgroup_id.x * TEXELS_PER_TILE + cd.subgroup_invocation_id
    packed = cd.array(u32, 8)                    # this texel's 16 f16 latents, two per word
    for i in cd.static_range(8):
        packed[i] = latent[texel * 8 + i]
    b0 = MatB[f16, FEATURES, FEATURES].load(w0, 0, stride=FEATURES)
    b1 = MatB[f16, FEATURES, FEATURES].load(w1, 0, stride=FEATURES)
    zero = Acc[f16, TEXELS_PER_TILE, FEATURES].splat(0.0)

    a0 = MatA[f16, TEXELS_PER_TILE, FEATURES].from_rows(packed)   # layer 1: construct from packed rows
    h = cd.muladd(a0, b0, zero)
    hidden = h.to_rows()                                           # extract: f16[16] per texel
    for i in cd.static_range(FEATURES):
        hidden[i] = cd.max(hidden[i], f16(0.0))                   # ReLU, per invocation
    a1 = MatA[f16, TEXELS_PER_TILE, FEATURES].from_rows(hidden)   # construct again
    o = cd.muladd(a1, b1, zero)                                    # layer 2
    words = o.to_rows(u32)                                         # an f16 accumulator row packs as u32[8]
    for i in cd.static_range(8):
        out[texel * 8 + i] = words[i]


def reference(latent: np.ndarray, w0: np.ndarray, w1: np.ndarray) -> np.ndarray:
    """numpy: the same MLP on f16 values (texels x 16 f16), rounding to f16 where the kernel's results are f16."""
    h = (latent.astype(np.float32) @ w0.astype(np.float32)).astype(np.float16)
    h = np.maximum(h, np.float16(0))
    return (h.astype(np.float32) @ w1.astype(np.float32)).astype(np.float16)


def run(texels=64, rng=None, device="cpu"):
    """Decode ``texels`` random latent vectors; (output features, numpy reference), both texels x 16 f16."""
    rng = rng or np.random.default_rng(0)
    latent = rng.uniform(-1, 1, (texels, FEATURES)).astype(np.float16)
    w0 = rng.uniform(-0.5, 0.5, (FEATURES, FEATURES)).astype(np.float16)
    w1 = rng.uniform(-0.5, 0.5, (FEATURES, FEATURES)).astype(np.float16)
    out = np.zeros((texels, 8), np.uint32)
    ntc_decode.launch((texels // TEXELS_PER_TILE, 1, 1), latent.view(np.uint32), w0, w1, out, device=device)
    return out.view(np.float16), reference(latent, w0, w1)


if __name__ == "__main__":
    got, ref = run()
    print(f"max |out - numpy| = {np.abs(got.astype(np.float32) - ref.astype(np.float32)).max():.2e}")
