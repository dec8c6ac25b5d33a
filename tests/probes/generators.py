"""The probe generators: a valid program per builtin (and method, and declaration), and its wrong variants.

Each builtin call is a format string whose ``{0}``, ``{1}``... are its argument positions (positional,
keyword or receiver), with the valid expression for each; a variant replaces one position by one of
:data:`WRONG`.  The kernel's prelude (:data:`KERNEL`) names the values the expressions use.
"""

from __future__ import annotations

from collections.abc import Iterator

from .harness import MARK, Probe, dedent

HEADER = '''
import coopdsl as cd
from coopdsl import *


@cd.struct
class Pair:
    a: f32
    b: f32


@cd.func
def helper(x):
    return x  # ALSO


@cd.func
def elt(row, col, e):
    return e * 2.0


@cd.kernel(workgroup_size=(32, 1, 1))
def other(o: cd.Buffer[f32]):
    o[0] = 1.0

'''

KERNEL = '''
@cd.kernel(workgroup_size=(32, 1, 1), subgroup_size=32)
def k(o: cd.Buffer[f32], u: cd.Buffer[u32], h: cd.Buffer[f16], w: cd.Buffer[i32], p: cd.Buffer[Pair]):
    i = cd.global_invocation_id.x
    x = o[i]
    y = o[i + 1]
    ui = u[i]
    si = w[i]
    b = x > y
    bv = vec2[boolean](b, b)
    v2 = vec2[f32](x, y)
    v3 = vec3[f32](x, y, x)
    a = MatA[f16, 16, 16].splat(1.0)
    bm = MatB[f16, 16, 16].splat(1.0)
    c = Acc[f32, 16, 16].splat(0.0)
    c32 = Acc[f16, 32, 16].splat(0.0)
    arr = cd.array(f32, 4)
    arr16 = cd.array(f16, 16)
    L = cd.tensor_layout(2).dimension(16, 16)
    V = cd.tensor_view(2)
    {line}  {mark}
    o[i] = y
'''

# things that are wrong in most positions (and right in a few: the valid outcome is then "ok")
WRONG = {
    "type": "f32",
    "vec_type": "vec4[f32]",
    "mat_type": "Acc[f32, 16, 16]",
    "family": "Acc",
    "enum": "cd.Row",
    "layout_enum": "cd.ColumnMajor",
    "scope": "cd.Workgroup",
    "builtin": "cd.exp",
    "func": "helper",
    "struct_type": "Pair",
    "tuple": "(1, 2)",
    "none": "None",
    "string": "'x'",
    "kernel": "other",
    "layout": "L",
    "view": "V",
    "mat_a": "a",
    "acc_shape": "Acc[f32, 16, 8].splat(0.0)",
    "float": "1.5",
    "huge": "2**40",
    "negative": "-3",
    "zero": "0",
    "bool_rt": "b",
    "u32_rt": "ui",
    "f32_rt": "x",
    "i32_rt": "si",
    "vec2": "v2",
    "vec3": "v3",
    "bvec": "bv",
    "buffer": "o",
    "array": "arr",
    "list": "[1, 2]",
    "true": "True",
    "module": "cd",
    "lambda": "(lambda q: q)",
    "dict": "{}",
    "inf": "float('inf')",
    "complex": "1j",
    "ellipsis": "...",
}

UNARY_FLOAT = ("abs acos asin atan ceil cos cosh exp exp2 floor fract inversesqrt log log2 round round_even "
               "sign sin sinh sqrt tan tanh trunc isinf isnan erf").split()
BINARY_FLOAT = "atan2 max min mod pow step distance".split()
TERNARY_FLOAT = "clamp fma mix smoothstep".split()
SUBGROUP_NUM = [f"subgroup_{p}{op}" for p in ("", "inclusive_", "exclusive_") for op in ("add", "mul", "min", "max")]
SUBGROUP_BITS = [f"subgroup_{p}{op}" for p in ("", "inclusive_", "exclusive_") for op in ("and", "or", "xor")]

# name -> (the line, with {0}.. for its argument positions; the valid argument for each)
CALLS: dict[str, tuple[str, tuple[str, ...]]] = {}
for _n in UNARY_FLOAT:
    CALLS[f"cd.{_n}"] = (f"r = cd.{_n}({{0}})", ("x",))
for _n in BINARY_FLOAT:
    CALLS[f"cd.{_n}"] = (f"r = cd.{_n}({{0}}, {{1}})", ("x", "y"))
for _n in TERNARY_FLOAT:
    CALLS[f"cd.{_n}"] = (f"r = cd.{_n}({{0}}, {{1}}, {{2}})", ("x", "y", "x"))
for _n in SUBGROUP_NUM:
    CALLS[f"cd.{_n}"] = (f"r = cd.{_n}({{0}})", ("x",))
for _n in SUBGROUP_BITS:
    CALLS[f"cd.{_n}"] = (f"r = cd.{_n}({{0}})", ("ui",))
CALLS["cd.subgroup_quad_broadcast"] = ("r = cd.subgroup_quad_broadcast({0}, {1})", ("x", "2"))
for _n in ("horizontal", "vertical", "diagonal"):
    CALLS[f"cd.subgroup_quad_swap_{_n}"] = (f"r = cd.subgroup_quad_swap_{_n}({{0}})", ("x",))
for _op, _v in (("add", "x"), ("mul", "x"), ("min", "x"), ("max", "x"), ("and", "ui"), ("or", "ui"), ("xor", "ui")):
    CALLS[f"cd.subgroup_clustered_{_op}"] = (f"r = cd.subgroup_clustered_{_op}({{0}}, {{1}})", (_v, "4"))
for _n in ("atomic_add", "atomic_and", "atomic_exchange", "atomic_max", "atomic_min", "atomic_or", "atomic_sub",
           "atomic_xor"):
    CALLS[f"cd.{_n}"] = (f"r = cd.{_n}({{0}}, {{1}}, {{2}}, scope={{3}}, semantics={{4}})",
                         ("u", "i", "ui", "cd.Device", "'AcquireRelease'"))
CALLS.update({
    "cd.length": ("r = cd.length({0})", ("v2",)),
    "cd.normalize": ("r = cd.normalize({0})", ("v2",)),
    "cd.cross": ("r = cd.cross({0}, {1})", ("v3", "v3")),
    "cd.dot": ("r = cd.dot({0}, {1})", ("v2", "v2")),
    "cd.dot4x8": ("r = cd.dot4x8({0}, {1})", ("ui", "ui")),
    "cd.find_lsb": ("r = cd.find_lsb({0})", ("ui",)),
    "cd.find_msb": ("r = cd.find_msb({0})", ("ui",)),
    "cd.bit_count": ("r = cd.bit_count({0})", ("ui",)),
    "cd.bit_reverse": ("r = cd.bit_reverse({0})", ("ui",)),
    "cd.bitfield_extract": ("r = cd.bitfield_extract({0}, {1}, {2})", ("ui", "1", "4")),
    "cd.bitfield_insert": ("r = cd.bitfield_insert({0}, {1}, {2}, {3})", ("ui", "ui", "1", "4")),
    "cd.pack_half_2x16": ("r = cd.pack_half_2x16({0})", ("v2",)),
    "cd.unpack_half_2x16": ("r = cd.unpack_half_2x16({0})", ("ui",)),
    "cd.pack_unorm_4x8": ("r = cd.pack_unorm_4x8({0})", ("vec4[f32](x, y, x, y)",)),
    "cd.unpack_unorm_4x8": ("r = cd.unpack_unorm_4x8({0})", ("ui",)),
    "cd.pack_snorm_4x8": ("r = cd.pack_snorm_4x8({0})", ("vec4[f32](x, y, x, y)",)),
    "cd.unpack_snorm_4x8": ("r = cd.unpack_snorm_4x8({0})", ("ui",)),
    "cd.pack_unorm_2x16": ("r = cd.pack_unorm_2x16({0})", ("v2",)),
    "cd.unpack_unorm_2x16": ("r = cd.unpack_unorm_2x16({0})", ("ui",)),
    "cd.pack_snorm_2x16": ("r = cd.pack_snorm_2x16({0})", ("v2",)),
    "cd.unpack_snorm_2x16": ("r = cd.unpack_snorm_2x16({0})", ("ui",)),
    "cd.all": ("r = cd.all({0})", ("bv",)),
    "cd.any": ("r = cd.any({0})", ("bv",)),
    "cd.array": ("r = cd.array({0}, {1}, {2})", ("f32", "4", "x")),
    "cd.assume_uniform": ("r = cd.assume_uniform({0})", ("ui",)),
    "cd.atomic_compare_exchange": ("r = cd.atomic_compare_exchange({0}, {1}, {2}, {3}, scope={4}, semantics={5})",
                                   ("u", "i", "ui", "ui", "cd.Device", "'AcquireRelease'")),
    "cd.atomic_load": ("r = cd.atomic_load({0}, {1}, scope={2}, semantics={3})", ("u", "i", "cd.Device", "'Acquire'")),
    "cd.atomic_store": ("cd.atomic_store({0}, {1}, {2}, scope={3}, semantics={4})",
                        ("u", "i", "ui", "cd.Device", "'Release'")),
    "cd.barrier": ("cd.barrier()", ()),
    "cd.bitcast": ("r = cd.bitcast({0}, {1})", ("x", "u32")),
    "cd.bitcast_array": ("r = cd.bitcast_array({0}, {1})", ("arr16", "u32")),
    "cd.control_barrier": ("cd.control_barrier({0}, {1}, {2})",
                           ("cd.Workgroup", "cd.Workgroup", "('AcquireRelease', 'WorkgroupMemory')")),
    "cd.memory_barrier": ("cd.memory_barrier({0}, {1})", ("cd.Device", "('AcquireRelease', 'UniformMemory')")),
    "cd.load_element": ("r = cd.load_element({0}, {1}, aligned={2}, nontemporal={3}, volatile={4})",
                        ("o", "i", "4", "True", "False")),
    "cd.store_element": ("cd.store_element({0}, {1}, {2}, aligned={3}, nontemporal={4})",
                         ("o", "i", "x", "4", "True")),
    "cd.local_array": ("r = cd.local_array({0}, {1})", ("f32", "64")),
    "cd.private_array": ("r = cd.private_array({0}, {1})", ("f32", "64")),
    "cd.shared": ("r = cd.shared({0}, {1})", ("f32", "64")),
    "cd.muladd": ("r = cd.muladd({0}, {1}, {2}, saturate={3})", ("a", "bm", "c", "False")),
    "cd.partial": ("r = cd.partial({0}, x={1})", ("helper", "x")),
    "cd.range": ("for t in cd.range({0}, {1}, {2}, unroll={3}): o[t] = x", ("0", "4", "1", "2")),
    "cd.static_range": ("for t in cd.static_range({0}, {1}, {2}): o[t] = x", ("0", "4", "1")),
    "range": ("for t in range({0}, {1}, {2}): o[t] = x", ("0", "ui", "1")),
    "cd.select": ("r = cd.select({0}, {1}, {2})", ("b", "x", "y")),
    "cd.sub_array": ("r = cd.sub_array({0}, {1}, {2})", ("arr", "0", "2")),
    "cd.subgroup_all": ("r = cd.subgroup_all({0})", ("b",)),
    "cd.subgroup_any": ("r = cd.subgroup_any({0})", ("b",)),
    "cd.subgroup_ballot": ("r = cd.subgroup_ballot({0})", ("b",)),
    "cd.subgroup_ballot_bit_count": ("r = cd.subgroup_ballot_bit_count({0})", ("cd.subgroup_ballot(b)",)),
    "cd.subgroup_ballot_inclusive_bit_count": ("r = cd.subgroup_ballot_inclusive_bit_count({0})",
                                               ("cd.subgroup_ballot(b)",)),
    "cd.subgroup_ballot_exclusive_bit_count": ("r = cd.subgroup_ballot_exclusive_bit_count({0})",
                                               ("cd.subgroup_ballot(b)",)),
    "cd.subgroup_ballot_find_lsb": ("r = cd.subgroup_ballot_find_lsb({0})", ("cd.subgroup_ballot(b)",)),
    "cd.subgroup_ballot_find_msb": ("r = cd.subgroup_ballot_find_msb({0})", ("cd.subgroup_ballot(b)",)),
    "cd.subgroup_inverse_ballot": ("r = cd.subgroup_inverse_ballot({0})", ("cd.subgroup_ballot(b)",)),
    "cd.subgroup_ballot_bit_extract": ("r = cd.subgroup_ballot_bit_extract({0}, {1})",
                                       ("cd.subgroup_ballot(b)", "ui")),
    "cd.subgroup_all_equal": ("r = cd.subgroup_all_equal({0})", ("x",)),
    "cd.subgroup_broadcast": ("r = cd.subgroup_broadcast({0}, {1})", ("x", "0")),
    "cd.subgroup_broadcast_first": ("r = cd.subgroup_broadcast_first({0})", ("x",)),
    "cd.subgroup_elect": ("r = cd.subgroup_elect()", ()),
    "cd.subgroup_shuffle": ("r = cd.subgroup_shuffle({0}, {1})", ("x", "ui")),
    "cd.subgroup_shuffle_down": ("r = cd.subgroup_shuffle_down({0}, {1})", ("x", "1")),
    "cd.subgroup_shuffle_up": ("r = cd.subgroup_shuffle_up({0}, {1})", ("x", "1")),
    "cd.subgroup_shuffle_xor": ("r = cd.subgroup_shuffle_xor({0}, {1})", ("x", "1")),
    "cd.tensor_layout": ("r = cd.tensor_layout({0}, clamp={1})", ("2", "cd.ClampConstant")),
    "cd.tensor_view": ("r = cd.tensor_view({0}, has_dims={1}, perm={2})", ("2", "True", "(1, 0)")),
    # scalar and vector constructors, conversions
    "f32()": ("r = f32({0})", ("ui",)),
    "u32()": ("r = u32({0})", ("x",)),
    "f16()": ("r = f16({0})", ("x",)),
    "i32()": ("r = i32({0})", ("ui",)),
    "vec2()": ("r = vec2[f32]({0}, {1})", ("x", "1.0")),
    "array[]()": ("r = cd.array[f32, 2]({0}, {1})", ("x", "1.0")),
    # methods of type objects (the receiver is a position too)
    "MatA.splat": ("r = ({0}).splat({1})", ("MatA[f16, 16, 16]", "1.0")),
    "Acc.length": ("r = ({0}).length()", ("Acc[f32, 16, 16]",)),
    "MatA.load": ("r = ({0}).load({1}, {2}, stride={3}, layout={4}, aligned={5})",
                  ("MatA[f16, 16, 16]", "h", "0", "16", "cd.RowMajor", "16")),
    "MatA.load_tensor": ("r = ({0}).load_tensor({1}, {2}, {3}, view={4})",
                         ("MatA[f16, 16, 16]", "h", "0", "L", "V")),
    "MatA.load_tensor_fill": ("r = MatA[f16, 16, 16].load_tensor(h, 0, L, fill={0})", ("1.0",)),
    "MatA.load_tensor_decode": ("r = MatA[f16, 16, 16].load_tensor(p, 0, L, decode={0})", ("dec",)),
    "MatA.from_rows": ("r = ({0}).from_rows({1})", ("MatA[f16, 32, 16]", "arr16")),
    "MatB.from_cols": ("r = ({0}).from_cols({1})", ("MatB[f16, 16, 16]", "arr16")),
    # methods of values
    "Acc-value.store": ("({0}).store({1}, {2}, stride={3}, layout={4}, available={5})",
                        ("c", "o", "0", "16", "cd.ColumnMajor", "cd.Device")),
    "Acc-value.length": ("r = ({0}).length()", ("c",)),
    "Acc-value.map": ("r = ({0}).map({1})", ("c", "elt")),
    "Acc-value.map_extra": ("r = c.map(elt2, {0})", ("o[0]",)),   # (uniform: x = o[i] differs per invocation)
    "Acc-value.reduce": ("r = ({0}).reduce({1}, {2}, into={3})", ("c", "cd.Row", "cd.reduce_add", "Acc[f32, 16, 16]")),
    "Acc-value.store_tensor": ("({0}).store_tensor({1}, {2}, {3}, view={4})", ("c", "o", "0", "L", "V")),
    "Acc-value.to_rows": ("r = ({0}).to_rows({1})", ("c32", "u32")),
    "MatB-value.to_cols": ("r = ({0}).to_cols({1})", ("bm", "f16")),
    "Acc-value.transpose": ("r = ({0}).transpose(into={1})", ("c", "MatB[f32, 16, 16]")),
    "Layout.block_size": ("r = ({0}).block_size({1}, {2})", ("cd.tensor_layout(2)", "1", "32")),
    "Layout.clamp_value": ("r = cd.tensor_layout(2, clamp=cd.ClampConstant).clamp_value({0}, {1})", ("1.0", "f16")),
    "Layout.dimension": ("r = ({0}).dimension({1}, {2})", ("cd.tensor_layout(2)", "16", "ui")),
    "Layout.slice": ("r = ({0}).slice({1}, {2}, {3}, {4})", ("L", "0", "16", "ui", "16")),
    "Layout.stride": ("r = ({0}).stride({1}, {2})", ("L", "16", "1")),
    "View.clip": ("r = ({0}).clip({1}, {2}, {3}, {4})", ("V", "0", "16", "ui", "16")),
    "View.dimension": ("r = ({0}).dimension({1}, {2})", ("cd.tensor_view(2, has_dims=True)", "16", "ui")),
    "View.stride": ("r = ({0}).stride({1}, {2})", ("cd.tensor_view(2, has_dims=True).dimension(16, 16)", "16", "1")),
    # operators
    "op+": ("r = {0} + {1}", ("x", "y")),
    "op*mat": ("r = {0} * {1}", ("c", "2.0")),
    "op//": ("r = {0} // {1}", ("ui", "2")),
    "op<<": ("r = {0} << {1}", ("ui", "2")),
    "op-unary": ("r = -{0}", ("x",)),
    "op~": ("r = ~{0}", ("ui",)),
    "op<": ("r = {0} < {1}", ("x", "y")),
    "op-not": ("r = not {0}", ("b",)),
    "op-and": ("r = {0} and {1}", ("b", "b")),
    "op-ifexp": ("r = {0} if {1} else {2}", ("x", "b", "y")),
    "subscript": ("r = ({0})[{1}]", ("o", "i")),
    "store-subscript": ("({0})[{1}] = {2}", ("o", "i", "x")),
    "vec-swizzle": ("r = ({0}).xy", ("v3",)),
    "len": ("r = len({0})", ("arr",)),
    "aug+=": ("x += {0}", ("y",)),
    "if": ("if {0}: o[i] = y", ("b",)),
    "while": ("while {0}: break", ("b",)),
    "user-func": ("r = helper({0})", ("x",)),
    "py-int": ("r = u32(int({0}))", ("4",)),
    "py-float": ("r = f32(float({0}))", ("4",)),
    "py-abs": ("r = abs({0})", ("x",)),
    "py-max": ("r = max({0}, {1})", ("x", "y")),
})

EXTRA_HEADER = '''
@cd.func
def elt2(row, col, e, s):
    return e * s  # ALSO


@cd.func
def dec(bl, bc, cib):
    return f16(bl.a)

'''


def program(line: str) -> str:
    return dedent(HEADER) + dedent(EXTRA_HEADER) + "\n" + dedent(KERNEL).replace("{line}", line).replace(
        "{mark}", MARK)


def builtin_probes(names: list[str] | None = None, wrong: list[str] | None = None) -> Iterator[Probe]:
    """The valid program of each builtin in CALLS, then each argument position replaced by each WRONG value."""
    for name in names or sorted(CALLS):
        fmt, valid = CALLS[name]
        yield Probe(f"{name} valid", program(fmt.format(*valid)), valid=True)
        for pos in range(len(valid)):
            for wname in wrong or WRONG:
                if WRONG[wname] == valid[pos]:
                    continue
                args = list(valid)
                args[pos] = WRONG[wname]
                yield Probe(f"{name} arg{pos}={wname}", program(fmt.format(*args)))


GROUPS = {
    "builtins": builtin_probes,
}


# -- declarations: the kernel decorator, parameter annotations, struct members ---------------------------
DECL_WRONG = {**WRONG, "struct_value": "Pair", "buffer_of_type": "cd.Buffer[f32]", "buffer_bare": "cd.Buffer",
              "spec_bare": "cd.Spec", "ptr_bare": "cd.Ptr", "spec_f32": "cd.Spec[f32]", "huge_tuple": "(2**31, 2, 1)",
              "zero_tuple": "(0, 1, 1)", "long_tuple": "(1, 1, 1, 1)", "float_tuple": "(32.0, 1, 1)",
              "overflow": "(65536, 65536, 1)", "string_tuple": "('a', 1, 1)", "bad_env": "'vulkan9'"}
DECL_WRONG = {k: v for k, v in DECL_WRONG.items() if v not in ("L", "V", "a", "b", "bv", "v2", "v3", "x", "ui", "si",
                                                                 "arr", "o", "Acc[f32, 16, 8].splat(0.0)")}

DECLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "kernel-decorator": ('''
        @cd.kernel(workgroup_size={0}, target_env={1}, subgroup_size={2}, entry_point={3})  {mark}
        def k(o: cd.Buffer[f32]):  {also}
            o[cd.global_invocation_id.x] = 1.0
        ''', ("(32, 1, 1)", "'vulkan1.3'", "32", "'main'")),
    "kernel-parameter": ('''
        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(
            o: {0},  {mark}
            q: cd.Buffer[f32],
        ):
            q[cd.global_invocation_id.x] = 1.0
        ''', ("cd.Buffer[f32]",)),
    "buffer-element": ('''
        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(
            o: cd.Buffer[{0}],  {mark}
            q: cd.Buffer[f32],
        ):
            q[cd.global_invocation_id.x] = 1.0
        ''', ("f32",)),
    "spec-parameter": ('''
        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(
            n: cd.Spec[{0}] = {1},  {mark}
            q: cd.Buffer[f32] = None,
        ):
            q[cd.global_invocation_id.x] = f32(n)
        ''', ("u32", "4")),
    "ptr-parameter": ('''
        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(
            p: cd.Ptr[{0}],  {mark}
            q: cd.Buffer[f32],
        ):
            q[cd.global_invocation_id.x] = 1.0
        ''', ("f32",)),
    "struct-member": ('''
        @cd.struct(layout_rule={1})  {also}
        class S:
            a: {0}  {mark}
            b: f32


        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(p: cd.Buffer[S], q: cd.Buffer[f32]):
            q[cd.global_invocation_id.x] = p[0].b
        ''', ("f32", "'std430'")),
    "func-parameter": ('''
        @cd.func
        def g(x: {0}) -> f32:  {mark}
            return f32(x)  {also}


        @cd.kernel(workgroup_size=(32, 1, 1))
        def k(q: cd.Buffer[f32]):
            q[cd.global_invocation_id.x] = g(q[0])  {also}
        ''', ("f32",)),
}


def declaration(template: str) -> str:
    return dedent(HEADER) + "\n" + dedent(template).replace("{mark}", MARK).replace("{also}", "# ALSO")


def declaration_probes(names: list[str] | None = None) -> Iterator[Probe]:
    """The valid declaration of each DECLS entry, then each position replaced by each DECL_WRONG value."""
    for name in names or sorted(DECLS):
        template, valid = DECLS[name]
        fmt = declaration(template).replace("{", "{{").replace("}", "}}")
        for i in range(len(valid)):
            fmt = fmt.replace(f"{{{{{i}}}}}", f"{{{i}}}")
        yield Probe(f"{name} valid", fmt.format(*valid), valid=True)
        for pos in range(len(valid)):
            for wname, wrong in DECL_WRONG.items():
                if wrong == valid[pos]:
                    continue
                args = list(valid)
                args[pos] = wrong
                yield Probe(f"{name} arg{pos}={wname}", fmt.format(*args))


GROUPS["declarations"] = declaration_probes


SEMANTICS = ("Acquire", "Release", "AcquireRelease", "SequentiallyConsistent", "UniformMemory", "WorkgroupMemory",
             "ImageMemory", "OutputMemory", "MakeAvailable", "MakeVisible", "Volatile")


def semantics_probes() -> Iterator[Probe]:
    """Both barriers with no semantics names and every combination of one to three of them."""
    import itertools

    combos = [()] + [c for r in (1, 2, 3) for c in itertools.combinations(SEMANTICS, r)]
    for combo in combos:
        for line in (f"cd.control_barrier(cd.Workgroup, cd.Workgroup, {combo!r})",
                     f"cd.memory_barrier(cd.Device, {combo!r})"):
            yield Probe(line, program(line))


GROUPS["semantics"] = semantics_probes
