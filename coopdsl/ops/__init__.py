"""Ready-made kernels callable on numpy arrays or resident device arrays, written in coopdsl.

They are also the model for users' own libraries: each op is a small module
holding a kernel factory (one kernel per component-type combination, tile
sizes as specialization constants) and a host function that checks shapes
and dtypes, picks the launch grid and calls ``Kernel.launch``.

* :func:`matmul`: ``a @ b`` for f16, bf16 (``uint16`` bit patterns, see
  :func:`to_bf16`), int8 and uint8 inputs of any M, N, K.
* :func:`attention`: forward scaled-dot-product attention, optionally causal.

Every op takes ``device=`` like ``Kernel.launch`` (a runtime ``Device``, or
``"cpu"`` for the interpreter when it is installed).
"""

from __future__ import annotations

from .flash_attention import attention
from .gemm import from_bf16, matmul, to_bf16

__all__ = ["matmul", "attention", "to_bf16", "from_bf16"]
