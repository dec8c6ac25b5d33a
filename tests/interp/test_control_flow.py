"""Structured control flow with divergence: each invocation follows its own path (min-PC reconvergence)."""

import numpy as np

import coopdsl as cd
from coopdsl import f32, i32, u32, vec2


@cd.func
def clipped_steps(x, n):
    if x > n:
        return x - n  # early return from a helper
    for j in range(n):
        if j == 3:
            continue
        if x + j > 10:
            break
        x += 1
    return x


@cd.kernel(workgroup_size=(64, 1, 1))
def divergent(out: cd.Buffer[u32], n: u32):
    i = cd.global_invocation_id.x
    if i >= n:
        return  # early return from the kernel
    k = u32(0)
    while k < i:
        k += 2
        if k == 10:
            break
    out[i] = clipped_steps(k, n)


def _clipped_steps(x, n):
    if x > n:
        return x - n
    for j in range(n):
        if j == 3:
            continue
        if x + j > 10:
            break
        x += 1
    return x


def _divergent(i, n):
    k = 0
    while k < i:
        k += 2
        if k == 10:
            break
    return _clipped_steps(k, n)


def test_divergent_loops_break_continue_and_early_returns():
    n = 90
    out = np.full(128, 7, np.uint32)
    divergent.launch((2,), out, n, device="cpu")
    np.testing.assert_array_equal(out[:n], [_divergent(i, n) for i in range(n)])
    assert (out[n:] == 7).all()  # returned invocations wrote nothing


@cd.kernel(workgroup_size=(32, 1, 1))
def nested(out: cd.Buffer[i32]):
    i = i32(cd.local_invocation_index)
    total = i32(0)
    for a in range(i % 5):
        for b in range(a, 6):
            if (a + b) % 3 == 0:
                continue
            total += a * b
            if total > 40:
                break
        if i % 7 == 3 and a == 2:
            break
    out[i] = total


def test_nested_loops_with_per_invocation_trip_counts():
    def ref(i):
        total = 0
        for a in range(i % 5):
            for b in range(a, 6):
                if (a + b) % 3 == 0:
                    continue
                total += a * b
                if total > 40:
                    break
            if i % 7 == 3 and a == 2:
                break
        return total

    out = np.zeros(32, np.int32)
    nested.launch((1,), out, device="cpu")
    np.testing.assert_array_equal(out, [ref(i) for i in range(32)])


@cd.kernel(workgroup_size=(16, 1, 1))
def branches(x: cd.Buffer[f32], out: cd.Buffer[f32]):
    i = cd.local_invocation_index
    v = x[i]
    if v < 0.0:
        v = -v * 2.0
    elif v < 1.0:
        v = v + 10.0
    else:
        if i % 2 == 0:
            v = v * v
    out[i] = v


def test_if_elif_else_phis():
    x = np.linspace(-2, 3, 16).astype(np.float32)
    out = np.zeros(16, np.float32)
    branches.launch((1,), x, out, device="cpu")
    ref = np.where(x < 0, -x * 2, np.where(x < 1, x + 10, np.where(np.arange(16) % 2 == 0, x * x, x)))
    np.testing.assert_allclose(out, ref.astype(np.float32), rtol=1e-6)


@cd.kernel(workgroup_size=(8, 4, 2))
def ids(out: cd.Buffer[u32]):
    g = cd.global_invocation_id
    lid = cd.local_invocation_id
    wid = cd.workgroup_id
    nw = cd.num_workgroups
    flat = (g.z * nw.y * 4 + g.y) * nw.x * 8 + g.x
    out[flat * 4] = cd.local_invocation_index
    out[flat * 4 + 1] = lid.x + lid.y * 10 + lid.z * 100
    out[flat * 4 + 2] = wid.x + wid.y * 10 + wid.z * 100
    out[flat * 4 + 3] = cd.subgroup_id * 1000 + cd.subgroup_invocation_id + cd.num_subgroups * 100000


def test_builtin_ids_over_a_3d_grid():
    grid = (2, 3, 2)
    out = np.zeros(8 * 4 * 2 * 12 * 4, np.uint32)
    ids.launch(grid, out, device="cpu", subgroup_size=16)
    rows = out.reshape(-1, 4)
    z, y, x = np.meshgrid(np.arange(2 * 2), np.arange(4 * 3), np.arange(8 * 2), indexing="ij")
    lx, ly, lz = x % 8, y % 4, z % 2
    local = (lx + 8 * ly + 32 * lz).reshape(-1)
    np.testing.assert_array_equal(rows[:, 0], local)
    np.testing.assert_array_equal(rows[:, 1], (lx + ly * 10 + lz * 100).reshape(-1))
    np.testing.assert_array_equal(rows[:, 2], (x // 8 + y // 4 * 10 + z // 2 * 100).reshape(-1))
    np.testing.assert_array_equal(rows[:, 3], local // 16 * 1000 + local % 16 + 4 * 100000)


@cd.func
def _pair(b):
    return vec2[f32](b)


def test_a_constant_vector_from_a_function_called_again_on_a_branch():
    """A function's constant vector (the same in every slot) defined again where only some invocations run: the
    others keep the first call's value (it raised numpy's broadcast error)."""

    @cd.kernel(workgroup_size=(64, 1, 1))
    def k(y: cd.Buffer[f32]):
        i = cd.global_invocation_id.x
        v = _pair(f32(3.0))
        if i < 40:
            v = _pair(f32(5.0))
        y[i] = v.x + v.y

    y = np.zeros(64, np.float32)
    k.launch((1, 1, 1), y, device="cpu")
    assert (y[:40] == 10.0).all() and (y[40:] == 6.0).all()
