"""bf16 values as the newer kernels read them: ``u16`` / ``u32`` bit patterns, widened exactly to f32 or rounded to
f16 (older kernels write the same shift or mask inline: :func:`coopdsl.ops.attention_decode.halves`, the plain GEMV
and the conversion kernel, whose SPIR-V a shared function would change).

Vulkan devices need not offer a bf16 type (VK_KHR_shader_bfloat16), so the ops' kernels read bf16 inputs as bits: a
bf16 is the top half of an f32, so a shift (or, for the high half of a word, a mask) and a bitcast give its value
exactly, with no conversion instruction. The cooperative-matrix kernels, whose products are f16, then round it to
f16 (past 65504: inf), as a conversion pass over the input would.
"""

from typing import no_type_check

import coopdsl as cd
from coopdsl import f16, f32, u32, vec2, vec4


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def bf16_value(x):
    """A bf16 value (its ``u16`` bit pattern) as f32, exactly."""
    return cd.bitcast(u32(x) << 16, f32)


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def pair_as_f16(word):
    """The two bf16 values of a ``u32`` (element 0 in the low half) as two f16 values in one ``u32``, each
    widened exactly to f32 and then rounded to f16 (past 65504: inf, as an f16 conversion of the input gives)."""
    lo = f16(cd.bitcast(word << 16, f32))
    hi = f16(cd.bitcast(word & 0xFFFF0000, f32))
    return cd.bitcast(vec2[f16](lo, hi), u32)


@cd.func
@no_type_check  # coopdsl source (compiled, never run by Python): not for mypy
def bf16_as_f16(w):
    """A ``uvec4`` of 8 bf16 values as 8 f16 values (:func:`pair_as_f16`)."""
    return vec4[u32](pair_as_f16(w.x), pair_as_f16(w.y), pair_as_f16(w.z), pair_as_f16(w.w))
