"""Hardening classes 4 and 5: limits (workgroup sizes whose product overflows 32 bits, unbounded unrolling,
compile-time integers no type can hold) and declarations (kernel decorating a non-function, empty or
std140 structs, a type used as a decorator, bad grids) are located coopdsl errors, never internal errors,
foreign exceptions or hangs. Each row of the tables is one probe."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import coopdsl as cd
from coopdsl.errors import ArgumentError, CompileError, DeclarationError, InternalCompilerError
from coopdsl.runtime.errors import LaunchError
from tests.conftest import exec_source

HEAD = "import coopdsl as cd\nfrom coopdsl import *\n"


def _exec(tmp_path, name, body):
    src = HEAD + textwrap.dedent(body)
    return exec_source(src, tmp_path / f"{name}.py"), src


def _line(src, marker):
    return next(i for i, line in enumerate(src.splitlines(), 1) if marker in line)


COMPILE_CASES = [
    ("wg_product", "@cd.kernel(workgroup_size=(65536, 65536, 1))  # HERE\ndef k(o: cd.Buffer[f32]):\n    o[0] = 1.0\n",
     CompileError, "the product must fit in 32 bits"),
    ("wg_product_z", "@cd.kernel(workgroup_size=(32, 1, 2**31))  # HERE\ndef k(o: cd.Buffer[f32]):\n    o[0] = 1.0\n",
     CompileError, "has 68719476736 invocations"),
    ("static_range_big", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    for i in cd.static_range(10**7):  # HERE\n        o[0] = 1.0\n", ArgumentError, "at most 65536"),
    ("static_range_step0", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    for i in cd.static_range(0, 4, 0):  # HERE\n        o[0] = 1.0\n", CompileError, "must not be zero"),
    ("pow_huge", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    x = 10 ** 10 ** 8  # HERE\n    o[0] = 1.0\n", ArgumentError, "limited to 4096 bits"),
    ("shift_huge", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    x = 1 << 10 ** 9  # HERE\n    o[0] = 1.0\n", ArgumentError, "limited to 4096 bits"),
    ("float_overflow", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    x = 10.0 ** 400  # HERE\n    o[0] = 1.0\n", ArgumentError,
     "compile-time 10.0 ** 400 is too large for a float (past 1.798e+308; no coopdsl type holds it)"),
    ("int_past_f32", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    o[0] = f32(10**39)  # HERE\n", CompileError, "the literal 1e+39 does not fit in f32"),
    ("int_past_f16", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f16]):\n"
     "    o[0] = f16(-123456789 * 10**30)  # HERE\n", CompileError, "the literal -1.234e+38 does not fit in f16"),
    ("wg_not_spec", "@cd.kernel(workgroup_size=('n', 1, 1))  # HERE\ndef k(o: cd.Buffer[f32], n: u32):\n"
     "    o[0] = 1.0\n", CompileError, "workgroup_size names 'n', which is not a Spec parameter of k"),
    ("wg_spec_f32", "@cd.kernel(workgroup_size=('WG', 1, 1))  # HERE\n"
     "def k(o: cd.Buffer[f32], WG: cd.Spec[f32] = 32.0):\n    o[0] = 1.0\n", CompileError,
     "workgroup size 'WG' must be a Spec[u32] or Spec[i32] parameter"),
    ("yield_from", "@cd.kernel(workgroup_size=(32, 1, 1))\ndef k(o: cd.Buffer[f32]):\n"
     "    yield from range(3)  # HERE\n", CompileError, "'yield from' is not supported"),
]


@pytest.mark.parametrize("name,body,error,message", COMPILE_CASES, ids=[c[0] for c in COMPILE_CASES])
def test_limits_are_located_errors(name, body, error, message, tmp_path):
    with pytest.raises(CompileError) as e:
        ns, src = _exec(tmp_path, name, body)
        ns["k"].compile()
    src = HEAD + textwrap.dedent(body)
    assert isinstance(e.value, error) and not isinstance(e.value, InternalCompilerError)
    assert message in str(e.value)
    assert e.value.loc.line == _line(src, "# HERE")


def test_a_spec_sized_workgroup_of_zero_given_at_compile_is_a_located_error(tmp_path):
    """compile(spec=...) (and a build spec's variant) setting a workgroup dimension's default to 0: refused at the
    decorator, not only when a device profile is given."""
    body = "@cd.kernel(workgroup_size=('WG', 1, 1))  # HERE\ndef k(o: cd.Buffer[f32], WG: cd.Spec[u32] = 64):\n" \
           "    o[0] = 1.0\n"
    ns, src = _exec(tmp_path, "wg_spec_given", body)
    with pytest.raises(CompileError, match=r"workgroup size 'WG' is 0 \(the value given to compile\(spec=\.\.\.\), "
                                           r"launch or bench\): each size must be at least 1") as e:
        ns["k"].compile(spec={"WG": 0})
    assert e.value.loc.line == _line(HEAD + textwrap.dedent(body), "# HERE")
    assert ns["k"].compile(spec={"WG": 32})
    # a default alone is not checked (glslang checks none: a port's default may be a placeholder the host
    # replaces at pipeline creation); the interpreter refuses to run the value
    ns, src = _exec(tmp_path, "wg_spec_default", body.replace("= 64", "= 0"))
    assert ns["k"].compile()
    with pytest.raises(LaunchError, match=r"workgroup size \(0, 1, 1\) must be positive"):
        ns["k"].launch((1,), np.zeros(1, np.float32), device="cpu")


DECLARATION_CASES = [
    ("kernel_twice", "@cd.kernel(workgroup_size=(32, 1, 1))  # HERE\n@cd.kernel(workgroup_size=(32, 1, 1))\n"
     "def k(o: cd.Buffer[f32]):\n    o[0] = 1.0\n", "got kernel 'k' (decorated twice?)"),
    ("kernel_class", "@cd.kernel(workgroup_size=(32, 1, 1))  # HERE\nclass k:\n    pass\n", "got class k"),
    ("mat_scope_device", "T = cd.MatA[f16, 16, 16, cd.Device]  # HERE\n",
     "scope must be Subgroup or Workgroup, got coopdsl.Device (1)"),
    ("kernel_lambda", "k = cd.kernel(workgroup_size=(32, 1, 1))(lambda o: None)  # HERE\n",
     "@coopdsl.kernel decorates a def function (def name(params): ...), not a lambda"),
    ("struct_empty", "@cd.struct  # HERE\nclass S:\n    pass\n", "struct S has no annotated members"),
    ("struct_std140", "@cd.struct(layout_rule='std140')  # HERE\nclass S:\n    a: f32\n",
     "layout_rule must be 'std430' or 'scalar'"),
    ("type_as_decorator", "@cd.i32  # HERE\ndef k(o):\n    pass\n", "i32(...) decorates nothing outside a kernel"),
]


@pytest.mark.parametrize("name,body,message", DECLARATION_CASES, ids=[c[0] for c in DECLARATION_CASES])
def test_bad_declarations_are_located_errors(name, body, message, tmp_path):
    with pytest.raises(DeclarationError) as e:
        _exec(tmp_path, name, body)
    src = HEAD + textwrap.dedent(body)
    assert message in str(e.value)
    assert e.value.loc.line == _line(src, "# HERE")


@cd.kernel(workgroup_size=(32, 1, 1))
def ones(o: cd.Buffer[cd.f32]):
    o[cd.global_invocation_id.x] = 1.0


@pytest.mark.parametrize("grid", [None, 2.5, "4", (0,), (1, 2, 3, 4), (-1,), {2: 1}, {4}])
def test_a_bad_grid_is_a_launch_error(grid):
    with pytest.raises(LaunchError, match="grid must be 1 to 3 positive ints"):
        ones.launch(grid, np.zeros(32, np.float32), device="cpu")


@pytest.mark.parametrize("grid", [(np.int64(1),), np.uint32(1), (np.int32(1), 1, 1)])
def test_a_grid_of_numpy_integers_is_taken_as_push_constants_take_them(grid):
    out = np.zeros(32, np.float32)
    ones.launch(grid, out, device="cpu")
    assert (out == 1).all()


def test_a_declared_subgroup_size_must_divide_the_workgroup_of_subgroup_matrices(tmp_path):
    """@kernel(subgroup_size=32) with subgroup-scope matrices in a workgroup of 48 compiled, and only the interpreter
    (or compile(device=...)) refused it (found by a user writing kernels from the docs alone); the kernel's own
    declarations decide it, so compiling refuses it, at the matrix. Without a declared size, or with a spec-sized x
    at its default, it is left to the device check."""
    body = ("@cd.kernel(workgroup_size=({wg}, 1, 1){sg})\n"
            "def k(a: cd.Buffer[f16], c: cd.Buffer[f32], WG: cd.Spec[u32] = 48):\n"
            "    ta = MatA[f16, 16, 16].load(a, 0, stride=16)  # HERE\n"
            "    tb = MatB[f16, 16, 16].load(a, 0, stride=16)\n"
            "    cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0)).store(c, 0, stride=16)\n")
    head = "from coopdsl import Acc, MatA, MatB, f16\n"
    ns, _ = _exec(tmp_path, "sg48", head + body.format(wg=48, sg=", subgroup_size=32"))
    with pytest.raises(CompileError, match=r"MatA\[f16, 16, 16\] has Subgroup scope, so the workgroup x size \(48\) "
                                           r"must be a multiple of the kernel's subgroup size \(32\)") as e:
        ns["k"].compile()
    assert e.value.loc.line == _line(HEAD + head + body.format(wg=48, sg=", subgroup_size=32"), "# HERE")
    assert _exec(tmp_path, "sg48_any", head + body.format(wg=48, sg=""))[0]["k"].compile()
    assert _exec(tmp_path, "sg64", head + body.format(wg=64, sg=", subgroup_size=32"))[0]["k"].compile()
    spec_sized = _exec(tmp_path, "sg_spec", head + body.format(wg="'WG'", sg=", subgroup_size=32"))[0]["k"]
    assert spec_sized.compile()                          # its default 48 is a placeholder the host replaces
    assert spec_sized.compile(spec={"WG": 64})
    with pytest.raises(CompileError, match=r"workgroup x size \(48\) must be a multiple"):
        spec_sized.compile(spec={"WG": 48})
