"""coopdsl emit --device: the check from the command line."""

import json
from pathlib import Path

from coopdsl.cli import main
from coopdsl.devices.profile import profiles_dir, shipped_profiles

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_khr.py"
PORTABLE = ROOT / "examples" / "gemm_portable.py"


def test_emit_with_a_shipped_profile_name(tmp_path, capsys):
    out = tmp_path / "g.spv"
    assert main(["emit", str(GEMM), "-o", str(out), "--device", "nvidia-h100",
                 "--reflect", str(tmp_path / "r.json")]) == 0
    assert out.is_file()
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["muladds"][0]["A"] == "f16" and len(r["cooperative_matrices"]) == 3


def test_emit_with_a_profile_file_and_spec_values(tmp_path, capsys):
    profile = tmp_path / "h100.json"
    profile.write_text((profiles_dir() / "nvidia-h100.json").read_text())
    out = tmp_path / "p.spv"
    assert main(["emit", str(PORTABLE), "-o", str(out), "--device", str(profile)]) == 0
    assert main(["emit", str(PORTABLE), "-o", str(out), "--device", str(profile), "--spec", "TK=8"]) == 1
    err = capsys.readouterr().err
    assert f"{PORTABLE}:35:15: error: NVIDIA H100 80GB HBM3 offers no MulAdd (M x N x K) 16x16x8 f16" in err
    assert "nearest offered: 16x16x16 f16 x f16 + f32 -> f32 at Subgroup scope" in err


def test_emit_refused_kernel(tmp_path, capsys):
    src = tmp_path / "k.py"
    src.write_text(Path(K.__file__).read_text())
    assert main(["emit", str(src), "--kernel", "f32_16x16x8", "-o", str(tmp_path / "k.spv"),
                 "--device", "nvidia-h100"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:{K.line('f32-muladd')}:11: error: NVIDIA H100 80GB HBM3 offers no MulAdd")
    assert not (tmp_path / "k.spv").exists()


def test_emit_with_a_missing_profile_is_a_usage_error(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert main(["emit", str(GEMM), "-o", str(tmp_path / "g.spv"), "--device", str(missing)]) == 2
    assert capsys.readouterr().err == (f"coopdsl: error: no device profile '{missing}': not a shipped profile "
                                       f"({', '.join(shipped_profiles())}) nor a file\n")
