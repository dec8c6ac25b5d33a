"""Shared test helpers: compile a kernel, validate it, read its disassembly."""

from __future__ import annotations

import inspect
import re

import pytest

from coopdsl.errors import InternalCompilerError
from coopdsl.spirv import tools


def compile_checked(k, *expect: str, target_env: str = "vulkan1.3", absent: tuple[str, ...] = ()) -> str:
    """Compile ``k``, run spirv-val on it, check every ``expect`` regex is in the disassembly."""
    binary = k.compile(target_env)
    scalar = bool(k.reflect(target_env).get("scalar_block_layout"))
    assert tools.validation_message(binary, target_env, scalar_block_layout=scalar) is None
    text = tools.disassemble(binary)
    for pattern in expect:
        assert re.search(pattern, text), f"{pattern!r} not in disassembly of {k.name}:\n{text}"
    for pattern in absent:
        assert not re.search(pattern, text), f"{pattern!r} unexpectedly in disassembly of {k.name}"
    return text


def exec_source(src: str, path) -> dict:
    """Run ``src`` as the module file ``path`` (written there first: kernels need their source file, for locations)
    and return its namespace; the module is named after the file, and the test file's ``__future__`` imports do
    not leak into it."""
    path.write_text(src)
    namespace = {"__name__": path.stem, "__file__": str(path)}
    exec(compile(src, str(path), "exec", dont_inherit=True), namespace)
    return namespace


def marker_line(marker: str, fn=None) -> int:
    """The line number in the calling test file holding ``marker`` (a unique comment)."""
    frame = inspect.stack()[1 if fn is None else 2]
    source = open(frame.filename).read().splitlines()
    hits = [i + 1 for i, line in enumerate(source) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


def expect_error(k, cls, message: str, marker: str, col: int):
    """Compile ``k`` expecting ``cls`` whose message contains ``message`` at the marker's line and ``col``."""
    with pytest.raises(cls) as info:
        k.compile()
    err = info.value
    assert not isinstance(err, InternalCompilerError), f"a user mistake reached an internal error: {err}"
    frame = inspect.stack()[1]
    lines = open(frame.filename).read().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    assert message in err.message, f"{message!r} not in {err.message!r}"
    assert err.loc.file == frame.filename
    assert (err.loc.line, err.loc.col) == (hits[0], col), f"error at {err.loc}, expected line {hits[0]} col {col}"
    text = str(err)
    assert text.startswith(f"{frame.filename}:{hits[0]}:{col}: error: ")
    assert text.splitlines()[-1].strip() == "^"
    assert info.tb is not None
    # no compiler-internal frame below the API boundary
    import traceback

    frames = traceback.extract_tb(info.tb)
    assert not any("/coopdsl/frontend/" in f.filename for f in frames), frames
    return err


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a ``python`` subprocess in a test: a plain PATH, this checkout first on
    PYTHONPATH, then whatever PYTHONPATH the test run has (an install with ``pip install --target DIR``
    is found there: the SPIR-V tools' wheel included), and ``extra``."""
    import os
    from pathlib import Path

    paths = [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(p for p in paths if p), **extra}


def matmul_inputs(kind: str, m: int, n: int, k: int, rng, transpose_b: bool = False):
    """``benchmarks.cases.gemm_inputs``: (a, b, the product in float64) for ``ops.matmul`` of input kind
    ``kind``."""
    from benchmarks.cases import gemm_inputs

    return gemm_inputs(kind, m, n, k, rng, transpose_b)


@pytest.fixture(scope="session")
def device():
    """A ``runtime.Device`` on the first Vulkan device (lavapipe in CI); skips the test, with the reason, when
    there is none. Directories with other needs (tests/gpu: cooperative matrices) define their own."""
    from coopdsl import runtime

    try:
        return runtime.Device()
    except (runtime.VulkanUnavailableError, runtime.VulkanError, OSError) as e:
        pytest.skip(f"no Vulkan device: {e}")


def weights(fmt: str, m: int, k: int, rng, scale: float = 1.0):
    """(what a kernel reads, the float32 values it stands for) of an M x K weight matrix in ``fmt``: float16,
    bf16 bit patterns (uint16), or the uint8 blocks of ``ops.quantize`` (q4_0, q8_0, q4_K)."""
    import numpy as np

    from coopdsl import ops

    w = (rng.standard_normal((m, k)) * scale).astype(np.float32)
    if fmt == "f16":
        a = w.astype(np.float16)
        return a, a.astype(np.float32)
    if fmt == "bf16":
        a = ops.to_bf16(w)
        return a, ops.from_bf16(a)
    q = ops.quantize(w, fmt)
    return q, ops.dequantize(q, fmt, k)


@pytest.fixture
def pretend_gpu(monkeypatch, tmp_path):
    """(a stand-in for a GPU device: the name and driver an autotune cache key reads, the test's own autotune
    cache file): tuning tests patch the op's device lookup to return it.  What the ops read from the cache is
    forgotten before and after (``op_tune.reset_all``)."""
    import types

    from coopdsl.ops import op_tune

    monkeypatch.setenv("COOPDSL_AUTOTUNE_CACHE", str(tmp_path / "autotune.json"))
    op_tune.reset_all()
    yield (types.SimpleNamespace(info=types.SimpleNamespace(name="Pretend GPU", driver_name="drv", driver_info="1")),
           tmp_path / "autotune.json")
    op_tune.reset_all()
