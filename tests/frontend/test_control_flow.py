"""Structured control flow: if/elif/else, for, while, break, continue, early return."""

import numpy as np

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f16, f32, i32, u32
from coopdsl.errors import TypeMismatchError

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(32, 1, 1))
def branches(x: cd.Buffer[i32]):
    i = cd.global_invocation_id.x
    v = x[i]
    if v > 10:
        r = 1
    elif v > 5:
        r = 2
    else:
        r = 3
    x[i] = r


def test_if_elif_else_merges_with_phi():
    text = compile_checked(branches, r"OpSelectionMerge %\w+ None", r"OpBranchConditional",
                           r"OpPhi %int %int_1 %\w+ %\w+ %\w+")
    assert text.count("OpSelectionMerge") == 2


@cd.kernel(workgroup_size=(32, 1, 1))
def loops(x: cd.Buffer[i32], n: i32):
    total = 0
    for j in range(n):
        if j == 3:
            continue
        if j > 100:
            break
        total += j
    k = 0
    while k < 10:
        k += 2
    for j in range(10, 0, -2):
        total -= j
    x[0] = total + k


def test_loops_break_continue_and_negative_step():
    text = compile_checked(loops, r"OpLoopMerge %\w+ %\w+ None", r"OpSLessThan %bool", r"OpSGreaterThan %bool",
                           r"OpISub %int")
    assert text.count("OpLoopMerge") == 3


@cd.kernel(workgroup_size=(32, 1, 1))
def early_return(x: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i >= n:
        return
    x[i] = 1.0


def test_early_return():
    compile_checked(early_return, r"OpReturn\n", r"OpSelectionMerge")


@cd.kernel(workgroup_size=(32, 1, 1))
def all_paths_return(x: cd.Buffer[f32], n: u32):
    if n > 3:
        x[0] = 1.0
        return
    else:
        return


def test_unreachable_merge_block():
    compile_checked(all_paths_return, r"OpUnreachable")


@cd.kernel(workgroup_size=(32, 1, 1))
def loop_always_breaks(x: cd.Buffer[f32], n: u32):
    for j in range(n):
        x[j] = 2.0
        break


def test_loop_whose_body_always_breaks():
    compile_checked(loop_always_breaks, r"OpLoopMerge")


DEBUG = False
TILE = 16


@cd.kernel(workgroup_size=(32, 1, 1))
def static_things(a: cd.Buffer[f16], c: cd.Buffer[f32]):
    acc = Acc[f32, TILE, TILE].splat(0.0)
    for kk in cd.static_range(2):
        ta = MatA[f16, TILE, TILE].load(a, kk * TILE, stride=2 * TILE)
        tb = MatB[f16, TILE, TILE].load(a, kk * TILE * 2 * TILE, stride=TILE)
        acc = cd.muladd(ta, tb, acc)
    if DEBUG:
        c[0] = 99.0
    acc.store(c, 0, stride=TILE)


def test_static_range_unrolls_and_static_if_folds():
    text = compile_checked(static_things, r"OpCooperativeMatrixMulAddKHR")
    assert text.count("OpCooperativeMatrixMulAddKHR") == 2
    assert "OpLoopMerge" not in text and "OpSelectionMerge" not in text


@cd.kernel(workgroup_size=(32, 1, 1))
def gemm_loop(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32], K: cd.Spec[u32] = 64):
    acc = Acc[f32, 16, 16].splat(0.0)
    for k in range(0, K, 16):
        acc = cd.muladd(MatA[f16, 16, 16].load(a, k, stride=K), MatB[f16, 16, 16].load(b, k * 16, stride=16), acc)
    acc.store(c, 0, stride=16)


def test_loop_carries_the_accumulator_in_a_phi():
    compile_checked(gemm_loop, r"OpPhi %\w+ %\w+ %\w+ %\w+ %\w+", r"OpSpecConstant %uint 64",
                    r"OpDecorate %K SpecId 0")


@cd.kernel(workgroup_size=(32, 1, 1))
def hinted(x: cd.Buffer[f32], N: cd.Spec[u32] = 8):
    for i in cd.range(N, unroll=True):
        x[i] = 1.0
    for i in cd.range(0, N, 2, unroll=False):
        x[i] = 2.0
    for i in cd.range(N, unroll=4):
        x[i] = 3.0


def test_loop_control_hints():
    compile_checked(hinted, r"OpLoopMerge %\w+ %\w+ Unroll", r"OpLoopMerge %\w+ %\w+ DontUnroll",
                    r"OpLoopMerge %\w+ %\w+ PartialCount 4")


def test_partial_count_needs_spirv_1_4():
    import pytest

    from coopdsl import UnsupportedSyntaxError

    with pytest.raises(UnsupportedSyntaxError, match="PartialCount"):
        hinted.compile("vulkan1.1")


@cd.kernel(workgroup_size=(32, 1, 1))
def guarded(x: cd.Buffer[f32], n: u32):
    i = cd.global_invocation_id.x
    if i < n and x[i] > 0.0:  # the read happens only when i < n
        x[i] = 0.0
    j = u32(0)
    while j < n and x[j] != 1.0 or j == 7:
        j += 1
    flag = i >= n or x[i] < 0.0
    x[0] = f32(j) + (1.0 if flag else 0.0)


def test_and_or_short_circuit_around_memory_reads():
    text = compile_checked(guarded, r"OpPhi %bool %false %\w+ %\w+ %\w+", r"OpPhi %bool %true %\w+ %\w+ %\w+",
                           r"OpLoopMerge", r"OpLogicalOr")
    # the guarded read sits in its own block, after a conditional branch on i < n
    body = text.split("OpFunction ", 1)[1]
    first_read = body.index("OpLoad %float")
    assert body.rfind("OpBranchConditional", 0, first_read) > body.find("OpULessThan")



@cd.kernel
def k_and_number(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    z[0] = u32(x[0] > 1.0 and 3)  # E:and_number


@cd.kernel
def k_or_float(x: cd.Buffer[f32]):
    x[2] = f32(x[1] > 1.0 or 2.5)  # E:or_float


@cd.kernel
def k_or_call_number(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    z[0] = u32(x[0] > 1.0 or abs(-5))  # E:or_call


@cd.kernel(workgroup_size=(1, 1, 1))
def k_and_or_numbers_first(x: cd.Buffer[f32], z: cd.Buffer[u32]):
    z[0] = u32(3 and x[0] > 1.0)
    z[1] = u32((2 and 0) + (0 or 7))
    z[2] = u32(x[0] > 1.0 and True) + u32(x[0] > 1.0 or False)


def test_a_number_after_a_runtime_operand_of_and_or_is_refused():
    """``c and 3`` is 3 or False in Python; it was the bool c, silently (``or 5`` and ``or 2.5`` True)."""
    expect_error(k_and_number, TypeMismatchError, "'and' needs bools, got the number 3 after a runtime operand",
                 "# E:and_number", 31)
    expect_error(k_or_float, TypeMismatchError, "'or' needs bools, got the number 2.5 after a runtime operand",
                 "# E:or_float", 30)
    expect_error(k_or_call_number, TypeMismatchError, "'or' needs bools, got the number 5 after a runtime operand",
                 "# E:or_call", 30)


def test_numbers_before_every_runtime_operand_of_and_or_are_python_s():
    x, z = np.array([2.0], np.float32), np.zeros(3, np.uint32)
    k_and_or_numbers_first.launch((1,), x, z, device="cpu")
    assert z.tolist() == [1, 7, 2]


@cd.func
def _tick(cnt, v: i32):
    cnt[0] = cnt[0] + 1
    return v


@cd.kernel(workgroup_size=(4, 1, 1))
def chained(cnt: cd.Buffer[i32], a: cd.Buffer[i32], x: i32, n: u32):
    i = cd.global_invocation_id.x
    if i == 0:
        if 0 < x < _tick(cnt, 10):     # _tick runs only when 0 < x, as in Python
            cnt[1] = 1
        if 1 < 0 < _tick(cnt, 10):     # false at compile time: never runs
            cnt[1] = 5
        if 0 < 1 < _tick(cnt, 10) <= x:
            cnt[2] = 1
    if i < n < u32(a[i]):              # a[i] is read only where i < n
        a[i] = 0


def _chain_reference(x, a, n):
    cnt = [0, 0, 0]

    def tick(v):
        cnt[0] += 1
        return v

    if 0 < x < tick(10):
        cnt[1] = 1
    if 0 < 1 < tick(10) <= x:
        cnt[2] = 1
    a = a.copy()
    for i in range(4):
        if i < n < a[i]:
            a[i] = 0
    return cnt, a


def test_a_comparison_chain_evaluates_each_later_comparison_only_when_the_ones_before_hold():
    """``a < b < f()`` is ``a < b and b < f()``: the call, or a memory read, of a later comparison happens only when
    the earlier ones hold (all comparisons were evaluated, their calls made, found by a check written from the docs
    alone); a compile-time false comparison ends the chain; the middle operand is evaluated once."""
    import numpy as np

    text = compile_checked(chained, r"OpBranchConditional", r"OpPhi %bool %false %\w+ %\w+ %\w+",
                           r"OpFunctionCall %int")
    assert text.count("OpFunctionCall %int") == 2      # the compile-time false chain calls nothing
    for x in (-5, 3, 20):
        for n in (0, 2, 5):
            a = np.array([10, 1, 10, 3], np.int32)
            cnt = np.zeros(3, np.int32)
            got = a.copy()
            chained.launch((1,), cnt, got, x, n, device="cpu")
            want_cnt, want_a = _chain_reference(x, a, n)
            assert cnt.tolist() == want_cnt and got.tolist() == want_a.tolist(), (x, n)


def test_unroll_count_names_the_environments_that_have_partial_count():
    import pytest

    @cd.kernel(workgroup_size=(32, 1, 1), target_env="vulkan1.1")
    def old(x: cd.Buffer[cd.f32], n: cd.u32):
        for i in cd.range(0, n, 1, unroll=4):
            x[i] = 1.0

    with pytest.raises(cd.CompileError, match=r"unroll=<count> needs the PartialCount loop control, which requires "
                       r"SPIR-V 1.4: compile for vulkan1.2, vulkan1.3 or vulkan1.4 \(this kernel targets SPIR-V 1.3, "
                       r"vulkan1.1\)"):
        old.compile()


def _unrolled(count):
    @cd.kernel(workgroup_size=(32, 1, 1))
    def unrolled(x: cd.Buffer[f32], n: u32):
        for i in cd.range(0, n, 1, unroll=count):  # UNROLLED
            x[i] = 1.0
    return unrolled


def test_an_unroll_count_that_is_no_32_bit_word_is_refused_where_it_is_given():
    """PartialCount is one 32-bit word: 2**32 + 3 was emitted as PartialCount 3 and 2**40 as 0 (the operand
    writer masked literals to a word; now it refuses any literal that does not fit one)."""
    for count in (2 ** 32 + 3, 2 ** 40, 0, -1):
        expect_error(_unrolled(count), TypeMismatchError, f"unroll must be True, False or a positive int of at most "
                     f"32 bits (4294967295), got {count}", "# UNROLLED", 18)
    compile_checked(_unrolled(2 ** 32 - 1), r"OpLoopMerge %\w+ %\w+ PartialCount 4294967295")


@cd.kernel(workgroup_size=(1, 1, 1))
def k_number_before_loop(a: cd.Buffer[f32], n: u32):
    s = 0
    for i in range(n):
        s += a[i]  # E:number-before-loop
    a[0] = s


def test_a_python_number_set_before_a_loop_is_named_when_its_type_does_not_fit():
    """docs/language.md: a Python number assigned before a runtime loop and changed in it becomes i32; the error
    says so at the use, and what to write instead."""
    expect_error(k_number_before_loop, TypeMismatchError, "operands of '+' have different types: i32 and f32; "
                 "convert one explicitly (e.g. f32(x)) ('s' is i32 in this loop because it held the Python number 0 "
                 "when the loop began: write s = f32(0) before it)", "# E:number-before-loop", 9)


@cd.kernel
def k_while_else(x: cd.Buffer[u32]):
    i = u32(0)
    while i < x[0]:
        i += 1
    else:  # E:whileelse
        x[1] = i


@cd.kernel
def k_for_else(x: cd.Buffer[u32]):
    for i in range(x[0]):
        x[2] = i
    else:  # E:forelse
        x[1] = 0


def test_loop_else_is_reported_at_the_else():
    # it was reported at the loop's first line (found by a user writing kernels from the docs alone)
    from coopdsl.errors import UnsupportedSyntaxError

    expect_error(k_while_else, UnsupportedSyntaxError, "'while ... else' is not supported", "# E:whileelse", 5)
    expect_error(k_for_else, UnsupportedSyntaxError, "'for ... else' is not supported", "# E:forelse", 5)


@cd.kernel(workgroup_size=(1, 1, 1))
def k_target_after_loop(x: cd.Buffer[i32], n: i32):
    j = 100
    for j in range(n):  # noqa: B007 (the target is read after the loop)
        x[3] += 1
    x[0] = j
    k = 100
    for k in range(n):
        if k == 3:
            break
    x[1] = k
    m = 100
    for m in range(n):
        m = m * 10
    x[2] = m


@cd.kernel(workgroup_size=(1, 1, 1))
def k_static_then_runtime(x: cd.Buffer[u32], n: u32):
    for i in cd.static_range(4):
        x[i] = u32(i)
    for i in range(n):  # noqa: B007 (i was the Python int 3: now a u32 that the loop carries)
        x[4] += 1
    x[5] = i


@cd.kernel(workgroup_size=(1, 1, 1))
def k_target_only_in_the_loop(x: cd.Buffer[i32], n: i32):
    for j in range(n):  # noqa: B007
        x[1] += 1
    x[0] = j  # E:only_in_loop


def test_a_loop_target_after_the_loop_holds_its_last_value_as_in_python():
    import numpy as np

    compile_checked(k_target_after_loop)
    for n in (0, 2, 5):
        x = np.zeros(4, np.int32)
        k_target_after_loop.launch((1,), x, n, device="cpu")
        last = n - 1 if n else 100
        assert x[:3].tolist() == [last, 3 if n > 3 else last, 10 * last if n else 100]
    compile_checked(k_static_then_runtime)
    for n in (0, 2):
        x = np.zeros(6, np.uint32)
        k_static_then_runtime.launch((1,), x, n, device="cpu")
        assert x[5] == (n - 1 if n else 3)
    # a target first bound by the loop may be unbound after it (the loop may not run)
    expect_error(k_target_only_in_the_loop, cd.NameResolutionError, "'j' may be used before it is assigned",
                 "# E:only_in_loop", 12)


@cd.func
def first_at_least(n):
    i = u32(0)
    while True:
        if i >= n:
            return i
        i += 1


@cd.kernel(workgroup_size=(32, 1, 1))
def k_while_true(x: cd.Buffer[u32], y: cd.Buffer[u32]):
    g = cd.global_invocation_id.x
    x[g] = first_at_least(g * 2)
    j = u32(0)
    while True:
        j += 3
        if j > g:
            break
    y[g] = j


def test_while_true_leaves_only_by_return_or_break():
    """A device function whose only exit is a return inside `while True:` was refused ('returns a value on some
    paths and nothing on others'): the loop's end, which nothing reaches, counted as a path. The header now
    branches straight into the body, and the merge block is unreachable unless a break reaches it."""
    import numpy as np

    text = k_while_true.disassemble()
    assert "OpLoopMerge" in text and "OpUnreachable" in text
    x, y = np.zeros(32, np.uint32), np.zeros(32, np.uint32)
    k_while_true.launch((1,), x, y, device="cpu")
    assert x.tolist() == [2 * g for g in range(32)]
    assert y.tolist() == [3 * (g // 3 + 1) for g in range(32)]


@cd.kernel(workgroup_size=(1, 1, 1))
def chain_sizes(x: cd.Buffer[f32], v: cd.vec4[f32], w: cd.vec3[f32]):
    x[0] = 1.0 if cd.all(v < 1.0 < w) else 0.0  # E:sizes


def test_a_chain_of_vectors_of_two_sizes_names_the_chain():
    """It said "operands of '&' have different sizes", an operator the user never wrote."""
    expect_error(chain_sizes, TypeMismatchError, "the comparisons of a chain give vec4[bool] and vec3[bool]: compare "
                 "values of one size (a chain of vectors is combined component by component)", "# E:sizes", 26)


@cd.func
def _same_until(y: i32):
    for j in range(4):
        y = y                 # the loop's phi of y is trivial: removed when the loop closes
        if j == 2:
            return y          # a return inside the loop held that phi
    return y


@cd.kernel(workgroup_size=(8, 1, 1))
def return_inside_a_loop_with_a_trivial_phi(a: cd.Buffer[i32]):
    i = cd.local_invocation_index
    a[i] = _same_until(a[i])


@cd.kernel(workgroup_size=(8, 1, 1))
def trivial_phis_that_feed_each_other(a: cd.Buffer[i32]):
    i = cd.local_invocation_index
    v = a[i]
    x = v
    for j in range(3):
        x = v
        for m in range(j):
            if m > 0:
                v = v         # the inner loop's phi of v is trivial, and then the outer loop's, its user
    a[i] = x + 1


def test_trivial_loop_phis_removed_with_their_users_and_returns():
    """Self-assignments in loops make trivial phis (a differential check from the docs found both): removing one
    removed the outer loop's phi that used it, which the loop's own sweep then removed again (an internal
    ValueError); and a device function's return inside the loop kept the removed phi (an internal error: a value
    not defined in its function).  Both compile, validate and run."""
    import numpy as np

    for kern, add in ((return_inside_a_loop_with_a_trivial_phi, 0), (trivial_phis_that_feed_each_other, 1)):
        compile_checked(kern, r"OpLoopMerge")
        a = np.arange(8, dtype=np.int32) * 3 - 5
        out = a.copy()
        kern.launch((1,), out, device="cpu")
        np.testing.assert_array_equal(out, a + add)
