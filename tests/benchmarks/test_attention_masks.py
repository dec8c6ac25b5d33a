"""benchmarks/attention_masks.py without a GPU: its cases, its masks as ops.attention takes them, its arguments."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks import attention_masks as AM  # noqa: E402
from coopdsl import ops  # noqa: E402
from coopdsl.ops.flash_attention import reference  # noqa: E402


def test_the_masks_are_alibi_per_head_or_shared_in_f32_or_f16():
    m = AM.alibi(4, 5)
    assert m.shape == (4, 5, 5) and m.dtype == np.float32 and (np.diagonal(m, axis1=1, axis2=2) == 0).all()
    assert m[0, 0, 4] == np.float32(-(2.0 ** -2) * 4) and m[3, 4, 0] == np.float32(-(2.0 ** -8) * 4)
    assert AM.mask_args("none", 4, 5) == ({}, None, False)
    assert AM.mask_args("causal", 4, 5) == ({"causal": True}, None, True)
    assert AM.mask_args("window", 4, 5, 3) == ({"causal": True, "window": 3}, None, True)
    w = AM.window_mask(5, 3)   # torch's mask for it: each row its 3 latest keys
    assert (np.isfinite(w) == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0],
                               [0, 0, 1, 1, 1]]).all()
    kw, mask, causal = AM.mask_args("shared-f16", 4, 5)
    assert kw == {} and mask.shape == (5, 5) and mask.dtype == np.float16 and not causal
    _, mask, _ = AM.mask_args("head-f32", 4, 5)
    assert mask.shape == (4, 5, 5) and mask.dtype == np.float32


@pytest.mark.parametrize("kind", AM.MASKS)
def test_each_case_is_a_call_ops_attention_takes(kind):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 70, 16)).astype(np.float16) for _ in range(3))
    kw, mask, causal = AM.mask_args(kind, 2, 70)
    if mask is not None:
        kw["mask"] = mask
    out = ops.attention(q, k, v, device="cpu", **kw)
    want = reference(q, k, v, causal, mask=None if mask is None else mask.astype(np.float32),
                     window=kw.get("window"))
    assert np.abs(out - want).max() <= 2e-3 * np.abs(want).max()


def test_it_lists_its_cases_and_names_a_bad_mask():
    from tests.conftest import child_env

    r = subprocess.run([sys.executable, "benchmarks/attention_masks.py", "--dry-run", "--lengths", "777",
                        "--masks", "causal,head-f16"], cwd=ROOT, env=child_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["32/32 heads, 777 tokens, D 128: causal",
                                     "32/32 heads, 777 tokens, D 128: head-f16"]
    r = subprocess.run([sys.executable, "benchmarks/attention_masks.py", "--masks", "alibi"], cwd=ROOT,
                       env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--masks: 'alibi' is not one of none, causal, head-f32" in r.stderr


def test_it_takes_the_mask_opt_workgroup_size():
    assert AM.parse(["--mask-opt-block-size", "1024"]).mask_opt_block_size == 1024
    assert AM.parse([]).mask_opt_block_size is None   # attention_nv2.MASK_OPT_BLOCK_SIZE as it is
    assert AM.parse(["--causal-end", "off"]).causal_end == "off" and AM.parse([]).causal_end is None
    assert AM.parse(["--causal-in-kernel", "off"]).causal_in_kernel == "off" and AM.parse([]).causal_in_kernel is None
    assert AM.parse(["--window-in-kernel", "on", "--window", "64"]).window_in_kernel == "on"
    assert AM.parse(["--window", "64"]).window == 64 and AM.parse([]).window_in_kernel is None
