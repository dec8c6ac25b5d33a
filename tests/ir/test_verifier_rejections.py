"""A negative test for every rejection branch of the verifier: bad IR built directly, the message asserted.

Each case builds one broken module (no front end involved) and expects the verifier to raise an
InternalCompilerError whose message contains the text given, at the op's location.  The branches are those
of coopdsl/ir/verifier.py and of the op rules in coopdsl/ir/ops/ (the cooperative-matrix rules are the pure
functions the builtins apply at the user's line; a few of their branches only a builtin can reach, tested at
the end through the rule functions themselves).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from coopdsl.errors import InternalCompilerError
from coopdsl.ir import types as T
from coopdsl.ir.attrs import Scope, Semantics
from coopdsl.ir.builder import Emitter
from coopdsl.ir.core import Block, FuncRef, Function, Op, Param, SelectionMerge, Value
from coopdsl.ir.ops import coopmat as km
from coopdsl.ir.ops import coopmat2 as nv2
from coopdsl.ir.ops.coopmat2 import ReduceMode
from coopdsl.ir.verifier import verify

from .helpers import LOC, buffer, kernel_module

SG = 3  # Subgroup scope
A = T.CoopMatType(T.f16, SG, 16, 16, 0)
B = T.CoopMatType(T.f16, SG, 16, 16, 1)
C = T.CoopMatType(T.f32, SG, 16, 16, 2)
SPEC = T.SymDim("spec", (1, "S", "u32", 3))
SSBO = "StorageBuffer"
ATOMIC = {"scope": Scope.Device, "semantics": Semantics()}


class K:
    """The module being broken, an emitter in its entry block, and values to build ops from."""

    def __init__(self) -> None:
        self.m, self.em = kernel_module()

    def c(self, t: T.Type, v=0) -> Value:
        return self.em.const(t, float(v) if T.scalar_of(t).kind == "float" else v)

    def op(self, kind: str, t: T.Type, operands: list, **attrs) -> Op:
        op = self.em.op(kind, t, operands, **attrs)
        assert isinstance(op, Op)
        return op

    def mat(self, t: T.CoopMatType) -> Op:
        return self.op("splat", t, [self.c(t.elem)])

    def vec(self, t: T.Type, n: int) -> Op:
        return self.op("construct", T.VectorType(t, n), [self.c(t)] * n)

    def ptr(self, elem: T.Type = T.f32, storage: str = SSBO) -> Op:
        g = buffer(self.m, f"b{len(self.m.globals)}", elem, len(self.m.globals))
        return self.op("access", T.PointerType(elem, storage), [g, self.c(T.u32), self.c(T.u32)])

    def func(self, ret: T.Type, *params: T.Type) -> FuncRef:
        f = Function(f"f{len(self.m.functions)}", T.FunctionType(ret, params),
                     [Param(p, f"p{i}") for i, p in enumerate(params)], loc=LOC)
        em = Emitter(self.m, f, LOC)
        em.start(em.new_block("entry"))
        em.terminate("unreachable")
        self.m.functions.append(f)
        return FuncRef(f)

    def arr(self, elem: T.Type, n: T.Dim) -> Op:
        t = T.ArrayType(elem, n)
        return self.op("load", t, [self.op("variable", T.PointerType(t, "Function"), [])])

    def layout(self, dim: int = 2) -> Op:
        return self.op("tensor_layout", T.TensorLayoutType(dim, 0), [])

    def view(self, dim: int = 2, has_dims: bool = True) -> Op:
        return self.op("tensor_view", T.TensorViewType(dim, has_dims, tuple(range(dim))), [])

    def raw(self, kind: str, t: T.Type, operands: list, **attrs) -> Op:
        """An op appended as is (for what the builder would rewrite or a test must misplace)."""
        op = Op(kind, t, operands, LOC, **attrs)
        op.block = self.em.block
        self.em.current.ops.append(op)
        return op

    def diamond(self) -> tuple[Block, Block, Block]:
        """entry -> (then | else) -> merge; the emitter ends in the merge block."""
        em = self.em
        t, f, merge = em.new_block("then"), em.new_block("else"), em.new_block("merge")
        em.current.merge = SelectionMerge(merge)
        em.terminate("cond_br", [self.c(T.boolean, True)], [t, f])
        return t, f, merge


def _mul(k: K, a: T.CoopMatType, b: T.CoopMatType, c: T.CoopMatType, **attrs) -> None:
    k.op("coop_muladd", c, [k.mat(a), k.mat(b), k.mat(c)], **({"signed": frozenset(), "saturate": False} | attrs))


def _diamond_use(k: K, phi: bool) -> None:
    t, f, merge = k.diamond()
    k.em.start(t)
    x = k.op("add", T.i32, [k.c(T.i32, 1), k.c(T.i32, 2)])
    k.em.branch(merge)
    k.em.start(f)
    k.em.branch(merge)
    k.em.start(merge)
    if phi:
        k.em.phi(merge, T.i32, [x, x], [t, f])
    else:
        k.op("neg", T.i32, [x])


def _before(k: K) -> None:
    x = k.op("add", T.i32, [k.c(T.i32, 1), k.c(T.i32, 2)])
    y = k.op("neg", T.i32, [x])
    ops = k.em.current.ops
    i, j = ops.index(x), ops.index(y)
    ops[i], ops[j] = y, x


def _phi_mismatch(k: K) -> None:
    t, f, merge = k.diamond()
    for b in (t, f):
        k.em.start(b)
        k.em.branch(merge)
    k.em.start(merge)
    k.em.phi(merge, T.i32, [k.c(T.i32)], [t])


def _phi_type(k: K) -> None:
    t, f, merge = k.diamond()
    for b in (t, f):
        k.em.start(b)
        k.em.branch(merge)
    k.em.start(merge)
    k.em.phi(merge, T.i32, [k.c(T.i32), k.c(T.u32)], [t, f])


def _open_block(k: K) -> None:
    b = k.em.new_block("open")
    k.em.branch(b)
    k.em.start(b)
    k.em.block = None  # (left without a terminator)


def _missing_pred(k: K) -> None:
    b = k.em.new_block("next")
    k.em.branch(b)
    b.preds.clear()
    k.em.start(b)


def _outside(k: K) -> None:
    k.em.branch(Block("elsewhere"))
    k.em.start(k.em.new_block("after"))


def _two_targets(k: K) -> None:
    a, b = k.em.new_block("a"), k.em.new_block("b")
    k.em.terminate("br", targets=[a, b])
    for blk in (a, b):
        k.em.start(blk)
        k.em.terminate("return")
    k.em.start(None)


def _cond_i32(k: K) -> None:
    a, b = k.em.new_block("a"), k.em.new_block("b")
    k.em.terminate("cond_br", [k.c(T.i32)], [a, b])
    for blk in (a, b):
        k.em.start(blk)
        k.em.terminate("return")
    k.em.start(None)


def _foreign_value(k: K) -> None:
    stray = Op("add", T.i32, [k.c(T.i32), k.c(T.i32)], LOC)
    k.op("neg", T.i32, [stray])


def _call(k: K, args: list, ret: T.Type) -> None:
    ref = k.func(T.i32, T.i32)
    k.op("call", ret, args, func=ref.func)


def _setter(k: K, kind: str, base: Value, *values: int, t: T.Type = T.u32) -> Op:
    return k.op(kind, base.type, [base, *(k.c(t, v) for v in values)])


def _stride_rule(k: K) -> None:
    lay = _setter(k, "tensor_layout_dimension", k.layout(), 4, 8)
    _setter(k, "tensor_layout_stride", lay, 4, 1)


def _dimension_after_stride(k: K) -> None:
    lay = _setter(k, "tensor_layout_stride", k.layout(), 8, 1)
    _setter(k, "tensor_layout_dimension", lay, 4, 8)


_BLK = T.StructType("Blk", (("x", T.f32),), (0,))
_BLK_PTR = T.PointerType(_BLK, "PhysicalStorageBuffer")


def _tload(k: K, elem: T.Type = T.f32, result: T.Type = C, fill: T.Type = C, extra: list | None = None,
           storage: str = SSBO) -> None:
    p = k.ptr(elem, storage) if storage == SSBO else k.op("variable", T.PointerType(elem, storage), [])
    k.op("coop_load_tensor", result, [p, k.mat(fill) if isinstance(fill, T.CoopMatType) else k.c(fill),
                                      k.layout(), *(extra or [])])


def _tstore(k: K, layout: Value | None = None, extra: list | None = None) -> None:
    k.op("coop_store_tensor", T.void, [k.ptr(), k.mat(C), layout if layout is not None else k.layout(),
                                       *(extra or [])])


def _qcom_a(k: K, m: T.CoopMatType, arr: tuple, to: bool = False) -> None:
    a = k.arr(*arr)
    if to:
        k.op("coop_to_array", a.type, [k.mat(m)])
    else:
        k.op("coop_from_array", m, [a])


def _bitcast_array(k: K, src: tuple, dst: T.Type) -> None:
    k.op("bitcast_array", dst, [k.arr(*src)])


def _sub(k: K, src: tuple, dst: T.Type, start: Value | int = 0) -> None:
    k.op("sub_array", dst, [k.arr(*src), start if isinstance(start, Value) else k.c(T.i32, start)])


Case = tuple[str, Callable[[K], object], str]
CASES: list[Case] = [
    # -- the verifier's own checks: blocks, operands, attributes, dominance
    ("no terminator", _open_block, "block open of k has no terminator"),
    ("outside block", _outside, "entry branches to a block outside k"),
    ("missing pred", _missing_pred, "entry -> next missing from preds"),
    ("merge outside", lambda k: setattr(k.em.current, "merge", SelectionMerge(Block("far"))),
     "merge of entry is not in k"),
    ("phi preds", _phi_mismatch, "phi in merge does not match its predecessors"),
    ("unknown kind", lambda k: k.raw("frobnicate", T.void, []), "unknown op kind 'frobnicate'"),
    ("operand count", lambda k: k.raw("neg", T.f32, []), "neg takes 1..1 operands, has 0"),
    ("foreign value", _foreign_value, "neg uses a value not defined in its function"),
    ("phi dominance", lambda k: _diamond_use(k, True),
     "phi in merge takes the add of block then from else, which that block does not dominate"),
    ("use before def", _before, "neg uses the add of block entry before it is defined"),
    ("use not dominated", lambda k: _diamond_use(k, False),
     "neg in block merge uses the add of block then, which does not dominate it"),
    ("missing attribute", lambda k: k.op("memory_barrier", T.void, [], mem_scope=Scope.Device),
     "memory_barrier needs attribute 'semantics'"),
    ("mistyped attribute", lambda k: k.op("extract", T.f32, [k.vec(T.f32, 2)], index="0"),
     "extract attribute 'index' must be int, got '0'"),
    ("bool for int attribute", lambda k: k.op("extract", T.f32, [k.vec(T.f32, 2)], index=True),
     "extract attribute 'index' must be int, got True"),
    ("unknown attribute", lambda k: k.op("neg", T.f32, [k.c(T.f32)], spirv="OpFNegate"),
     "neg has unknown attributes ['spirv']"),
    # -- shared predicates (base)
    ("result type", lambda k: k.op("neg", T.f16, [k.c(T.f32)]), "neg: result is f16, expected f32"),
    ("operands differ", lambda k: k.op("add", T.f32, [k.c(T.f32), k.c(T.i32)]), "add: operand types differ: f32, i32"),
    ("not a pointer", lambda k: k.op("load", T.f32, [k.c(T.f32)]), "load: operand 0 must be a pointer, got f32"),
    ("not an integer", lambda k: k.op("access", T.PointerType(T.f32, SSBO), [k.ptr(), k.c(T.f32)]),
     "access: operand 1 must be an integer scalar, got f32"),
    ("not a matrix", lambda k: k.op("mat_times_scalar", C, [k.c(T.f32), k.c(T.f32)]),
     "mat_times_scalar: operand 0 must be a cooperative matrix, got f32"),
    # -- arith
    ("add bools", lambda k: k.op("add", T.boolean, [k.c(T.boolean, True)] * 2), "add: needs numbers, got bool"),
    ("and floats", lambda k: k.op("and", T.f32, [k.c(T.f32)] * 2), "and: needs integers, got f32"),
    ("shift floats", lambda k: k.op("shl", T.f32, [k.c(T.f32), k.c(T.i32)]),
     "shl: shifts integers by integers of one shape, got f32 and i32"),
    ("compare matrices", lambda k: k.op("lt", T.boolean, [k.mat(C)] * 2), "lt: compares scalars or vectors"),
    ("negate bool", lambda k: k.op("neg", T.boolean, [k.c(T.boolean, True)]), "neg: needs a number, got bool"),
    ("not float", lambda k: k.op("not", T.f32, [k.c(T.f32)]), "not: needs an integer or bool, got f32"),
    ("land ints", lambda k: k.op("land", T.i32, [k.c(T.i32)] * 2), "land: needs bools, got i32"),
    ("select cond", lambda k: k.op("select", T.i32, [k.c(T.i32)] * 3),
     "select: needs a bool condition and two values of one type, got i32, i32, i32"),
    ("select matrices", lambda k: k.raw("select", C, [k.c(T.boolean, True), k.mat(C), k.mat(C)]),
     "select: cannot select between cooperative matrices"),
    ("scale by other type", lambda k: k.op("mat_times_scalar", C, [k.mat(C), k.c(T.f16)]),
     "mat_times_scalar: scalar must be f32, got f16"),
    ("convert shapes", lambda k: k.op("convert", T.f32, [k.vec(T.i32, 2)]),
     "convert: converts numbers of one shape, got vec2[i32] -> f32"),
    ("bitcast to matrix", lambda k: k.op("bitcast", C, [k.c(T.f32)]), "bitcast: cannot bitcast f32 to"),
    ("bitcast size", lambda k: k.op("bitcast", T.u64, [k.c(T.f32)]), "bitcast: bitcast changes the size: f32 -> u64"),
    ("fmod ints", lambda k: k.op("fmod", T.i32, [k.c(T.i32)] * 2), "fmod: needs floats"),
    ("dot scalars", lambda k: k.op("dot", T.f32, [k.c(T.f32)] * 2), "dot: needs float vectors, got f32"),
    ("isnan int", lambda k: k.op("isnan", T.boolean, [k.c(T.i32)]), "isnan: needs floats, got i32"),
    ("any scalar", lambda k: k.op("any", T.boolean, [k.c(T.boolean, True)]), "any: needs a bool vector, got bool"),
    # -- atomics
    ("atomic on a vector", lambda k: k.op("atomic_load", T.VectorType(T.f32, 2),
                                          [k.ptr(T.VectorType(T.f32, 2))], **ATOMIC),
     "atomic_load: needs a pointer to a 32- or 64-bit scalar"),
    ("atomic value type", lambda k: k.op("atomic_store", T.void, [k.ptr(T.u32), k.c(T.i32)], **ATOMIC),
     "atomic_store: value must be u32, got i32"),
    ("unknown atomic", lambda k: k.op("atomic_rmw", T.u32, [k.ptr(T.u32), k.c(T.u32)], op="nand", **ATOMIC),
     "atomic_rmw: unknown atomic nand"),
    # -- composite
    ("no component", lambda k: k.op("extract", T.f32, [k.vec(T.f32, 2)], index=5),
     "extract: vec2[f32] has no component 5"),
    ("insert type", lambda k: k.op("insert", T.VectorType(T.f32, 2), [k.c(T.i32), k.vec(T.f32, 2)], index=0),
     "insert: cannot insert i32 at 0 of vec2[f32]"),
    ("dynamic scalar", lambda k: k.op("extract_dyn", T.f32, [k.c(T.f32), k.c(T.u32)]),
     "extract_dyn: needs a vector or array, got f32"),
    ("dynamic insert type", lambda k: k.op("insert_dyn", T.VectorType(T.f32, 2),
                                           [k.vec(T.f32, 2), k.c(T.i32), k.c(T.u32)]),
     "insert_dyn: component must be f32, got i32"),
    ("construct vector", lambda k: k.op("construct", T.VectorType(T.f32, 2), [k.c(T.f32)]),
     "construct: vec2[f32] needs 2 components of f32, got f32"),
    ("construct struct", lambda k: k.op("construct", T.StructType("S", (("x", T.f32),)), [k.c(T.i32)]),
     "members do not match i32"),
    ("construct array", lambda k: k.op("construct", T.ArrayType(T.f32, 2), [k.c(T.f32)]),
     "needs 2 elements of f32"),
    ("construct scalar", lambda k: k.op("construct", T.f32, [k.c(T.f32)]), "construct: cannot construct f32"),
    ("shuffle", lambda k: k.op("shuffle", T.VectorType(T.f32, 2), [k.vec(T.f32, 2), k.vec(T.f32, 2)],
                               components=(0, 9)), "shuffle: shuffles two vectors of one type"),
    ("splat type", lambda k: k.op("splat", C, [k.c(T.f16)]),
     "splat: splats a component into a vector or matrix, got f16 ->"),
    # -- control flow and calls
    ("phi type", _phi_type, "phi: operand u32 differs from the phi's type i32"),
    ("cond_br on int", _cond_i32, "cond_br: needs a bool condition and two targets"),
    ("br two targets", _two_targets, "br: needs one target"),
    ("call arguments", lambda k: _call(k, [k.c(T.f32)], T.i32), "call: arguments do not match the parameters of f1"),
    ("call result", lambda k: _call(k, [k.c(T.i32)], T.f32), "call: result f32 differs from f1's return type i32"),
    # -- hints, math, memory
    ("assume_uniform matrix", lambda k: k.op("assume_uniform", C, [k.mat(C)]),
     "assume_uniform: takes a scalar or vector"),
    ("math arity", lambda k: k.op("math", T.f32, [k.c(T.f32)] * 2, fn="exp"), "math: exp takes 1 operands, has 2"),
    ("math matrices", lambda k: k.op("math", C, [k.mat(C)], fn="exp"),
     "math: exp takes scalars or vectors of one type"),
    ("access result", lambda k: k.op("access", T.f32, [k.ptr(), k.c(T.u32)]),
     "access: result must be a pointer, got f32"),
    ("store type", lambda k: k.op("store", T.void, [k.ptr(), k.c(T.i32)]),
     "store: stores i32 through a pointer to f32"),
    ("variable storage", lambda k: k.op("variable", T.PointerType(T.f32, "Private"), []),
     "variable: a function variable is a Function pointer"),
    ("u64_to_ptr", lambda k: k.op("u64_to_ptr", T.PointerType(T.f32, "PhysicalStorageBuffer"), [k.c(T.u32)]),
     "u64_to_ptr: converts a u64 to a pointer, got u32"),
    # -- subgroup
    ("broadcast matrix", lambda k: k.op("subgroup_broadcast_first", C, [k.mat(C)]),
     "subgroup_broadcast_first: takes a scalar or vector"),
    ("reduce bools", lambda k: k.op("subgroup_reduce", T.boolean, [k.c(T.boolean, True)], op="add", mode="reduce"),
     "subgroup_reduce: takes numbers"),
    ("unknown reduction", lambda k: k.op("subgroup_reduce", T.f32, [k.c(T.f32)], op="nand", mode="reduce"),
     "subgroup_reduce: unknown reduction nand/reduce"),
    ("vote on int", lambda k: k.op("subgroup_all", T.boolean, [k.c(T.i32)]), "subgroup_all: votes on a bool"),
    ("unknown shuffle", lambda k: k.op("subgroup_shuffle", T.f32, [k.c(T.f32), k.c(T.u32)], mode="rotate"),
     "subgroup_shuffle: unknown shuffle rotate"),
    ("ballot int", lambda k: k.op("subgroup_ballot", T.VectorType(T.u32, 4), [k.c(T.i32)]),
     "subgroup_ballot: takes a bool"),
    ("ballot bits of a u32", lambda k: k.op("subgroup_ballot_bits", T.u32, [k.c(T.u32)], query="count"),
     "subgroup_ballot_bits: takes a ballot (vec4 of u32), got u32"),
    ("unknown ballot query", lambda k: k.op("subgroup_ballot_bits", T.u32, [k.vec(T.u32, 4)], query="popcount"),
     "subgroup_ballot_bits: unknown ballot query popcount"),
    ("ballot extract without index", lambda k: k.op("subgroup_ballot_bits", T.boolean, [k.vec(T.u32, 4)],
                                                    query="extract"),
     "subgroup_ballot_bits: extract takes 2 operand(s)"),
    ("ballot count as bool", lambda k: k.op("subgroup_ballot_bits", T.boolean, [k.vec(T.u32, 4)], query="count"),
     "subgroup_ballot_bits: result is bool, expected u32"),
    ("ballot extract float index", lambda k: k.op("subgroup_ballot_bits", T.boolean, [k.vec(T.u32, 4), k.c(T.f32)],
                                                  query="extract"),
     "subgroup_ballot_bits: operand 1 must be an integer scalar, got f32"),
    # -- KHR cooperative matrices
    ("muladd spec use", lambda k: _mul(k, T.CoopMatType(T.f16, SG, 16, 16, SPEC), B, C),
     "the first operand of muladd has a specialization-constant use"),
    ("muladd use", lambda k: _mul(k, B, B, C),
     "the first operand of muladd must have use A (MatA), but MatB[f16, 16, 16] has use B (MatB)"),
    ("muladd scopes", lambda k: _mul(k, T.CoopMatType(T.f16, 2, 16, 16, 0), B, C),
     "muladd operands have different scopes"),
    ("muladd M", lambda k: _mul(k, T.CoopMatType(T.f16, SG, 8, 16, 0), B, C),
     "muladd M mismatch: A has 8 rows but C has 16"),
    ("muladd N", lambda k: _mul(k, A, T.CoopMatType(T.f16, SG, 16, 8, 1), C),
     "muladd N mismatch: B has 8 columns but C has 16"),
    ("muladd K", lambda k: _mul(k, T.CoopMatType(T.f16, SG, 16, 8, 0), B, C),
     "muladd K mismatch: A has 8 columns but B has 16 rows"),
    ("muladd A B kinds", lambda k: _mul(k, A, T.CoopMatType(T.i8, SG, 16, 16, 1), C),
     "muladd A and B must both be float or both be integer, got f16 and i8"),
    ("muladd accumulator kind", lambda k: _mul(k, A, B, T.CoopMatType(T.i32, SG, 16, 16, 2)),
     "muladd of f16 x f16 products needs a float accumulator, got i32"),
    ("muladd bf16 accumulator", lambda k: _mul(k, A, B, T.CoopMatType(T.bf16, SG, 16, 16, 2)),
     "the accumulator component type must be f16, f32 or f64, not bf16"),
    ("muladd narrow accumulator", lambda k: _mul(k, T.CoopMatType(T.i32, SG, 16, 16, 0),
                                                 T.CoopMatType(T.i32, SG, 16, 16, 1),
                                                 T.CoopMatType(T.i8, SG, 16, 16, 2)),
     "an integer accumulator must be at least as wide as A and B, got i8 for i32 x i32"),
    ("muladd signed names", lambda k: _mul(k, A, B, C, signed=frozenset({"x"})), "signed must be a frozenset of"),
    ("muladd signed floats", lambda k: _mul(k, A, B, C, signed=frozenset({"a"})),
     "signedness operands apply to integer matrices only"),
    ("muladd saturate floats", lambda k: _mul(k, A, B, C, saturate=True), "saturate=True needs an integer accumulator"),
    ("coop_load storage", lambda k: k.op("coop_load", C, [k.op("access", T.PointerType(T.f32, "Uniform"),
                                                               [k.ptr(), k.c(T.u32)]), k.c(T.u32)],
                                         layout=km.Layout.RowMajor),
     "coop_load: cannot address a matrix in Uniform memory"),
    ("coop_load function storage", lambda k: k.op("coop_load", C, [k.op("access", T.PointerType(T.f32, "Function"),
                                                                        [k.ptr(), k.c(T.u32)]), k.c(T.u32)],
                                                  layout=km.Layout.RowMajor),
     "coop_load: cannot address a matrix in Function memory"),
    ("coop_load vec3", lambda k: k.op("coop_load", C, [k.ptr(T.VectorType(T.f32, 3)), k.c(T.u32)],
                                      layout=km.Layout.RowMajor),
     "cannot load a cooperative matrix through vec3[f32] elements"),
    ("coop_store bools", lambda k: k.op("coop_store", T.void, [k.ptr(T.boolean), k.mat(C), k.c(T.u32, 1)],
                                        layout=km.Layout.RowMajor),
     "cannot store a cooperative matrix through bool elements: the memory must hold numeric scalars or vectors"),
    ("coop_load stride", lambda k: k.op("coop_load", C, [k.ptr(), k.c(T.i32, -1)], layout=km.Layout.RowMajor),
     "stride must be 0 or more, got -1"),
    ("coop_load result", lambda k: k.op("coop_load", T.f32, [k.ptr(), k.c(T.u32)], layout=km.Layout.RowMajor),
     "coop_load: loads a cooperative matrix, result is f32"),
    # -- NV2 matrices
    ("reduce mode", lambda k: k.op("coop_reduce", C, [k.mat(C), k.func(T.f32, T.f32, T.f32)],
                                   mode=ReduceMode.Row | ReduceMode.Quad2x2),
     "the reduce mode must be Row, Column, Row|Column or 2x2"),
    ("reduce accumulator", lambda k: k.op("coop_reduce", A, [k.mat(A), k.func(T.f16, T.f16, T.f16)],
                                          mode=ReduceMode.Row),
     "m.reduce: it takes an accumulator matrix (Acc[...]), but MatA[f16, 16, 16] has use A (MatA)"),
    ("reduce integers", lambda k: k.op("coop_reduce", T.CoopMatType(T.i32, SG, 16, 16, 2),
                                       [k.mat(T.CoopMatType(T.i32, SG, 16, 16, 2)), k.func(T.i32, T.i32, T.i32)],
                                       mode=ReduceMode.Row),
     "m.reduce needs a floating-point matrix"),
    ("reduce into use", lambda k: k.op("coop_reduce", T.CoopMatType(T.f32, SG, 16, 16, 1),
                                       [k.mat(C), k.func(T.f32, T.f32, T.f32)], mode=ReduceMode.Row),
     "into= of m.reduce: it takes an accumulator matrix"),
    ("reduce into component", lambda k: k.op("coop_reduce", T.CoopMatType(T.f16, SG, 16, 16, 2),
                                             [k.mat(C), k.func(T.f32, T.f32, T.f32)], mode=ReduceMode.Row),
     "m.reduce keeps the component type"),
    ("reduce into scope", lambda k: k.op("coop_reduce", T.CoopMatType(T.f32, 2, 16, 16, 2),
                                         [k.mat(C), k.func(T.f32, T.f32, T.f32)], mode=ReduceMode.Row),
     "m.reduce keeps the scope"),
    ("reduce 2x2", lambda k: k.op("coop_reduce", C, [k.mat(C), k.func(T.f32, T.f32, T.f32)],
                                  mode=ReduceMode.Quad2x2),
     "m.reduce(cd.Reduce2x2) halves both dimensions"),
    ("reduce rows", lambda k: k.op("coop_reduce", T.CoopMatType(T.f32, SG, 8, 16, 2),
                                   [k.mat(C), k.func(T.f32, T.f32, T.f32)], mode=ReduceMode.Row),
     "m.reduce(cd.Row) keeps the rows"),
    ("reduce columns", lambda k: k.op("coop_reduce", T.CoopMatType(T.f32, SG, 16, 8, 2),
                                      [k.mat(C), k.func(T.f32, T.f32, T.f32)], mode=ReduceMode.Column),
     "m.reduce(cd.Column) keeps the columns"),
    ("reduce result", lambda k: k.op("coop_reduce", T.f32, [k.mat(C), k.func(T.f32, T.f32, T.f32)],
                                     mode=ReduceMode.Row),
     "coop_reduce: result must be a cooperative matrix, got f32"),
    ("reduce no function", lambda k: k.op("coop_reduce", C, [k.mat(C), k.c(T.f32)], mode=ReduceMode.Row),
     "coop_reduce: operand 1 must name a function"),
    ("reduce combine", lambda k: k.op("coop_reduce", C, [k.mat(C), k.func(T.f16, T.f16, T.f16)],
                                      mode=ReduceMode.Row),
     "combine function must be fn(f32, f32) -> f32"),
    ("transpose into scalar", lambda k: k.op("coop_transpose", T.f32, [k.mat(C)]),
     "into= must be the matrix type MatB[f32, 16, 16], got"),
    ("transpose shape", lambda k: k.op("coop_transpose", T.CoopMatType(T.f32, SG, 16, 16, 0), [k.mat(C)]),
     "m.transpose of Acc[f32, 16, 16] gives MatB[f32, 16, 16], not MatA[f32, 16, 16]"),
    ("map extra matrix", lambda k: k.op("coop_per_element", C, [k.mat(C), k.func(T.f32, T.u32, T.u32, T.f32, T.f16),
                                                                 k.mat(A)]),
     "extra matrix operand 1 of map must have the matrix's type Acc[f32, 16, 16]"),
    ("map extra array", lambda k: k.op("coop_per_element", C, [k.mat(C), k.func(T.f32, T.u32, T.u32, T.f32),
                                                                k.arr(T.f32, 2)]),
     "extra operand 1 of map must be a runtime scalar, vector or matrix"),
    ("map function", lambda k: k.op("coop_per_element", C, [k.mat(C), k.func(T.f32, T.u32, T.u32, T.f16)]),
     "coop_per_element: function"),
    ("map coordinates", lambda k: k.op("coop_per_element", C, [k.mat(C), k.func(T.f32, T.f32, T.f32, T.f32)]),
     "row and column parameters must be 32-bit integers"),
    ("convert_use to scalar", lambda k: k.op("coop_convert_use", T.f32, [k.mat(C)]),
     "a use change makes a cooperative matrix, not f32"),
    ("convert_use shape", lambda k: k.op("coop_convert_use", T.CoopMatType(T.f16, SG, 8, 16, 0), [k.mat(C)]),
     "rows, columns and scope must match"),
    ("convert_use to accumulator", lambda k: k.op("coop_convert_use", C, [k.mat(T.CoopMatType(T.f32, SG, 16, 16, 0))]),
     "a conversion keeps the use, or changes it from an accumulator to A or B"),
    ("convert_use no change", lambda k: k.op("coop_convert_use", T.CoopMatType(T.f16, SG, 16, 16, 2), [k.mat(C)]),
     "changes no use"),
    # -- tensor layouts, views, loads and stores
    ("layout result", lambda k: k.op("tensor_layout", T.f32, []), "tensor_layout: creates a tensor layout or view"),
    ("layout rank", lambda k: k.op("tensor_layout", T.TensorLayoutType(6, 0), []),
     "tensors have 1 to 5 dimensions, got 6"),
    ("setter base", lambda k: k.op("tensor_layout_dimension", T.TensorLayoutType(2, 0), [k.view(), k.c(T.u32)]),
     "tensor_layout_dimension: operand 0 must be a TensorLayoutType"),
    ("setter count", lambda k: _setter(k, "tensor_layout_dimension", k.layout(), 4),
     "tensor_layout_dimension: takes 2 values for"),
    ("setter value type", lambda k: k.op("tensor_layout_dimension", T.TensorLayoutType(2, 0),
                                         [k.layout(), k.c(T.f32), k.c(T.u32)]),
     "operand 1 must be a 32-bit integer, got f32"),
    ("negative dimension", lambda k: _setter(k, "tensor_layout_dimension", k.layout(), -4, 4, t=T.i32),
     "dimension's value 0 must not be negative, got -4"),
    ("block size 0", lambda k: _setter(k, "tensor_layout_block_size", k.layout(), 1, 0),
     "block sizes are at least 1, got 0 for dimension 1"),
    ("stride minimum", _stride_rule, "stride 0 of this layout must be at least stride 1 x ceil(dimension 1"),
    ("dimension after stride", _dimension_after_stride, "dimension() resets the strides that stride() set"),
    ("view without dims", lambda k: _setter(k, "tensor_view_dimension", k.view(has_dims=False), 4, 4),
     "dimension() on a view made with has_dims=False would be ignored"),
    ("view rank", lambda k: _tload(k, extra=[k.view(3, has_dims=False)]),
     "a view without its own dimensions (has_dims=False) takes the layout's span"),
    ("decode of floats", lambda k: _tload(k, extra=[k.func(T.f32)]),
     "a decode function reads one block at a time, so the memory must hold block structs"),
    ("decode signature", lambda k: _tload(k, elem=_BLK, extra=[k.func(T.f32, _BLK_PTR, T.ArrayType(T.u32, 3),
                                                                      T.ArrayType(T.u32, 2))]),
     "a decode function takes (a device pointer to one block, u32[2] block_coords"),
    ("decode return", lambda k: _tload(k, elem=_BLK, extra=[k.func(T.f16, _BLK_PTR, T.ArrayType(T.u32, 2),
                                                                   T.ArrayType(T.u32, 2))]),
     "a decode function returns the matrix's component type f32, got f16"),
    ("tensor offset", lambda k: k.op("coop_load_tensor", C, [
        k.op("access", T.PointerType(T.f32, SSBO), [buffer(k.m, "bo", T.f32, 9), k.c(T.u32), k.c(T.u32, 3)]),
        k.mat(C), k.layout()]),
     "element 3 of f32 lies 12 bytes from the start; a tensor load or store must start 16-byte aligned"),
    ("structs without decode", lambda k: _tload(k, elem=T.StructType("Blk", (("x", T.f32),), (0,))),
     "the memory must hold numeric scalars or vectors, not"),
    ("store block size", lambda k: _tstore(k, _setter(k, "tensor_layout_block_size", k.layout(), 2, 1)),
     "this layout has block size 2; stores take layouts with block size 1"),
    ("addressing layout", lambda k: k.op("coop_store_tensor", T.void, [k.ptr(), k.mat(C), k.view()]),
     "coop_store_tensor: operand 2 must be a tensor layout"),
    ("addressing order", lambda k: _tstore(k, extra=[k.layout()]),
     "after the layout come an optional view and an optional decode function"),
    ("decode not a reference", lambda k: _tload(k, extra=[Param(T.FunctionType(T.f32, ()), "fn")]),
     "the decode function must be a function reference"),
    ("tensor storage", lambda k: _tload(k, storage="Function"),
     "coop_load_tensor: cannot address a matrix in Function"),
    ("tensor load result", lambda k: _tload(k, result=T.f32, fill=T.f32),
     "coop_load_tensor: loads a cooperative matrix, result is f32"),
    ("tensor fill", lambda k: _tload(k, fill=T.CoopMatType(T.f32, SG, 8, 8, 2)),
     "the fill matrix is Acc[f32, 8, 8], the result Acc[f32, 16, 16]"),
    ("store decode", lambda k: _tstore(k, extra=[k.func(T.f32)]),
     "coop_store_tensor: a store takes no decode function"),
    # -- SPV_QCOM_cooperative_matrix_conversion
    ("bitcast scalar", lambda k: k.op("bitcast_array", T.ArrayType(T.u32, 1), [k.c(T.f32)]),
     "the array bitcast_array converts must be an array (cd.array), got a runtime f32"),
    ("bitcast nested", lambda k: _bitcast_array(k, (T.ArrayType(T.f32, 2), 2), T.ArrayType(T.u32, 4)),
     "must be a one-dimensional array, got the array of arrays"),
    ("bitcast vectors", lambda k: _bitcast_array(k, (T.VectorType(T.f32, 2), 2), T.ArrayType(T.u32, 4)),
     "must be an array of scalars"),
    ("bitcast elements", lambda k: _bitcast_array(k, (T.i8, 4), T.ArrayType(T.u32, 1)),
     "must hold i32, u32, f32 or f16 elements, not i8"),
    ("bitcast bytes", lambda k: _bitcast_array(k, (T.f16, 3), T.ArrayType(T.u32, 1)),
     "holds 6 bytes, which is not a whole number of u32"),
    ("bitcast spec length", lambda k: _bitcast_array(k, (T.f16, SPEC), T.ArrayType(T.u32, 1)),
     "which coopdsl cannot tell for a specialization constant"),
    ("bitcast length", lambda k: _bitcast_array(k, (T.f16, 4), T.ArrayType(T.u32, 4)),
     "bitcast_array keeps the byte size"),
    ("from_rows sub-array start", lambda k: k.op("coop_from_array", T.CoopMatType(T.f32, SG, 32, 8, 0), [
        k.op("sub_array", T.ArrayType(T.f32, 8), [k.arr(T.f32, 32), k.c(T.i32, 4)])]),
     "a sub-array that becomes a row of MatA[f32, 32, 8] must start at a multiple of its length 8 (K), got 4"),
    ("from_rows workgroup", lambda k: _qcom_a(k, T.CoopMatType(T.f16, 2, 16, 16, 0), (T.f16, 16)),
     "has Workgroup scope; matrices meet per-invocation arrays only at Subgroup scope"),
    ("from_rows spec use", lambda k: _qcom_a(k, T.CoopMatType(T.f16, SG, 16, 16, SPEC), (T.f16, 16)),
     "has a specialization-constant use"),
    ("from_rows A elements", lambda k: _qcom_a(k, T.CoopMatType(T.i32, SG, 16, 8, 0), (T.i32, 8)),
     "a MatA built from or split into arrays has f32, f16, i8 or u8 components, not i32"),
    ("from_rows A columns", lambda k: _qcom_a(k, T.CoopMatType(T.f16, SG, 16, 8, 0), (T.f16, 8)),
     "a MatA of f16 built from or split into arrays has 16 columns (256 bits), not 8"),
    ("from_rows accumulator elements", lambda k: _qcom_a(k, T.CoopMatType(T.i8, SG, 16, 16, 2), (T.i8, 16)),
     "an accumulator built from or split into arrays has i32, u32, f16 or f32 components, not i8"),
    ("from_rows too many rows", lambda k: _qcom_a(k, T.CoopMatType(T.f32, SG, 256, 16, 2), (T.f32, 16)),
     "has 256 rows, one per invocation of a subgroup"),
    ("from_rows array elements", lambda k: _qcom_a(k, A, (T.f32, 16)),
     "holds f16 (its component type) or u32 (packed), not f32"),
    ("from_rows odd packed", lambda k: _qcom_a(k, T.CoopMatType(T.f16, SG, 16, 15, 2), (T.u32, 8)),
     "has an odd number of columns, so its rows do not pack into u32 pairs"),
    ("to_rows packed int", lambda k: _qcom_a(k, T.CoopMatType(T.i32, SG, 16, 16, 2), (T.u32, 16), to=True),
     "the packed u32 form is for f16 and f32 accumulators"),
    ("from_rows scalar result", lambda k: k.op("coop_from_array", T.f32, [k.arr(T.f16, 16)]),
     "expected a cooperative matrix, got a runtime f32"),
    ("from_rows length", lambda k: _qcom_a(k, A, (T.f16, 8)), "a row of MatA[f16, 16, 16] is f16[16]"),
    ("sub_array elements", lambda k: _sub(k, (T.f32, 8), T.ArrayType(T.u32, 4)),
     "a sub-array of f32[8] holds f32, got a runtime u32[4]"),
    ("sub_array too long", lambda k: _sub(k, (T.f32, 8), T.ArrayType(T.f32, 9)),
     "a sub-array of 9 elements does not fit in f32[8]"),
    ("sub_array negative", lambda k: _sub(k, (T.f32, 8), T.ArrayType(T.f32, 4), -1),
     "the start of a sub-array must not be negative, got -1"),
    ("sub_array range", lambda k: _sub(k, (T.f32, 8), T.ArrayType(T.f32, 4), 6),
     "elements 6..9 are out of range for f32[8]"),
    ("sub_array start type", lambda k: _sub(k, (T.f32, 8), T.ArrayType(T.f32, 4), k.c(T.u32, 0)),
     "the start index is a signed 32-bit integer, got u32"),
]


@pytest.mark.parametrize("build,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_verifier_rejects(build, message):
    k = K()
    build(k)
    if k.em.block is not None:
        k.em.terminate("return")
    with pytest.raises(InternalCompilerError) as info:
        verify(k.m)
    assert message in info.value.message
    assert info.value.loc == LOC


def test_the_cases_have_distinct_names():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))


# -- rule branches only a builtin reaches (the verifier's own checks come first) -----------------------
def test_reduce_into_a_value_that_is_no_type():
    p = nv2.reduce_problem(C, 3, ReduceMode.Row)
    assert p is not None and p.kind == "type" and "into= must be an accumulator matrix type such as Acc[f32, 16, 16]" \
        in p.message


def test_a_muladd_of_valid_types_has_no_problem_and_infers_signedness():
    i8a, i8b = T.CoopMatType(T.i8, SG, 16, 16, 0), T.CoopMatType(T.u8, SG, 16, 16, 1)
    acc = T.CoopMatType(T.i32, SG, 16, 16, 2)
    assert km.muladd_problem(i8a, i8b, acc) is None
    assert km.muladd_signed(i8a, i8b, acc) == frozenset({"a", "c", "result"})
