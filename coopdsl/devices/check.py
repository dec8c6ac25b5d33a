"""Checking a kernel's cooperative matrices against what a device offers.

The kernel side comes from its reflection (``cooperative_matrices``,
``muladds``, workgroup size, spec constants), so a C++ host holding the same
JSON can run the same rules.  The rules are the Vulkan ones that spirv-val
cannot know (VUIDs in docs/devices.md):

* every matrix type matches a KHR configuration for its use (A: M x K with
  AType, B: K x N with BType, Acc: M x N with CType or ResultType), or, with
  NV2 flexible dimensions, a flexible configuration (multiples of the
  granularities, at most the maximum dimension, at Workgroup scope the exact
  workgroup invocation count);
* every MulAdd matches one configuration in M, N, K, all four types (integer
  signedness from the MulAdd's operands), scope and saturating accumulation;
* Workgroup scope needs cooperativeMatrixWorkgroupScope and at most
  cooperativeMatrixWorkgroupScopeMaxWorkgroupSize invocations; Subgroup scope
  needs a workgroup x size that is a multiple of the subgroup size (the
  kernel's required one, else the device's);
* a required subgroup size (``@kernel(subgroup_size=N)``, reflection's
  ``subgroup_size``) lies from minSubgroupSize to maxSubgroupSize and the
  device has subgroupSizeControl (or runs only that size), and the workgroup
  has at most N x maxComputeWorkgroupSubgroups invocations;
* the shared arrays (reflection's ``shared_memory``, spec-sized ones at the
  launch's values) take at most maxComputeSharedMemorySize bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..errors import UNKNOWN_LOC, CompileError, SourceLoc
from . import schema
from .dims import DimError, matrix_text, resolve, text
from .profile import Config, DeviceProfile, load_profile

SCOPES = {0: "CrossDevice", 1: "Device", 2: "Workgroup", 3: "Subgroup", 4: "Invocation", 5: "QueueFamily"}
MATRIX_SCOPES = ("Subgroup", "Workgroup")  # the scopes cooperative matrices can have
USES = {0: "A", 1: "B", 2: "Acc"}
NEAREST = 3  # how many offered configurations an error lists


@dataclass(frozen=True)
class Mismatch:
    """One thing the kernel needs that the device does not offer."""

    loc: SourceLoc
    what: str                      # what the kernel needs, in words
    nearest: tuple[str, ...] = ()  # the closest offered configurations, best first

    @property
    def message(self) -> str:
        if not self.nearest:
            return self.what
        return f"{self.what}; nearest offered: " + "; ".join(self.nearest)


class DeviceMismatchError(CompileError):
    """The kernel uses cooperative matrices the device does not offer (at the first offending line).

    ``mismatches`` lists every problem found; the message shows the first with
    the nearest configurations the device offers, and notes for the others.
    """

    def __init__(self, mismatches: list[Mismatch], device: str):
        super().__init__(mismatches[0].message, mismatches[0].loc)
        self.mismatches = list(mismatches)
        self.device = device

    def __str__(self) -> str:
        notes = [f"{m.loc}: note: also {m.what}" for m in self.mismatches[1:]]
        return "\n".join([super().__str__(), *notes])


@dataclass(frozen=True)
class _Env:
    """The launch the kernel is checked for: spec values, workgroup size, device."""

    profile: DeviceProfile
    spec: Mapping[str, Any]
    workgroup: tuple[int, int, int]
    required_subgroup_size: int = 0  # the kernel's subgroup_size, 0 for any

    @property
    def subgroup_size(self) -> int:
        """The subgroup size the kernel runs at on this device (its required one, else the device's)."""
        return self.required_subgroup_size or self.profile.subgroup_size

    @property
    def invocations(self) -> int:
        return math.prod(self.workgroup)


# -- public entry points -----------------------------------------------------------------
def mismatches(reflection: dict[str, Any], device: Any, spec: Mapping[str, Any] | None = None) -> list[Mismatch]:
    """Everything in the kernel (by its reflection) that ``device`` does not offer; [] when it can run.

    ``device`` is anything :func:`~coopdsl.devices.load_profile` accepts;
    ``spec`` overrides specialization-constant defaults by name, as a launch does.
    """
    if spec is not None:   # (numpy comes with _packing: imported only when values are given)
        from .._packing import spec_values

        spec = spec_values(spec, "devices")
    env = _env(_checked(reflection), load_profile(device), spec or {})
    mats = [_matrix(m, env) for m in reflection.get("cooperative_matrices", [])]
    found = _scope_problems(mats, env)
    found += [p for m in reflection.get("muladds", []) if (p := _check_muladd(_muladd(m, env), env))]
    found += [p for m in mats if (p := _check_matrix(m, env))]
    return (_workgroup_problems(reflection, env) + found + _subgroup_size_problems(reflection, env)
            + _shared_memory_problems(reflection, env))


def declared_problems(reflection: dict[str, Any], spec: Mapping[str, Any] | None = None) -> list[Mismatch]:
    """The rule a kernel's own declarations decide, checked without a device: with a required subgroup size
    (``@kernel(subgroup_size=N)``), subgroup-scope matrices need a workgroup x size that is a multiple of N
    (:func:`mismatches` checks it, and the rest, against a device)."""
    if not _checked(reflection).get("subgroup_size"):
        return []
    env = _env(reflection, cast(DeviceProfile, None), spec or {})   # (the rule reads no device)
    mats = [_matrix(m, env) for m in reflection.get("cooperative_matrices", [])]
    return _scope_problems([m for m in mats if m.scope == "Subgroup"], env)


def verify(reflection: dict[str, Any], device: Any, spec: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`DeviceMismatchError` at the first offending kernel line if ``device`` cannot run it."""
    profile = load_profile(device)
    found = mismatches(reflection, profile, spec)
    if found:
        raise DeviceMismatchError(found, profile.name)


# the members every kernel reflection has (Kernel.reflect(), `coopdsl emit --reflect`)
REFLECTION_KEYS = ("entry_point", "workgroup_size")


def _checked(reflection: Any) -> dict[str, Any]:
    """``reflection`` if it is a kernel's reflection, else a TypeError saying what to pass."""
    if hasattr(reflection, "reflect") and not isinstance(reflection, Mapping):
        raise TypeError("coopdsl.devices: pass the kernel's reflection, kernel.reflect(), not the kernel")
    missing = [k for k in REFLECTION_KEYS if k not in reflection] if isinstance(reflection, Mapping) else None
    if missing is None or missing:
        what = f"a mapping without {', '.join(map(repr, missing))}" if missing else type(reflection).__name__
        raise TypeError(f"coopdsl.devices: expected a kernel's reflection (kernel.reflect(), or the JSON of "
                        f"`coopdsl emit --reflect`), got {what}")
    found = schema.problem(reflection)
    if found:
        raise TypeError(f"coopdsl.devices: the kernel's reflection is damaged: {found} (write it again with "
                        f"kernel.reflect() or `coopdsl emit --reflect`)")
    return cast(dict[str, Any], reflection)


# -- the kernel side, resolved -------------------------------------------------------------
def _env(reflection: dict[str, Any], profile: DeviceProfile, spec: Mapping[str, Any]) -> _Env:
    values = _spec_values(reflection, spec)
    return _Env(profile, values, _workgroup(reflection, values), reflection.get("subgroup_size") or 0)


def _spec_values(reflection: dict[str, Any], spec: Mapping[str, Any]) -> dict[str, Any]:
    """The kernel's specialization values with ``spec`` given over the defaults, checked as a launch checks them
    (``runtime.packing.pack_spec``): a name the kernel does not declare, or a value its type does not take
    (``2048.0`` or ``"2048"`` for a u32), is a ValueError naming the constant, its type and the value given
    (dropping it would check the defaults instead, and pass a kernel the launch then refuses)."""
    consts = reflection.get("spec_constants", [])
    values = {s["name"]: s["default"] for s in consts}
    unknown = sorted(set(spec) - set(values), key=str)
    if unknown:
        raise ValueError(f"unknown specialization constant(s) {unknown}; the kernel has {sorted(values)}")
    if not spec:
        return values
    from .._packing import fitted  # (here: it brings numpy, which a compile without spec values does not need)

    types = {s["name"]: s["type"] for s in consts}
    for name, v in spec.items():
        values[name] = fitted(v, types[name], f"specialization constant {name}")
    return values


def _workgroup(reflection: dict[str, Any], values: Mapping[str, Any]) -> tuple[int, int, int]:
    by_id = {s["id"]: s["name"] for s in reflection.get("spec_constants", [])}
    size = reflection.get("workgroup_size", [1, 1, 1])
    ids = reflection.get("workgroup_size_spec_ids", [None] * len(size))
    wg = tuple(values.get(by_id.get(i, ""), s) if i is not None else s for s, i in zip(size, ids))
    return cast(tuple[int, int, int], wg + (1,) * (3 - len(wg)))


def workgroup_size(reflection: dict[str, Any], spec: Mapping[str, Any] | None = None) -> tuple[int, int, int]:
    """The workgroup size a launch with ``spec`` runs (spec-sized dimensions at the values given, else their
    defaults), from the kernel's reflection."""
    return _workgroup(_checked(reflection), _spec_values(reflection, spec or {}))


@dataclass(frozen=True)
class _Matrix:
    loc: SourceLoc
    name: str          # as the kernel writes it, e.g. MatA[f16, TM, 16]
    symbolic: bool     # rows or columns come from specialization constants
    component: str
    rows: int
    cols: int
    use: str
    scope: str


@dataclass(frozen=True)
class _MulAdd:
    loc: SourceLoc
    M: int
    N: int
    K: int
    types: tuple[str, str, str, str]
    scope: str
    saturating: bool


def _matrix(m: dict[str, Any], env: _Env) -> _Matrix:
    use = _named(m["use"], USES, env)
    name = m.get("type") or matrix_text(m["component"], m["rows"], m["cols"], use, m["scope"])
    return _Matrix(_loc(m.get("loc")), name, isinstance(m["rows"], dict) or isinstance(m["cols"], dict),
                   m["component"], resolve(m["rows"], env.spec), resolve(m["cols"], env.spec), use,
                   _named(m["scope"], SCOPES, env))


def _muladd(m: dict[str, Any], env: _Env) -> _MulAdd:
    return _MulAdd(_loc(m.get("loc")), resolve(m["M"], env.spec), resolve(m["N"], env.spec), resolve(m["K"], env.spec),
                   (m["A"], m["B"], m["C"], m["Result"]), _named(m["scope"], SCOPES, env), bool(m["saturating"]))


def _named(value: Any, names: dict[int, str], env: _Env) -> str:
    if isinstance(value, str):
        return value
    v = resolve(value, env.spec)
    return names.get(v, str(v))


def _loc(text_loc: str | None) -> SourceLoc:
    if not text_loc:
        return UNKNOWN_LOC
    file, line, col = text_loc.rsplit(":", 2)
    return SourceLoc(file, int(line), int(col))


# -- rules -----------------------------------------------------------------------------------
def _scope_problems(mats: list[_Matrix], env: _Env) -> list[Mismatch]:
    p, found, seen = env.profile, [], set()
    for m in mats:
        if m.scope in seen:
            continue
        seen.add(m.scope)
        what = None
        if m.scope == "Workgroup" and not p.workgroup_scope:
            what = (f"{m.name} has Workgroup scope, which needs cooperativeMatrixWorkgroupScope "
                    f"(VK_NV_cooperative_matrix2); {p.name} does not offer it")
        elif m.scope == "Workgroup" and env.invocations > p.workgroup_scope_max_invocations:
            what = (f"{m.name} has Workgroup scope in a workgroup of {env.invocations} invocations; {p.name} "
                    f"allows at most {p.workgroup_scope_max_invocations} "
                    f"(cooperativeMatrixWorkgroupScopeMaxWorkgroupSize)")
        elif m.scope == "Subgroup" and env.workgroup[0] % max(env.subgroup_size, 1):
            whose = "the kernel's subgroup size" if env.required_subgroup_size else f"the subgroup size of {p.name}"
            what = (f"{m.name} has Subgroup scope, so the workgroup x size ({env.workgroup[0]}) must be a multiple "
                    f"of {whose} ({env.subgroup_size})")
        elif m.scope not in MATRIX_SCOPES:
            what = f"{m.name} has scope {m.scope}; only Subgroup and Workgroup scope matrices exist"
        if what:
            found.append(Mismatch(m.loc, what))
    return found


def _subgroup_size_problems(reflection: dict[str, Any], env: _Env) -> list[Mismatch]:
    """A required subgroup size the device cannot run (requiredSubgroupSize-02761/02762 of
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo, pNext-02755/02756 of VkPipelineShaderStageCreateInfo)."""
    n, p = env.required_subgroup_size, env.profile
    if not n:
        return []
    loc = _loc(reflection.get("subgroup_size_loc"))
    lo, hi = p.min_subgroup_size or p.subgroup_size, p.max_subgroup_size or p.subgroup_size
    if lo == hi == n:
        pass  # the device's only size: nothing to request
    elif not p.subgroup_size_control:
        return [Mismatch(loc, f"the kernel requires subgroups of {n} invocations (subgroup_size={n}); {p.name} "
                              f"{_runs(lo, hi)} and cannot require a size (no subgroupSizeControl)")]
    elif not lo <= n <= hi:
        return [Mismatch(loc, f"the kernel requires subgroups of {n} invocations (subgroup_size={n}); {p.name} "
                              f"{_runs(lo, hi)}")]
    most = n * p.max_compute_workgroup_subgroups
    if most and env.invocations > most:
        return [Mismatch(loc, f"a workgroup of {env.invocations} invocations in subgroups of {n} needs "
                              f"{-(-env.invocations // n)} subgroups; {p.name} allows at most "
                              f"{p.max_compute_workgroup_subgroups} (maxComputeWorkgroupSubgroups)")]
    return []


def _workgroup_problems(reflection: dict[str, Any], env: _Env) -> list[Mismatch]:
    """A workgroup (its size as specialized) the device cannot run: maxComputeWorkGroupInvocations and
    maxComputeWorkGroupSize (VUID-RuntimeSpirv-x-06429 ...); a driver handed one may fail or crash."""
    wg, p = env.workgroup, env.profile
    loc = _loc(reflection.get("workgroup_size_loc"))
    shown = "x".join(map(str, wg))
    if min(wg) < 1:
        return [Mismatch(loc, f"a workgroup of {shown} invocations: each size must be at least 1")]
    if p.max_workgroup_invocations and env.invocations > p.max_workgroup_invocations:
        return [Mismatch(loc, f"a workgroup of {shown} = {env.invocations} invocations; {p.name} runs at most "
                              f"{p.max_workgroup_invocations} (maxComputeWorkGroupInvocations)")]
    over = [(axis, n, m) for axis, n, m in zip("xyz", wg, p.max_workgroup_size) if n > m]
    if over:
        axis, n, m = over[0]
        return [Mismatch(loc, f"a workgroup of {shown} invocations: {n} along {axis}; {p.name} allows at most "
                              f"{'x'.join(map(str, p.max_workgroup_size))} (maxComputeWorkGroupSize)")]
    return []


def _shared_memory_problems(reflection: dict[str, Any], env: _Env) -> list[Mismatch]:
    """Shared arrays (Workgroup variables) beyond maxComputeSharedMemorySize (VUID-RuntimeSpirv-Workgroup-06530):
    the H100's driver took such a module and lost the device at the first submit.  Located at the declaration
    (``cd.shared``) of the largest array; a profile that does not know the limit skips the rule."""
    shared, limit = reflection.get("shared_memory") or {}, env.profile.max_shared_memory
    try:
        total = resolve(shared.get("bytes", 0), env.spec)
    except DimError:
        return []  # a length that divides by zero at these values: not a size to compare
    if not limit or total <= limit:
        return []
    sizes = [(resolve(a["bytes"], env.spec), a) for a in shared.get("arrays", [])]
    parts = ", ".join(f"{a['name']}: {n}" + _spec_length(a.get("length"), env) for n, a in sizes)
    largest: dict[str, Any] = max(sizes, key=lambda s: s[0], default=(0, {}))[1]
    return [Mismatch(_loc(largest.get("loc") or reflection.get("workgroup_size_loc")),
                     f"the kernel's shared arrays take {total} bytes{f' ({parts})' if parts else ''}; "
                     f"{env.profile.name} allows at most {limit} bytes of shared memory per workgroup "
                     f"(maxComputeSharedMemorySize)")]


def _spec_length(length: Any, env: _Env) -> str:
    """`` at length (S * 2) = 2048`` for a spec-sized array, nothing for a fixed one."""
    return f" at length {text(length)} = {resolve(length, env.spec)}" if isinstance(length, dict) else ""


def _runs(lo: int, hi: int) -> str:
    return f"runs only subgroups of {lo}" if lo == hi else \
        f"runs subgroups of {lo} to {hi} (minSubgroupSize to maxSubgroupSize)"


def _check_matrix(m: _Matrix, env: _Env) -> Mismatch | None:
    if any(_fits_matrix(m, c, env) for c in _all_configs(env.profile)):
        return None
    here = f" (here {m.rows} x {m.cols})" if m.symbolic else ""
    what = f"{env.profile.name} offers no cooperative-matrix type {m.name}{here} at {m.scope} scope"
    offers = []
    for c in _all_configs(env.profile):
        comp, rows, cols = _matrix_offer(m, c, env)
        offers.append((_matrix_key(m, c, comp, rows, cols, env),
                       _offer_text(matrix_text(comp, rows, cols, m.use, c.scope), c, env)))
    return Mismatch(m.loc, what, _best(offers))


def _check_muladd(m: _MulAdd, env: _Env) -> Mismatch | None:
    if any(_fits_muladd(m, c, env) for c in _all_configs(env.profile)):
        return None
    what = (f"{env.profile.name} offers no MulAdd (M x N x K) "
            f"{_muladd_text(m.M, m.N, m.K, m.types, m.scope, m.saturating)}")
    if m.scope == "Workgroup":
        what += f" in a workgroup of {env.invocations} invocations"
    offers = []
    for c in _all_configs(env.profile):
        M, N, K = _shape_near(c, (m.M, m.N, m.K), env)
        key = (sum(a != b for a, b in zip(m.types, c.types)), c.scope != m.scope, c.saturating != m.saturating,
               _invocation_gap(c, env), _distance((m.M, m.N, m.K), (M, N, K)))
        offers.append((key, _offer_text(_muladd_text(M, N, K, c.types, c.scope, c.saturating), c, env)))
    return Mismatch(m.loc, what, _best(offers))


def _all_configs(p: DeviceProfile) -> Iterable[Config]:
    yield from p.configs
    if p.flexible_dimensions:
        yield from p.flexible


def _use_shape(c: Config, use: str) -> tuple[int, int, tuple[str, ...]]:
    """(rows, cols, component types) a configuration gives a matrix of ``use``."""
    if use == "A":
        return c.M, c.K, (c.A,)
    if use == "B":
        return c.K, c.N, (c.B,)
    return c.M, c.N, (c.C, c.Result)


def _fits_matrix(m: _Matrix, c: Config, env: _Env) -> bool:
    rows, cols, comps = _use_shape(c, m.use)
    if c.scope != m.scope or m.component not in comps:
        return False
    if not c.flexible:
        return (m.rows, m.cols) == (rows, cols)
    return m.rows % rows == 0 and m.cols % cols == 0 and _flexible_ok((m.rows, m.cols), c, env)


def _fits_muladd(m: _MulAdd, c: Config, env: _Env) -> bool:
    if (c.types, c.scope, c.saturating) != (m.types, m.scope, m.saturating):
        return False
    if not c.flexible:
        return (m.M, m.N, m.K) == (c.M, c.N, c.K)
    return m.M % c.M == 0 and m.N % c.N == 0 and m.K % c.K == 0 and _flexible_ok((m.M, m.N, m.K), c, env)


def _flexible_ok(dims: tuple[int, ...], c: Config, env: _Env) -> bool:
    limit = env.profile.flexible_max_dimension
    if limit and max(dims) > limit:
        return False
    return c.scope != "Workgroup" or env.invocations == c.invocations


# -- nearest offers ----------------------------------------------------------------------------
def _shape_near(c: Config, want: tuple[int, ...], env: _Env) -> tuple[int, ...]:
    """The configuration's shape closest to ``want`` (flexible ones: the nearest multiples)."""
    if not c.flexible:
        return c.M, c.N, c.K
    return tuple(_round_to(w, g, env) for w, g in zip(want, (c.M, c.N, c.K)))


def _round_to(want: int, granularity: int, env: _Env) -> int:
    """The multiple of ``granularity`` nearest ``want``, within [granularity, the flexible maximum]."""
    top = (env.profile.flexible_max_dimension or max(want, granularity)) // granularity * granularity
    return max(granularity, min(round(want / granularity) * granularity, top))


def _matrix_offer(m: _Matrix, c: Config, env: _Env) -> tuple[str, int, int]:
    rows, cols, comps = _use_shape(c, m.use)
    comp = m.component if m.component in comps else comps[0]
    if c.flexible:
        rows, cols = _round_to(m.rows, rows, env), _round_to(m.cols, cols, env)
    return comp, rows, cols


def _matrix_key(m: _Matrix, c: Config, comp: str, rows: int, cols: int, env: _Env) -> tuple[bool, bool, float, float]:
    return comp != m.component, c.scope != m.scope, _invocation_gap(c, env), _distance((m.rows, m.cols), (rows, cols))


def _invocation_gap(c: Config, env: _Env) -> float:
    """How far a Workgroup-scope flexible configuration's workgroup size is from the kernel's (0: same)."""
    if not c.flexible or c.scope != "Workgroup" or c.invocations <= 0:
        return 0.0
    return abs(math.log2(env.invocations / c.invocations))


def _distance(want: tuple[int, ...], have: tuple[int, ...]) -> float:
    return sum(abs(math.log2(max(w, 1) / max(h, 1))) for w, h in zip(want, have))


def _best(offers: list[tuple[tuple[Any, ...], str]]) -> tuple[str, ...]:
    out: list[str] = []
    for _, t in sorted(offers, key=lambda o: o[0]):
        if t not in out:
            out.append(t)
    return tuple(out[:NEAREST])


def _muladd_text(M: int, N: int, K: int, types: tuple[str, ...], scope: str, saturating: bool) -> str:
    a, b, c, r = types
    sat = ", saturating" if saturating else ""
    return f"{M}x{N}x{K} {a} x {b} + {c} -> {r} at {scope} scope{sat}"


def _offer_text(base: str, c: Config, env: _Env) -> str:
    if not c.flexible:
        return base
    at = f" with {c.invocations} invocations" if c.scope == "Workgroup" else ""
    return f"{base}{at} (flexible: M/N/K multiples of {c.M}/{c.N}/{c.K}, at most {env.profile.flexible_max_dimension})"


__all__ = ["Mismatch", "DeviceMismatchError", "mismatches", "verify"]
