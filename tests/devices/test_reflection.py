"""The reflection lists the module's cooperative-matrix types and MulAdd combinations with their lines."""

import json
import runpy
from pathlib import Path

import pytest

from coopdsl.devices.dims import resolve

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]
KFILE = str(Path(K.__file__).resolve())


def _gemm_khr():
    return runpy.run_path(str(ROOT / "examples" / "gemm_khr.py"))["gemm"]


def test_gemm_khr_matrices_and_muladd():
    r = _gemm_khr().reflect()
    json.dumps(r)  # plain data, for a C++ host
    assert [(m["type"], m["component"], m["rows"], m["cols"], m["use"], m["scope"])
            for m in r["cooperative_matrices"]] == [
        ("Acc[f32, 16, 16]", "f32", 16, 16, "Acc", "Subgroup"),
        ("MatA[f16, 16, 16]", "f16", 16, 16, "A", "Subgroup"),
        ("MatB[f16, 16, 16]", "f16", 16, 16, "B", "Subgroup")]
    (m,) = r["muladds"]
    assert {k: v for k, v in m.items() if k != "loc"} == {
        "M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", "C": "f32", "Result": "f32",
        "scope": "Subgroup", "saturating": False}
    path = str(ROOT / "examples" / "gemm_khr.py")
    assert m["loc"] == f"{path}:26:15"  # acc = cd.muladd(ta, tb, acc)
    assert r["cooperative_matrices"][1]["loc"] == f"{path}:24:14"  # the MatA load


def test_lines_point_at_the_kernel_source():
    r = K.f32_16x16x8.reflect()
    locs = {m["type"]: m["loc"] for m in r["cooperative_matrices"]}
    assert locs["MatA[f32, 16, 8]"] == f"{KFILE}:{K.line('f32-a')}:10"
    assert locs["MatB[f32, 8, 16]"] == f"{KFILE}:{K.line('f32-b')}:10"
    assert r["muladds"][0]["loc"] == f"{KFILE}:{K.line('f32-muladd')}:11"


def test_symbolic_dimensions_name_the_spec_constant_and_resolve():
    r = K.spec_tiles.reflect(spec={"TM": 32})
    a, b, acc = r["cooperative_matrices"]
    assert a["type"] == "MatA[f16, TM, TK]" and b["type"] == "MatB[f16, TK, (TM * 2)]"
    assert a["rows"] == {"spec_id": 0, "name": "TM", "value": 32, "type": "u32"}
    assert b["cols"]["expr"] == "(TM * 2)" and b["cols"]["value"] == 64 and b["cols"]["op"] == "mul"
    m = r["muladds"][0]
    assert [resolve(m[k]) for k in "MNK"] == [32, 64, 16]
    assert [resolve(m[k], {"TM": 16, "TK": 32}) for k in "MNK"] == [16, 32, 32]  # a launch's values
    assert K.spec_tiles.reflect()["muladds"][0]["M"]["value"] == 16  # the declared default


def test_signedness_comes_from_the_muladd_operands():
    (m,) = K.u8_as_signed.reflect()["muladds"]
    assert (m["A"], m["B"], m["C"], m["Result"]) == ("i8", "u8", "i32", "i32")
    types = {t["type"] for t in K.u8_as_signed.reflect()["cooperative_matrices"]}
    assert types == {"MatA[u8, 16, 32]", "MatB[u8, 32, 16]", "Acc[i32, 16, 16]"}  # the declared types


def test_saturating_and_workgroup_scope():
    assert K.int8_saturating.reflect()["muladds"][0]["saturating"] is True
    r = K.workgroup_64x64x16.reflect()
    assert {m["scope"] for m in r["cooperative_matrices"]} == {"Workgroup"}
    assert r["cooperative_matrices"][0]["type"] == "MatA[f16, 64, 16, Workgroup]"
    assert r["muladds"][0]["scope"] == "Workgroup"


def test_kernels_without_matrices_list_none():
    import coopdsl as cd

    @cd.kernel
    def plain(x: cd.Buffer[cd.f32]):
        x[0] = 1.0

    r = plain.reflect()
    assert r["cooperative_matrices"] == [] and r["muladds"] == []


def test_an_accumulator_made_by_a_constant_splat_is_reported_at_the_splat(tmp_path):
    """A constant splat is no op, so a matrix type first written as ``Acc[...].splat(0.0)`` before a loop had its
    first use at the loop's header (the phi): reflection and the device checks now name the splat's line."""
    from coopdsl.devices import DeviceMismatchError
    from tests.conftest import exec_source

    src = ("import coopdsl as cd\nfrom coopdsl import Acc, MatA, MatB, f16, f32, u32\n\n"
           "@cd.kernel(workgroup_size=(32, 1, 1))\n"
           "def k(a: cd.Buffer[f16], c: cd.Buffer[f32], n: u32):\n"
           "    acc = Acc[f32, 16, 16].splat(0.0)  # SPLAT\n"
           "    for i in range(n):  # LOOP\n"
           "        x = MatA[f16, 16, 16].load(a, 0, stride=16)\n"
           "        y = MatB[f16, 16, 16].load(a, 256, stride=16)\n"
           "        acc = cd.muladd(x, y, acc)\n"
           "    acc.store(c, 0, stride=16)\n")
    k = exec_source(src, tmp_path / "splat.py")["k"]
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "# SPLAT" in text)
    acc = next(m for m in k.reflect()["cooperative_matrices"] if m["use"] == "Acc")
    assert acc["loc"] == f"{tmp_path / 'splat.py'}:{line}:11"
    with pytest.raises(DeviceMismatchError, match=r"Acc\[f32, 16, 16\] has Subgroup scope, so the workgroup x size "
                                                  r"\(32\) must be a multiple of the subgroup size") as e:
        k.compile(device="amd-rdna3-radv")
    assert e.value.loc.line == line
