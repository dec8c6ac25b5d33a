"""Messages and documentation that testers found unclear (hunt 13): class, message, line and column."""

import os.path

import coopdsl as cd
from coopdsl import ArgumentError, NameResolutionError, TypeMismatchError, boolean, f32, i32, u32, u64, vec2, vec4
from coopdsl.lang.registry import BUILTINS

from ..conftest import compile_checked, expect_error


# -- 1: the reference names each kind's GLSL.std.450 instruction --------------------------------------------------
def test_math_docs_name_every_instruction():
    assert "(GLSL.std.450 FindSMsb, FindUMsb; takes signed ints, unsigned ints)" in BUILTINS["find_msb"].doc
    assert "(GLSL.std.450 FindILsb; takes" in BUILTINS["find_lsb"].doc
    assert "(GLSL.std.450 FAbs, SAbs; takes floats, signed ints)" in BUILTINS["abs"].doc
    assert "(GLSL.std.450 FMin, SMin, UMin; takes" in BUILTINS["min"].doc
    assert "(GLSL.std.450 FMax, SMax, UMax; takes" in BUILTINS["max"].doc
    assert "(GLSL.std.450 FClamp, SClamp, UClamp; takes" in BUILTINS["clamp"].doc
    assert "(GLSL.std.450 Sqrt; takes floats)" in BUILTINS["sqrt"].doc


# -- 2: atomic_load / atomic_store: optional scope and semantics; relaxed is None ---------------------------------
def test_atomic_load_store_signatures_show_defaults():
    assert BUILTINS["atomic_load"].signature == "(mem, index, *, scope=None, semantics=None)"
    assert BUILTINS["atomic_store"].signature == "(mem, index, value, *, scope=None, semantics=None)"
    assert 'None (relaxed) or "Acquire"' in BUILTINS["atomic_load"].doc
    assert 'None (relaxed) or "Release"' in BUILTINS["atomic_store"].doc


@cd.kernel
def k_load_store_defaults(m: cd.Buffer[u32], r: cd.Buffer[u32]):
    r[0] = cd.atomic_load(m, 0)
    cd.atomic_store(m, 1, 5)


def test_atomic_load_store_without_scope_or_semantics():
    compile_checked(k_load_store_defaults, "OpAtomicLoad", "OpAtomicStore")


@cd.kernel
def k_store_relaxed(m: cd.Buffer[u32]):
    cd.atomic_store(m, 0, 5, semantics="Relaxed")  # E:relaxed


def test_atomic_store_relaxed_is_none():
    expect_error(k_store_relaxed, ArgumentError,
                 "atomic_store(): semantics must be Release or None (relaxed, the default)", "# E:relaxed", 5)


@cd.kernel
def k_add_relaxed(m: cd.Buffer[u32]):
    cd.atomic_add(m, 0, 5, semantics="Relaxed")  # E:add_relaxed


def test_atomic_rmw_relaxed_is_none():
    expect_error(k_add_relaxed, ArgumentError, "atomic_add(): semantics must be one of Acquire, Release, "
                 "AcquireRelease, or None (relaxed, the default)", "# E:add_relaxed", 5)


@cd.kernel
def k_load_release(m: cd.Buffer[u32], r: cd.Buffer[u32]):
    r[0] = cd.atomic_load(m, 0, semantics="Release")  # E:load_release


def test_atomic_load_release_says_why():
    expect_error(k_load_release, ArgumentError, "atomic_load(): semantics must be Acquire or None (relaxed, the "
                 "default) (a load cannot release)", "# E:load_release", 12)


# -- 3: bitcast to or from bool ----------------------------------------------------------------------------------
@cd.kernel
def k_bitcast_to_bool(x: cd.Buffer[u32], y: cd.Buffer[u32]):
    y[0] = u32(cd.bitcast(x[0], boolean))  # E:to_bool


def test_bitcast_to_bool_names_the_reason():
    expect_error(k_bitcast_to_bool, TypeMismatchError, "cannot bitcast u32 to bool: bool has no bit pattern to "
                 "reinterpret (OpBitcast takes numeric types); compare instead (x != 0)", "# E:to_bool", 16)


@cd.kernel
def k_bitcast_from_bool(x: cd.Buffer[u32], y: cd.Buffer[u32]):
    y[0] = cd.bitcast(x[0] > 0, u32)  # E:from_bool


def test_bitcast_from_bool_names_the_reason():
    expect_error(k_bitcast_from_bool, TypeMismatchError, "cannot bitcast bool to u32: bool has no bit pattern to "
                 "reinterpret (OpBitcast takes numeric types); convert it instead (u32(x))", "# E:from_bool", 12)


# -- 4: select with a bool vector of another size -----------------------------------------------------------------
@cd.kernel
def k_select_sizes(x: cd.Buffer[vec4[f32]], y: cd.Buffer[vec2[f32]]):
    x[0] = cd.select(y[0] > 0.0, x[0], x[1])  # E:select


def test_select_condition_size():
    expect_error(k_select_sizes, TypeMismatchError, "select() condition and values differ in size: a vec2[bool] "
                 "condition picks between vec4[f32] values, which need vec4[bool]", "# E:select", 12)


# -- 5: the shuffles name their parameter ------------------------------------------------------------------------
@cd.kernel
def k_shuffle_down_negative(x: cd.Buffer[u32]):
    x[0] = cd.subgroup_shuffle_down(x[0], -1)  # E:down


def test_shuffle_down_names_the_delta():
    expect_error(k_shuffle_down_negative, TypeMismatchError, "subgroup_shuffle_down() delta must be u32, got i32",
                 "# E:down", 12)


@cd.kernel
def k_shuffle_xor_signed(x: cd.Buffer[u32], m: cd.Buffer[i32]):
    x[0] = cd.subgroup_shuffle_xor(x[0], m[0])  # E:xor


def test_shuffle_xor_names_the_mask():
    expect_error(k_shuffle_xor_signed, TypeMismatchError, "subgroup_shuffle_xor() mask must be u32, got i32",
                 "# E:xor", 12)


@cd.kernel
def k_shuffle_up_float(x: cd.Buffer[u32]):
    x[0] = cd.subgroup_shuffle_up(x[0], 1.5)  # E:up


def test_shuffle_up_names_the_delta():
    expect_error(k_shuffle_up_float, TypeMismatchError, "the delta must be an integer, got 1.5", "# E:up", 12)


# -- 6: a shift's count is what to convert -------------------------------------------------------------------------
@cd.kernel
def k_shift_u64(x: cd.Buffer[u64], s: cd.Buffer[u32]):
    x[0] = x[0] >> s[0]  # E:shift


@cd.kernel
def k_shift_vec_count(x: cd.Buffer[u64], s: cd.Buffer[cd.vec2[u32]]):
    x[0] = x[0] >> s[0]  # E:shiftv


def test_shift_mismatch_converts_the_count():
    # a count of another width is converted now (GLSL takes i64 >> u32; tests/frontend/test_scalar_ops.py); a
    # vector count for a scalar value is still refused, with the hint to convert the count
    compile_checked(k_shift_u64, r"OpUConvert %ulong", r"OpShiftRightLogical %ulong")
    expect_error(k_shift_vec_count, TypeMismatchError, "operands of '>>' have different types: u64 and vec2[u32]; a "
                 "shift keeps the type of the value shifted, so convert the count (e.g. u64(n))", "# E:shiftv", 12)


# -- 7: constant lanes and ballot bits no subgroup has ----------------------------------------------------------------
@cd.kernel
def k_broadcast_128(x: cd.Buffer[u32]):
    x[0] = cd.subgroup_broadcast(x[0], 128)  # E:bcast


def test_broadcast_constant_lane_past_every_subgroup():
    expect_error(k_broadcast_128, ArgumentError, "subgroup_broadcast() lane 128 is in no subgroup: a subgroup has "
                 "at most 128 invocations (lanes 0 to 127)", "# E:bcast", 12)


@cd.kernel
def k_extract_200(x: cd.Buffer[vec4[u32]], y: cd.Buffer[u32]):
    y[0] = u32(cd.subgroup_ballot_bit_extract(x[0], 200))  # E:extract


def test_ballot_bit_extract_constant_past_every_subgroup():
    expect_error(k_extract_200, ArgumentError, "subgroup_ballot_bit_extract() index 200 is past every subgroup: a "
                 "ballot has a bit per invocation, at most 128 (bits 0 to 127)", "# E:extract", 16)


@cd.kernel
def k_last_lane(x: cd.Buffer[vec4[u32]], y: cd.Buffer[u32]):
    y[0] = cd.subgroup_broadcast(y[0], 127) + u32(cd.subgroup_ballot_bit_extract(x[0], 127))


def test_lane_127_is_accepted():
    compile_checked(k_last_lane, "OpGroupNonUniformBroadcast", "OpGroupNonUniformBallotBitExtract")


# -- 9: a tuple of runtime values passed to a helper --------------------------------------------------------------
@cd.func
def add_pair(t):
    return t[0] + t[1]


@cd.kernel
def k_tuple_arg(x: cd.Buffer[u32], n: u32):
    x[0] = add_pair((cd.global_invocation_id.x, n))  # E:tuple


def test_runtime_tuple_argument_says_tuple():
    expect_error(k_tuple_arg, TypeMismatchError, "add_pair(): argument 't' is a tuple or list holding runtime "
                 "values; pass its elements as separate arguments", "# E:tuple", 12)


@cd.kernel
def k_list_arg(x: cd.Buffer[u32], n: u32):
    x[0] = add_pair(t=[n, n])  # E:list


def test_runtime_list_argument_says_list():
    expect_error(k_list_arg, TypeMismatchError, "add_pair(): argument 't' is a tuple or list holding runtime "
                 "values; pass its elements as separate arguments", "# E:list", 12)


@cd.kernel
def k_named_arg(x: cd.Buffer[u32], n: u32):
    t = (n, n)
    x[0] = add_pair(t)  # E:named


def test_runtime_container_through_a_name():
    expect_error(k_named_arg, TypeMismatchError, "add_pair(): argument 't' is a tuple or list holding runtime "
                 "values; pass its elements", "# E:named", 12)


@cd.func
def first_of(*a):
    return a[0]


@cd.kernel
def k_star_param(x: cd.Buffer[u32], n: u32):
    x[0] = first_of(n)  # E:star


def test_star_parameter_with_runtime_values():
    expect_error(k_star_param, TypeMismatchError, "first_of(): '*a' collects its arguments into a tuple, and a "
                 "device function takes runtime values one parameter each; name the parameters", "# E:star", 12)


@cd.kernel
def k_constant_tuple_arg(x: cd.Buffer[u32], n: u32):
    x[0] = add_pair((1, 2)) + n


def test_compile_time_tuple_argument_still_works():
    compile_checked(k_constant_tuple_arg)


# -- 10: a plain Python function called from a kernel -------------------------------------------------------------
def plain(v):
    return v


@cd.kernel
def k_plain_call(x: cd.Buffer[u32], n: u32):
    x[0] = plain(n)  # E:plain


def test_plain_function_call_suggests_cd_func():
    expect_error(k_plain_call, NameResolutionError, "global 'plain' is a plain Python function, which kernels cannot "
                 "call; decorate it with @cd.func to make it a device function", "# E:plain", 12)


@cd.kernel
def k_module_function_call(x: cd.Buffer[u32]):
    x[0] = u32(len(os.path.join("a", "b")))  # E:modfn


def test_module_function_call_suggests_cd_func():
    expect_error(k_module_function_call, NameResolutionError, "join' is a plain Python function, "
                 "which kernels cannot call; decorate it with @cd.func", "# E:modfn", 20)


@cd.kernel
def k_plain_value(x: cd.Buffer[u32]):
    x[0] = u32(len(plain))  # E:plain_value


def test_plain_function_as_a_value_gets_the_hint_too():
    expect_error(k_plain_value, NameResolutionError, "global 'plain' is a plain Python function, which kernels "
                 "cannot call; decorate it with @cd.func",
                 "# E:plain_value", 20)
