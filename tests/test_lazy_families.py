"""The builtin, op and lowering families of extensions few kernels use load on first need, and only then.

`coopdsl emit` of a kernel that uses only SPV_KHR_cooperative_matrix (and `import coopdsl`) does not import
them; a kernel that uses them compiles in a fresh process all the same, to the same module, whether it
reaches them as ``cd.X`` or only through a method or a conversion.  The registries they fill say which
modules come later (``Registry.later``), and the checks here keep that list whole and its families from
shadowing a loaded entry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import child_env

ROOT = Path(__file__).resolve().parents[1]

LATER = [  # what a KHR kernel never needs
    "coopdsl.lang.callbacks", "coopdsl.lang.coopmat2", "coopdsl.lang.coopmat2_checks", "coopdsl.lang.qcom",
    "coopdsl.lang.tensor", "coopdsl.ir.ops.coopmat2", "coopdsl.ir.ops.qcom", "coopdsl.ir.ops.tensor",
    "coopdsl.spirv.lower.coopmat2", "coopdsl.spirv.lower.qcom", "coopdsl.spirv.lower.tensor",
    "coopdsl.passes.uniformity_report", "coopdsl.ir.printer", "coopdsl.aot.cheader",
    "coopdsl.lang.subgroup", "coopdsl.lang.atomics", "coopdsl.ir.ops.subgroup", "coopdsl.ir.ops.atomics",
    "coopdsl.spirv.lower.subgroup", "coopdsl.lang.intdot", "coopdsl.ir.ops.intdot", "coopdsl.spirv.lower.intdot",
]
KHR_EXAMPLES = ["gemm_khr", "gemm_portable", "bf16_gemm", "int8_gemm", "gemm_edges", "gemm_shared"]
OTHER_EXAMPLES = ["gemm_workgroup", "flash_attention", "qcom_conv_im2col"]  # tensor layouts, NV2 ops, QCOM

EMIT = ("import sys, json\nfrom coopdsl.cli import main\nstatus = main(sys.argv[2:])\n"
        "print(json.dumps([status, sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)]))")


def _run(code: str, *argv: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def _emit(*argv: str) -> tuple[int, list[str]]:
    """Run `coopdsl emit ARGV` in a fresh process: its exit status and the modules of LATER it imported."""
    status, loaded = json.loads(_run(EMIT, json.dumps(LATER), "emit", *argv))
    return status, loaded


def test_import_coopdsl_loads_none_of_them():
    code = f"import sys, coopdsl; print(sorted(m for m in {LATER!r} if m in sys.modules))"
    assert _run(code) == "[]"


@pytest.mark.parametrize("example", KHR_EXAMPLES)
def test_emitting_a_khr_kernel_loads_none_of_them(example, tmp_path):
    status, loaded = _emit(f"examples/{example}.py", "-o", str(tmp_path / "k.spv"))
    assert status == 0 and (tmp_path / "k.spv").stat().st_size > 0
    assert loaded == []


def _preloaded(out: Path, *argv: str) -> bytes:
    """The module `coopdsl emit ARGV` writes in a process that imported every family up front."""
    code = "import importlib, json, sys\nfor m in json.loads(sys.argv[1]): importlib.import_module(m)\n" + EMIT
    status, loaded = json.loads(_run(code, json.dumps(LATER), "emit", *argv, "-o", str(out)))
    assert status == 0 and loaded == sorted(LATER)
    return out.read_bytes()


@pytest.mark.parametrize("example", OTHER_EXAMPLES)
def test_a_kernel_using_them_compiles_in_a_fresh_process(example, tmp_path):
    out = tmp_path / "k.spv"
    status, loaded = _emit(f"examples/{example}.py", "-o", str(out))
    assert status == 0 and loaded  # it needed some of them, and got them
    assert out.read_bytes() == _preloaded(tmp_path / "first.spv", f"examples/{example}.py")


METHODS_ONLY = '''
import coopdsl as cd
from coopdsl import Acc, MatA, f16, f32, u32


@cd.kernel(workgroup_size=(32, 1, 1))
def nv2_methods(a: cd.Buffer[f16], c: cd.Buffer[f16]):
    acc = Acc[f16, 16, 32].load(a, 0, stride=32)
    bt = acc.transpose()                         # SPV_NV_cooperative_matrix2, reached as a method
    pa = MatA[f16, 16, 32](acc)                  # a use change: a conversion, no cd.X
    cd.muladd(pa, bt, Acc[f16, 16, 16](0.0)).store(c, 0, stride=16)


@cd.kernel(workgroup_size=(64, 1, 1))
def qcom_methods(out: cd.Buffer[f32]):
    row = cd.array(f16, 16, 1)
    back = MatA[f16, 64, 16].from_rows(row).to_rows(u32)   # SPV_QCOM_cooperative_matrix_conversion methods
    out[cd.subgroup_invocation_id] = f32(back[7])


@cd.kernel(workgroup_size=(32, 1, 1))
def subgroup_atomics(a: cd.Buffer[u32]):
    s = cd.subgroup_inclusive_add(a[cd.global_invocation_id.x])   # builtins reached as cd.X
    cd.atomic_add(a, 0, cd.subgroup_broadcast_first(s))
'''


@pytest.mark.parametrize("kernel", ["nv2_methods", "qcom_methods", "subgroup_atomics"])
def test_a_family_reached_only_through_methods_loads_too(kernel, tmp_path):
    src = tmp_path / "methods_only.py"
    src.write_text(METHODS_ONLY)
    out = tmp_path / "k.spv"
    status, loaded = _emit(str(src), "--kernel", kernel, "-o", str(out))
    assert status == 0 and loaded
    assert out.read_bytes() == _preloaded(tmp_path / "first.spv", str(src), "--kernel", kernel)


def test_ir_text_loads_the_printer_when_asked(tmp_path):
    status, loaded = _emit("examples/gemm_khr.py", "-o", str(tmp_path / "k.spv"), "--ir", str(tmp_path / "k.ir"))
    assert status == 0 and loaded == ["coopdsl.ir.printer"] and "coop_muladd" in (tmp_path / "k.ir").read_text()


REGISTRIES = '''
import importlib, json, pkgutil
import coopdsl
from coopdsl.ir.ops import OPS
from coopdsl.lang import registry as R
from coopdsl.spirv.lower import LOWERINGS

TABLES = {"BUILTINS": R.BUILTINS, "TYPE_METHODS": R.TYPE_METHODS, "VALUE_METHODS": R.VALUE_METHODS,
          "OPS": OPS, "LOWERINGS": LOWERINGS}
before = {name: dict(dict.items(t)) for name, t in TABLES.items()}
later = {name: list(t.later) for name, t in TABLES.items()}
for t in TABLES.values():
    t.load()
after = {name: dict(dict.items(t)) for name, t in TABLES.items()}
for pkg in ("coopdsl.lang", "coopdsl.ir.ops", "coopdsl.spirv.lower"):  # every family file there, imported
    for m in pkgutil.iter_modules(importlib.import_module(pkg).__path__):
        if m.name != "reference":
            importlib.import_module(f"{pkg}.{m.name}")
every = {name: dict(dict.items(t)) for name, t in TABLES.items()}
print(json.dumps({
    "later": later,
    "left": {name: t.later for name, t in TABLES.items()},
    "changed": {n: sorted(map(str, (k for k in before[n] if after[n][k] is not before[n][k]))) for n in TABLES},
    "unlisted": {n: sorted(map(str, set(every[n]) - set(after[n]))) for n in TABLES},
    "shadowed": {n: sorted({k[1] for k in after[n] if k not in before[n]} & {k[1] for k in before[n]})
                 for n in ("TYPE_METHODS", "VALUE_METHODS")},
    "added": {n: len(after[n]) - len(before[n]) for n in TABLES},
}))
'''


def test_the_deferred_families_are_listed_whole_and_shadow_nothing():
    """Loading every deferred family (as a missed lookup does) declares all that importing every family file
    declares; it replaces no entry loaded before, and adds no method name a loaded family already has (a
    method lookup walks the receiver's classes, and must miss to load the rest)."""
    r = json.loads(_run(REGISTRIES))
    assert r["later"]["OPS"] and r["later"]["LOWERINGS"] and r["later"]["BUILTINS"]
    assert r["left"] == {name: [] for name in r["left"]}
    assert r["changed"] == {name: [] for name in r["changed"]}
    assert r["unlisted"] == {name: [] for name in r["unlisted"]}
    assert r["shadowed"] == {"TYPE_METHODS": [], "VALUE_METHODS": []}
    assert all(n > 0 for n in r["added"].values())


def test_the_package_namespace_is_whole_before_anything_loads():
    code = ("import coopdsl, json\nnames = dir(coopdsl)\nmissing = [n for n in coopdsl.__all__ if n not in names]\n"
            "ns = {}\nexec('from coopdsl import *', ns)\n"
            "print(json.dumps([missing, sorted(set(coopdsl.__all__) - set(ns)), "
            "[n for n in coopdsl.__all__ if ns[n] is not getattr(coopdsl, n)]]))")
    assert json.loads(_run(code)) == [[], [], []]


def test_lazy_names_are_the_objects_their_modules_define():
    import coopdsl
    from coopdsl.lang import atomics, callbacks, coopmat2, qcom, subgroup, tensor

    assert sorted(coopdsl._SUBGROUP) == sorted(subgroup.SUBGROUP)  # the names cd.X loads them by
    assert sorted(coopdsl._ATOMICS) == sorted(atomics.ATOMICS)
    assert all(getattr(coopdsl, n) is subgroup.SUBGROUP[n] for n in subgroup.SUBGROUP)
    assert all(getattr(coopdsl, n) is atomics.ATOMICS[n] for n in atomics.ATOMICS)

    assert coopdsl.tensor_layout is tensor.tensor_layout and coopdsl.tensor_view is tensor.tensor_view
    assert coopdsl.Row is coopmat2.Row and coopdsl.reduce_max is coopmat2.reduce_max
    assert coopdsl.bitcast_array is qcom.bitcast_array and coopdsl.partial is callbacks.partial
    with pytest.raises(AttributeError, match="has no attribute 'tensor_layouts'"):
        coopdsl.tensor_layouts  # noqa: B018


def test_a_registry_loads_what_comes_later_on_a_miss_or_a_listing(tmp_path, monkeypatch):
    from coopdsl._lazy import Registry

    (tmp_path / "later_family_a.py").write_text("from later_registry import R\nR['a'] = 1\n")
    (tmp_path / "later_family_b.py").write_text("from later_registry import R\nR['b'] = 2\n")
    (tmp_path / "later_broken.py").write_text("raise ImportError('not yet')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for reach in (lambda r: r["a"], lambda r: r.get("b"), lambda r: "a" in r, lambda r: list(r), len,
                  lambda r: r.items(), lambda r: r == {"a": 1, "b": 2, "core": 0}):
        r: Registry = Registry()
        monkeypatch.setitem(sys.modules, "later_registry", type(sys)("later_registry"))
        sys.modules["later_registry"].R = r  # type: ignore[attr-defined]
        for m in ("later_family_a", "later_family_b"):
            monkeypatch.delitem(sys.modules, m, raising=False)
        r["core"] = 0
        r.later += ["later_family_a", "later_family_b"]
        assert r.declared("core") and not r.declared("a") and r["core"] == 0 and r.later  # a hit loads nothing
        reach(r)
        assert dict(dict.items(r)) == {"core": 0, "a": 1, "b": 2} and r.later == []
    r = Registry()
    r.later.append("later_broken")
    for _ in range(2):  # a family that fails to import is reported each time, never skipped
        with pytest.raises(ImportError, match="not yet"):
            r.get("x")
    assert r.later == ["later_broken"]


def test_a_lookup_waits_for_a_family_another_thread_is_loading(tmp_path, monkeypatch):
    import threading

    from coopdsl._lazy import Registry

    r: Registry = Registry()
    monkeypatch.setitem(sys.modules, "slow_registry", type(sys)("slow_registry"))
    sys.modules["slow_registry"].R = r  # type: ignore[attr-defined]
    started = threading.Event()
    (tmp_path / "slow_family.py").write_text(
        "import time\nfrom slow_registry import R, STARTED\nSTARTED.set()\ntime.sleep(0.3)\nR['slow'] = 1\n")
    sys.modules["slow_registry"].STARTED = started  # type: ignore[attr-defined]
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_family", raising=False)
    r.later.append("slow_family")
    loader = threading.Thread(target=r.load)
    loader.start()
    assert started.wait(10)  # the other thread has taken the family off the list and is importing it
    try:
        assert r.later == [] and r.get("slow") == 1 and "slow" in r
    finally:
        loader.join()
