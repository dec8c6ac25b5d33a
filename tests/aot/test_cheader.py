"""Generated C/C++ headers compile as C99 and C++17 and hold exactly the module and its reflection."""

from __future__ import annotations

import dataclasses
import runpy
import struct
from pathlib import Path

import pytest

from coopdsl.aot import InputError, compile_artifact, render_header, requirements
from coopdsl.aot.cspell import value

from .ctools import build_and_run, syntax_check

HERE = Path(__file__).resolve().parent
KERNELS = runpy.run_path(str(HERE / "sample_kernels.py"))
GEMM = runpy.run_path(str(HERE.parents[1] / "examples" / "gemm_khr.py"))["gemm"]
PACK = {"u32": "<I", "i32": "<i", "i64": "<q", "f32": "<f", "f16": "<e", "bool": "<I"}

# Prints every table of every kernel in the header's index, and writes each module's words to a file.
DUMP = r"""
#include <stdio.h>
#include <string.h>
#include "all.h"

static void list(const char *what, const char *const *items, uint32_t n) {
    uint32_t i;
    printf("%s", what);
    for (i = 0; i < n; ++i) printf(" %s", items[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    uint32_t k, i, j;
    rich_spec typed = rich_spec_defaults;
    (void)argc;
    printf("typed WG %u ON %u\n", (unsigned)typed.WG, (unsigned)typed.ON);
    for (k = 0; k < ALL_KERNEL_COUNT; ++k) {
        const coopdsl_kernel_info *info = all_kernels[k];
        char path[512];
        FILE *f;
        sprintf(path, "%s/%s.spv", argv[1], info->name);
        f = fopen(path, "wb");
        fwrite(info->code, 1, info->code_size, f);
        fclose(f);
        printf("kernel %s %s %s %u\n", info->name, info->entry_point, info->target_env, (unsigned)info->api_version);
        printf("wg %u %u %u ids %d %d %d subgroup %u\n", (unsigned)info->workgroup_size[0],
               (unsigned)info->workgroup_size[1], (unsigned)info->workgroup_size[2],
               (int)info->workgroup_size_spec_ids[0], (int)info->workgroup_size_spec_ids[1],
               (int)info->workgroup_size_spec_ids[2], (unsigned)info->required_subgroup_size);
        for (i = 0; i < info->binding_count; ++i) {
            const coopdsl_binding *b = &info->bindings[i];
            printf("binding %s %u %u %u %s %u %u\n", b->name, (unsigned)b->set, (unsigned)b->binding,
                   (unsigned)b->descriptor_type, b->element_type, (unsigned)b->components, (unsigned)b->readonly);
        }
        printf("push %u\n", (unsigned)info->push_constant_size);
        for (i = 0; i < info->push_member_count; ++i) {
            const coopdsl_push_member *m = &info->push_members[i];
            printf("member %s %u %u %s\n", m->name, (unsigned)m->offset, (unsigned)m->size, m->type);
        }
        for (i = 0; i < info->spec_constant_count; ++i) {
            const coopdsl_spec_constant *s = &info->spec_constants[i];
            const coopdsl_spec_map_entry *e = &info->spec_map[i];
            const unsigned char *bytes = (const unsigned char *)info->spec_defaults + s->offset;
            printf("spec %s %u %s %u", s->name, (unsigned)s->id, s->type, (unsigned)s->size);
            printf(" map %u %u %u =", (unsigned)e->constantID, (unsigned)e->offset, (unsigned)e->size);
            for (j = 0; j < s->size; ++j) printf("%02x", bytes[j]);
            printf("\n");
        }
        printf("specdata %u\n", (unsigned)info->spec_data_size);
        list("extensions", info->device_extensions, info->device_extension_count);
        list("features", info->features, info->feature_count);
        printf("subgroup %u\n", (unsigned)info->subgroup_operations);
        list("capabilities", info->capabilities, info->capability_count);
        list("spirv_extensions", info->spirv_extensions, info->spirv_extension_count);
    }
    return 0;
}
"""


def _expected(a) -> list[str]:
    r, need = a.reflection, requirements(a.reflection)
    api = {"vulkan1.3": (1 << 22) | (3 << 12)}[a.target_env]
    out = [f"kernel {a.name} {r['entry_point']} {a.target_env} {api}",
           "wg {} {} {} ids {} {} {} subgroup {}".format(
               *r["workgroup_size"], *(-1 if i is None else i for i in r["workgroup_size_spec_ids"]),
               r["subgroup_size"] or 0)]
    out += [f"binding {b['name']} {b['set']} {b['binding']} {7 if b['kind'] == 'storage_buffer' else 6} "
            f"{b['element_type']} {b['components']} {int(b['readonly'])}" for b in r["bindings"]]
    out.append(f"push {r['push_constants']['size']}")
    out += [f"member {m['name']} {m['offset']} {m['size']} {m['type']}" for m in r["push_constants"]["members"]]
    offsets, size = _spec_offsets(r["spec_constants"])
    for s in r["spec_constants"]:
        raw = struct.pack(PACK[s["type"]], s["default"])
        out.append(f"spec {s['name']} {s['id']} {s['type']} {len(raw)} map {s['id']} {offsets[s['name']]} "
                   f"{len(raw)} ={raw.hex()}")
    out.append(f"specdata {size}")
    out += [" ".join(["extensions", *need.extensions]), " ".join(["features", *need.features]),
            f"subgroup {need.subgroup_operations}", " ".join(["capabilities", *r["capabilities"]]),
            " ".join(["spirv_extensions", *r["extensions"]])]
    return out


def _spec_offsets(consts: list[dict]) -> tuple[dict, int]:
    """Offsets as the header lays the spec data out: largest first, declaration order among equals."""
    sizes = {s["name"]: len(struct.pack(PACK[s["type"]], 0)) for s in consts}
    at, offsets = 0, {}
    for s in sorted(consts, key=lambda s: -sizes[s["name"]]):
        offsets[s["name"]], at = at, at + sizes[s["name"]]
    return offsets, at


@pytest.fixture(scope="module")
def artifacts():
    return [compile_artifact(KERNELS["rich"], source="sample_kernels.py"),
            compile_artifact(KERNELS["bare"], "bare_u32", source="sample_kernels.py"),
            compile_artifact(GEMM, source="examples/gemm_khr.py", spec={"K": 128})]


@pytest.mark.parametrize("lang", ["c99", "c++17"])
def test_header_tables_match_the_reflection(artifacts, tmp_path, lang):
    (tmp_path / "all.h").write_text(render_header(artifacts, "all", index="all"))
    out = build_and_run(DUMP, tmp_path, tmp_path, lang, str(tmp_path)).splitlines()
    assert out[0] == "typed WG 32 ON 1"
    assert out[2].endswith(" subgroup 32") and out[2 + len(_expected(artifacts[0]))].endswith(" subgroup 0")
    expected = [line for a in artifacts for line in _expected(a)]
    assert out[1:] == expected
    for a in artifacts:
        assert (tmp_path / f"{a.name}.spv").read_bytes() == a.binary


@pytest.mark.parametrize("lang", ["c99", "c++17"])
def test_emitted_headers_compile_alone_and_together(artifacts, tmp_path, lang):
    for a in artifacts:
        (tmp_path / f"{a.name}.h").write_text(render_header([a], a.name))
        syntax_check(tmp_path / f"{a.name}.h", lang)
    both = tmp_path / "both.h"
    both.write_text('#include "rich.h"\n#include "bare_u32.h"\n#include "gemm.h"\n#include "rich.h"\n')
    syntax_check(both, lang)


def test_gemm_header_names_what_the_device_must_enable(artifacts):
    text = render_header([artifacts[2]], "gemm")
    assert '{"VK_KHR_cooperative_matrix"}' in text
    assert '{"cooperativeMatrix", "shaderFloat16", "storageBuffer16BitAccess", "vulkanMemoryModel"}' in text
    assert "#define GEMM_SPEC_K_ID 2u" in text
    assert "static const gemm_spec gemm_spec_defaults = {64u, 64u, 128u};" in text


def test_push_struct_mirrors_the_block(artifacts):
    text = render_header([artifacts[0]], "rich")
    block = text[text.index("typedef struct rich_push {"):text.index("} rich_push;")]
    assert block.splitlines()[1:] == ["    float p_scale;", "    uint32_t p_n;", "    uint64_t p_src;",
                                      "    float shift[2];", "    uint16_t bias;", "    uint8_t _pad26[6];"]
    # padded to the block's size (rounded to its alignment), which the layout check also asserts
    assert "#define RICH_PUSH_CONSTANT_SIZE 32u" in text and "sizeof(rich_push) == 32) ? 1 : -1];" in text


def test_literals():
    assert value("i32", -2147483648) == "(-2147483647 - 1)"
    assert value("i64", -(1 << 63)) == "(INT64_C(-9223372036854775807) - 1)"
    assert value("u64", 1 << 40) == "UINT64_C(1099511627776)"
    assert value("f32", 0.1) == "0x1.99999a0000000p-4f"
    assert value("f64", 0.1) == "0x1.999999999999ap-4"
    assert value("f32", float("inf")) == "HUGE_VALF"
    assert value("f16", 1.5) == "0x3e00u"
    assert value("bf16", 1.5) == "0x3fc0u"
    assert value("bool", False) == "0u"
    with pytest.raises(InputError, match="does not fit an f32"):
        value("f32", 1e300)


@pytest.mark.parametrize("lang", ["c99", "c++17"])
def test_infinite_spec_default_brings_math_h(artifacts, tmp_path, lang):
    r = dict(artifacts[1].reflection, spec_constants=[{"id": 0, "name": "LIMIT", "type": "f32", "default": -1e999}])
    a = dataclasses.replace(artifacts[1], reflection=r)
    text = render_header([a], "inf")
    assert "#include <math.h>" in text and "bare_u32_spec_defaults = {(-HUGE_VALF)};" in text
    (tmp_path / "inf.h").write_text(text)
    syntax_check(tmp_path / "inf.h", lang)


def test_names_that_collide_in_c_are_an_error(artifacts):
    twin = compile_artifact(KERNELS["bare"], "bare.u32")
    with pytest.raises(InputError, match="'bare_u32' and 'bare.u32' both become the C name bare_u32"):
        render_header([artifacts[1], twin], "x")


def test_a_binding_named_count_is_refused_and_a_member_named_like_padding_is_kept_apart(tmp_path):
    # a binding 'count' would be X_BINDING_COUNT, the header's number of bindings
    with pytest.raises(InputError, match="bindings: 'count' becomes the C name NAMED_COUNT_BINDING_COUNT, which the "
                                         "header uses for the number of bindings; rename it"):
        render_header([compile_artifact(KERNELS["named_count"], source="sample_kernels.py")], "named_count")
    # a push constant named _pad4: the padding before v (at 4) is named apart from it, and the header compiles
    text = render_header([compile_artifact(KERNELS["named_pad"], source="sample_kernels.py")], "named_pad")
    block = text[text.index("typedef struct named_pad_push {"):text.index("} named_pad_push;")]
    assert block.splitlines()[1:] == ["    uint32_t _pad4;", "    uint8_t __pad4[12];", "    float v[4];"]
    (tmp_path / "named_pad.h").write_text(text)
    for lang in ("c99", "c++17"):
        syntax_check(tmp_path / "named_pad.h", lang)


@pytest.mark.parametrize("lang", ["c99", "c++17"])
def test_macros_and_variables_spell_an_output_name_alike(tmp_path, lang):
    # macros dropped a name's leading '_' (so '1k', spelt _1k for variables, gave the macro 1K_..., no identifier)
    text = render_header([compile_artifact(KERNELS["bare"], "_1k", source="sample_kernels.py")], "1k", index="1k")
    for line in ("#define _1K_BINDING_COUNT 1u", "#define _1K_BINDING_OUT 0u", "#define _1K_KERNEL_COUNT 1u",
                 "COOPDSL_UNUSED static const coopdsl_kernel_info *const _1k_kernels[_1K_KERNEL_COUNT] = {&_1k_info};"):
        assert line + "\n" in text
    assert "static const uint32_t _1k_spv[_1K_SPV_WORDS] = {" in text
    (tmp_path / "1k.h").write_text(text)
    syntax_check(tmp_path / "1k.h", lang)


def test_an_output_named_like_a_shared_type_is_refused():
    clash = compile_artifact(KERNELS["bare"], "coopdsl_kernel", source="sample_kernels.py")
    with pytest.raises(InputError) as info:
        render_header([clash], "coopdsl_kernel")
    assert str(info.value) == ("output 'coopdsl_kernel' would declare the C name coopdsl_kernel_info, which is the "
                               "header's own type coopdsl_kernel_info (every coopdsl header declares it); rename the "
                               "output")
