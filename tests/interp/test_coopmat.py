"""Cooperative matrices on the interpreter: layouts and strides, MulAdd signedness/saturation/wrap,
conversions, element access by invocation, element-wise ops, workgroup scope."""

import numpy as np
import pytest

import coopdsl as cd
from coopdsl import Acc, ColumnMajor, MatA, MatB, RowMajor, bf16, f16, f32, i8, i32, u8, u32, vec4

from .conftest import expect_interp_error, line_of

SIZES = [8, 16, 32, 64]


@cd.kernel(workgroup_size=("WG", 1, 1))
def layouts(a: cd.Buffer[f16], rows: cd.Buffer[f16], cols: cd.Buffer[f16], S: cd.Spec[u32] = 40,
            WG: cd.Spec[u32] = 64):
    sg = cd.subgroup_id
    m = MatA[f16, 16, 8].load(a, sg * 3 + 5, stride=S, layout=RowMajor)
    n = MatA[f16, 16, 8].load(a, sg * 3 + 5, stride=S, layout=ColumnMajor)
    m.store(rows, sg * 128, stride=8)
    n.store(cols, sg * 256 + 1, stride=17, layout=ColumnMajor)


@pytest.mark.parametrize("sgs", SIZES)
def test_load_and_store_layouts_and_strides(sgs):
    wg = 64
    nsg = wg // sgs
    a = np.arange(2048).astype(np.float16)
    rows = np.zeros(nsg * 128, np.float16)
    cols = np.zeros(nsg * 256, np.float16)
    layouts.launch((1,), a, rows, cols, device="cpu", subgroup_size=sgs, WG=wg)
    for s in range(nsg):
        base = s * 3 + 5
        r = a[base + np.arange(16)[:, None] * 40 + np.arange(8)]       # row r at base + r * stride
        c = a[base + np.arange(8)[None, :] * 40 + np.arange(16)[:, None]]  # column c at base + c * stride
        np.testing.assert_array_equal(rows[s * 128:(s + 1) * 128].reshape(16, 8), r)
        stored = cols[s * 256 + 1 + np.arange(8)[None, :] * 17 + np.arange(16)[:, None]]
        np.testing.assert_array_equal(stored, c)


@cd.kernel(workgroup_size=(32, 1, 1))
def spec_layouts(a: cd.Buffer[f16], out: cd.Buffer[f16], COL: cd.Spec[cd.boolean] = False,
                 OUT_LAYOUT: cd.Spec[u32] = 0):
    m = MatA[f16, 16, 8].load(a, 3, stride=20, layout=u32(1) if COL else u32(0))  # a spec-constant select
    m.store(out, 0, stride=24, layout=OUT_LAYOUT)  # E:spec-layout-store


@pytest.mark.parametrize("col", [False, True], ids=["RowMajor", "ColumnMajor"])
@pytest.mark.parametrize("out_layout", [0, 1], ids=["stored RowMajor", "stored ColumnMajor"])
def test_a_specialization_constant_layout_takes_its_launch_value(col, out_layout):
    # the harness's shmem kernel picks B's layout this way (BColMajor ? ColumnMajor : RowMajor)
    a = np.arange(512).astype(np.float16)
    out = np.zeros(24 * 16, np.float16)
    spec_layouts.launch((1,), a, out, device="cpu", COL=col, OUT_LAYOUT=out_layout)
    r, c = np.arange(16)[:, None], np.arange(8)[None, :]
    m = a[3 + c * 20 + r] if col else a[3 + r * 20 + c]
    stored = out[r * 24 + c] if out_layout == 0 else out[c * 24 + r]
    np.testing.assert_array_equal(stored, m)


def test_a_specialization_constant_layout_of_no_layout_is_reported_at_its_line():
    # the launch's spec values are checked as compile(spec=...) would (issue 24, class 2): before the run
    out = np.zeros(24 * 16, np.float16)
    with pytest.raises(cd.ArgumentError, match=r"layout: specialization constant 'OUT_LAYOUT' holds 7; a matrix "
                                               r"load or store's layout is 0 \(RowMajor\) or 1 \(ColumnMajor\)") as e:
        spec_layouts.launch((1,), np.arange(512).astype(np.float16), out, device="cpu", OUT_LAYOUT=7)
    assert (e.value.loc.line, e.value.loc.col) == (line_of("# E:spec-layout-store"), 5)


@cd.kernel(workgroup_size=(32, 1, 1))
def wide_elements(a: cd.Buffer[vec4[u32]], c: cd.Buffer[f32]):
    tile = cd.shared(vec4[u32], 64)
    i = cd.local_invocation_index
    tile[i] = a[i]
    tile[i + 32] = a[i + 32]
    cd.barrier()
    ta = MatA[f16, 16, 16].load(tile, 0, stride=2)       # stride in vec4 units: 16 halves per row
    tb = MatB[f16, 16, 16].load(a, 33, stride=2)         # from the buffer, offset in vec4 units
    cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)


def test_stride_counts_elements_of_the_pointer_type():
    h = np.random.default_rng(0).uniform(-1, 1, 512 + 8 * 16).astype(np.float16)
    c = np.zeros(256, np.float32)
    wide_elements.launch((1,), h, c, device="cpu")
    A = h[:256].reshape(16, 16).astype(np.float32)
    B = h[264:264 + 256].reshape(16, 16).astype(np.float32)
    np.testing.assert_allclose(c.reshape(16, 16), A @ B, rtol=1e-5, atol=1e-5)


@cd.kernel(workgroup_size=(32, 1, 1))
def float_mma(a: cd.Buffer[f16], b: cd.Buffer[bf16], q: cd.Buffer[cd.e4m3], r: cd.Buffer[cd.e5m2],
              c: cd.Buffer[f32], h: cd.Buffer[f16]):
    x = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16), MatB[f16, 16, 16].load(a, 256, stride=16),
                  Acc[f32, 16, 16].load(c, 0, stride=16))
    y = cd.muladd(MatA[bf16, 16, 16].load(b, 0, stride=16), MatB[bf16, 16, 16].load(b, 256, stride=16),
                  Acc[f32, 16, 16].splat(0.5))
    z = cd.muladd(MatA[cd.e4m3, 16, 32].load(q, 0, stride=32), MatB[cd.e5m2, 32, 16].load(r, 0, stride=16),
                  Acc[f32, 16, 16].splat(0.0))
    w = cd.muladd(MatA[f16, 16, 16].load(a, 0, stride=16), MatB[f16, 16, 16].load(a, 256, stride=16),
                  Acc[f16, 16, 16].splat(1.0))
    x.store(c, 256, stride=16)
    y.store(c, 512, stride=16)
    z.store(c, 768, stride=16)
    w.store(h, 0, stride=16)


def test_float_muladd_f16_bf16_fp8_and_an_f16_accumulator():
    from coopdsl.interp.floats import from_bits, round_float

    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, 512).astype(np.float16)
    bf = (rng.uniform(-1, 1, 512).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    q = rng.integers(0, 0x78, 512).astype(np.uint8)   # finite e4m3 codes
    r = rng.integers(0, 0x7C, 512).astype(np.uint8)   # finite e5m2 codes
    q[::2] |= 0x80
    c = np.zeros(1024, np.float32)
    c[:256] = rng.uniform(-1, 1, 256)
    h = np.zeros(256, np.float16)
    float_mma.launch((1,), a, bf, q, r, c, h, device="cpu")
    A, B = a[:256].reshape(16, 16).astype(np.float32), a[256:].reshape(16, 16).astype(np.float32)
    np.testing.assert_allclose(c[256:512].reshape(16, 16), A @ B + c[:256].reshape(16, 16), rtol=1e-5, atol=1e-5)
    BA = from_bits(bf[:256], bf16).reshape(16, 16)
    BB = from_bits(bf[256:], bf16).reshape(16, 16)
    np.testing.assert_allclose(c[512:768].reshape(16, 16), BA @ BB + 0.5, rtol=1e-5, atol=1e-5)
    QA = from_bits(q, cd.e4m3).reshape(16, 32)
    RB = from_bits(r, cd.e5m2).reshape(32, 16)
    np.testing.assert_allclose(c[768:].reshape(16, 16), QA @ RB, rtol=1e-5)
    np.testing.assert_array_equal(h.reshape(16, 16), round_float(A @ B + 1.0, f16))  # one rounding to f16


@cd.kernel(workgroup_size=(32, 1, 1))
def int_mma(a: cd.Buffer[i8], ua: cd.Buffer[u8], c: cd.Buffer[i32], uc: cd.Buffer[u32]):
    ta = MatA[i8, 16, 32].load(a, 0, stride=32)
    tb = MatB[i8, 32, 16].load(a, 512, stride=16)
    base = Acc[i32, 16, 16].load(c, 0, stride=16)
    cd.muladd(ta, tb, base).store(c, 256, stride=16)
    cd.muladd(ta, tb, base, saturate=True).store(c, 512, stride=16)
    ua_ = MatA[u8, 16, 32].load(ua, 0, stride=32)
    ub_ = MatB[u8, 32, 16].load(ua, 512, stride=16)
    ubase = Acc[u32, 16, 16].load(uc, 0, stride=16)
    cd.muladd(ua_, ub_, ubase).store(uc, 256, stride=16)
    cd.muladd(ua_, ub_, ubase, saturate=True).store(uc, 512, stride=16)
    cd.muladd(ua_, ub_, Acc[i32, 16, 16].splat(0), signed=("a", "b")).store(c, 768, stride=16)


def test_integer_muladd_signedness_wrap_and_saturation():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, 1024).astype(np.int8)
    ua = rng.integers(0, 256, 1024).astype(np.uint8)
    c = np.zeros(1024, np.int32)
    c[:256] = rng.choice([2**31 - 5, -2**31 + 5, 0], 256)
    uc = np.zeros(1024, np.uint32)
    uc[:256] = rng.choice([2**32 - 7, 3], 256)
    int_mma.launch((1,), a, ua, c, uc, device="cpu")
    A, B = a[:512].reshape(16, 32).astype(np.int64), a[512:].reshape(32, 16).astype(np.int64)
    exact = A @ B + c[:256].reshape(16, 16)
    np.testing.assert_array_equal(c[256:512].reshape(16, 16), ((exact + 2**31) % 2**32 - 2**31))  # wraps
    np.testing.assert_array_equal(c[512:768].reshape(16, 16), np.clip(exact, -2**31, 2**31 - 1))  # saturates
    assert (c[256:512] != c[512:768]).any()
    UA, UB = ua[:512].reshape(16, 32).astype(np.int64), ua[512:].reshape(32, 16).astype(np.int64)
    uexact = UA @ UB + uc[:256].reshape(16, 16)
    np.testing.assert_array_equal(uc[256:512].reshape(16, 16), uexact % 2**32)
    np.testing.assert_array_equal(uc[512:768].reshape(16, 16), np.minimum(uexact, 2**32 - 1))
    SA, SB = UA.astype(np.uint8).view(np.int8), UB.astype(np.uint8).view(np.int8)  # u8 bits treated as signed
    np.testing.assert_array_equal(c[768:].reshape(16, 16), SA.astype(np.int64) @ SB.astype(np.int64))


@cd.kernel(workgroup_size=(32, 1, 1))
def saturating_product_overflow(a: cd.Buffer[i32], c: cd.Buffer[i32]):
    ta = MatA[i32, 16, 16].load(a, 0, stride=16)
    tb = MatB[i32, 16, 16].load(a, 0, stride=16)
    cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0)).store(c, 0, stride=16)
    cd.muladd(ta, tb, Acc[i32, 16, 16].splat(0), saturate=True).store(c, 0, stride=16)  # E:sat


def test_32_bit_products_wrap_and_a_saturating_overflow_of_the_product_is_reported():
    a = np.full(256, 2**20, np.int32)
    c = np.zeros(256, np.int32)
    expect_interp_error(lambda: saturating_product_overflow.launch((1,), a, c, device="cpu"),
                        "the product A x B overflows i32 before the saturating accumulation", "# E:sat")
    assert (c == (16 * 2**40) % 2**32).all()  # the first (wrapping) MulAdd ran


@cd.kernel(workgroup_size=(32, 1, 1))
def convert(c: cd.Buffer[f32], h: cd.Buffer[f16], i: cd.Buffer[i32], u: cd.Buffer[u32], bits: cd.Buffer[u32]):
    m = Acc[f32, 16, 16].load(c, 0, stride=16)
    Acc[f16, 16, 16](m).store(h, 0, stride=16)
    si = Acc[i32, 16, 16](m)
    si.store(i, 0, stride=16)
    Acc[u32, 16, 16](Acc[u8, 16, 16](si)).store(u, 0, stride=16)
    cd.bitcast(si, u32).store(bits, 0, stride=16)


def test_matrix_conversions():
    c = np.random.default_rng(3).uniform(-300, 300, 256).astype(np.float32)
    h, i, u, bits = np.zeros(256, np.float16), np.zeros(256, np.int32), np.zeros(256, np.uint32), \
        np.zeros(256, np.uint32)
    convert.launch((1,), c, h, i, u, bits, device="cpu")
    np.testing.assert_array_equal(h, c.astype(np.float16))
    np.testing.assert_array_equal(i, np.trunc(c).astype(np.int32))
    np.testing.assert_array_equal(u, np.trunc(c).astype(np.int32).astype(np.uint8))
    np.testing.assert_array_equal(bits, np.trunc(c).astype(np.int32).view(np.uint32))


@cd.kernel(workgroup_size=("WG", 1, 1))
def elements(a: cd.Buffer[f32], seen: cd.Buffer[f32], lengths: cd.Buffer[u32], out: cd.Buffer[f32],
             WG: cd.Spec[u32] = 32):
    m = Acc[f32, 16, 8].load(a, 0, stride=8)
    n = m.length()
    lane = cd.subgroup_invocation_id
    for i in range(n):
        seen[lane * n + i] = m[i]          # runtime index: through a local variable
    first = m[0]                           # constant index: OpCompositeExtract
    m[0] = first + 1000.0                  # OpCompositeInsert
    for i in range(n):
        m[i] = m[i] + f32(lane)
    lengths[cd.local_invocation_index] = n + Acc[f32, 16, 8].length() * 100
    m.store(out, 0, stride=8)


@pytest.mark.parametrize("sgs", SIZES)
def test_element_access_follows_the_documented_mapping(sgs):
    wg = max(sgs, 32)
    a = np.arange(128, dtype=np.float32)
    seen = np.full(128, -1, np.float32)
    lengths = np.zeros(wg, np.uint32)
    out = np.zeros(128, np.float32)
    elements.launch((1,), a, seen, lengths, out, device="cpu", subgroup_size=sgs, WG=wg)
    n = 128 // sgs
    assert (lengths == n * 101).all()
    np.testing.assert_array_equal(seen, a)  # lane l holds row-major elements l*n .. l*n+n-1
    owner = np.arange(128) // n % sgs
    ref = a + owner + np.where(np.arange(128) % n == 0, 1000, 0)
    np.testing.assert_array_equal(out, ref)


@cd.kernel(workgroup_size=(32, 1, 1))
def elementwise(a: cd.Buffer[f32], out: cd.Buffer[f32], s: f32):
    x = Acc[f32, 16, 16].load(a, 0, stride=16)
    y = Acc[f32, 16, 16].load(a, 256, stride=16)
    r = (x + y) * (x - y) / Acc[f32, 16, 16].splat(s) - x * s
    (-r).store(out, 0, stride=16)
    Acc[f32, 16, 16](s + 1.0).store(out, 256, stride=16)


def test_elementwise_ops_matrix_times_scalar_and_runtime_splat():
    a = np.random.default_rng(4).uniform(1, 2, 512).astype(np.float32)
    out = np.zeros(512, np.float32)
    elementwise.launch((1,), a, out, 0.5, device="cpu")
    x, y = a[:256], a[256:]
    np.testing.assert_allclose(out[:256], -((x + y) * (x - y) / np.float32(0.5) - x * np.float32(0.5)), rtol=1e-6)
    assert (out[256:] == 1.5).all()


@cd.kernel(workgroup_size=("WG", 1, 1))
def workgroup_scope(a: cd.Buffer[f16], c: cd.Buffer[f32], WG: cd.Spec[u32] = 128):
    ta = MatA[f16, 64, 16, cd.Workgroup].load(a, 0, stride=16)
    tb = MatB[f16, 16, 64, cd.Workgroup].load(a, 1024, stride=64)
    acc = cd.muladd(ta, tb, Acc[f32, 64, 64, cd.Workgroup].splat(1.0))
    acc[0] = f32(cd.local_invocation_index)
    acc.store(c, cd.workgroup_id.x * 4096, stride=64)


def test_workgroup_scope_matrices():
    a = np.random.default_rng(5).uniform(-1, 1, 2048).astype(np.float16)
    c = np.zeros(2 * 4096, np.float32)
    workgroup_scope.launch((2,), a, c, device="cpu", subgroup_size=32)
    ref = a[:1024].reshape(64, 16).astype(np.float32) @ a[1024:].reshape(16, 64).astype(np.float32) + 1
    n = 64 * 64 // 128
    ref.reshape(-1)[::n] = np.arange(128)  # component 0 of local invocation l is element l * n
    for w in range(2):
        np.testing.assert_allclose(c[w * 4096:(w + 1) * 4096].reshape(64, 64), ref, rtol=1e-5, atol=1e-5)


@cd.kernel(workgroup_size=(64, 1, 1))
def offset_through_a_bitcast(b: cd.Buffer[f16], c: cd.Buffer[f32], K: u32):
    acc = Acc[f32, 16, 16].splat(0.0)
    for k0 in range(0, K, 16):
        for j in cd.range(2, unroll=True):  # an i32 counter: k0 * 16 + j * 16 bitcasts it to u32
            acc = cd.muladd(MatA[f16, 16, 16].splat(1.0), MatB[f16, 16, 16].load(b, k0 * 16 + j * 16, stride=16),
                            acc)
    acc.store(c, cd.subgroup_id * 256, stride=16)


def test_a_uniform_value_stays_uniform_through_a_bitcast():
    # (the bitcast of a value the same in every invocation came out per invocation-shaped (1,), and the matrix
    # load's uniformity check failed with numpy's "cannot reshape array of size 1" – found writing a kernel from
    # the docs)
    b = np.ones(1024, np.float16)
    c = np.zeros(512, np.float32)
    offset_through_a_bitcast.launch((1,), b, c, 32, device="cpu")
    np.testing.assert_array_equal(c, np.full(512, 64.0, np.float32))


def test_a_kernel_written_from_the_docs_runs_on_the_interpreter():
    from ..docs_only_kernel import run_and_check, scaled_tiles

    scaled_tiles.compile()  # spirv-val
    run_and_check("cpu")
