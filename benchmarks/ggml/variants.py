"""Override folders for A/B experiments inside ggml: a variant decode function under ggml's pipeline names.

    python3 benchmarks/ggml/variants.py OUT_DIR

Writes OUT_DIR/<variant>/<pipeline>.spv for each variant below; run benchmarks/ggml/perf.sh with
OVR=OUT_DIR/<variant> to time it against stock ggml in the same way as the shipped modules.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import no_type_check

import coopdsl as cd
from coopdsl import f16, i8, i16, i32, vec2
from coopdsl.ops import ggml_formats as F
from coopdsl.ops import ggml_mul_mm as MM


@cd.struct
class BlockQ8_0I16:
    d: f16
    qs: cd.array[i16, 16]  # type: ignore[valid-type]


@cd.func
@no_type_check
def decode_q8_0_i16(block, block_coords, coord_in_block):
    """q8_0 through signed 16-bit words: the high byte by an arithmetic shift, the low one by two (the word
    index not masked into the block)."""
    idx = coord_in_block[1]
    w = i32(block.qs[idx >> 1])
    q = (w >> 8) if (idx & 1) == 1 else ((w << 24) >> 24)
    return f16(q) * block.d


@cd.func
@no_type_check
def decode_q8_0_i8v_mask(block, block_coords, coord_in_block):
    """q8_0 exactly as ggml's GLSL: the word index masked into the block, unpack8, one byte picked."""
    idx = coord_in_block[1]
    d = block.d
    v = cd.bitcast(block.qs[(idx & 0x1E) >> 1], vec2[i8])
    return f16(i32(v[idx & 1])) * d


@cd.func
@no_type_check
def decode_q8_0_i8v(block, block_coords, coord_in_block):
    """q8_0 as ggml's GLSL writes it: a signed 16-bit word seen as two signed bytes (unpack8), one picked."""
    idx = coord_in_block[1]
    v = cd.bitcast(block.qs[idx >> 1], vec2[i8])
    return f16(i32(v[idx & 1])) * block.d


# variant -> (A format, FORMATS entry, staged q4_K decoder or None)
VARIANTS = {"q8_0_i16": ("q8_0", (BlockQ8_0I16, 32, decode_q8_0_i16), None),
            "q8_0_i8v": ("q8_0", (BlockQ8_0I16, 32, decode_q8_0_i8v), None),
            "q8_0_i8v_mask": ("q8_0", (BlockQ8_0I16, 32, decode_q8_0_i8v_mask), None)}


def main(out: Path) -> None:
    for name, (fmt, entry, staged) in VARIANTS.items():
        saved, saved_staged = F.FORMATS[fmt], MM.decode_q4_K_shared
        F.FORMATS[fmt] = entry
        if staged is not None:
            MM.decode_q4_K_shared = staged
        MM.kernel.cache_clear()
        try:
            d = out / name
            d.mkdir(parents=True, exist_ok=True)
            for f16acc in (False, True):
                for pipeline in MM.pipeline_names(fmt, f16acc):
                    (d / f"{pipeline}.spv").write_bytes(MM.kernel(fmt, f16acc).compile())
            print(f"{d}: {len(list(d.glob('*.spv')))} modules")
        finally:
            F.FORMATS[fmt] = saved
            MM.decode_q4_K_shared = saved_staged
            MM.kernel.cache_clear()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
