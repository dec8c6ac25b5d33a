"""``coopdsl build``: every variant compiled once, incremental rebuilds, clear failures."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from coopdsl.aot import BuildError, InputError
from coopdsl.aot import build as build_module
from coopdsl.aot.build import MANIFEST, build
from coopdsl.cli import main

from .ctools import syntax_check

SAXPY = '''
import coopdsl as cd
from coopdsl import f32, u32

@cd.kernel(workgroup_size=("WG", 1, 1))
def saxpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32, WG: cd.Spec[u32] = 64):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i]
'''

SCALE = '''
import coopdsl as cd
from coopdsl import f32

@cd.kernel(workgroup_size=(32, 1, 1))
def scale(x: cd.Buffer[f32], F: cd.Const[float] = 2.0):
    i = cd.global_invocation_id.x
    x[i] = x[i] * F
'''

SPEC = '''
header = "kernels.h"

[[kernel]]
file = "saxpy.py"
name = "saxpy"
variants = [{ spec = { WG = 64 } }, { suffix = "wide", spec = { WG = 256 } }]

[[kernel]]
file = "scale.py"
name = "scale"
output = "scale3"
target_env = "vulkan1.2"
variants = [{ const = { F = 3.0 } }]
'''

OUTPUTS = ["saxpy_WG64", "saxpy_wide", "scale3"]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "saxpy.py").write_text(SAXPY)
    (tmp_path / "scale.py").write_text(SCALE)
    (tmp_path / "kernels.toml").write_text(SPEC)
    return tmp_path


@pytest.fixture
def compiles(monkeypatch):
    """The outputs compiled, in order (counts the real compiler calls)."""
    seen = []
    real = build_module.compile_artifact

    def counting(kernel, name=None, *args, **kwargs):
        seen.append(name)
        return real(kernel, name, *args, **kwargs)

    monkeypatch.setattr(build_module, "compile_artifact", counting)
    return seen


def _mtimes(out):
    return {p.name: p.stat().st_mtime_ns for p in out.iterdir()}


def test_build_writes_every_variant_and_one_header(project, compiles):
    out = project / "out"
    report = build(project / "kernels.toml", out)
    assert report.compiled == OUTPUTS == compiles
    for name in OUTPUTS:
        assert (out / f"{name}.spv").read_bytes()[:4] == b"\x03\x02\x23\x07"
        assert json.loads((out / f"{name}.json").read_text())["entry_point"] in ("saxpy", "scale")
    wide = json.loads((out / "saxpy_wide.json").read_text())
    assert wide["workgroup_size"] == [256, 1, 1] and wide["spec_constants"][0]["default"] == 256
    header = (out / "kernels.h").read_text()
    assert "static const coopdsl_kernel_info *const kernels_kernels[KERNELS_KERNEL_COUNT] = " \
           "{&saxpy_WG64_info, &saxpy_wide_info, &scale3_info};" in header
    assert '"vulkan1.2"' in header and "const F=3.0" in header
    syntax_check(out / "kernels.h", "c99")
    syntax_check(out / "kernels.h", "c++17")


def test_unchanged_build_compiles_nothing_and_touches_nothing(project, compiles):
    out = project / "out"
    build(project / "kernels.toml", out)
    before = _mtimes(out)
    compiles.clear()
    report = build(project / "kernels.toml", out)
    assert compiles == [] and report.compiled == []
    assert report.up_to_date == OUTPUTS and not report.header_changed
    after = _mtimes(out)
    assert {k: v for k, v in after.items() if k != MANIFEST} == {k: v for k, v in before.items() if k != MANIFEST}


def test_only_changed_entries_recompile(project, compiles):
    out = project / "out"
    build(project / "kernels.toml", out)
    compiles.clear()
    (project / "scale.py").write_text(SCALE.replace("x[i] * F", "x[i] * F + 1.0"))
    assert build(project / "kernels.toml", out).compiled == ["scale3"] == compiles
    compiles.clear()
    (project / "kernels.toml").write_text(SPEC.replace("WG = 256", "WG = 128"))
    report = build(project / "kernels.toml", out)
    assert report.compiled == ["saxpy_wide"] == compiles and report.header_changed
    assert "{128u}" in (out / "kernels.h").read_text()


def test_deleted_output_is_rebuilt_and_dropped_entries_are_removed(project, compiles):
    out = project / "out"
    build(project / "kernels.toml", out)
    compiles.clear()
    os.remove(out / "scale3.spv")
    assert build(project / "kernels.toml", out).compiled == ["scale3"]
    (project / "kernels.toml").write_text(SPEC.split("[[kernel]]\nfile = \"scale.py\"")[0])
    report = build(project / "kernels.toml", out)
    assert report.removed == ["scale3.spv", "scale3.json"]
    assert not (out / "scale3.spv").exists() and "scale3" not in (out / "kernels.h").read_text()


def test_compile_error_names_the_kernel_and_line(project, compiles):
    out = project / "out"
    (project / "scale.py").write_text(SCALE.replace("x[i] = x[i] * F", "x[i] = x[i] * F + undefined_name"))
    with pytest.raises(BuildError) as info:
        build(project / "kernels.toml", out)
    text = str(info.value)
    assert text.startswith(f"{project / 'kernels.toml'}: kernel #2 'scale' (scale.py), output scale3: failed:\n")
    assert f"{project / 'scale.py'}:8:" in text and "undefined_name" in text
    assert compiles == ["saxpy_WG64", "saxpy_wide", "scale3"]
    compiles.clear()
    (project / "scale.py").write_text(SCALE)
    assert build(project / "kernels.toml", out).compiled == ["scale3"] == compiles  # earlier outputs were kept


def test_cli_build_exit_codes(project, capsys):
    out = project / "out"
    assert main(["build", str(project / "kernels.toml"), "-o", str(out)]) == 0
    assert "3 compiled, 0 up to date" in capsys.readouterr().err
    assert main(["build", str(project / "kernels.toml"), "-o", str(out)]) == 0
    assert "0 compiled, 3 up to date" in capsys.readouterr().err
    (project / "saxpy.py").write_text(SAXPY.replace("def saxpy(", "def saxpy(:"))
    assert main(["build", str(project / "kernels.toml"), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"kernel #1 'saxpy' (saxpy.py), output saxpy_WG64: failed:\n{project / 'saxpy.py'}:6:" in err
    assert "SyntaxError" in err and "Traceback" not in err
    assert main(["build", str(project / "missing.toml"), "-o", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
    for name in ("-", ""):   # (they made a folder named '-', or wrote into the current one: a docs-only check)
        assert main(["build", str(project / "kernels.toml"), "-o", name]) == 2
        assert f"-o {name!r} is not a folder name" in capsys.readouterr().err
    assert not (project / "-").exists()


@pytest.mark.parametrize("spec,message", [
    ("nonsense = [", "not valid TOML"),
    ("header = \"k.hpp\"\n[[kernel]]\nfile = \"a.py\"\nname = \"a\"", "header must be a file name ending in .h"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\nvariant = []", "kernel #1 'a': unknown key 'variant'"),
    ("[[kernel]]\nname = \"a\"", "kernel #1 'a': missing 'file'"),
    ("[[kernel]]\nfile = \"a.py\"", "kernel #1: missing 'name' (the kernel function in a.py)"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\ntarget_env = \"vulkan9\"", "target_env must be one of"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\nvariants = [{ spec = { N = \"x\" } }]",
     "variant #1: spec N must be a number or true/false"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\nvariants = [{}, {}]", "give several variants different values"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\noutput = \"a-b\"", "output name 'a-b' must be a C identifier"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\n[[kernel]]\nfile = \"b.py\"\nname = \"a\"",
     "kernel #2 'a' (b.py) and kernel #1 'a' (a.py) both write output 'a'"),
    ("target_env = \"vulkan1.3\"", "no kernels"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"a\"\noutput = \"int\"", "output name 'int' is a C keyword"),
    ("[[kernel]]\nfile = \"a.py\"\nname = \"many\"\n[[kernel]]\nfile = \"a.py\"\nname = \"MANY\"",
     "kernel #2 'MANY' (a.py) and kernel #1 'many' (a.py) both write outputs 'many' and 'MANY' (their files and "
     "header macros differ only in case)"),
])
def test_bad_specs(tmp_path, spec, message):
    (tmp_path / "k.toml").write_text(textwrap.dedent(spec))
    with pytest.raises(InputError) as info:
        build(tmp_path / "k.toml", tmp_path / "out")
    assert message in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "k.toml"))


@pytest.mark.parametrize("raw", [b'header = "\xe9.h"\n', b"\xff\xfe\x00binary"])
def test_a_spec_that_is_not_utf8_is_an_input_error(tmp_path, raw):
    (tmp_path / "k.toml").write_bytes(raw)
    with pytest.raises(InputError, match="not valid TOML: byte .* is not UTF-8"):
        build(tmp_path / "k.toml", tmp_path / "out")


def test_missing_kernel_file_and_unknown_kernel(project):
    (project / "kernels.toml").write_text(SPEC.replace('file = "scale.py"', 'file = "nope.py"'))
    with pytest.raises(InputError, match=r"kernel #2 'scale' \(nope.py\): no such file"):
        build(project / "kernels.toml", project / "out")
    # a kernel the spec names but the file lacks is the spec's fault, as docs/errors.md says: an InputError, which
    # the command line prints as a usage error with exit status 2 (it was a BuildError, exit status 1)
    (project / "kernels.toml").write_text(SPEC.replace('name = "scale"', 'name = "scal"'))
    with pytest.raises(InputError, match=r"kernel #2 'scal' \(scale.py\), output scale3: scale.py has no kernel 'scal' "
                                         r"\(it has: scale\)"):
        build(project / "kernels.toml", project / "out")
    from coopdsl.cli import main

    assert main(["build", str(project / "kernels.toml"), "-o", str(project / "out")]) == 2


def test_a_spec_value_the_kernel_does_not_take_is_an_input_error(project):
    # as `emit --spec NOPE=1` is a usage error (exit status 2): the spec file's fault, not a compile failure
    (project / "kernels.toml").write_text(SPEC.replace("spec = { WG = 64 }", "spec = { NOPE = 64 }"))
    with pytest.raises(InputError, match=r"kernel #1 'saxpy' \(saxpy.py\), output \w+: saxpy has no specialization "
                                         r"constant 'NOPE'"):
        build(project / "kernels.toml", project / "out")
    from coopdsl.cli import main

    assert main(["build", str(project / "kernels.toml"), "-o", str(project / "out")]) == 2


F32_TILE = '''
import coopdsl as cd
from coopdsl import Acc, MatA, MatB, f32

@cd.kernel(workgroup_size=(32, 1, 1))
def f32_tile(a: cd.Buffer[f32], c: cd.Buffer[f32]):
    ta = MatA[f32, 16, 8].load(a, 0, stride=8)
    tb = MatB[f32, 8, 16].load(a, 0, stride=16)
    acc = cd.muladd(ta, tb, Acc[f32, 16, 16].splat(0.0))
    acc.store(c, 0, stride=16)
'''


def test_device_profile_checks_every_kernel(tmp_path):
    (tmp_path / "tile.py").write_text(F32_TILE)
    gemm = tmp_path.parent / "gemm_khr.py"
    gemm.write_text((build_module.Path(__file__).resolve().parents[2] / "examples" / "gemm_khr.py").read_text())
    (tmp_path / "k.toml").write_text('device = "nvidia-h100"\n[[kernel]]\nfile = "../gemm_khr.py"\nname = "gemm"\n'
                                     '[[kernel]]\nfile = "tile.py"\nname = "f32_tile"\n')
    with pytest.raises(BuildError) as info:
        build(tmp_path / "k.toml", tmp_path / "out")
    text = str(info.value)
    assert "kernel #2 'f32_tile' (tile.py), output f32_tile: failed:\n" in text
    assert f"{tmp_path / 'tile.py'}:9:11: error: NVIDIA H100" in text and "offers no MulAdd" in text
    assert (tmp_path / "out" / "gemm.spv").is_file()  # the first kernel passed the same check


@pytest.mark.parametrize("outputs", [{"../../victim": {"key": "x"}}, {"a": 5}, [1], 5, {"/tmp/abs": {}}])
def test_a_manifest_names_no_file_outside_the_folder_and_a_corrupt_one_is_rebuilt_from(project, compiles, outputs):
    # a manifest entry '../../victim' made a build remove victim.spv two folders up as "stale", and
    # {"a": 5} or [1] as outputs raised AttributeError/TypeError (found by a check written from the docs alone):
    # the manifest is read as what a build wrote, C-identifier names and tables, or not at all
    out = project / "out" / "deep"
    out.mkdir(parents=True)
    victim = project / "victim.spv"
    victim.write_bytes(b"keep")
    (project / "victim.json").write_text("{}")
    (out / MANIFEST).write_text(json.dumps({"format": 1, "outputs": outputs}))
    report = build(project / "kernels.toml", out)
    assert victim.read_bytes() == b"keep" and (project / "victim.json").exists()
    assert report.removed == [] and report.compiled == OUTPUTS   # (nothing trusted: everything built)
    assert sorted(json.loads((out / MANIFEST).read_text())["outputs"]) == OUTPUTS


@pytest.mark.parametrize("lang", ["c99", "c++17"])
def test_a_header_name_starting_with_a_digit_gives_c_names_alike_and_compiles(tmp_path, lang):
    # header "1k.h" gave the array _1k_kernels but the macro 1K_KERNEL_COUNT (not an identifier): the build
    # passed with a header no compiler takes; macros and variables now spell a name alike (cspell.identifier)
    (tmp_path / "saxpy.py").write_text(SAXPY)
    (tmp_path / "k.toml").write_text('header = "1k.h"\n[[kernel]]\nfile = "saxpy.py"\nname = "saxpy"\n')
    assert build(tmp_path / "k.toml", tmp_path / "out").header == tmp_path / "out" / "1k.h"
    text = (tmp_path / "out" / "1k.h").read_text()
    assert "#define _1K_KERNEL_COUNT 1u\n" in text
    assert "static const coopdsl_kernel_info *const _1k_kernels[_1K_KERNEL_COUNT] = {&saxpy_info};" in text
    syntax_check(tmp_path / "out" / "1k.h", lang)


def test_an_output_that_would_declare_a_shared_type_is_refused_before_anything_is_written(tmp_path, capsys):
    # output "coopdsl_kernel" declared coopdsl_kernel_info, the type every header shares: a header that does not
    # compile, from a build that passed
    (tmp_path / "saxpy.py").write_text(SAXPY)
    (tmp_path / "k.toml").write_text('[[kernel]]\nfile = "saxpy.py"\nname = "saxpy"\noutput = "coopdsl_kernel"\n')
    message = (f"{tmp_path / 'k.toml'}: output 'coopdsl_kernel' would declare the C name coopdsl_kernel_info, "
               f"which is the header's own type coopdsl_kernel_info (every coopdsl header declares it); "
               f"rename the output")
    with pytest.raises(InputError) as info:
        build(tmp_path / "k.toml", tmp_path / "out")
    assert str(info.value) == message
    assert main(["build", str(tmp_path / "k.toml"), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"coopdsl: error: {message}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["nosuchgpu", ""])   # ("": once let through, to fail while compiling)
@pytest.mark.parametrize("spec, where", [
    ('device = "NAME"\n[[kernel]]\nfile = "saxpy.py"\nname = "saxpy"\n', ""),
    ('[[kernel]]\nfile = "saxpy.py"\nname = "saxpy"\ndevice = "NAME"\n', " kernel #1 'saxpy':"),
])
def test_an_unknown_device_is_a_usage_error_as_for_emit(tmp_path, capsys, spec, where, name):
    # it was a compile failure ("failed:", exit status 1) while `emit --device nope` is a usage error (2)
    from coopdsl.devices import shipped_profiles

    (tmp_path / "saxpy.py").write_text(SAXPY)
    (tmp_path / "k.toml").write_text(spec.replace("NAME", name))
    message = (f"{tmp_path / 'k.toml'}:{where} device: no device profile '{name}': not a shipped profile "
               f"({', '.join(shipped_profiles())}) nor a file")
    with pytest.raises(InputError) as info:
        build(tmp_path / "k.toml", tmp_path / "out")
    assert str(info.value) == message
    assert main(["build", str(tmp_path / "k.toml"), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"coopdsl: error: {message}\n"
    assert not (tmp_path / "out").exists()   # (found before anything is compiled or written)


def _edit_reflection(out, edit):
    r = json.loads((out / "scale3.json").read_text())
    edit(r)
    (out / "scale3.json").write_text(json.dumps(r))


DAMAGE = {   # what an edit of an output does to the files (besides the manifest's records)
    "empty reflection": lambda out: (out / "scale3.json").write_text(""),
    "reflection {}": lambda out: (out / "scale3.json").write_text("{}"),
    "module cut": lambda out: (out / "scale3.spv").write_bytes(b"abc"),
    "module emptied": lambda out: (out / "scale3.spv").write_bytes(b""),
    "module word changed": lambda out: (out / "scale3.spv").write_bytes(
        (out / "scale3.spv").read_bytes()[:-4] + b"\0\0\0\0"),
    "bindings not a list": lambda out: _edit_reflection(out, lambda r: r.update(bindings=5)),
    "push constants null": lambda out: _edit_reflection(out, lambda r: r.update(push_constants=None)),
    "binding set a string": lambda out: _edit_reflection(out, lambda r: r["bindings"][0].update(set="a")),
    "binding renamed": lambda out: _edit_reflection(out, lambda r: r["bindings"][0].update(name="zz")),
}


@pytest.mark.parametrize("damage", [*DAMAGE, "record without kernel", "record spec not a table",
                                    "record kernel renamed"])
def test_damaged_outputs_are_built_again(project, compiles, damage):
    """The up-to-date check looked only for the files, then at the reflection's keys: an emptied or edited
    reflection file, a cut module or an edited manifest record stopped the next build with a traceback
    (JSONDecodeError, KeyError, AttributeError, "not a multiple of 4"), or went into the header as it was (a
    zero-length array, a binding set of "a"): every output now reads back byte for byte as it was written."""
    out = project / "out"
    build(project / "kernels.toml", out)
    header = (out / "kernels.h").read_text()
    compiles.clear()
    if damage in DAMAGE:
        DAMAGE[damage](out)
    else:
        manifest = json.loads((out / MANIFEST).read_text())
        rec = manifest["outputs"]["scale3"]
        if damage == "record without kernel":
            del rec["kernel"]
        elif damage == "record kernel renamed":
            rec["kernel"] = "other"
        else:
            rec["spec"] = 3
        (out / MANIFEST).write_text(json.dumps(manifest))
    report = build(project / "kernels.toml", out)
    assert compiles == ["scale3"] and report.up_to_date == ["saxpy_WG64", "saxpy_wide"]
    assert json.loads((out / "scale3.json").read_text())["entry_point"] == "scale"
    assert (out / "kernels.h").read_text() == header and not report.header_changed


def test_an_edited_device_profile_file_rebuilds_what_it_checked(tmp_path, capsys):
    # the key held the profile's file name, not what the file says: a profile that no longer allows the
    # kernel's workgroup left the build "up to date"
    from coopdsl.devices.profile import profiles_dir

    profile = json.loads(profiles_dir().joinpath("nvidia-h100.json").read_text())
    (tmp_path / "saxpy.py").write_text(SAXPY)
    (tmp_path / "k.toml").write_text('device = "small.json"\n[[kernel]]\nfile = "saxpy.py"\nname = "saxpy"\n')
    (tmp_path / "small.json").write_text(json.dumps(profile))
    report = build(tmp_path / "k.toml", tmp_path / "out")
    assert report.compiled == ["saxpy"]
    assert build(tmp_path / "k.toml", tmp_path / "out").up_to_date == ["saxpy"]
    profile[0]["max_workgroup_invocations"] = 32
    (tmp_path / "small.json").write_text(json.dumps(profile))
    with pytest.raises(BuildError, match=r"saxpy.py:\d+:\d+: .*workgroup"):
        build(tmp_path / "k.toml", tmp_path / "out")


def test_a_kernel_file_that_is_not_utf8_is_an_input_error(project, capsys):
    (project / "scale.py").write_bytes(b"# \xff\n" + SCALE.encode())
    with pytest.raises(InputError, match=r"kernel #\d+ 'scale' \(scale.py\): .*scale.py: byte 2 is not UTF-8"):
        build(project / "kernels.toml", project / "out")


def test_touching_a_kernel_file_rebuilds_what_it_defines(project, compiles):
    # aot.md: "after changing a module it imports, touch the kernel file": the key held the file's text alone,
    # so a touch rebuilt nothing (found by a docs-only check)
    out = project / "out"
    build(project / "kernels.toml", out)
    compiles.clear()
    assert build(project / "kernels.toml", out).compiled == []
    st = (project / "scale.py").stat()
    os.utime(project / "scale.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    report = build(project / "kernels.toml", out)
    assert compiles == ["scale3"] and report.up_to_date == ["saxpy_WG64", "saxpy_wide"]
