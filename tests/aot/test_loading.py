"""load_kernels runs a kernel file the way runpy does, parsing it once for both Python and the front end."""

import sys
import textwrap
from pathlib import Path

from coopdsl import _sources
from coopdsl.aot.loading import RUN_NAME, load_kernels
from coopdsl.frontend import source

FILE = textwrap.dedent('''\
    import dataclasses
    import sys
    import coopdsl as cd

    @dataclasses.dataclass
    class Tile:  # needs sys.modules[__name__] while the file runs, as under runpy
        size: int = 4

    SEEN = (__name__, sys.argv[0], Tile().size)

    @cd.kernel
    def k(x: cd.Buffer[cd.f32]):
        x[0] = 1.0
    ''')


def test_the_file_runs_as_under_runpy_and_is_parsed_once(tmp_path, monkeypatch):
    path = tmp_path / "kernels.py"
    path.write_text(FILE)
    monkeypatch.setattr(sys, "argv", ["coopdsl", "emit"])
    kernels = load_kernels(path)
    k = kernels["k"]
    assert k.fn.__globals__["SEEN"] == (RUN_NAME, str(path), 4)
    assert sys.argv == ["coopdsl", "emit"] and RUN_NAME not in sys.modules  # both put back
    tree = _sources._files[str(path)][1]
    assert source.parse_function(k.fn).tree is tree.body[-1]  # the front end's tree is the one that ran
    assert k.compile()


def test_a_kernel_answers_for_its_name_before_its_specializations(tmp_path):
    """`coopdsl emit F --kernel k` and build specs load kernels by name; a .specialize() variant bound later
    in the file shares the name and must not replace the kernel with its defaults."""
    path = tmp_path / "kf.py"
    path.write_text(textwrap.dedent('''
        import coopdsl as cd
        from coopdsl import f32


        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(o: cd.Buffer[f32], S: cd.Const[int] = 2):
            o[0] = f32(S)


        k4 = k.specialize(S=4)
    '''))
    found = load_kernels(path)
    assert list(found) == ["k"] and found["k"].consts == {}
    assert "OpConstant %float 2" in found["k"].disassemble()


def test_a_file_that_is_not_utf8_is_located_at_its_first_bad_byte(tmp_path):
    import pytest

    from coopdsl.aot.errors import KernelFileError

    path = tmp_path / "latin.py"
    path.write_bytes(b"import coopdsl as cd\n# caf\xe9\n")
    with pytest.raises(KernelFileError, match=r"latin.py:2:6: error: byte 0xe9 is not UTF-8.*PEP 263"):
        load_kernels(path)


def test_an_expression_too_deep_for_pythons_parser_is_an_error_not_a_trace_into_ast(tmp_path):
    import pytest

    from coopdsl.aot.errors import KernelFileError

    path = tmp_path / "deep.py"
    path.write_text("def f(o):\n    return " + " + ".join(["o"] * 3000) + "\n")   # 3,000 terms
    with pytest.raises(KernelFileError) as e:
        load_kernels(path)
    assert str(e.value).startswith(f"{path}: error: an expression in deep.py is nested too deeply")
    assert "ast.py" not in str(e.value)


def test_a_file_that_recurses_while_it_runs_is_located_at_its_line(tmp_path):
    # the RecursionError of the file's own code was reported as the parser's ("nested too deeply ... while
    # parsing"), with no line (found by a docs-only check of the command line)
    import pytest

    from coopdsl.aot.errors import KernelFileError

    path = tmp_path / "rec.py"
    path.write_text("def f(n):\n    return f(n + 1)\n\n\nf(0)\n")
    with pytest.raises(KernelFileError) as e:
        load_kernels(path)
    assert str(e.value).startswith(f"{path}:2: error: running {path} failed: RecursionError: maximum recursion")
    assert "nested too deeply" not in str(e.value)


def test_the_python_api_refuses_values_of_another_type_in_its_own_words():
    """load_kernels(None), pick_kernel with a list for the name, render_header without a guard: TypeErrors that
    say which argument, not pathlib's, a dict lookup's or re's (found by a fuzzer of the host API)."""
    import pytest

    from coopdsl.aot import pick_kernel, render_header

    with pytest.raises(TypeError, match=r"^expected the Python file's path \(str or os.PathLike\), got NoneType$"):
        load_kernels(None)
    with pytest.raises(TypeError, match=r"^pick_kernel: name must be a kernel's name \(str\) or None, got list$"):
        pick_kernel({"k": object()}, ["k"], "x.py")
    with pytest.raises(TypeError, match=r"^pick_kernel: kernels must be a dict of name -> Kernel"):
        pick_kernel(None, "k", "x.py")
    with pytest.raises(TypeError, match=r"^render_header: guard must be a str, got NoneType$"):
        render_header([], None)
    with pytest.raises(TypeError, match=r"^render_header: index must be a str or None, got int$"):
        render_header([], "g", index=3)
    with pytest.raises(TypeError, match=r"^render_header: artifacts must be a list of Artifact \(compile_artifact's\), "
                                        r"got list holding other values$"):
        render_header([1], "g")
    assert "#ifndef COOPDSL_G_H" in render_header([], "g")
    from coopdsl.aot import compile_artifact

    with pytest.raises(TypeError, match=r"^compile_artifact takes a coopdsl kernel \(@coopdsl.kernel's\), got str$"):
        compile_artifact("notakernel", source="k.py")      # (was AttributeError: no attribute 'target_env')
    kernels = load_kernels(str(Path(__file__).with_name("sample_kernels.py")))
    with pytest.raises(TypeError, match=r"^compile_artifact: consts and spec are dicts of names to values$"):
        compile_artifact(next(iter(kernels.values())), spec=[("N", 4)])
