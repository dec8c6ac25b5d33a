"""Choosing a kernel's tile shape from what the device offers (at specialization time)."""

from __future__ import annotations

from typing import Any

from ..errors import CoopDSLError
from .profile import Config, DeviceProfile, load_profile


class NoShapeError(CoopDSLError, LookupError):
    """The device offers no cooperative-matrix configuration for the requested types and scope."""


def _name(t: Any, what: str) -> str:
    """``f16`` / ``cd.f16`` / ``cd.Subgroup`` / a plain string -> its name; a TypeError naming argument ``what``
    for anything else."""
    if isinstance(t, str):
        return t
    name = getattr(t, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a coopdsl type or scope (cd.f16, cd.Subgroup) or its name, got "
                        f"{type(t).__name__} {t!r}")
    return name


def _matching(device: Any, a: Any, c: Any, b: Any, result: Any, scope: Any,
              saturating: bool) -> tuple[DeviceProfile, tuple[str, str, str, str], str, list[Config]]:
    p = load_profile(device)
    want = (_name(a, "a"), _name(b if b is not None else a, "b"), _name(c, "c"),
            _name(result if result is not None else c, "result"))
    sc = _name(scope, "scope")
    fits = [k for k in p.configs if (k.types, k.scope, k.saturating) == (want, sc, saturating)]
    return p, want, sc, fits


def shapes(device: Any, *, a: Any, c: Any, b: Any = None, result: Any = None, scope: Any = "Subgroup",
           saturating: bool = False) -> list[tuple[int, int, int]]:
    """Every (M, N, K) the device lists in VK_KHR_cooperative_matrix for these types, in the device's order.

    ``device`` is anything :func:`load_profile` accepts (a shipped profile
    name, a JSON path, a ``runtime.Device``...). Types are coopdsl types or
    their names; ``b`` defaults to ``a`` and ``result`` to ``c``. Drivers list
    their preferred configurations first.
    """
    return [(k.M, k.N, k.K) for k in _matching(device, a, c, b, result, scope, saturating)[3]]


def best_shape(device: Any, *, a: Any, c: Any, b: Any = None, result: Any = None, scope: Any = "Subgroup",
               saturating: bool = False, invocations: int | None = None) -> tuple[int, int, int]:
    """The (M, N, K) a kernel should use on ``device`` for ``a x b + c -> result`` matrices.

    The largest KHR configuration (most multiply-adds per instruction; among
    equals, the one the driver lists first). Where the device lists none but
    offers NV2 flexible dimensions (for instance every Workgroup-scope shape
    on NVIDIA), the flexible granularity is returned: the smallest legal tile,
    which any multiple of also fits; ``invocations`` then picks the
    Workgroup-scope entry for that workgroup size.  Raises
    :class:`NoShapeError` listing what the device offers otherwise.

    Use it to set a kernel's tile parameters::

        TM, TN, TK = cd.devices.best_shape("nvidia-h100", a=cd.f16, c=cd.f32)
        gemm.compile(spec={"TM": TM, "TN": TN, "TK": TK}, device="nvidia-h100")
    """
    p, want, sc, fits = _matching(device, a, c, b, result, scope, saturating)
    if fits:
        best = max(fits, key=lambda k: (k.M * k.N * k.K, -fits.index(k)))
        return best.M, best.N, best.K
    flex = [k for k in p.flexible
            if p.flexible_dimensions and (k.types, k.scope, k.saturating) == (want, sc, saturating)
            and (invocations is None or k.scope != "Workgroup" or k.invocations == invocations)]
    if flex:
        return flex[0].M, flex[0].N, flex[0].K
    raise NoShapeError(f"{p.name} offers no cooperative-matrix configuration for {want[0]} x {want[1]} + "
                       f"{want[2]} -> {want[3]} at {sc} scope{' (saturating)' if saturating else ''}"
                       + (f" with {invocations} invocations" if invocations else "")
                       + "; it offers: " + (", ".join(sorted({_types(k) for k in p.configs})) or "none"))


def _types(k: Config) -> str:
    return f"{k.A} x {k.B} + {k.C} -> {k.Result} ({k.scope})"
