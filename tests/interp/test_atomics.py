"""Atomics apply in invocation order, each invocation seeing its predecessors' results."""

import numpy as np

import coopdsl as cd
from coopdsl import f32, i32, u32


@cd.kernel(workgroup_size=(64, 1, 1))
def ordered(x: cd.Buffer[u32], counter: cd.Buffer[u32], old: cd.Buffer[u32], fsum: cd.Buffer[f32],
            fold: cd.Buffer[f32], m: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    v = x[i]
    old[i * 4] = cd.atomic_add(counter, 0, v)             # one hot address: prefix sums in invocation order
    old[i * 4 + 1] = cd.atomic_exchange(counter, 1 + v % 3, i)  # a few addresses
    old[i * 4 + 2] = cd.atomic_compare_exchange(counter, 4, i - 1, i)  # a chain: succeeds only in order
    old[i * 4 + 3] = cd.atomic_max(counter, 5, v)
    fold[i] = cd.atomic_add(fsum, 0, f32(v) * 0.1)
    cd.atomic_min(m, i % 4, i32(v) - 50)


def test_atomics_run_in_invocation_order():
    n = 256
    x = np.random.default_rng(0).integers(0, 100, n).astype(np.uint32)
    counter = np.zeros(6, np.uint32)
    old = np.zeros(4 * n, np.uint32)
    fsum, fold = np.zeros(1, np.float32), np.zeros(n, np.float32)
    m = np.zeros(4, np.int32)
    ordered.launch((n // 64,), x, counter, old, fsum, fold, m, device="cpu")
    r = old.reshape(n, 4)
    np.testing.assert_array_equal(r[:, 0], np.r_[0, np.cumsum(x)[:-1]])
    assert counter[0] == x.sum()
    for a in (1, 2, 3):
        hits = np.nonzero(1 + x % 3 == a)[0]
        np.testing.assert_array_equal(r[hits, 1], np.r_[0, hits[:-1]])
        assert counter[a] == hits[-1]
    np.testing.assert_array_equal(r[:, 2], np.r_[0, np.arange(n - 1)])  # each cmpxchg saw i - 1
    assert counter[4] == n - 1
    np.testing.assert_array_equal(r[:, 3], np.r_[0, np.maximum.accumulate(x)[:-1]])
    seq = np.zeros(1, np.float32)
    for i in range(n):  # float adds in order, rounded after each
        assert fold[i] == seq[0]
        seq[0] = np.float32(seq[0] + np.float32(np.float32(x[i]) * np.float32(0.1)))
    assert fsum[0] == seq[0]
    np.testing.assert_array_equal(m, [min(0, (x[k::4].astype(np.int64) - 50).min()) for k in range(4)])


@cd.kernel(workgroup_size=(64, 1, 1))
def shared_histogram(x: cd.Buffer[f32], hist: cd.Buffer[u32]):
    local = cd.shared(u32, 8)
    i = cd.local_invocation_index
    if i < 8:
        local[i] = 0
    cd.barrier()
    cd.atomic_add(local, u32(cd.clamp(x[cd.global_invocation_id.x] * 8.0, 0.0, 7.0)), 1)
    cd.barrier()
    if i < 8:
        cd.atomic_add(hist, i, cd.atomic_load(local, i))


def test_shared_memory_atomics():
    x = np.random.default_rng(1).uniform(0, 1, 64 * 4).astype(np.float32)
    hist = np.zeros(8, np.uint32)
    shared_histogram.launch((4,), x, hist, device="cpu")
    np.testing.assert_array_equal(hist, np.bincount(np.clip(x * 8, 0, 7).astype(int), minlength=8))
