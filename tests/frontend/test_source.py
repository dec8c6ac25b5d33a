"""Parsing a kernel's source: once per function, with the positions of the user's file."""

import ast
import runpy
import textwrap

import pytest

import coopdsl as cd
from coopdsl.frontend import source
from coopdsl.frontend.source import parse_function

KERNEL = textwrap.dedent('''\
    import coopdsl as cd


    class Holder:
        @staticmethod
        def make():
            @cd.kernel(workgroup_size=(1, 1, 1))
            def nested(x: cd.Buffer[cd.f32]):
                x[0] = 1.0
                x[1] = nope  # E:nested
            return nested


    @cd.kernel(
        workgroup_size=(1, 1, 1))
    def top(x: cd.Buffer[cd.f32]):
        x[0] = 1.0
    ''')


def _run(tmp_path, name="k.py"):
    path = tmp_path / name
    path.write_text(KERNEL)
    return path, runpy.run_path(str(path))


def test_a_function_is_parsed_once(tmp_path):
    _, ns = _run(tmp_path)
    k = ns["Holder"].make()
    first = parse_function(k.fn)
    assert parse_function(k.fn) is first
    assert isinstance(first.tree, ast.FunctionDef) and first.tree.name == "nested"


def test_a_def_under_a_decorator_spanning_lines_is_found(tmp_path):
    path, ns = _run(tmp_path)
    src = parse_function(ns["top"].fn)
    assert (src.file, src.tree.name, src.tree.lineno) == (str(path), "top", 16)


def test_nested_kernels_are_found_in_the_file_with_its_own_positions(tmp_path):
    path, ns = _run(tmp_path)
    src = parse_function(ns["Holder"].make().fn)
    assert (src.file, src.tree.lineno, src.col_shift) == (str(path), 8, 0)
    store = src.tree.body[1]
    assert (src.loc(store).line, src.loc(store).col) == (10, 13)  # the file's own line and column


def test_the_parsed_tree_matches_the_inspect_fallback(tmp_path):
    """Both ways of reading a function give the same node positions (the fallback dedents and shifts)."""
    _, ns = _run(tmp_path)
    fn = ns["Holder"].make().fn
    whole, alone = source._from_file(fn), source._from_inspect(fn)
    assert ast.dump(whole.tree, include_attributes=False) == ast.dump(alone.tree, include_attributes=False)
    pairs = zip(ast.walk(whole.tree), ast.walk(alone.tree))
    assert all(whole.loc(a) == alone.loc(b) for a, b in pairs if hasattr(a, "lineno"))


def test_identical_kernels_in_two_files_keep_their_own_file(tmp_path):
    """Code objects that differ only in their file compare equal: the cache must not mix them up."""
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    errors = []
    for where in (a, b):
        _, ns = _run(where)
        with pytest.raises(cd.NameResolutionError) as info:
            ns["Holder"].make().compile()
        errors.append(info.value.loc)
    assert [e.file for e in errors] == [str(a / "k.py"), str(b / "k.py")]
    assert {(e.line, e.col) for e in errors} == {(10, 20)}


def test_a_file_edited_after_import_falls_back_to_inspect(tmp_path):
    path, ns = _run(tmp_path)
    fn = ns["Holder"].make().fn
    path.write_text("# edited\n" + KERNEL)  # every line moved down: the def is no longer where the code says
    assert source._from_file(fn) is None


def test_a_function_without_a_file_is_a_clear_error():
    namespace: dict = {"cd": cd}
    exec("def k(x: cd.Buffer[cd.f32]):\n    x[0] = 1.0\n", namespace)
    with pytest.raises(cd.UnsupportedSyntaxError, match="cannot read the source of k"):
        cd.kernel(namespace["k"]).compile()
