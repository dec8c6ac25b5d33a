"""Device profiles: what a GPU offers for cooperative matrices, as data.

A profile is one device entry of ``coopdsl devices --json`` (a list of them is
accepted too: the first device with cooperative matrices is taken, as
``runtime.Device()`` does).  Shipped profiles live in ``profiles/*.json`` next
to this file and are named by their file stem (``"nvidia-h100"``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CoopDSLError

if TYPE_CHECKING:   # (importlib.abc's name is deprecated from Python 3.12; importlib.resources.abc's is 3.11+)
    import sys

    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

TYPES = ("A", "B", "C", "Result")


class ProfileError(CoopDSLError, ValueError):
    """A device profile that cannot be read (missing file, bad JSON, missing fields)."""


@dataclass(frozen=True)
class Config:
    """One VkCooperativeMatrixPropertiesKHR entry (``flexible`` False) or one NV2
    VkCooperativeMatrixFlexibleDimensionsPropertiesNV entry (``flexible`` True:
    M, N, K are then granularities and ``invocations`` the workgroup size it needs
    at Workgroup scope, 0 at Subgroup scope)."""

    M: int
    N: int
    K: int
    A: str
    B: str
    C: str
    Result: str
    scope: str
    saturating: bool = False
    flexible: bool = False
    invocations: int = 0

    @property
    def types(self) -> tuple[str, str, str, str]:
        return self.A, self.B, self.C, self.Result


@dataclass(frozen=True)
class DeviceProfile:
    """The cooperative-matrix facts about one device that kernels are checked against."""

    name: str
    subgroup_size: int
    max_workgroup_invocations: int
    configs: tuple[Config, ...]
    flexible: tuple[Config, ...] = ()
    workgroup_scope: bool = False        # cooperativeMatrixWorkgroupScope
    flexible_dimensions: bool = False    # cooperativeMatrixFlexibleDimensions
    workgroup_scope_max_invocations: int = 0   # cooperativeMatrixWorkgroupScopeMaxWorkgroupSize
    flexible_max_dimension: int = 0      # cooperativeMatrixFlexibleDimensionsMaxDimension
    driver: str = ""
    # subgroup size control (Vulkan 1.3): the sizes a kernel's subgroup_size may require; without the
    # subgroupSizeControl feature only a device whose min and max are equal runs a required size (its own)
    min_subgroup_size: int = 0
    max_subgroup_size: int = 0
    subgroup_size_control: bool = False
    max_compute_workgroup_subgroups: int = 0  # 0: not known
    max_workgroup_size: tuple[int, ...] = ()  # maxComputeWorkGroupSize (x, y, z); empty: not known
    max_shared_memory: int = 0  # maxComputeSharedMemorySize in bytes; 0: not known
    source: Any = field(default=None, compare=False)  # where the data comes from (shipped profiles cite it)
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def khr_only(self) -> DeviceProfile:
        """This device without VK_NV_cooperative_matrix2: KHR configurations only (a portability check)."""
        return dataclasses.replace(self, name=f"{self.name} (KHR only)", flexible=(), workgroup_scope=False,
                                   flexible_dimensions=False, workgroup_scope_max_invocations=0,
                                   flexible_max_dimension=0)

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "profile") -> DeviceProfile:
        """A profile from one ``coopdsl devices --json`` device entry."""
        if not isinstance(d, dict):
            raise ProfileError(f"{where}: a device profile is a JSON object, got {type(d).__name__}")
        try:
            nv2 = d.get("coopmat2") or {}
            for table in ("coopmat2", "features"):
                if d.get(table) is not None and not isinstance(d[table], dict):
                    raise ValueError(f"{table} must be an object, got {type(d[table]).__name__}")
            return cls(
                name=str(d["name"]), subgroup_size=_positive_int(d, "subgroup_size"),
                max_workgroup_invocations=_count(d, "max_workgroup_invocations"),
                configs=tuple(_config(c, False) for c in _list(d, "coopmat_configs")),
                flexible=tuple(_config(c, True) for c in _list(d, "flexible_configs")),
                workgroup_scope=_flag(nv2, "cooperativeMatrixWorkgroupScope"),
                flexible_dimensions=_flag(nv2, "cooperativeMatrixFlexibleDimensions"),
                workgroup_scope_max_invocations=_count(nv2, "max_workgroup_size"),
                flexible_max_dimension=_count(nv2, "flexible_max_dimension"),
                driver=f"{d.get('driver_name', '')} {d.get('driver_info', '')}".strip(),
                min_subgroup_size=_count(d, "min_subgroup_size") or d["subgroup_size"],
                max_subgroup_size=_count(d, "max_subgroup_size") or d["subgroup_size"],
                subgroup_size_control=_flag(d.get("features") or {}, "subgroupSizeControl"),
                max_compute_workgroup_subgroups=_count(d, "max_compute_workgroup_subgroups"),
                max_workgroup_size=tuple(_count({"max_workgroup_size": x}, "max_workgroup_size")
                                         for x in _list(d, "max_workgroup_size")),
                max_shared_memory=_count(d, "max_shared_memory"),
                source=d.get("source"), data=d)
        except KeyError as e:
            raise ProfileError(f"{where}: missing field {e.args[0]!r} (expected the output of "
                               f"'coopdsl devices --json')") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise ProfileError(f"{where}: malformed field: {e}") from None


def _positive_int(c: dict[str, Any], key: str) -> int:
    v = c[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{key} must be a positive integer, got {v!r}")
    return v


def _count(c: dict[str, Any], key: str) -> int:
    """A field holding a count or limit, 0 when absent or null (not known): an int of 0 or more, not a float,
    a string or a bool (int() would take 2.5 as 2 and "64" as 64)."""
    v = c.get(key)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{key} must be an integer, 0 or more, got {v!r}")
    return v


def _flag(c: dict[str, Any], key: str) -> bool:
    """A feature field: true or false (bool() would take the string "false" as true), false when absent; Vulkan's
    VkBool32 as 0 or 1 is taken too."""
    v = c.get(key)
    if v is None:
        return False
    if v in (0, 1) and not isinstance(v, float):
        return bool(v)
    raise ValueError(f"{key} must be true or false, got {v!r}")


def _list(c: dict[str, Any], key: str) -> list[Any]:
    """A field holding a list, empty when absent or null."""
    v = c.get(key)
    if v is None:
        return []
    if not isinstance(v, list | tuple):
        raise ValueError(f"{key} must be a list, got {type(v).__name__}")
    return list(v)


SCOPES = ("Subgroup", "Workgroup")   # the scopes a cooperative-matrix configuration is offered at
# the component type names `coopdsl devices --json` writes (coopdsl.runtime.vk.COMPONENT_TYPES' values; a test
# keeps the two equal); a type Vulkan adds later is written as its enum value, a decimal number
COMPONENT_NAMES = ("f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bf16", "i8packed",
                   "u8packed", "e4m3", "e5m2")


def _config(c: dict[str, Any], flexible: bool) -> Config:
    """One configuration of ``coopdsl devices --json``, its fields checked (a string "16" for M, "false" for
    saturating or an unknown scope reached comparisons far from the profile that held them)."""
    if not isinstance(c, dict):
        raise ValueError(f"a cooperative-matrix configuration is an object, got {type(c).__name__}")
    m, n, k = (_positive_int(c, f) for f in (("MGranularity", "NGranularity", "KGranularity") if flexible
                                             else ("M", "N", "K")))
    saturating = c.get("saturating", False)
    if not isinstance(saturating, bool):
        raise ValueError(f"saturating must be true or false, got {saturating!r}")
    if c["scope"] not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {c['scope']!r}")
    for t in TYPES:
        if not isinstance(c[t], str) or not (c[t] in COMPONENT_NAMES or c[t].isdecimal()):
            raise ValueError(f"{t} must be a component type name ({', '.join(COMPONENT_NAMES)}) or a Vulkan "
                             f"component type's number, got {c[t]!r}")
    types = {t: c[t] for t in TYPES}
    if flexible:
        return Config(m, n, k, **types, scope=c["scope"], saturating=saturating, flexible=True,
                      invocations=int(c.get("workgroup_invocations", 0)))
    return Config(m, n, k, **types, scope=c["scope"], saturating=saturating)


# -- finding profiles ----------------------------------------------------------------------
def profiles_dir() -> Traversable:
    """The folder of shipped profiles (a Traversable inside the installed package)."""

    return resources.files(__package__) / "profiles"


def shipped_profiles() -> list[str]:
    """Names of the profiles that ship with coopdsl (``load_profile(name)`` reads one)."""
    return sorted(p.name[:-5] for p in profiles_dir().iterdir() if p.name.endswith(".json"))


def load_profile(device: Any) -> DeviceProfile:
    """A :class:`DeviceProfile` from whatever names a device.

    ``device`` is a DeviceProfile; the name of a shipped profile
    (``"nvidia-h100"``); a path to a ``coopdsl devices --json`` file; one
    device dict (or a list of them) from that output; a
    ``runtime.DeviceInfo``; or a ``runtime.Device``.
    """
    if isinstance(device, DeviceProfile):
        return device
    if hasattr(device, "info") and not isinstance(device, (dict, list, str, Path)):
        device = device.info  # a runtime.Device
    if dataclasses.is_dataclass(device) and not isinstance(device, type):
        return DeviceProfile.from_dict(dataclasses.asdict(device), getattr(device, "name", "device"))
    if isinstance(device, (str, Path)):
        return _load_named(device)
    if isinstance(device, list):
        return _pick(device, "profile list")
    if isinstance(device, dict):
        return DeviceProfile.from_dict(device)
    raise ProfileError(f"cannot use {type(device).__name__} as a device profile: give a shipped profile name "
                       f"({', '.join(shipped_profiles())}), a JSON path, a dict from 'coopdsl devices --json', "
                       f"or a runtime Device")


def _load_named(device: str | Path) -> DeviceProfile:
    name = str(device)
    shipped = profiles_dir() / f"{name}.json"
    if "/" not in name and not name.endswith(".json") and shipped.is_file():
        return _pick(json.loads(shipped.read_text()), name)
    path = Path(name)
    if not path.is_file():
        raise ProfileError(f"no device profile '{name}': not a shipped profile "
                           f"({', '.join(shipped_profiles())}) nor a file")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: not valid JSON ({e})") from None
    except UnicodeDecodeError as e:
        raise ProfileError(f"{path}: not a JSON text (byte {e.start} is not UTF-8)") from None
    except RecursionError:
        raise ProfileError(f"{path}: not a device profile (JSON nested too deeply to read)") from None
    except OSError as e:
        raise ProfileError(f"{path}: cannot be read ({e.strerror or e})") from None
    return _pick(data, str(path))


def _pick(data: Any, where: str) -> DeviceProfile:
    if isinstance(data, list):
        if not data:
            raise ProfileError(f"{where}: the device list is empty")
        with_coop = [d for d in data if isinstance(d, dict) and d.get("coopmat_configs")]
        data = (with_coop or data)[0]
    return DeviceProfile.from_dict(data, where)
