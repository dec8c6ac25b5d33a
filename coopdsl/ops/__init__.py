"""Ready-made kernels callable on numpy arrays or resident device arrays, written in coopdsl.

They are also the model for users' own libraries: each op is a small module
holding a kernel factory (one kernel per component-type combination, tile
sizes as specialization constants) and a host function that checks shapes
and dtypes, picks the launch grid and calls ``Kernel.launch``.

* :func:`matmul`: ``a @ b`` for f16, bf16 (``uint16`` bit patterns, see
  :func:`to_bf16`), int8 and uint8 inputs of any M, N, K.
* :func:`attention`: forward scaled-dot-product attention, optionally causal.
* :func:`linear`: ``x @ W.T`` for f16, bf16 or ggml-quantized (q4_0, q8_0, q4_K) weights,
  with a bandwidth-bound kernel for 1 to 16 rows of ``x`` (decoding);
  :func:`quantize` / :func:`dequantize` pack and unpack ggml's block formats (numpy).

Every op takes ``device=`` like ``Kernel.launch`` (a runtime ``Device``, or
``"cpu"`` for the interpreter when it is installed).
"""

from __future__ import annotations

from .flash_attention import attention
from .gemm import from_bf16, matmul, to_bf16
from .linear import linear
from .quant import dequantize, quantize

__all__ = ["matmul", "attention", "linear", "quantize", "dequantize", "to_bf16", "from_bf16"]
