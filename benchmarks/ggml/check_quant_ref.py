"""Compare coopdsl.ops.quant with ggml's C reference quantizers, byte for byte.

Builds ``ggml/src/ggml-quants.c`` (taken from a git mirror or a source
checkout of ggml) into a small shared library with gcc, then, for q4_0, q8_0
and q4_K, quantizes the same random rows with ``quantize_row_<fmt>_ref`` and
with :func:`coopdsl.ops.quant.quantize` and compares the bytes, and
dequantizes them with ``dequantize_row_<fmt>`` and :func:`dequantize` and
compares the float32 bit patterns.

    python benchmarks/ggml/check_quant_ref.py [--ggml PATH] [--rows N] [--fma]

``--ggml`` is a bare git mirror (``git archive HEAD`` is read from it) or a
checkout holding ``src/ggml-quants.c``; default ``$GGML_MIRROR`` or
``/work/.mirror/ggml-org+ggml/repo``.  ggml is compiled with
``-O2 -ffp-contract=off`` (IEEE float, no fused multiply-add), the semantics
coopdsl mirrors.  ``--fma`` also builds it with ``-march=native
-ffp-contract=fast``, as a native ggml build on an FMA machine is, and reports
how many blocks of each format come out different there (fused multiply-adds
change the rounding of make_qkx2_quants's sums and of q4_0's ``x * id +
8.5``, so a few such differences are expected and not a failure).  Exits 0
when everything matched, 1 on a mismatch, and 0 with a "skipped" line when
gcc or the ggml sources are missing.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from coopdsl.ops.quant import BLOCK, BLOCK_BYTES, dequantize, quantize  # noqa: E402

DEFAULT_GGML = os.environ.get("GGML_MIRROR", "/work/.mirror/ggml-org+ggml/repo")

STUBS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "ggml.h"
void ggml_abort(const char * file, int line, const char * fmt, ...) {
    fprintf(stderr, "ggml_abort %s:%d\n", file, line); abort();
}
size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void) type; (void) ne; abort(); }
const char * ggml_type_name(enum ggml_type type) { (void) type; return "?"; }
size_t ggml_type_size(enum ggml_type type) { (void) type; abort(); }
"""


def ggml_sources(src: Path, dest: Path) -> bool:
    """Put ggml's src/ and include/ under dest; False when src is neither a git mirror nor a checkout."""
    if (src / "src" / "ggml-quants.c").is_file():
        shutil.copytree(src / "src", dest / "src")
        shutil.copytree(src / "include", dest / "include")
        return True
    if not (src / "HEAD").is_file():
        return False
    tar = subprocess.run(["git", "--git-dir", str(src), "archive", "HEAD", "src", "include"],
                         check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return True


def build(root: Path, name: str, flags: list[str]) -> ctypes.CDLL:
    """ggml-quants.c and the stubs as the shared library root/name.so."""
    (root / "stubs.c").write_text(STUBS)
    lib = root / f"{name}.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-std=gnu11", *flags, "-I", str(root / "include"),
                    "-I", str(root / "src"), str(root / "src" / "ggml-quants.c"), str(root / "stubs.c"),
                    "-o", str(lib), "-lm"], check=True)
    return ctypes.CDLL(str(lib))


def c_quantize(lib: ctypes.CDLL, fmt: str, w: np.ndarray) -> np.ndarray:
    rows, k = w.shape
    out = np.zeros((rows, k // BLOCK[fmt] * BLOCK_BYTES[fmt]), np.uint8)
    fn = getattr(lib, f"quantize_row_{fmt}_ref")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    x = np.ascontiguousarray(w, np.float32)
    fn(x.ctypes.data, out.ctypes.data, x.size)   # rows are contiguous: one call for all
    return out


def c_dequantize(lib: ctypes.CDLL, fmt: str, q: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((q.shape[0], k), np.float32)
    fn = getattr(lib, f"dequantize_row_{fmt}")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    q = np.ascontiguousarray(q)
    fn(q.ctypes.data, out.ctypes.data, out.size)
    return out


def inputs(rows: int, k: int, seed: int) -> dict[str, np.ndarray]:
    """Test matrices: plain random ones and blocks built to reach ggml's special cases."""
    rng = np.random.default_rng(seed)
    cases = {
        "normal": rng.standard_normal((rows, k)),
        "uniform": rng.uniform(-1, 1, (rows, k)),
        "positive": rng.uniform(0.5, 2, (rows, k)),           # q4_K: min clamped to 0
        "negative": -rng.uniform(0.5, 2, (rows, k)),
        "heavy tails": rng.standard_t(2, (rows, k)),
        "outliers": rng.standard_normal((rows, k)) * np.where(rng.random((rows, k)) < 0.01, 100, 1),
        "small integers": rng.integers(-8, 8, (rows, k)).astype(float),   # exact levels, rounding ties
        "halves": rng.integers(-16, 16, (rows, k)) / 2.0,
        "tiny": rng.standard_normal((rows, k)) * 1e-6,           # f16 scales subnormal
        "huge": rng.standard_normal((rows, k)) * 1e5,            # f16 scales past 65504 (inf)
        "llm-like": rng.standard_normal((rows, k)) * 0.02,
    }
    mixed = rng.standard_normal((rows, k))
    blocks = mixed.reshape(rows, -1, 32)
    blocks[:, 0::7] = 0.0                                        # zero blocks
    blocks[:, 1::7] = 0.25                                       # constant blocks
    blocks[:, 2::7] = -0.0
    peak = np.abs(blocks[:, 3::7]).max(axis=-1) + 1
    blocks[:, 3::7, 5], blocks[:, 3::7, 9] = -peak, peak                 # largest magnitude twice, signs differ
    blocks[:, 4::7] *= 1e-3                                      # one sub-block much smaller than the rest
    cases["special blocks"] = mixed
    return {name: a.astype(np.float32) for name, a in cases.items()}


def check(lib: ctypes.CDLL, rows: int, k: int, seed: int, verbose: bool = True,
          formats: tuple[str, ...] = tuple(BLOCK)) -> tuple[int, int]:
    """(mismatches, blocks) over the formats and every input: blocks whose bytes differ, plus one for each
    input whose dequantized values differ anywhere; prints one line per format and input when verbose."""
    bad = total = 0
    for fmt in formats:
        for name, w in inputs(rows, k, seed).items():
            with np.errstate(all="ignore"):
                ours = quantize(w, fmt)
            theirs = c_quantize(lib, fmt, w)
            nblocks = w.size // BLOCK[fmt]
            diff_blocks = int(np.any((ours != theirs).reshape(nblocks, BLOCK_BYTES[fmt]), axis=1).sum())
            deq_ours = dequantize(theirs, fmt, k)
            deq_theirs = c_dequantize(lib, fmt, theirs, k)
            deq_diff = int((deq_ours.view(np.uint32) != deq_theirs.view(np.uint32)).sum())
            bad += diff_blocks + (deq_diff > 0)
            total += nblocks
            if verbose:
                print(f"{fmt:5} {name:15} {nblocks:6} blocks: {diff_blocks} differ in bytes, "
                      f"{deq_diff} dequantized values differ")
    return bad, total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ggml", default=DEFAULT_GGML, help="ggml git mirror or checkout")
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--k", type=int, default=1024, help="row length, a multiple of 256")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fma", action="store_true", help="also compare against an -march=native FMA build")
    args = p.parse_args(argv)
    if shutil.which("gcc") is None:
        print("skipped: no gcc")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not ggml_sources(Path(args.ggml), root):
            print(f"skipped: no ggml sources at {args.ggml}")
            return 0
        lib = build(root, "strict", ["-O2", "-ffp-contract=off"])
        bad, total = check(lib, args.rows, args.k, args.seed)
        print(f"-O2 -ffp-contract=off: {total - bad} of {total} blocks identical"
              + (" (all bytes and dequantized values match)" if bad == 0 else ", MISMATCH"))
        if args.fma:
            fma = build(root, "fma", ["-O2", "-march=native", "-ffp-contract=fast"])
            for fmt in BLOCK:
                fbad, ftotal = check(fma, args.rows, args.k, args.seed, verbose=False, formats=(fmt,))
                print(f"-O2 -march=native -ffp-contract=fast (FMA contraction), {fmt}: "
                      f"{fbad} of {ftotal} blocks or dequantizations differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
