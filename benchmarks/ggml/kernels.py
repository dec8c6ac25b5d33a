"""The coopdsl kernels that replace ggml's ``mul_mm_cm2`` pipelines, one module-level kernel per
(A format, accumulator) for ``coopdsl build kernels.toml`` (see README.md).

Each module serves the six pipelines ggml creates from one GLSL module ({l, m, s} tiles x
{unaligned, aligned}, which differ only in specialization constants):
``coopdsl.ops.ggml_mul_mm.PIPELINES`` lists them.
"""

from coopdsl.ops.ggml_mul_mm import kernel

matmul_f16 = kernel("f16", False)
matmul_f16_f16acc = kernel("f16", True)
matmul_bf16 = kernel("bf16", False)
matmul_q4_0_f16 = kernel("q4_0", False)
matmul_q4_0_f16_f16acc = kernel("q4_0", True)
matmul_q8_0_f16 = kernel("q8_0", False)
matmul_q8_0_f16_f16acc = kernel("q8_0", True)
matmul_q4_k_f16 = kernel("q4_K", False)
matmul_q4_k_f16_f16acc = kernel("q4_K", True)
