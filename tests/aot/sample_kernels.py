"""Kernels the AOT tests compile into headers: every table of the header is non-trivial here."""

import coopdsl as cd
from coopdsl import f16, f32, i32, i64, u32, vec2, vec4


@cd.struct
class Params:
    scale: f32
    n: u32
    src: cd.Ptr[f32]


@cd.kernel(workgroup_size=("WG", 2, 1), subgroup_size=32)
def rich(out: cd.Buffer[f32], idx: cd.Buffer[vec2[u32]], cfg: cd.Uniform[Params], p: Params, shift: vec2[f32],
         bias: f16, WG: cd.Spec[u32] = 32, OFF: cd.Spec[i32] = -2147483648, BIG: cd.Spec[i64] = -5,
         GAIN: cd.Spec[f32] = -0.1, HALF: cd.Spec[f16] = 1.5, ON: cd.Spec[cd.boolean] = True):
    i = cd.global_invocation_id.x
    if ON and i < p.n:
        out[i] = p.src[i] * p.scale * cfg.scale * GAIN + shift.x + f32(bias) + f32(HALF) + f32(OFF) + f32(BIG) \
            + f32(idx[i].y)


@cd.kernel
def bare(out: cd.Buffer[u32]):
    out[0] = u32(7)


@cd.kernel(workgroup_size=(64, 1, 1))
def named_count(count: cd.Buffer[f32], x: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    count[i] = x[i]


@cd.kernel(workgroup_size=(64, 1, 1))
def named_pad(out: cd.Buffer[f32], _pad4: u32, v: vec4[f32]):
    i = cd.global_invocation_id.x
    out[i] = f32(_pad4) + v.x
