"""The one table of deferred families (coopdsl/ir/families.py) says what the files are: a family has a module
in exactly the layers it names, and every registry and ``coopdsl`` read their lists from it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import coopdsl
from coopdsl.ir import families

PKG = Path(coopdsl.__file__).resolve().parent


@pytest.mark.parametrize("family", families.DEFERRED, ids=lambda f: f.name)
def test_a_family_has_a_module_in_exactly_its_layers(family):
    for layer in families.LAYERS:
        path = PKG.joinpath(*layer.split("."), f"{family.name}.py")
        assert path.exists() == (layer in family.layers), (family.name, layer)


def test_the_registries_defer_what_the_table_names():
    from coopdsl.interp.ops import SEMANTICS  # noqa: F401  (imports the interpreter's families)

    for layer in families.LAYERS:
        assert families.deferred(layer) == tuple(f.name for f in families.DEFERRED if layer in f.layers)
    assert families.deferred("spirv.lower") == ("coopmat2", "intdot", "qcom", "subgroup", "tensor")
    assert "atomics" in families.deferred("ir.ops") and "callbacks" in families.deferred("lang")
    with pytest.raises(ValueError, match="no layer 'passes'"):
        families.deferred("passes")
    assert all(m in sys.modules for m in families.modules("coopdsl.interp.ops", "interp.ops"))


def test_the_package_loads_its_names_from_the_table():
    assert coopdsl._LATER == families.lazy_names()
    assert coopdsl._LATER["subgroup_add"] == ".lang.subgroup:SUBGROUP" and coopdsl._LATER["Row"] == ".lang.coopmat2"
    assert set(families.lazy_names()) <= set(coopdsl.__all__)
