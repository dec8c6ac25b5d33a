"""Hardening class 2: a rule that holds for a specialization constant's default holds for every value it gets
(compile(spec=...), coopdsl emit --spec, launch(...)): the same located error, not a module that passes at
its default and breaks later (the interpreter's numpy, or a driver)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from coopdsl.errors import ShapeError
from tests.conftest import exec_source

SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import MatA, f16, u32


    @cd.kernel(workgroup_size=(32, 1, 1))
    def k(src: cd.Buffer[f16], out: cd.Buffer[f16], K: cd.Spec[u32] = 16, M: cd.Spec[u32] = 32):
        a = MatA[f16, M, K].from_rows(cd.array(f16, K))  # THE LINE
        a.store(out, 0, stride=K)
''')

CASES = [({"K": 32}, "has 16 columns (256 bits), not K = 32"),
         ({"M": 256}, "has 256 rows, one per invocation of a subgroup, but a subgroup has at most 128")]


@pytest.fixture()
def kernel(tmp_path):
    path = tmp_path / "qk.py"
    return exec_source(SRC, path)["k"], path


def _line():
    return next(i for i, line in enumerate(SRC.splitlines(), 1) if "THE LINE" in line)


def test_the_defaults_compile(kernel):
    assert "OpCompositeConstructCoopMatQCOM" in kernel[0].disassemble()


@pytest.mark.parametrize("spec,message", CASES)
def test_compile_with_spec_values_checks_them(kernel, spec, message):
    with pytest.raises(ShapeError) as e:
        kernel[0].compile(spec=spec)
    assert message in str(e.value) and e.value.loc.line == _line()


@pytest.mark.parametrize("spec,message", CASES)
def test_launch_with_spec_values_checks_them(kernel, spec, message):
    with pytest.raises(ShapeError) as e:
        kernel[0].launch((1, 1, 1), np.zeros(64, np.float16), np.zeros(256 * 32, np.float16), device="cpu", **spec)
    assert message in str(e.value) and e.value.loc.line == _line()


def test_a_launch_at_the_defaults_compiles_nothing_more(kernel):
    k = kernel[0]
    k.compile()
    before = len(k._cache)
    k.launch((1, 1, 1), np.zeros(64, np.float16), np.zeros(32 * 16, np.float16), device="cpu", K=16)
    assert len(k._cache) == before


@pytest.mark.parametrize("spec,message", CASES)
def test_emit_with_spec_values_checks_them(kernel, spec, message, tmp_path):
    (name, value), = spec.items()
    r = subprocess.run([sys.executable, "-m", "coopdsl", "emit", str(kernel[1]), "--spec", f"{name}={value}",
                        "-o", str(tmp_path / "k.spv")], capture_output=True, text=True, check=False)
    assert r.returncode == 1
    assert f"qk.py:{_line()}:" in r.stderr and message in r.stderr


SIZES = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import MatA, f16, f32, u32


    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    def k(a: cd.Buffer[f16], o: cd.Buffer[f32], R: cd.Spec[u32] = 16, S: cd.Spec[u32] = 8, A: cd.Spec[u32] = 4):
        m = MatA[f16, R, 16].load(a, 0, stride=16)  # MATRIX
        sh = cd.shared(f32, S * 2)  # SHARED
        loc = cd.array(f32, A - 4 + 1)  # ARRAY
        sh[0] = loc[0]
        o[0] = sh[0]
''')


@pytest.fixture()
def sizes(tmp_path):
    return exec_source(SIZES, tmp_path / "sz.py")["k"]


def _marked(marker: str) -> int:
    return next(i for i, line in enumerate(SIZES.splitlines(), 1) if marker in line)


@pytest.mark.parametrize("spec,marker,col,message", [
    ({"R": 0}, "# MATRIX", 9, "rows must be from 1 to 4294967295, got R = 0 (its specialization constants' values)"),
    ({"S": 0}, "# SHARED", 10, "shared: the length must be from 1 to 4294967295, got (S * 2) = 0"),
    ({"A": 3}, "# ARRAY", 11, "an array length must be from 1 to"),
])
def test_sizes_from_spec_values_are_checked_at_every_value(sizes, spec, marker, col, message):
    """A matrix dimension, a shared or local array length sized by specialization constants must be at least 1
    at the defaults, at compile(spec=...) values and at launch values alike (0 compiled and reached the driver)."""
    from coopdsl.errors import CompileError

    assert "OpTypeCooperativeMatrixKHR" in sizes.disassemble()
    with pytest.raises(CompileError) as e:
        sizes.compile(spec=spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (_marked(marker), col), str(e.value)
    with pytest.raises(CompileError) as e:
        sizes.launch((1, 1, 1), np.zeros(256, np.float16), np.zeros(1, np.float32), device="cpu", **spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (_marked(marker), col)


def test_at_the_defaults_alone_spec_sizes_are_not_checked_as_glslang_checks_none(tmp_path):
    """A port's defaults may be placeholders (vk_cooperative_matrix_perf sizes an array C_ROWS * C_COLS, 0 at its
    defaults, and gives the values at pipeline creation): the rule applies to the values a compile or launch
    gives, not to defaults alone."""
    src = SIZES.replace("R: cd.Spec[u32] = 16", "R: cd.Spec[u32] = 0")
    ns = exec_source(src, tmp_path / "sz0.py")
    assert "OpTypeCooperativeMatrixKHR" in ns["k"].disassemble()
    assert ns["k"].compile(spec={"R": 16})


KINDS = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import Acc, CoopMat, f16, f32, u32


    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    def k(c: cd.Buffer[f32], o: cd.Buffer[f32], SC: cd.Spec[u32] = 3, U: cd.Spec[u32] = 2, R: cd.Spec[u32] = 8,
          C: cd.Spec[u32] = 16):
        (CoopMat[f32, 16, 16, U, SC].load(c, 0, stride=16) + 1.0).store(c, 0, stride=16)  # SCOPE USE
        t = Acc[f32, 2 * R, C, cd.Workgroup].load_tensor(c, 0, cd.tensor_layout(2).dimension(2 * R, C))
        t.reduce(cd.Reduce2x2, cd.reduce_add, into=Acc[f32, R, C // 2, cd.Workgroup]).store(o, 0, stride=C // 2)  # 2x2
''')


@pytest.mark.parametrize("spec,marker,col,message", [
    ({"SC": 1}, "# SCOPE USE", 6, "scope must be Subgroup or Workgroup, got SC = 1"),
    ({"SC": 7}, "# SCOPE USE", 6, "scope must be Subgroup or Workgroup, got SC = 7"),
    ({"U": 9}, "# SCOPE USE", 6, "use must be UseA, UseB or UseAcc, got U = 9"),
    ({"C": 15}, "# 2x2", 5, "m.reduce(cd.Reduce2x2) halves both dimensions, so they must be even: "
                            "Acc[f32, (R * 2), C, Workgroup] has columns C = 15"),
])
def test_a_spec_scope_use_or_2x2_shape_is_checked_at_every_value(tmp_path, spec, marker, col, message):
    """A Spec scope of 1 or 7 and a use of 9 compiled, validated and ran (7 then failed inside the interpreter);
    a 2x2 reduction of an odd Spec column count reached numpy's reshape: each is the rule's error at every value."""
    from coopdsl.errors import CompileError

    k = exec_source(KINDS, tmp_path / "kinds.py")["k"]
    line = next(i for i, text in enumerate(KINDS.splitlines(), 1) if text.endswith(marker))
    assert "OpCooperativeMatrixReduceNV" in k.disassemble()
    with pytest.raises(CompileError) as e:
        k.compile(spec=spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (line, col), str(e.value)
    with pytest.raises(CompileError) as e:
        k.launch((1, 1, 1), np.zeros(512, np.float32), np.zeros(256, np.float32), device="cpu", **spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (line, col)


def test_a_spec_scope_or_use_default_out_of_range_is_refused(tmp_path):
    from coopdsl.errors import CompileError

    k = exec_source(KINDS.replace("SC: cd.Spec[u32] = 3", "SC: cd.Spec[u32] = 5"), tmp_path / "k5.py")["k"]
    with pytest.raises(CompileError, match=r"scope must be Subgroup or Workgroup, got SC = 5 by default"):
        k.compile()


def test_specialize_names_a_spec_parameter_as_such(tmp_path):
    k = exec_source(KINDS, tmp_path / "kinds.py")["k"]
    with pytest.raises(ValueError, match=r"k: 'C' is a Spec parameter, whose value a launch or compile\(spec=...\) "
                                         r"gives; specialize fixes Const parameters"):
        k.specialize(C=32)


PACKED = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import Acc, f16, u32


    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    def k(o: cd.Buffer[f16], N: cd.Spec[u32] = 16):
        row = cd.array(u32, N // 2)
        for i in range(N // 2):
            row[i] = u32(0x3C003C00)
        Acc[f16, 16, N].from_rows(row).store(o, 0, stride=N)  # PACKED
''')


def test_packed_f16_rows_need_an_even_spec_column_count_at_every_value(tmp_path):
    """u32[N // 2] holds N - 1 halves for an odd N: the interpreter's reshape failed where the rule said nothing."""
    from coopdsl.errors import CompileError

    k = exec_source(PACKED, tmp_path / "packed.py")["k"]
    line = next(i for i, text in enumerate(PACKED.splitlines(), 1) if text.endswith("# PACKED"))
    out = np.zeros(16 * 16, np.float16)
    k.launch((1, 1, 1), out, device="cpu")
    assert (out == 1.0).all()
    for call in (lambda: k.compile(spec={"N": 15}),
                 lambda: k.launch((1, 1, 1), np.zeros(16 * 15, np.float16), device="cpu", N=15)):
        with pytest.raises(CompileError, match=r"Acc\[f16, 16, N\] has an odd number of columns \(N = 15\), so its "
                                               r"rows do not pack into u32 pairs") as e:
            call()
        assert e.value.loc.line == line


WRAP_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import u32


    @cd.kernel(workgroup_size=(1, 1, 1))
    def wraps(out: cd.Buffer[u32], K: cd.Spec[u32] = 2):
        t = cd.shared(u32, K * 2**31 + 1)     # u32: 1 at K = 2
        t[0] = 7
        out[0] = t[0]


    @cd.kernel(workgroup_size=(1, 1, 1))
    def zero(out: cd.Buffer[u32], K: cd.Spec[u32] = 1):
        t = cd.shared(u32, (K * 2**31) // 2**31)   # THE ZERO LINE: u32: 0 at K = 2
        t[0] = 7
        out[0] = t[0]
''')


def test_spec_sizes_are_computed_in_the_constants_type_as_the_device_computes_them(tmp_path):
    """A spec-constant size expression is OpSpecConstantOp arithmetic in the constants' type (u32 here): the
    size rules and the device checks of the reflection computed it on unbounded Python ints (``K * 2**31 + 1``
    was 4294967297, refused on Vulkan while the interpreter ran length 1; ``(K * 2**31) // 2**31`` passed the
    rules as 2 and was 0 on the device: a crashed lavapipe)."""
    from coopdsl import devices
    from coopdsl.errors import ArgumentError

    ns = exec_source(WRAP_SRC, tmp_path / "wraps.py")
    out = np.zeros(1, np.uint32)
    ns["wraps"].launch((1,), out, device="cpu")
    assert out[0] == 7
    reflection = ns["wraps"].reflect()
    arrays = reflection["shared_memory"]["arrays"]
    assert arrays[0]["length"]["value"] == 1 and arrays[0]["length"]["args"][0]["args"][0]["type"] == "u32"
    assert not devices.mismatches(reflection, "nvidia-h100", {"K": 2})
    line = next(i for i, s in enumerate(WRAP_SRC.splitlines(), 1) if "THE ZERO LINE" in s)
    for call in (lambda: ns["zero"].compile(spec={"K": 2}), lambda: ns["zero"].launch((1,), out, K=2, device="cpu")):
        with pytest.raises(ArgumentError, match=r"shared: the length must be from 1 to 4294967295 without wrapping, "
                                                r"got \(\(K \* 2147483648\) // 2147483648\) at K = 2: "
                                                r"\(K \* 2147483648\) = 4294967296 does not fit u32, whose "
                                                r"arithmetic wraps it to 0") as e:
            call()
        assert e.value.loc.line == line


NP_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import i32, u32


    @cd.kernel(workgroup_size=("WG", 1, 1))   # THE WG LINE
    def sized(out: cd.Buffer[u32], WG: cd.Spec[u32] = 1):
        out[0] = 1


    @cd.kernel(workgroup_size=("WG", 1, 1))
    def negative(out: cd.Buffer[u32], WG: cd.Spec[i32] = -1):
        out[0] = 1
''')


def test_a_numpy_spec_value_is_its_python_value_for_every_rule(tmp_path):
    """``np.uint32(0)`` for a workgroup size skipped the rules a launch checks (they refused numpy scalars, and
    that refusal was taken as 'left to the packer'), reaching the driver; compile(spec=) refused numpy values a
    launch took. Now one decision (coopdsl/_numbers.py) takes a numpy scalar as its Python value everywhere."""
    from coopdsl.errors import CompileError

    ns = exec_source(NP_SRC, tmp_path / "npspec.py")
    line = next(i for i, s in enumerate(NP_SRC.splitlines(), 1) if "THE WG LINE" in s)
    for value in (0, np.uint32(0), np.int64(0)):
        with pytest.raises(CompileError, match=r"workgroup size 'WG' is 0") as e:
            ns["sized"].launch((1,), np.zeros(1, np.uint32), WG=value, device="cpu")
        assert e.value.loc.line == line
    ns["sized"].compile(spec={"WG": np.int64(2)})
    out = np.zeros(1, np.uint32)
    ns["sized"].launch((1,), out, WG=np.uint32(2), device="cpu")
    assert out[0] == 1


def test_a_workgroup_no_device_runs_is_not_sent_to_the_interpreter(tmp_path, device):
    """A workgroup size under 1 (a Spec[i32] default of -1) is refused by the device check and by the
    interpreter alike: the device's message no longer says 'the CPU interpreter runs it'."""
    from coopdsl import runtime

    ns = exec_source(NP_SRC, tmp_path / "npneg.py")
    with pytest.raises(runtime.DeviceFeatureError, match=r"each size must be at least 1") as e:
        ns["negative"].launch((1,), np.zeros(1, np.uint32), device=device)
    assert "interpreter" not in str(e.value)
    from coopdsl.interp import LaunchArgumentError

    with pytest.raises(LaunchArgumentError, match=r"workgroup size \(-1, 1, 1\) must be positive"):
        ns["negative"].launch((1,), np.zeros(1, np.uint32), device="cpu")


BYTES_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import u32


    @cd.kernel(workgroup_size=(1, 1, 1))
    def big(o: cd.Buffer[u32], N: cd.Spec[u32] = 4):
        sh = cd.shared(u32, N)
        sh[N - 1] = 7
        o[0] = sh[N - 1]
''')


def test_a_shared_arrays_bytes_are_counted_by_the_host_never_wrapped(tmp_path):
    """The length is the module's u32 arithmetic, but its bytes (length * stride) and their sum are the host's: in
    u32 a 4 GiB + 4 byte array was checked as 4 bytes, and the device check let it reach the driver (found by
    differential testing against lavapipe)."""
    from coopdsl import devices
    from coopdsl.devices.dims import resolve

    ns = exec_source(BYTES_SRC, tmp_path / "bytes.py")
    r = ns["big"].reflect()
    total = r["shared_memory"]["bytes"]
    assert total["host"] is True and resolve(total, {"N": 2**30 + 1}) == 4 * (2**30 + 1)
    found = devices.mismatches(r, "nvidia-h100", {"N": 2**30 + 1})
    assert any("take 4294967300 bytes" in m.message for m in found), [m.message for m in found]


DIV_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import i32, u32


    @cd.kernel(workgroup_size=(1, 1, 1))
    def sdiv(out: cd.Buffer[i32], A: cd.Spec[i32] = 7, B: cd.Spec[i32] = -3):
        out[0] = A // B
        out[1] = A % B


    @cd.kernel(workgroup_size=(1, 1, 1))
    def udiv(out: cd.Buffer[u32], A: cd.Spec[u32] = 7, B: cd.Spec[u32] = 3):
        out[0] = A // B
        out[1] = A % B
''')
DIV_EDGES = [(-2**31, -1), (7, 0), (-7, 2), (7, -2), (-7, -2), (2**31 - 1, -1), (-2**31, 7), (0, 5)]
UDIV_EDGES = [(7, 0), (2**32 - 1, 3), (5, 7)]


def test_spec_division_is_defined_for_every_value_in_the_module(tmp_path):
    """``//`` and ``%`` of specialization constants are OpSpecConstantOps the driver folds when it makes the
    pipeline: OpSDiv with the divisor made 1 where it is 0 or -1 (INT_MIN // -1 trapped lavapipe's folding,
    SIGFPE), the signed remainder as ``x - y * q`` (OpSRem/OpSMod: undefined in Vulkan for negative operands),
    a zero divisor selecting 0; spirv-val passes."""
    from tests.conftest import compile_checked

    ns = exec_source(DIV_SRC, tmp_path / "divs.py")
    spec = r"OpSpecConstantOp %\w+ "
    compile_checked(ns["sdiv"], spec + "SDiv", spec + "SNegate", spec + "IMul", spec + "ISub", spec + "IEqual",
                    spec + "LogicalOr", spec + "Select", absent=("SRem", "SMod", "UMod"))
    compile_checked(ns["udiv"], spec + "UDiv", spec + "UMod", spec + "IEqual", spec + "Select",
                    absent=("SDiv", "SRem", "SMod"))


@pytest.mark.vulkan
def test_spec_division_on_a_device_matches_the_interpreter_at_its_edges(tmp_path, device):
    """At INT_MIN // -1, a zero divisor and negative operands a device gives what the interpreter gives
    (docs/interpreter.md: INT_MIN // -1 is INT_MIN, % -1 is 0, a zero divisor 0); run in a child process, so
    that a driver that traps while folding fails this test instead of ending the run."""
    ns = exec_source(DIV_SRC, tmp_path / "divs.py")
    want = []
    for name, dtype, edges in (("sdiv", np.int32, DIV_EDGES), ("udiv", np.uint32, UDIV_EDGES)):
        for a, b in edges:
            out = np.zeros(2, dtype)
            ns[name].launch((1,), out, A=a, B=b, device="cpu")
            want.append([int(v) for v in out])
    child = textwrap.dedent(f'''
        import sys
        import numpy as np
        sys.path.insert(0, {str(tmp_path)!r})
        import divs
        got = []
        for name, dtype, edges in (("sdiv", np.int32, {DIV_EDGES!r}), ("udiv", np.uint32, {UDIV_EDGES!r})):
            for a, b in edges:
                out = np.zeros(2, dtype)
                getattr(divs, name).launch((1,), out, A=a, B=b)
                got.append([int(v) for v in out])
        print(got)
    ''')
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == str(want)
    assert want[0] == [-2**31, 0] and want[1] == [0, 0] and want[2] == [-3, -1] and want[3] == [-3, 1]


BOOL_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import f32, u32


    @cd.kernel(workgroup_size=(1, 1, 1))
    def k(out: cd.Buffer[f32], D: cd.Spec[cd.boolean] = False, A: cd.Spec[u32] = 3):
        out[0] = cd.select(D, f32(A), 0.5)
''')


def test_a_bool_spec_constant_takes_the_same_values_on_every_path(tmp_path):
    """A launch took 1 and 0 for a bool specialization constant (VkBool32's values) where compile(spec=...),
    reflect(spec=...) and emit --spec refused them: one rule (coopdsl._numbers.host_bool) decides for all."""
    path = tmp_path / "bk.py"
    k = exec_source(BOOL_SRC, path)["k"]
    for value, want in ((1, 3.0), (0, 0.5), (True, 3.0), (np.bool_(True), 3.0)):
        assert k.compile(spec={"D": value}) == k.compile(spec={"D": bool(value)})
        assert k.reflect(spec={"D": value}) == k.reflect(spec={"D": bool(value)})
        out = np.zeros(1, np.float32)
        k.launch((1, 1, 1), out, device="cpu", D=value)
        assert out[0] == want
    r = subprocess.run([sys.executable, "-m", "coopdsl", "emit", str(path), "--spec", "D=1", "-o",
                        str(tmp_path / "k.spv")], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "k.spv").read_bytes() == k.compile(spec={"D": True})
    for bad in (2, 0.5, -1):
        with pytest.raises(ValueError, match=f"cannot use the number {bad} as a bool"):
            k.compile(spec={"D": bad})
        with pytest.raises(Exception, match=rf"cannot be {bad}: give True or False \(or 1 or 0\)"):
            k.launch((1, 1, 1), np.zeros(1, np.float32), device="cpu", D=bad)


WRAPPED_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import Acc, f32, u32


    @cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
    def k(o: cd.Buffer[f32], S: cd.Spec[u32] = 128, L: cd.Spec[u32] = 8, R: cd.Spec[u32] = 32,
          B: cd.Spec[u32] = 1, A: cd.Spec[u32] = 3):
        sh = cd.shared(f32, S - 65)  # SHARED
        loc = cd.local_array(f32, L - 5)  # LOCAL
        Acc[f32, R - 16, 16].splat(0.0).store(o, 0, stride=16)  # ACC
        big = cd.shared(f32, B * 1048576 + 1)  # BIG
        arr = cd.array(f32, A * 20000)  # ARRAY
        loc[0] = arr[0]
        sh[0] = loc[0]
        big[0] = sh[0]
        o[0] = big[0]
''')


@pytest.mark.parametrize("spec,marker,col,message", [
    ({"S": 64}, "# SHARED", 10, "shared: the length must be from 1 to 4294967295 without wrapping, got (S - 65) at "
                                "S = 64: (S - 65) = -1 does not fit u32, whose arithmetic wraps it to 4294967295"),
    ({"L": 4}, "# LOCAL", 11, "local_array: the length must be from 1 to 4294967295 without wrapping, got (L - 5) "
                              "at L = 4: (L - 5) = -1 does not fit u32, whose arithmetic wraps it to 4294967295"),
    ({"R": 8}, "# ACC", 5, "rows must be from 1 to 4294967295 without wrapping, got (R - 16) at R = 8: (R - 16) = "
                           "-8 does not fit u32, whose arithmetic wraps it to 4294967288"),
    ({"B": 4096}, "# BIG", 11, "shared: the length must be from 1 to 4294967295 without wrapping, got ((B * 1048576) "
                               "+ 1) at B = 4096: (B * 1048576) = 4294967296 does not fit u32, whose arithmetic "
                               "wraps it to 0"),
    ({"S": 65}, "# SHARED", 10, "shared: the length must be from 1 to 4294967295, got (S - 65) = 0 at S = 65"),
    ({"A": 4}, "# ARRAY", 11, "an array length must be from 1 to 65536, got (A * 20000) = 80000 at A = 4"),
])
def test_a_spec_size_that_wraps_is_zero_or_too_large_at_the_given_values_is_refused(tmp_path, spec, marker, col,
                                                                                     message):
    """Spec-constant size arithmetic that wraps in u32 at the values given (S - 65 at S = 64 was a shared array of
    4294967295 elements, B * 1048576 + 1 at B = 4096 one of 1 element, R - 16 at R = 8 a matrix of 4294967288
    rows) is the located error a length out of range is, naming the values and the wrapped operation."""
    from coopdsl.errors import CompileError

    k = exec_source(WRAPPED_SRC, tmp_path / "wrapped.py")["k"]
    line = next(i for i, text in enumerate(WRAPPED_SRC.splitlines(), 1) if text.endswith(marker))
    k.compile()
    k.compile(spec={"S": 66, "L": 6, "R": 32, "B": 4095, "A": 3})
    with pytest.raises(CompileError) as e:
        k.compile(spec=spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (line, col), str(e.value)
    with pytest.raises(CompileError) as e:
        k.launch((1, 1, 1), np.zeros(256, np.float32), device="cpu", **spec)
    assert message in str(e.value) and (e.value.loc.line, e.value.loc.col) == (line, col), str(e.value)



INDEX_SRC = textwrap.dedent('''
    import coopdsl as cd
    from coopdsl import f16, f32, u32


    @cd.kernel(workgroup_size=(1, 1, 1))
    def guarded(o: cd.Buffer[f32], N: cd.Spec[u32] = 4):
        r = cd.local_array(f32, N)
        t = 0.0
        for i in cd.static_range(4):
            if i < N:
                r[i] = f32(i + 1)
                t += r[i]
        o[0] = t


    @cd.kernel(workgroup_size=(1, 1, 1))
    def past(s: cd.Buffer[f16], S: cd.Spec[u32] = 8):
        r = cd.array(f16, S)
        s[0] = r[20]  # READ
''')


def test_a_constant_index_into_a_spec_sized_array_is_checked_when_it_runs(tmp_path):
    """A constant index into an array whose length is a specialization constant compiles at any values: a branch
    on the constants, which the compiler keeps, may guard it (an unrolled loop's 'if i < N: r[i]', as glslang
    compiles it); the interpreter reports an index it reaches past the end, as out of bounds (it raised a bare
    IndexError)."""
    from coopdsl.interp import InterpreterError

    ns = exec_source(INDEX_SRC, tmp_path / "index.py")
    guarded, past = ns["guarded"], ns["past"]
    for n, total in ((4, 10.0), (2, 3.0)):
        guarded.compile(spec={"N": n})
        o = np.zeros(1, np.float32)
        guarded.launch((1, 1, 1), o, N=n, device="cpu")
        assert o[0] == total
    past.compile(spec={"S": 8})
    line = next(i for i, text in enumerate(INDEX_SRC.splitlines(), 1) if text.endswith("# READ"))
    with pytest.raises(InterpreterError, match=r"read of element 20 of an array value f16\[S\] out of bounds: it "
                                               r"holds 8 elements") as e:
        past.launch((1, 1, 1), np.zeros(4, np.float16), device="cpu")
    assert e.value.loc.line == line
