"""User mistakes with atomics and subgroup operations: class, message, line and column."""

import coopdsl as cd
from coopdsl import ArgumentError, TypeMismatchError, f32, i32, u32

from ..conftest import expect_error


@cd.kernel
def k_float_and(x: cd.Buffer[f32]):
    cd.atomic_and(x, 0, 1.0)  # E:fand


def test_bitwise_atomic_on_a_float_buffer():
    expect_error(k_float_and, TypeMismatchError, "atomic_and() takes integers", "# E:fand", 5)


@cd.kernel
def k_float_into_uint(x: cd.Buffer[u32]):
    cd.atomic_add(x, 0, 1.5)  # E:flit


def test_atomic_value_takes_the_element_type():
    expect_error(k_float_into_uint, TypeMismatchError, "cannot use the float literal 1.5 as u32", "# E:flit", 5)


@cd.kernel
def k_bad_semantics(x: cd.Buffer[u32]):
    cd.atomic_add(x, 0, 1, semantics="Bogus")  # E:sem


def test_atomic_semantics_names():
    expect_error(k_bad_semantics, ArgumentError, "semantics must be one of Acquire, Release, AcquireRelease",
                 "# E:sem", 5)


@cd.kernel
def k_signed_lane(x: cd.Buffer[f32], y: cd.Buffer[i32]):
    x[0] = cd.subgroup_shuffle(x[1], y[0])  # E:lane


def test_shuffle_lane_is_unsigned():
    expect_error(k_signed_lane, TypeMismatchError, "subgroup_shuffle() lane must be u32, got i32", "# E:lane", 12)


@cd.kernel
def k_vote_on_float(x: cd.Buffer[f32]):
    if cd.subgroup_all(x[1]):  # E:vote
        x[0] = 1.0


def test_vote_takes_a_bool():
    expect_error(k_vote_on_float, TypeMismatchError, "subgroup_all() takes a bool, got f32", "# E:vote", 8)
