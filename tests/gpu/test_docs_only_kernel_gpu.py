"""The kernel written from docs/ alone (tests/docs_only_kernel.py) on the GPU, against numpy."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.docs_only_kernel import run_and_check  # noqa: E402

pytestmark = pytest.mark.gpu


def test_a_kernel_written_from_the_docs_runs_on_the_gpu(device):
    run_and_check(device)
