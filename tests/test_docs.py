"""Every ```python block in README.md and docs/ that defines a kernel compiles and validates.

docs/glsl-mapping.md also promises, row by row, which SPIR-V instruction each
coopdsl spelling becomes: the page's kernels must contain every instruction
named in a row that coopdsl supports.  docs/errors.md shows one example per
error class with its exact message: each example is run and its message
compared, and every error class must have a section.
"""

import importlib
import pkgutil
import re
import shlex
from pathlib import Path

import pytest

import coopdsl
from coopdsl import cli, errors, runtime
from coopdsl.spirv import tools

ROOT = Path(__file__).resolve().parents[1]
# docs/tutorial.md's blocks build on each other: tests/test_tutorial.py runs the page as one program
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "tutorial.md")
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
MAPPING = ROOT / "docs" / "glsl-mapping.md"
ERRORS = ROOT / "docs" / "errors.md"
FENCE = re.compile(r"```([^\n]*)\n(.*?)```", re.S)


def _blocks():
    for page in PAGES:
        for i, m in enumerate(BLOCK.finditer(page.read_text())):
            if "@cd.kernel" in m.group(1) or "@coopdsl.kernel" in m.group(1):
                yield pytest.param(page, m.group(1), id=f"{page.relative_to(ROOT)}#{i}")


def run_block(code: str, path: Path) -> dict:
    """Execute a doc block as the module ``path`` (kernels read their source from it); its namespace."""
    path.write_text(code)
    ns = {"__name__": path.stem, "__file__": str(path)}
    exec(compile(code, str(path), "exec"), ns)
    return ns


def kernels_of(ns: dict) -> list:
    """The kernels a block defines (an autotuned one through its ``.kernel``)."""
    return [v if isinstance(v, coopdsl.Kernel) else v.kernel for v in ns.values()
            if isinstance(v, coopdsl.Kernel) or isinstance(getattr(v, "kernel", None), coopdsl.Kernel)]


@pytest.mark.parametrize("page,code", list(_blocks()))
def test_doc_example_compiles(page, code, tmp_path):
    kernels = kernels_of(run_block(code, tmp_path / "doc_example.py"))
    assert kernels
    for k in kernels:
        assert tools.validation_message(k.compile(), k.target_env) is None


def _spirv_rows(text: str):
    """(coopdsl cell, SPIR-V cell) of every row of the tables that have a SPIR-V column."""
    for table in re.findall(r"(?:^\|.*\|\n)+", text, re.M):
        lines = table.splitlines()
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        if "SPIR-V" not in header:
            continue
        for line in lines[2:]:
            row = dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
            yield row["coopdsl"], row["SPIR-V"]


def test_mapping_page_names_the_instructions_its_kernels_emit(tmp_path):
    text = MAPPING.read_text()
    dis = "\n".join(k.disassemble() for i, m in enumerate(BLOCK.finditer(text))
                    for k in kernels_of(run_block(m.group(1), tmp_path / f"mapping_{i}.py")))
    rows = list(_spirv_rows(text))
    supported = [(c, s) for c, s in rows if "not yet" not in c]
    assert len(supported) >= 30 and len(supported) == len(rows)  # every row has a coopdsl spelling now
    for spelling, spirv in supported:
        named = re.findall(r"\bOp\w+", re.sub(r"\(.*?\)", "", spirv))   # parenthesised: other forms
        assert named, spelling
        missing = [op for op in named if not re.search(rf"\b{op}\b", dis)]
        assert not missing, f"{spelling}: the page's kernels do not emit {missing}"


# -- docs/errors.md ---------------------------------------------------------------------------------
def _subclasses(cls: type) -> set[type]:
    return {c for sub in cls.__subclasses__() for c in {sub} | _subclasses(sub)}


def _error_classes() -> list[str]:
    """Every CoopDSLError subclass defined anywhere in the package, and the runtime's own errors."""
    for info in pkgutil.walk_packages(coopdsl.__path__, "coopdsl."):
        importlib.import_module(info.name)
    ours = {c.__name__ for c in _subclasses(errors.CoopDSLError) if c.__module__.startswith("coopdsl.")}
    return sorted(ours | {"LaunchError", "DeviceFeatureError", "VulkanError"})


# Classes no example can raise (a coopdsl bug, a failing driver): the page shows their format.
CONSTRUCTED = {
    "InternalCompilerError": lambda: errors.InternalCompilerError("no lowering for op kind 'frobnicate'",
                                                                  errors.SourceLoc("example.py", 7, 11)),
    "VulkanError": lambda: runtime.VulkanError("vkCreateDevice", -7),
}
USAGE = "Command-line usage errors"


def _error_sections() -> dict[str, list[tuple[str, str]]]:
    """Section heading (a class name without backquotes) -> its fenced blocks as (info string, text)."""
    sections = {}
    for part in ERRORS.read_text().split("\n## ")[1:]:
        heading, _, body = part.partition("\n")
        blocks = FENCE.findall(body)
        if blocks:
            sections[heading.strip("`")] = blocks
    return sections


def test_error_catalogue_has_a_section_per_error_class():
    sections = _error_sections()
    classes = _error_classes()
    assert {"ShapeError", "ToolError", "LaunchError"} <= set(classes)
    assert not [c for c in classes if c not in sections], sorted(sections)


@pytest.fixture(scope="module")
def device():
    try:
        return runtime.default_device()
    except Exception as e:  # no loader, no ICD
        pytest.skip(f"no Vulkan device: {e}")


def _python_error(name: str, code: str, path: Path, request) -> str:
    """Run a ```python error block; the message of the exception it raises (class checked)."""
    if ".launch(" in code:
        dev = request.getfixturevalue("device")
        if name == "DeviceFeatureError" and (dev.info.has_coopmat or not dev.info.name.startswith("llvmpipe")):
            pytest.skip(f"the example was recorded on lavapipe; this device is {dev.info.name}")
    with pytest.raises(Exception) as caught:
        for k in kernels_of(run_block(code, path)):
            k.compile()
    assert type(caught.value).__name__ == name, caught.value
    message = str(caught.value).replace(str(path), "example.py")
    if name == "DeviceFeatureError":
        message = message.replace(request.getfixturevalue("device").info.name, "llvmpipe (LLVM 15.0.6, 256 bits)")
    return message


def _console(name: str, script: str, tmp_path: Path, monkeypatch, capsys) -> str:
    """Run a ```console block's commands in tmp_path; stderr of the last one (which must fail)."""
    monkeypatch.chdir(tmp_path)
    lines = [line[2:] for line in script.splitlines() if line.startswith("$ ")]
    for i, line in enumerate(lines):
        words = shlex.split(line)
        if words[0] == "printf":   # printf 'TEXT' > FILE
            Path(words[3]).write_text(words[1])
            continue
        assert words[0] == "coopdsl", line
        # repository files (examples/...) by their path; bare names are files the block itself writes
        args = [str(ROOT / w) if "/" in w and (ROOT / w).is_file() else w for w in words[1:]]
        capsys.readouterr()
        rc = cli.main(args)
        last = i == len(lines) - 1
        assert rc == ((2 if name == USAGE else 1) if last else 0), (line, capsys.readouterr().err)
    return capsys.readouterr().err


@pytest.mark.parametrize("name", list(_error_sections()))
def test_error_catalogue_example(name, tmp_path, monkeypatch, capsys, request):
    blocks = _error_sections()[name]
    expected = blocks[-1][1].strip()
    assert blocks[-1][0] == "text", f"{name}: the message block comes last"
    kind, code = blocks[0]
    if name in CONSTRUCTED:
        message = str(CONSTRUCTED[name]())
    elif kind == "python error":
        message = _python_error(name, code, tmp_path / "example.py", request)
    elif kind == "console":
        message = _console(name, code, tmp_path, monkeypatch, capsys)
    else:
        pytest.fail(f"{name}: no example block (python error / console) before the message")
    assert message.strip() == expected


def test_the_language_reference_is_generated_from_the_registry():
    from coopdsl.lang import reference

    page = (ROOT / "docs" / "reference.md").read_text()
    stale = "docs/reference.md is stale: python -m coopdsl.lang.reference > docs/reference.md"
    assert page == reference.render(), stale
    from coopdsl.lang.registry import BUILTINS

    for name in ("muladd", "barrier", "subgroup_add", "atomic_add", "exp", "assume_uniform"):
        assert f"### `cd.{name}`" in page and BUILTINS[name].doc.strip() in page


PATH_REF = re.compile(r"`((?:coopdsl|benchmarks|tests|examples|scripts|docs)/[\w./-]+)`")


@pytest.mark.parametrize("page", ["docs/ggml.md", "docs/ops.md", "benchmarks/ggml/README.md"])
def test_files_a_page_names_exist(page):
    """Pages that point users at files name files that exist (relative to the repository root), except what
    a build makes in an ignored folder (benchmarks/ggml/work/)."""
    text = (ROOT / page).read_text()
    named = [p for p in PATH_REF.findall(text) if "/work/" not in p]  # benchmarks/ggml/work/: build outputs
    missing = [p for p in named if not (ROOT / p.rstrip(".")).exists()]
    assert not missing, f"{page} names files that do not exist: {missing}"


@pytest.mark.parametrize("page", ["docs/ops.md", "docs/autotune.md", "docs/benchmarks.md"])
def test_the_ops_names_a_page_gives_exist(page):
    """Names of ``coopdsl.ops`` modules' functions and tables a page gives in code spans (``gemv.CHOICE``,
    ``coopdsl.ops.attention_decode.default_how``, ...) are attributes of those modules, so a rename cannot leave
    the page stale."""
    import importlib
    import pkgutil

    import coopdsl.ops

    modules = [m.name for m in pkgutil.iter_modules(coopdsl.ops.__path__)]
    named = re.findall(r"`(?:coopdsl\.ops\.)?(" + "|".join(modules) + r")\.([A-Za-z_]\w*)", (ROOT / page).read_text())
    assert named, f"{page} names no ops attribute (the pattern is wrong?)"
    missing = sorted({f"{m}.{a}" for m, a in named if a != "py"
                      and not hasattr(importlib.import_module(f"coopdsl.ops.{m}"), a)})
    assert not missing, f"{page} names what coopdsl.ops does not have: {missing}"


def test_help_on_a_builtin_shows_its_signature_and_documentation():
    # help(cd.dot4x8) printed the generic "A kernel builtin: its name, implementation, documentation and
    # signature." of the class every builtin was an instance of (found by a user writing kernels from the docs)
    import pydoc

    import coopdsl as cd

    for b, signature in ((cd.dot4x8, "dot4x8(a, b)"), (cd.muladd, "muladd(a, b, c, *, saturate=False, signed=None)")):
        text = pydoc.render_doc(b, renderer=pydoc.plaintext)
        assert signature in text and b.doc.split("\n")[0] in text, text[:400]
        assert "A kernel builtin: its name" not in text
    assert cd.dot4x8 == cd.dot4x8 and repr(cd.dot4x8) == "<coopdsl builtin dot4x8(a, b)>"


def test_the_interpreters_code_map_names_every_module():
    """docs/interpreter.md, "Where the code is", lists the interpreter's modules and op families by name: every one
    there is, so a new module cannot be missing from it (environ.py, intdot, qcom and tensor were)."""
    text = (ROOT / "docs/interpreter.md").read_text().split("## Where the code is", 1)[1].split("\n## ", 1)[0]
    interp = ROOT / "coopdsl/interp"
    for path in sorted(interp.glob("*.py")):
        if path.stem != "__init__":
            assert f"`{path.name}`" in text, path.name
    for path in sorted((interp / "ops").glob("*.py")):
        if path.stem not in ("__init__", "registry"):
            assert f"`{path.stem}`" in text, f"ops/{path.name}"


def _braces(name: str) -> list[str]:
    """``a-{x,y}{1,2}.md`` as the names it stands for (shell brace expansion)."""
    m = re.search(r"\{([^{}]*)\}", name)
    if not m:
        return [name]
    return [n for opt in m.group(1).split(",") for n in _braces(name[:m.start()] + opt + name[m.end():])]


def test_every_results_file_the_docs_and_the_ops_cite_exists():
    """A figure's source is a file in benchmarks/results/ or benchmarks/notes/ named with its GPU and date
    (``ops_llm-q4one-stream-{base,new}{1,2}-4096x14336-h200-2026-11-29.md``); each one docs/, benchmarks/notes/
    and the comments of coopdsl/ops/ name must be there (braces expanded, "MxK" any shape; a name cut to its
    end, "-c.md" after the file before it, is skipped)."""
    import glob

    files = sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "benchmarks" / "notes").glob("*.md")) + \
        sorted((ROOT / "coopdsl" / "ops").glob("*.py"))
    cited = missing = 0
    gone = []
    for path in files:
        for name in re.findall(r"`+([\w./{},*-]+-(?:h100|h200)-20\d\d-\d\d-\d\d[\w.{},*-]*\.(?:md|log))`+",
                               path.read_text()):
            if name.startswith("-"):
                continue
            for one in _braces(name.replace("MxK", "*")):
                cited += 1
                where = [one] if one.startswith("benchmarks/") else [f"benchmarks/results/{one}",
                                                                       f"benchmarks/notes/{one}"]
                if not any(glob.glob(str(ROOT / w)) for w in where):
                    missing += 1
                    gone.append(f"{path.relative_to(ROOT)}: {one}")
    assert cited > 100 and not missing, gone
