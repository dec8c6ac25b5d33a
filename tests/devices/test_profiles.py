"""Device profiles: the shipped ones, every accepted form, and the errors for bad ones."""

import dataclasses
import json
from pathlib import Path

import pytest

from coopdsl.devices import DeviceProfile, ProfileError, load_profile, shipped_profiles
from coopdsl.devices.profile import profiles_dir

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ROOT / "docs" / "h100-devices.json"


def _raw(name: str) -> list:
    return json.loads((profiles_dir() / f"{name}.json").read_text())


def test_the_h100_profile_is_the_measured_listing():
    assert "nvidia-h100" in shipped_profiles()
    (entry,) = _raw("nvidia-h100")
    source = entry.pop("source")
    assert entry == json.loads(MEASURED.read_text())[0]  # every other field is `coopdsl devices --json` output
    assert source["kind"] == "measured" and source["command"] == "coopdsl devices --json"
    assert source["driver"] == f"{entry['driver_name']} {entry['driver_info']}"


@pytest.mark.parametrize("name", shipped_profiles())
def test_every_shipped_profile_loads_and_cites_its_source(name):
    p = load_profile(name)
    assert p.configs and p.name and p.subgroup_size > 0
    assert p.source and p.source.get("kind") in ("measured", "public report", "driver source")
    assert p.source.get("driver")


def test_h100_profile_contents():
    p = load_profile("nvidia-h100")
    assert p.name == "NVIDIA H100 80GB HBM3" and p.driver == "NVIDIA 580.159.04" and p.subgroup_size == 32
    assert len(p.configs) == 11 and len(p.flexible) == 25
    assert p.workgroup_scope and p.flexible_dimensions
    assert (p.workgroup_scope_max_invocations, p.flexible_max_dimension) == (256, 1024)
    first = p.configs[0]
    assert (first.M, first.N, first.K, first.types, first.scope, first.saturating) == \
        (16, 16, 16, ("f16", "f16", "f16", "f16"), "Subgroup", False)
    wg = [c for c in p.flexible if c.scope == "Workgroup"]
    assert {c.invocations for c in wg} == {32, 64, 128, 256}


def test_every_form_of_naming_a_device(tmp_path):
    from coopdsl.runtime import DeviceInfo

    h = load_profile("nvidia-h100")
    raw = _raw("nvidia-h100")
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(raw))
    fields = {f.name for f in dataclasses.fields(DeviceInfo)}
    info = DeviceInfo(**{k: v for k, v in raw[0].items() if k in fields})

    class FakeDevice:
        pass

    dev = FakeDevice()
    dev.info = info
    for form in (h, str(path), path, raw, raw[0], info, dev):
        p = load_profile(form)
        assert (p.name, p.configs, p.flexible, p.subgroup_size) == (h.name, h.configs, h.flexible, h.subgroup_size)


def test_a_list_picks_the_first_device_with_cooperative_matrices():
    raw = _raw("nvidia-h100")[0]
    cpu = {"name": "llvmpipe", "subgroup_size": 8, "coopmat_configs": []}
    assert load_profile([cpu, raw]).name == raw["name"]
    assert load_profile([cpu]).name == "llvmpipe"


def test_khr_only_drops_nv2():
    p = load_profile("nvidia-h100").khr_only()
    assert p.name.endswith("(KHR only)") and p.flexible == () and not p.workgroup_scope
    assert p.configs == load_profile("nvidia-h100").configs


@pytest.mark.parametrize("content,message", [
    ("{not json", "not valid JSON"),
    ("[]", "the device list is empty"),
    ('{"subgroup_size": 32}', "missing field 'name'"),
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": 16}]}', "missing field 'N'"),
    ('{"name": "x", "subgroup_size": "many"}', "malformed field"),
    ('"a string"', "a device profile is a JSON object"),
    # found by a check written from the docs alone (each reached an AttributeError or TypeError, or was taken):
    ('{"name": "x", "subgroup_size": 32, "features": "all"}', "malformed field: features must be an object"),
    ('{"name": "x", "subgroup_size": 32, "coopmat2": []}', "malformed field: coopmat2 must be an object"),
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": "16", "N": 16, "K": 16}]}',
     "malformed field: M must be a positive integer, got '16'"),
    ('{"name": "x", "subgroup_size": 32.5}', "malformed field: subgroup_size must be a positive integer, got 32.5"),
    ('{"name": "x", "subgroup_size": -32}', "subgroup_size must be a positive integer, got -32"),
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", '
     '"C": "f32", "Result": "f32", "scope": "Subgroup", "saturating": "false"}]}',
     "saturating must be true or false, got 'false'"),
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": 16, "N": 16, "K": 16, "A": 16, "B": "f16", '
     '"C": "f32", "Result": "f32", "scope": "Subgroup"}]}', "A must be a component type name (f16, f32, f64,"),
    # an unknown type name was taken (found by a check of the command line written from the docs alone)
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": 16, "N": 16, "K": 16, "A": "f99", "B": "f16", '
     '"C": "f32", "Result": "f32", "scope": "Subgroup"}]}', "or a Vulkan component type's number, got 'f99'"),
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", '
     '"C": "f32", "Result": "f32", "scope": "Galaxy"}]}', "scope must be one of Subgroup, Workgroup, got 'Galaxy'"),
    # counts and flags were int() and bool(): 2.5 became 2, "64" 64, and the string "false" true
    ('{"name": "x", "subgroup_size": 32, "max_shared_memory": 49152.5}',
     "max_shared_memory must be an integer, 0 or more, got 49152.5"),
    ('{"name": "x", "subgroup_size": 32, "max_workgroup_invocations": "1024"}',
     "max_workgroup_invocations must be an integer, 0 or more, got '1024'"),
    ('{"name": "x", "subgroup_size": 32, "max_workgroup_size": [1024, -1, 64]}',
     "max_workgroup_size must be an integer, 0 or more, got -1"),
    ('{"name": "x", "subgroup_size": 32, "max_workgroup_size": 1024}', "max_workgroup_size must be a list, got int"),
    ('{"name": "x", "subgroup_size": 32, "min_subgroup_size": true}', "min_subgroup_size must be an integer"),
    ('{"name": "x", "subgroup_size": 32, "features": {"subgroupSizeControl": "false"}}',
     "subgroupSizeControl must be true or false, got 'false'"),
    ('{"name": "x", "subgroup_size": 32, "coopmat2": {"cooperativeMatrixWorkgroupScope": 2}}',
     "cooperativeMatrixWorkgroupScope must be true or false, got 2"),
    ('{"name": "x", "subgroup_size": 32, "coopmat_configs": {"M": 16}}', "coopmat_configs must be a list, got dict"),
])
def test_bad_profile_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ProfileError) as e:
        load_profile(str(path))
    assert message in str(e.value) and str(path) in str(e.value)


def test_counts_and_flags_as_vulkan_gives_them_load():
    """VkBool32 features come as 0 or 1 from a device's own report; null counts are 'not known'."""
    p = load_profile({"name": "x", "subgroup_size": 32, "features": {"subgroupSizeControl": 1},
                      "coopmat2": {"cooperativeMatrixWorkgroupScope": True, "max_workgroup_size": 256},
                      "max_shared_memory": None, "max_workgroup_size": [1024, 1024, 64]})
    assert p.subgroup_size_control and p.workgroup_scope and p.workgroup_scope_max_invocations == 256
    assert p.max_shared_memory == 0 and p.max_workgroup_size == (1024, 1024, 64)
    assert p.min_subgroup_size == p.max_subgroup_size == 32


def test_unknown_names_and_objects():
    with pytest.raises(ProfileError, match="no device profile 'amd-imaginary': not a shipped profile"):
        load_profile("amd-imaginary")
    with pytest.raises(ProfileError, match="cannot use int as a device profile"):
        load_profile(3)
    assert isinstance(load_profile("nvidia-h100"), DeviceProfile)


def test_a_profile_file_numpy_or_json_cannot_read_is_a_profile_error(tmp_path):
    """A file that is not UTF-8 (UnicodeDecodeError) or JSON nested past Python's recursion limit (RecursionError)
    reached the caller, and the CLI's one-line error named no file."""
    bad = tmp_path / "bin.json"
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ProfileError, match=r"bin.json: not a JSON text \(byte 0 is not UTF-8\)"):
        load_profile(str(bad))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ProfileError, match=r"deep.json: not a device profile \(JSON nested too deeply to read\)"):
        load_profile(str(deep))


def test_a_profile_takes_the_component_type_names_the_runtime_writes_and_numbers_of_later_types(tmp_path):
    # the names a profile may hold are those `coopdsl devices --json` writes (runtime.vk's table), and a type
    # Vulkan adds later is written as its number
    from coopdsl.devices.profile import COMPONENT_NAMES
    from coopdsl.runtime import vk

    assert sorted(COMPONENT_NAMES) == sorted(vk.COMPONENT_TYPES.values())
    path = tmp_path / "later.json"
    path.write_text('{"name": "x", "subgroup_size": 32, "coopmat_configs": [{"M": 16, "N": 16, "K": 32, '
                    '"A": "1000999000", "B": "e4m3", "C": "f32", "Result": "f32", "scope": "Subgroup"}]}')
    assert load_profile(str(path)).configs[0].A == "1000999000"
