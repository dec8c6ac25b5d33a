"""A kernel written from docs/ alone (lang/memory.md: structs, Ptr, private arrays; uniformity.md: a value
broadcast through shared memory after a barrier; language.md: swizzle and component stores; the required
subgroup size), launched on the interpreter by tests/interp and on the GPU by tests/gpu."""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, u32, vec2, vec4


@cd.struct
class Job:
    k: u32
    a: cd.Ptr[f16]
    stats: cd.Ptr[vec4[f32]]


@cd.kernel(workgroup_size=(64, 1, 1), subgroup_size=32)
def scaled_tiles(job: cd.Uniform[Job], b: cd.Buffer[f16], scale_in: cd.Buffer[f32], c: cd.Buffer[f32]):
    sh = cd.shared(f32, 1)
    if cd.local_invocation_index == 0:
        sh[0] = scale_in[0] * 0.5
    cd.barrier()
    scale = sh[0]
    accs = cd.private_array(Acc[f32, 16, 16], 2)
    for j in cd.range(2, unroll=True):
        accs[j] = Acc[f32, 16, 16].splat(0.0)
    row0 = cd.subgroup_id * 16
    for k0 in range(0, job.k, 16):
        ta = MatA[f16, 16, 16].load(job.a, row0 * job.k + k0, stride=job.k)
        for j in cd.range(2, unroll=True):
            tb = MatB[f16, 16, 16].load(b, k0 * 32 + j * 16, stride=32)
            accs[j] = cd.muladd(ta, tb, accs[j])
    for j in cd.range(2, unroll=True):
        (accs[j] * scale).store(c, row0 * 32 + j * 16, stride=32)
    if cd.local_invocation_index == 0:
        st = vec4[f32](0.0)
        st.x = scale
        st.yz = vec2[f32](f32(job.k), 1.0)
        job.stats[0] = st
        job.stats[1].w = 7.0


def run_and_check(device) -> None:
    """Launch on ``device`` ("cpu" or a runtime.Device) and compare with numpy."""
    rng = np.random.default_rng(0)
    k = 48
    a = rng.integers(-2, 3, (32, k)).astype(np.float16)
    b = rng.integers(-2, 3, (k, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    stats = np.zeros((2, 4), np.float32)
    scaled_tiles.launch((1,), {"k": k, "a": a, "stats": stats}, b, np.array([3.0], np.float32), c, device=device)
    np.testing.assert_array_equal(c, 1.5 * (a.astype(np.float32) @ b.astype(np.float32)))
    np.testing.assert_array_equal(stats, [[1.5, 48.0, 1.0, 0.0], [0.0, 0.0, 0.0, 7.0]])
