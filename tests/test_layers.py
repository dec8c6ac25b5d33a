"""The package's layers import one way, and no module imports itself around a circle.

frontend -> lang -> ir; spirv -> ir; passes -> ir; the runtime sees only the device checks, which see
only reflection data.
Function-level imports count: they are how cycles used to hide.
"""

from __future__ import annotations

import ast
from pathlib import Path

import coopdsl

PKG = Path(__file__).resolve().parents[1] / "coopdsl"

# layer -> the layers it may import (besides itself); "" is the package's top-level modules
ALLOWED = {
    "errors": {"_records", "_words"},
    "ir": {"errors", "_records", "_lazy", "_numbers"},  # _lazy: registries whose families load on first need
    "lang": {"ir", "errors", "_records", "_lazy", "_sources"},  # _sources: a struct's members found in its file
    "frontend": {"lang", "ir", "errors", "_records", "_sources"},
    "passes": {"ir", "errors", "_records"},
    "spirv": {"ir", "errors", "_records", "_lazy", "_numbers"},  # _numbers: a number's bits in a float format
    "interp": {"ir", "errors", "_packing", "_grid"},  # _packing: the argument packer the runtime uses too; _grid:
    # the grid a launch takes
    "_lazy": set(),  # the lazy-export helper packages use (stdlib only)
    "_sources": set(),  # the trees of the user's source files, parsed once (stdlib only)
    "_records": set(),  # @record, the dataclass decorator the compiler's classes use (stdlib only)
    "_numbers": set(),  # whether a Python number fits a scalar type, for the compiler and the runtime
    "_grid": set(),  # the grid a launch takes, for Kernel.launch, the runtime's launch and the interpreter (stdlib)
    "_counts": set(),  # a timing's dispatch counts, for runtime.bench and autotune's options (stdlib)
    "_packing": {"_numbers", "_words"},  # kernel arguments to bytes, for the runtime and the interpreter (numpy,
    # stdlib)
    "_words": set(),  # English for messages (an article), for errors and the packer (stdlib)
    "devices": {"errors", "_lazy", "_packing", "_numbers"},  # device profiles and checks work on reflection data
    # only; _numbers: a spec-constant expression computed as the device does;
    # _packing: spec values checked as a launch checks them (imported only when values are given: it brings numpy)
    "runtime": {"errors", "devices", "_numbers", "_packing", "_grid", "_counts"},  # one decision each: numbers,
    # grids, timing counts
    "reflect": {"ir", "spirv", "devices", "errors"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str] | None = None) -> set[str]:
    mod = _module_name(path)
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):  # imports only the type checker runs are not dependencies at run time
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
            submodules = [n for n in names if modules is not None and n in modules]
            # "from pkg import module" depends on the module; "from pkg import name" on pkg itself
            depends = submodules + ([target] if len(submodules) < len(names) else [])
            out |= {n for n in depends if n.startswith("coopdsl")}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("coopdsl")}
    return out


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        graph[mod] = {t for t in _imports(path, set(files)) if t in files and t != mod}
    return graph


def _layer(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_layers_import_one_way():
    wrong = []
    for mod, targets in _graph().items():
        allowed = ALLOWED.get(_layer(mod))
        if allowed is None:
            continue  # kernel.py, cli.py, the package itself: the top sees everything
        for t in targets:
            if _layer(t) != _layer(mod) and _layer(t) not in allowed:
                wrong.append(f"{mod} imports {t}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_a_wrong_way_import_is_detected(tmp_path, monkeypatch):
    """The check itself works: a lang module importing the front end is reported."""
    fake = tmp_path / "coopdsl" / "lang"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("from ..frontend import codegen\n")
    monkeypatch.setattr(f"{__name__}.PKG", tmp_path / "coopdsl")
    assert "coopdsl.frontend.codegen" in _imports(fake / "bad.py", {"coopdsl.frontend.codegen"})


def test_the_code_generator_implements_the_builder_builtins_receive():
    import coopdsl
    from coopdsl.frontend.context import Context
    from coopdsl.lang.context import Builder

    @coopdsl.kernel
    def k(x: coopdsl.Buffer[coopdsl.f32]):
        x[0] = 1.0

    seen = []
    original = Context.note_buffer_write

    def spy(self, buf):
        seen.append(isinstance(self, Builder))
        return original(self, buf)

    Context.note_buffer_write = spy
    try:
        k.compile()
    finally:
        Context.note_buffer_write = original
    assert seen == [True]
