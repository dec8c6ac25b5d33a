"""A deliberate mistake, for the error sample in README.md: B has 8 rows but A has 16 columns.

It lives under examples/errors/ so the example suites (which compile examples/*.py) skip it.

    coopdsl emit examples/errors/bad_muladd.py     # exit status 1, the error at the muladd line
"""

import coopdsl as cd
from coopdsl import Acc, MatA, MatB, RowMajor, f16, f32


@cd.kernel(workgroup_size=(32, 1, 1))
def bad_muladd(a: cd.Buffer[f16], b: cd.Buffer[f16], c: cd.Buffer[f32]):
    ta = MatA[f16, 16, 16].load(a, 0, stride=16, layout=RowMajor)
    tb = MatB[f16, 8, 16].load(b, 0, stride=16, layout=RowMajor)
    acc = Acc[f32, 16, 16].splat(0.0)
    acc = cd.muladd(ta, tb, acc)
    acc.store(c, 0, stride=16, layout=RowMajor)
