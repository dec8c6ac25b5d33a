"""The interpreter and the GPU agree on every example (run with -m gpu on a GPU with cooperative matrices).

Each case of benchmarks/cases.py runs twice from the same seed, once on the
GPU and once on the interpreter (at the GPU's subgroup size); every array the
kernel was launched with must end up equal (floats within summation-order
tolerance, integers exactly).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import coopdsl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.cases import CASES  # noqa: E402

pytestmark = pytest.mark.gpu


def _recorded(monkeypatch, fn, size, **kw) -> list[np.ndarray]:
    """The arrays passed to the kernel launches of one case, copied after each launch."""
    seen: list[np.ndarray] = []
    launch = coopdsl.Kernel.launch

    def recording(self, grid, *args, **kwargs):
        launch(self, grid, *args, **kwargs)
        seen.extend(a.copy() for a in args if isinstance(a, np.ndarray))

    monkeypatch.setattr(coopdsl.Kernel, "launch", recording)
    fn(size, np.random.default_rng(0), **kw)
    monkeypatch.undo()
    return seen


@pytest.mark.parametrize("case,size", [(c, s) for c, (_, sizes) in CASES.items() for s in sizes[:3]])
def test_interpreter_matches_the_gpu(device, monkeypatch, case, size):
    fn, _ = CASES[case]
    gpu = _recorded(monkeypatch, fn, size, device=device)
    monkeypatch.setenv("COOPDSL_SUBGROUP_SIZE", str(device.info.subgroup_size))
    cpu = _recorded(monkeypatch, fn, size, device="cpu")
    assert len(gpu) == len(cpu) > 0
    for g, c in zip(gpu, cpu):
        if g.dtype.kind == "f":
            k = size[2]
            np.testing.assert_allclose(c, g, rtol=1e-3, atol=1e-3 * np.sqrt(k))
        else:
            np.testing.assert_array_equal(c, g)


@pytest.mark.parametrize("family,seed", [(f, s) for f in ("scalar", "matrix") for s in range(20)])
def test_generated_kernels_agree_on_the_gpu(device, tmp_path, family, seed):
    from tests.interp import kernelgen as kg

    ch = kg.RandomChooser(seed)
    sgs = device.info.subgroup_size
    case = kg.scalar_case(ch, subgroup_size=sgs) if family == "scalar" else kg.matrix_case(ch, element_access=False)
    if family == "matrix" and case.extra["config"][5] == "Workgroup":
        pytest.skip("workgroup-scope matrices need VK_NV_cooperative_matrix2 features")
    k = kg.load_kernel(case, tmp_path / "generated.py")
    args = case.fresh_args()
    from coopdsl.devices import mismatches

    if mismatches(k.reflect(), device):  # a shape/type/saturation the device does not offer: refused, not run
        from coopdsl.runtime import DeviceFeatureError

        with pytest.raises(DeviceFeatureError):
            k.launch(case.grid, *args, device=device)
        return
    k.launch(case.grid, *args, device=device)
    for i, want in zip(case.outputs, case.expected):
        got = args[i]
        if got.dtype.kind == "f":  # drivers may contract a*b+c into fma and divide to 2.5 ulp
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, equal_nan=True, err_msg=case.source)
        else:
            np.testing.assert_array_equal(got, want, err_msg=case.source)


@coopdsl.func
def _loop_helper(x, y):
    """A generated helper (a differential check's) that lavapipe (Mesa, LLVM 15) gives (7, 7) for at x = 1, y = 7,
    where the SPIR-V, traced by hand, the interpreter and an H200 give (7, 0) (docs/interpreter.md)."""
    if (y >= (x + y)) or (y >= (x * y)):
        x = y
        w8 = coopdsl.i32(0)
        while w8 < 4:
            w8 += 1
            if ((x // ((x & 7) + 1)) <= x) or ((x <= x) and (w8 >= coopdsl.i32(2))):
                x = x if ((y | y) >= (x + x)) else (y - (x | x))
                x = x | x
                y = (x if (coopdsl.u32(100) < coopdsl.u32(100) <= coopdsl.u32(13)) else x) if (
                    (coopdsl.u32(w8) < coopdsl.u32(w8) <= coopdsl.u32(w8)) and (w8 < w8)) else y
            else:
                if coopdsl.u32(w8) >= (coopdsl.u32(coopdsl.u8(coopdsl.u32(w8)) + coopdsl.u8(coopdsl.u32(100)))
                                       & max(coopdsl.u32(w8), coopdsl.u32(w8))):
                    break
    return y, x


@coopdsl.kernel(workgroup_size=(64, 1, 1))
def _loop_kernel(a: coopdsl.Buffer[coopdsl.i32], b: coopdsl.Buffer[coopdsl.i32], r0: coopdsl.Buffer[coopdsl.i32],
                 r1: coopdsl.Buffer[coopdsl.i32]):
    i = coopdsl.global_invocation_id.x
    p, q = _loop_helper(a[i], b[i])
    r0[i] = p
    r1[i] = q


def test_a_loop_lavapipe_miscompiles_agrees_on_the_gpu(device):
    a = np.array([1, *range(-8, 55)], np.int32)
    b = np.array([7, *range(63, 0, -1)], np.int32)
    out = {}
    for dev in ("cpu", device):
        r0, r1 = np.zeros(64, np.int32), np.zeros(64, np.int32)
        _loop_kernel.launch((1, 1, 1), a, b, r0, r1, device=dev)
        out[str(dev)] = (r0, r1)
    cpu, gpu = out["cpu"], out[str(device)]
    assert (int(cpu[0][0]), int(cpu[1][0])) == (7, 0)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    np.testing.assert_array_equal(gpu[1], cpu[1])
