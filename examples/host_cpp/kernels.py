"""The non-matrix kernel of the C++ host example: y = alpha * x + y on f32.

It runs on any Vulkan 1.3 device, lavapipe (Mesa's CPU driver) included, so
CI builds and runs the C++ host with it.  The workgroup size is a
specialization constant (``WG``) and ``n``/``alpha`` are push constants, so
the host shows all three ways of passing values that the generated header
describes.

    coopdsl emit examples/host_cpp/kernels.py --kernel saxpy --format c -o saxpy.h
"""

import coopdsl as cd
from coopdsl import f32, u32


@cd.kernel(workgroup_size=("WG", 1, 1))
def saxpy(x: cd.Buffer[f32], y: cd.Buffer[f32], n: u32, alpha: f32, WG: cd.Spec[u32] = 64):
    i = cd.global_invocation_id.x
    if i < n:
        y[i] = alpha * x[i] + y[i]
