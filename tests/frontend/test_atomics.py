"""Atomics on buffers and shared arrays."""

import coopdsl as cd
from coopdsl import TypeMismatchError, f32, i32, u32

from ..conftest import compile_checked, expect_error


@cd.kernel(workgroup_size=(64, 1, 1))
def atomics(counts: cd.Buffer[u32], signed: cd.Buffer[i32], sums: cd.Buffer[f32], big: cd.Buffer[cd.u64]):
    i = cd.local_invocation_index
    hist = cd.shared(u32, 64)
    cd.atomic_add(hist, i % 8, 1)
    cd.barrier()
    old = cd.atomic_add(counts, 0, hist[i])
    cd.atomic_sub(counts, 1, 1)
    cd.atomic_min(counts, 2, old)
    cd.atomic_max(signed, 0, -3, semantics="AcquireRelease")
    cd.atomic_min(signed, 1, 5, scope=cd.Workgroup)
    cd.atomic_and(counts, 3, 0xF)
    cd.atomic_or(counts, 4, 1)
    cd.atomic_xor(counts, 5, old)
    cd.atomic_exchange(counts, 6, 7)
    cd.atomic_compare_exchange(counts, 7, 0, 1)
    cd.atomic_store(counts, 8, cd.atomic_load(counts, 9))
    cd.atomic_add(sums, 0, 1.5)
    cd.atomic_add(big, 0, 1)


def test_atomic_operations():
    compile_checked(atomics, r"OpAtomicIAdd %uint %\w+ %uint_2 %uint_0 %uint_1",  # shared: Workgroup scope
                    r"OpAtomicIAdd %uint %\w+ %uint_1 %uint_0", r"OpAtomicISub", r"OpAtomicUMin",
                    r"OpAtomicSMax %int %\w+ %uint_1 %uint_72", r"OpAtomicSMin %int %\w+ %uint_2",
                    r"OpAtomicAnd", r"OpAtomicOr", r"OpAtomicXor", r"OpAtomicExchange",
                    r"OpAtomicCompareExchange %uint %\w+ %uint_1 %uint_0 %uint_0 %uint_1 %uint_0", r"OpAtomicStore",
                    r"OpAtomicLoad", r"OpAtomicFAddEXT %float", r"OpCapability AtomicFloat32AddEXT",
                    r"OpCapability Int64Atomics", r'OpExtension "SPV_EXT_shader_atomic_float_add"',
                    absent=(r"OpDecorate %counts NonWritable",))


@cd.kernel
def k_float_min(x: cd.Buffer[f32]):
    cd.atomic_min(x, 0, 1.0)  # E:fmin


def test_float_min_is_rejected():
    expect_error(k_float_min, TypeMismatchError, "atomic_min() takes integers", "# E:fmin", 5)


@cd.kernel
def k_atomic_small(x: cd.Buffer[cd.u16]):
    cd.atomic_add(x, 0, 1)  # E:small


def test_atomics_need_32_or_64_bit_elements():
    expect_error(k_atomic_small, TypeMismatchError, "needs 32- or 64-bit scalar elements", "# E:small", 5)
