"""The language reference, generated from the builtin registry (``docs/reference.md``).

Every builtin, type method and value method is listed with its signature and
docstring (argument types, shapes and the SPIR-V it emits), grouped by the
module that declares it.  ``python -m coopdsl.lang.reference > docs/reference.md``
regenerates the page; a test fails when the page and the registry disagree.
"""

from __future__ import annotations

import sys

from . import registry as R

FAMILIES = {  # declaring module -> section title, in page order
    "coopmat": "Cooperative matrices",
    "coopmat2": "Cooperative matrices: SPV_NV_cooperative_matrix2 operations (docs/lang/nv2-ops.md)",
    "callbacks": "Callbacks (functions as instruction operands)",
    "convert": "Conversions",
    "access": "Memory access with memory operands",
    "memory": "Shared and local memory, barriers",
    "atomics": "Atomics",
    "subgroup": "Subgroup operations",
    "math": "Math (GLSL.std.450 and friends)",
    "loops": "Loops",
    "arrays": "Array values",
    "qcom": "QCOM: matrices from and to per-invocation arrays",
    "uniform": "Uniformity",
    "tensor": "Tensor layouts and views (SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix2)",
}
VALUES = {"CoopMatType": "`m.{}` (a cooperative-matrix value)", "TensorLayoutType": "`L.{}` (a tensor layout)",
          "TensorViewType": "`V.{}` (a tensor view)"}  # receiver class -> how a value method is written


def _family(b: R.Builtin) -> str:
    module = getattr(b.impl, "__module__", "") or ""
    return module.rsplit(".", 1)[-1]


def _entries() -> list[tuple[str, str, R.Builtin]]:
    out = [(_family(b), f"cd.{name}", b) for name, b in R.BUILTINS.items()]
    out += [(_family(b), f"{cls.__name__}-type.{name}", b) for (cls, name), b in R.TYPE_METHODS.items()]
    out += [(_family(b), f"{cls.__name__}-value.{name}", b) for (cls, name), b in R.VALUE_METHODS.items()]
    return out


def _title(spelling: str) -> str:
    if "-type." in spelling:
        return "`MatA[...]." + spelling.split(".", 1)[1] + "` (and MatB, Acc, CoopMat types)"
    if "-value." in spelling:
        cls, name = spelling.split("-value.")
        return VALUES[cls].format(name)
    return f"`{spelling}`"


def render() -> str:
    """The reference page as markdown."""
    groups: dict[str, list[tuple[str, R.Builtin]]] = {}
    for family, spelling, b in _entries():
        groups.setdefault(family, []).append((spelling, b))
    order = list(FAMILIES) + sorted(set(groups) - set(FAMILIES))
    lines = ["# Language reference: every builtin", "",
             "Generated from the builtin registry by `python -m coopdsl.lang.reference > docs/reference.md`;",
             "`tests/test_docs.py` fails when this page and the code disagree.  Types, parameters and",
             "control flow are described in `docs/language.md` and `docs/lang/`.", ""]
    for family in order:
        if family not in groups:
            continue
        lines += [f"## {FAMILIES.get(family, family)}", ""]
        for spelling, b in sorted(groups[family], key=lambda e: e[0]):
            lines += [f"### {_title(spelling)}", "", f"`{b.name}{b.signature}`", "", b.doc.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # listing the registry (render) loads every builtin family
    sys.stdout.write(render())
