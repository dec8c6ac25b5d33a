"""C/C++ headers holding compiled kernels: SPIR-V words plus the reflection as C data.

For each kernel (prefix ``p``, the output name) a header defines

* ``p_spv[]`` (the module's ``uint32_t`` words) and ``P_SPV_WORDS``;
* ``p_bindings[]`` (set, binding, VkDescriptorType value, element type, read-only);
* ``p_push`` (a struct laid out like the push-constant block) and ``p_push_members[]``;
* ``p_spec`` (the specialization data block), ``p_spec_defaults``, ``p_spec_map[]``
  (laid out like ``VkSpecializationMapEntry``) and ``p_spec_constants[]``;
* the workgroup size and the spec ids of its specialized dimensions, and the required subgroup size
  (``P_REQUIRED_SUBGROUP_SIZE`` when the kernel has one);
* the device extensions, feature names and subgroup operations the module needs;
* ``p_info``, a :c:type:`coopdsl_kernel_info` pointing at all of the above,

plus macros (``P_BINDING_X``, ``P_SPEC_WG_ID``, ``P_WORKGROUP_SIZE_X`` ...).
The shared types are guarded so several generated headers can be included
together.  The text compiles as C99 and C++17 (see docs/aot.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from . import cspell as C
from .artifact import Artifact
from .errors import InputError
from .requirements import API_VERSIONS, requirements

DESCRIPTOR_TYPES = {"uniform_buffer": 6, "storage_buffer": 7}  # VkDescriptorType values
WORDS_PER_LINE = 6

TYPES = """\
#ifndef COOPDSL_AOT_TYPES_V2
#define COOPDSL_AOT_TYPES_V2
#if defined(__GNUC__) || defined(__clang__)
#define COOPDSL_UNUSED __attribute__((unused))
#else
#define COOPDSL_UNUSED
#endif

/* One descriptor binding. descriptor_type is a VkDescriptorType value (7 storage buffer, 6 uniform buffer). */
typedef struct coopdsl_binding {
    const char *name;
    uint32_t set;
    uint32_t binding;
    uint32_t descriptor_type;
    const char *element_type; /* f32, f16, u32 ... (a vector: its component type, see components); u8 for
                                 structs and uniform blocks */
    uint32_t components;      /* vector width; byte size for structs and uniform blocks */
    uint32_t readonly;
} coopdsl_binding;

/* One member of the push-constant block (nested struct members have dotted names). */
typedef struct coopdsl_push_member {
    const char *name;
    uint32_t offset;
    uint32_t size;
    const char *type;
} coopdsl_push_member;

/* Same layout as VkSpecializationMapEntry: cast the array to const VkSpecializationMapEntry *. */
typedef struct coopdsl_spec_map_entry {
    uint32_t constantID;
    uint32_t offset;
    size_t size;
} coopdsl_spec_map_entry;

/* One specialization constant; offset and size are its place in the spec data block. */
typedef struct coopdsl_spec_constant {
    const char *name;
    uint32_t id;
    const char *type;
    uint32_t offset;
    uint32_t size;
} coopdsl_spec_constant;

/* Everything a Vulkan host needs to run one kernel. Absent tables are NULL with count 0. */
typedef struct coopdsl_kernel_info {
    const char *name;
    const char *entry_point;
    const char *target_env;
    uint32_t api_version;                 /* VK_MAKE_API_VERSION(0, 1, minor, 0) of target_env */
    const uint32_t *code;                 /* SPIR-V words */
    size_t code_size;                     /* in bytes, as VkShaderModuleCreateInfo.codeSize */
    uint32_t workgroup_size[3];           /* with spec-constant dimensions at their defaults */
    int32_t workgroup_size_spec_ids[3];   /* spec id of a specialized dimension, else -1 */
    uint32_t required_subgroup_size;      /* VkPipelineShaderStageRequiredSubgroupSizeCreateInfo, 0: any */
    const coopdsl_binding *bindings;
    uint32_t binding_count;
    uint32_t push_constant_size;
    const coopdsl_push_member *push_members;
    uint32_t push_member_count;
    const coopdsl_spec_constant *spec_constants;
    const coopdsl_spec_map_entry *spec_map; /* one entry per spec constant, same order */
    uint32_t spec_constant_count;
    const void *spec_defaults;            /* the spec data block with every default */
    uint32_t spec_data_size;
    const char *const *device_extensions; /* to enable at vkCreateDevice */
    uint32_t device_extension_count;
    const char *const *features;          /* VkPhysicalDevice*Features member names to enable */
    uint32_t feature_count;
    uint32_t subgroup_operations;         /* VkSubgroupFeatureFlags the module uses */
    const char *const *capabilities;      /* SPIR-V capabilities the module declares */
    uint32_t capability_count;
    const char *const *spirv_extensions;  /* SPIR-V extensions the module declares */
    uint32_t spirv_extension_count;
} coopdsl_kernel_info;
#endif /* COOPDSL_AOT_TYPES_V2 */
"""


@dataclass
class Section:
    """Declarations for one part of a kernel, and its initializers of ``coopdsl_kernel_info`` fields."""

    lines: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    math_h: bool = False


def render_header(artifacts: list[Artifact], guard: str, *, index: str | None = None,
                  command: str | None = None) -> str:
    """The header text for ``artifacts``.

    ``guard`` names the include guard (e.g. the file name); ``index``, when
    given, adds ``index_kernels[]`` listing every kernel's info; ``command``
    is recorded in the opening comment as how to regenerate the file.
    """
    if not isinstance(artifacts, (list, tuple)) or not all(isinstance(a, Artifact) for a in artifacts):
        raise TypeError("render_header: artifacts must be a list of Artifact (compile_artifact's), got "
                        f"{type(artifacts).__name__}" + (" holding other values" if isinstance(artifacts, (list, tuple))
                                                         else ""))
    for what, v, optional in (("guard", guard, False), ("index", index, True), ("command", command, True)):
        if not isinstance(v, str) and not (optional and v is None):
            raise TypeError(f"render_header: {what} must be a str{' or None' if optional else ''}, got "
                            f"{type(v).__name__}")
    C.unique([a.name for a in artifacts], C.identifier, "outputs")
    blocks = [_kernel(a) for a in artifacts]
    guard_macro = C.macro("COOPDSL", guard, "H")
    taken = {n: f"the header's own {'macro' if n.isupper() else 'type'} {n} (every coopdsl header declares it)"
             for n in declared(TYPES)}
    taken[guard_macro] = f"the include guard {guard_macro}"
    for a, b in zip(artifacts, blocks):
        _claim(taken, declared("\n".join(b.lines)), f"output '{a.name}'", "rename the output")
    index_text = _index(index, artifacts) if index else ""
    if index:
        _claim(taken, declared(index_text), f"the kernel list named after '{index}'", "rename the header")
    head = [f"/* Generated by coopdsl {__version__}; do not edit."]
    if command:
        head.append(C.comment(f" * Regenerate: {command}"))
    head += [" */", f"#ifndef {guard_macro}", f"#define {guard_macro}", "",
             "#include <stddef.h>", "#include <stdint.h>"]
    if any(b.math_h for b in blocks):
        head.append("#include <math.h>")
    body = [TYPES] + ["\n".join(b.lines) + "\n" for b in blocks] + ([index_text] if index else [])
    return "\n".join(head) + "\n\n" + "\n".join(body) + f"#endif /* {guard_macro} */\n"


def check_names(outputs: list[str], index: str | None = None) -> None:
    """InputError if outputs named ``outputs`` (and the kernel list named after ``index``) would declare a C name
    twice or one the header itself declares (``coopdsl_kernel`` makes ``coopdsl_kernel_info``, the shared type):
    what :func:`render_header` refuses, found from the names alone, before anything is compiled.  The names
    that depend on a kernel's contents (bindings, push constants, spec constants) are checked when it renders."""
    stub = {"entry_point": "main", "workgroup_size": [1, 1, 1], "workgroup_size_spec_ids": [None] * 3,
            "bindings": [], "push_constants": {"size": 0, "members": []}, "spec_constants": [],
            "capabilities": [], "extensions": []}
    render_header([Artifact(n, n, "", "vulkan1.3", b"", stub) for n in outputs], index or "check", index=index)


# the names a header declares: macros, struct tags and typedefs, and its static tables
_DECLARATIONS = re.compile(r"^(?:#define|typedef struct|typedef char|\})\s+(\w+)", re.M)
_TABLES = re.compile(r"^COOPDSL_UNUSED static const .*?(\w+)\s*[\[=]", re.M)


def declared(text: str) -> set[str]:
    """Every C name ``text`` (lines of a generated header) declares: one place that reads them off the text, so a
    clash check cannot miss a name a new table adds."""
    return set(_DECLARATIONS.findall(text)) | set(_TABLES.findall(text))


def _claim(taken: dict[str, str], names: set[str], who: str, fix: str) -> None:
    """Record ``names`` as ``who``'s; InputError naming the first one already taken, by whom, and the fix."""
    for n in sorted(names):
        if n in taken:
            raise InputError(f"{who} would declare the C name {n}, which is {taken[n]}; {fix}")
    taken.update((n, f"also declared by {who}") for n in names)


def _kernel(a: Artifact) -> Section:
    p, r = C.identifier(a.name), a.reflection
    P = p.upper()   # (macros and variables spell the name alike: '1k' is _1k_spv and _1K_SPV_WORDS)
    about = f"kernel {a.kernel} from {a.source or '?'}, {a.target_env}"
    about += "".join(f", {what} {_values(d)}" for what, d in (("spec", a.spec), ("const", a.consts)) if d)
    parts = [_spirv(p, P, a), _workgroup(P, r), _bindings(p, P, r["bindings"]),
             _push(p, P, r["push_constants"]), _spec(p, P, r["spec_constants"]), _needs(p, r)]
    if a.target_env not in API_VERSIONS:
        raise InputError(f"{a.name}: unknown target environment {a.target_env!r}")
    fields = [C.string(a.name), C.string(r["entry_point"]), C.string(a.target_env),
              f"0x{API_VERSIONS[a.target_env]:x}u"] + [f for s in parts for f in s.fields]
    lines = [f"/* ---- {p}: {C.comment(about)} ---- */"] + [ln for s in parts for ln in s.lines]
    lines += [f"COOPDSL_UNUSED static const coopdsl_kernel_info {p}_info = {{",
              *(f"    {f}," for f in fields), "};"]
    return Section(lines, [], any(s.math_h for s in parts))


def _values(d: dict[str, Any]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in d.items())


def _spirv(p: str, P: str, a: Artifact) -> Section:
    words = a.words
    rows = [", ".join(f"0x{w:08x}u" for w in words[i:i + WORDS_PER_LINE])
            for i in range(0, len(words), WORDS_PER_LINE)]
    lines = [f"#define {P}_SPV_WORDS {len(words)}u",
             f"COOPDSL_UNUSED static const uint32_t {p}_spv[{P}_SPV_WORDS] = {{",
             *(f"    {row}," for row in rows), "};"]
    return Section(lines, [f"{p}_spv", f"sizeof({p}_spv)"])


def _workgroup(P: str, r: dict[str, Any]) -> Section:
    size, ids = r["workgroup_size"], r["workgroup_size_spec_ids"]
    lines = [f"#define {P}_WORKGROUP_SIZE_{axis} {n}u" for axis, n in zip("XYZ", size)]
    lines += [f"#define {P}_WORKGROUP_SIZE_{axis}_SPEC_ID {i}u" for axis, i in zip("XYZ", ids) if i is not None]
    required = r.get("subgroup_size") or 0
    if required:
        lines.append(f"#define {P}_REQUIRED_SUBGROUP_SIZE {required}u")
    return Section(lines, ["{" + ", ".join(f"{n}u" for n in size) + "}",
                           "{" + ", ".join("-1" if i is None else str(i) for i in ids) + "}", f"{required}u"])


def _bindings(p: str, P: str, bindings: list[dict[str, Any]]) -> Section:
    if not bindings:
        return Section([f"#define {P}_BINDING_COUNT 0u"], ["NULL", "0u"])
    names = C.unique([b["name"] for b in bindings], lambda n: f"{P}_{C.macro('BINDING', n)}", "bindings",
                     reserved={f"{P}_BINDING_COUNT": "the number of bindings"})
    lines = [f"#define {P}_BINDING_COUNT {len(bindings)}u"]
    lines += [f"#define {m} {b['binding']}u" for m, b in zip(names, bindings)]
    lines.append(f"COOPDSL_UNUSED static const coopdsl_binding {p}_bindings[{P}_BINDING_COUNT] = {{")
    for b in bindings:
        if b["kind"] not in DESCRIPTOR_TYPES:
            raise InputError(f"binding '{b['name']}' has kind {b['kind']!r}, which headers cannot describe")
        lines.append(f"    {{{C.string(b['name'])}, {b['set']}u, {b['binding']}u, {DESCRIPTOR_TYPES[b['kind']]}u, "
                     f"{C.string(b['element_type'])}, {b['components']}u, {int(b['readonly'])}u}},")
    lines.append("};")
    return Section(lines, [f"{p}_bindings", f"{P}_BINDING_COUNT"])


def _push(p: str, P: str, push: dict[str, Any]) -> Section:
    members, size = push["members"], push["size"]
    lines = [f"#define {P}_PUSH_CONSTANT_SIZE {size}u"]
    if not members:
        return Section(lines, [f"{P}_PUSH_CONSTANT_SIZE", "NULL", "0u"])
    lines += _layout_struct(f"{p}_push", [(m["name"], m["type"], m["offset"], m["size"]) for m in members], size)
    lines.append(f"COOPDSL_UNUSED static const coopdsl_push_member {p}_push_members[{len(members)}] = {{")
    lines += [f"    {{{C.string(m['name'])}, {m['offset']}u, {m['size']}u, {C.string(m['type'])}}},"
              for m in members]
    lines.append("};")
    return Section(lines, [f"{P}_PUSH_CONSTANT_SIZE", f"{p}_push_members", f"{len(members)}u"])


def _spec(p: str, P: str, consts: list[dict[str, Any]]) -> Section:
    if not consts:
        return Section([], ["NULL", "NULL", "0u", "NULL", "0u"])
    sizes = [C.C_TYPES[s["type"]][1] for s in consts]
    order = sorted(range(len(consts)), key=lambda i: -sizes[i])  # largest first: no padding is needed
    offsets, at = [0] * len(consts), 0
    for i in order:
        offsets[i], at = at, at + sizes[i]
    ids = C.unique([s["name"] for s in consts], lambda n: f"{P}_{C.macro('SPEC', n, 'ID')}", "spec constants")
    lines = [f"#define {m} {s['id']}u" for m, s in zip(ids, consts)]
    lines += _layout_struct(f"{p}_spec", [(consts[i]["name"], consts[i]["type"], offsets[i], sizes[i])
                                          for i in order])
    lines.append(f"COOPDSL_UNUSED static const {p}_spec {p}_spec_defaults = {{"
                 + ", ".join(C.value(consts[i]["type"], consts[i]["default"]) for i in order) + "};")
    lines.append(f"COOPDSL_UNUSED static const coopdsl_spec_map_entry {p}_spec_map[{len(consts)}] = {{"
                 + ", ".join(f"{{{s['id']}u, {o}u, {n}u}}" for s, o, n in zip(consts, offsets, sizes)) + "};")
    lines.append(f"COOPDSL_UNUSED static const coopdsl_spec_constant {p}_spec_constants[{len(consts)}] = {{")
    lines += [f"    {{{C.string(s['name'])}, {s['id']}u, {C.string(s['type'])}, {o}u, {n}u}},"
              for s, o, n in zip(consts, offsets, sizes)]
    lines.append("};")
    math_h = any(C.needs_math_h(s["type"], s["default"]) for s in consts)
    return Section(lines, [f"{p}_spec_constants", f"{p}_spec_map", f"{len(consts)}u", f"&{p}_spec_defaults",
                           f"{at}u"], math_h)


def _needs(p: str, r: dict[str, Any]) -> Section:
    need = requirements(r)
    lines = [f"/* not mapped to a Vulkan feature; check by hand: {', '.join(need.unmapped_capabilities)} */"
             ] if need.unmapped_capabilities else []
    fields: list[str] = []
    for what, names in (("device_extensions", need.extensions), ("features", need.features)):
        lines += _strings(f"{p}_{what}", names)
        fields += [f"{p}_{what}" if names else "NULL", f"{len(names)}u"]
    fields.append(f"0x{need.subgroup_operations:x}u")
    for what, names in (("capabilities", r["capabilities"]), ("spirv_extensions", r["extensions"])):
        lines += _strings(f"{p}_{what}", names)
        fields += [f"{p}_{what}" if names else "NULL", f"{len(names)}u"]
    return Section(lines, fields)


def _strings(name: str, items: Any) -> list[str]:
    if not items:
        return []
    return [f"COOPDSL_UNUSED static const char *const {name}[{len(items)}] = {{"
            + ", ".join(C.string(s) for s in items) + "};"]


def _layout_struct(name: str, members: list[tuple[str, str, int, int]], size: int | None = None) -> list[str]:
    """A C struct whose members sit at the given byte offsets (explicit padding, named apart from the members), of
    ``size`` bytes when given (padding at the end: a push-constant block's size is rounded to its alignment), with
    a layout check."""
    idents = C.unique([m[0] for m in members], C.identifier, f"members of {name}")
    taken = set(idents)

    def pad(at: int, n: int) -> str:
        ident = f"_pad{at}"
        while ident in taken:   # (a member of that name: the padding takes another)
            ident = "_" + ident
        return f"    uint8_t {ident}[{n}];"

    lines, at = [f"typedef struct {name} {{"], 0
    for ident, (_, type_name, offset, n) in zip(idents, members):
        if offset > at:
            lines.append(pad(at, offset - at))
        ctype, suffix = C.c_member(type_name, n)
        lines.append(f"    {ctype} {ident}{suffix};")
        at = offset + n
    if size is not None and size > at:
        lines.append(pad(at, size - at))
    lines.append(f"}} {name};")
    checks = " && ".join(f"offsetof({name}, {i}) == {m[2]}" for i, m in zip(idents, members))
    if size is not None:
        checks += f" && sizeof({name}) == {size}"
    lines.append(f"typedef char {name}_layout_check[({checks}) ? 1 : -1];")
    return lines


def _index(index: str, artifacts: list[Artifact]) -> str:
    name = C.identifier(index)
    count = f"{name.upper()}_KERNEL_COUNT"   # (as for a kernel's macros: '1k.h' gives _1k_kernels, _1K_KERNEL_COUNT)
    entries = ", ".join(f"&{C.identifier(a.name)}_info" for a in artifacts)
    return (f"#define {count} {len(artifacts)}u\n"
            f"COOPDSL_UNUSED static const coopdsl_kernel_info *const {name}_kernels[{count}] = {{{entries}}};\n")
