"""SPV_QCOM_cooperative_matrix_conversion: per-invocation arrays to and from cooperative matrices.

Four ops (``bitcast_array``, ``coop_from_array``, ``coop_to_array``, ``sub_array``) and the extension's
rules as pure functions.  Each rule returns ``None`` or a :class:`Problem` saying what is wrong in the
words kernels are written in.  The IR verifier applies them to every op; the builtins of
``coopdsl.lang.qcom`` apply them first, at the user's line, so a kernel that breaks one never reaches
the verifier (or spirv-val, which misses several: NV2_QCOM.md section 5).

Matrices and arrays meet row by row: invocation *i* of the subgroup holds row *i* of a MatA or an
accumulator, or column *i* of a MatB, as a one-dimensional array of the component type or of u32
(packed).  The length of that array is the matrix's *line*: its columns for A and accumulators, its
rows for B.
"""

from __future__ import annotations

from .. import types as T
from ..core import Const, Op, Value
from ..vocab import MatrixUse, Scope
from .base import Problem, check, define, fail

ARRAY_ELEMS = (T.i32, T.u32, T.f32, T.f16)  # elements OpBitCastArrayQCOM and OpExtractSubArrayQCOM take
AB_LINE = {T.f32: 8, T.f16: 16, T.i8: 32, T.u8: 32}  # A columns / B rows: 256 bits of the component type
ACC_ELEMS = (T.i32, T.u32, T.f16, T.f32)
PACKED = T.u32
PACKED_AB_LENGTH = 8  # a packed A row / B column: 8 u32 (256 bits)
MAX_SUBGROUP = 128  # Vulkan subgroups hold at most 128 invocations (ballots are 128-bit masks)


default_value = T.dim_value   # (the evaluation is the type module's: one owner)


def is_one_dim(t: T.Type) -> bool:
    """A one-dimensional array of scalars (what every QCOM instruction takes)."""
    return isinstance(t, T.ArrayType) and isinstance(t.elem, T.ScalarType)


def array_problem(t: T.Type, what: str, elems: tuple[T.Type, ...] = ()) -> Problem | None:
    """``t`` must be a one-dimensional array (of ``elems`` when given)."""
    if not isinstance(t, T.ArrayType):
        return Problem("type", f"{what} must be an array (cd.array), got {_name(t)}")
    if isinstance(t.elem, T.ArrayType):
        return Problem("type", f"{what} must be a one-dimensional array, got the array of arrays {t}")
    if not isinstance(t.elem, T.ScalarType):
        return Problem("type", f"{what} must be an array of scalars, got {t}")
    if elems and t.elem not in elems:
        return Problem("type", f"{what} must hold {_list(elems)} elements, not {t.elem} ({t})")
    return None


# -- OpBitCastArrayQCOM ---------------------------------------------------------------------------
def bitcast_length(src: T.ArrayType, elem: T.ScalarType) -> T.Dim | Problem:
    """The length of ``src``'s bytes seen as ``elem`` values."""
    sw, dw = T.scalar_of(src.elem).nbytes, elem.nbytes
    n = src.length
    if sw == dw:
        return n
    if isinstance(n, int):
        if n * sw % dw:
            return Problem("shape", f"{src} holds {n * sw} bytes, which is not a whole number of {elem} "
                                    f"({dw} bytes each)")
        return n * sw // dw
    if sw > dw:
        return T.symbolic("mul", (n, sw // dw))
    ratio = dw // sw
    quotient = _exact_quotient(n, ratio)
    if quotient is None:
        return Problem("shape", f"cannot bitcast {src} to {elem}: its length {n} must be a multiple of {ratio}, "
                                f"which coopdsl cannot tell for a specialization constant (write the length "
                                f"as {ratio} * {n})")
    return quotient


def _exact_quotient(n: T.SymDim, ratio: int) -> T.Dim | None:
    """``n / ratio`` when ``n`` is visibly a multiple of ``ratio`` (``k * X`` with ``ratio`` dividing ``k``)."""
    if n.op != "mul":
        return None
    for i, a in enumerate(n.args):
        if isinstance(a, int) and a % ratio == 0:
            rest = n.args[1 - i]
            return rest if a == ratio else T.symbolic("mul", (rest, a // ratio))
    return None


def bitcast_problem(src: T.Type, dst: T.Type) -> Problem | None:
    """OpBitCastArrayQCOM: 1-D arrays of i32/u32/f32/f16 with equal byte sizes."""
    p = array_problem(src, "the array bitcast_array converts", ARRAY_ELEMS) or \
        array_problem(dst, "the result of bitcast_array", ARRAY_ELEMS)
    if p is not None:
        return p
    assert isinstance(src, T.ArrayType) and isinstance(dst, T.ArrayType)  # array_problem checked both
    want = bitcast_length(src, T.scalar_of(dst.elem))
    if isinstance(want, Problem):
        return want
    if dst.length != want:
        return Problem("shape", f"bitcast_array keeps the byte size: {src} is {_bytes(src)} bytes, so it "
                                f"becomes {T.ArrayType(dst.elem, want)}, not {dst}")
    return None


def _bytes(t: T.ArrayType) -> str:
    n = t.length
    size = T.scalar_of(t.elem).nbytes
    return str(n * size) if isinstance(n, int) else f"{size} * {n}"


# -- OpCompositeConstructCoopMatQCOM / OpCompositeExtractCoopMatQCOM -------------------------------
def line_name(m: T.CoopMatType) -> str:
    """What one invocation's array is for ``m``: "row" (A, accumulators) or "column" (B)."""
    return "column" if m.use == MatrixUse.B else "row"


def matrix_problem(m: T.CoopMatType) -> Problem | None:
    """The matrix side of construct/extract: Subgroup scope, a known use, its component types and sizes."""
    if m.scope != Scope.Subgroup:
        scope = "a specialization-constant scope" if not isinstance(m.scope, int) else "Workgroup scope"
        return Problem("shape", f"{m} has {scope}; matrices meet per-invocation arrays only at Subgroup scope")
    if not isinstance(m.use, int):
        return Problem("shape", f"{m} has a specialization-constant use ({m.use}); arrays become rows or "
                                f"columns of a matrix whose use is known when the kernel is compiled")
    use = MatrixUse(m.use)
    family = use.family
    if use.is_operand:
        if m.elem not in AB_LINE:
            return Problem("type", f"a {family} built from or split into arrays has f32, f16, i8 or u8 "
                                   f"components, not {m.elem}")
        fixed, fixed_name = (m.cols, "columns") if use is MatrixUse.A else (m.rows, "rows")
        k = AB_LINE[m.elem]
        if default_value(fixed) != k:
            given = T.dim_shown(fixed)
            return Problem("shape", f"{m}: a {family} of {m.elem} built from or split into arrays has {k} "
                                    f"{fixed_name} (256 bits), not {given}")
        free = [(m.rows, "rows")] if use is MatrixUse.A else [(m.cols, "columns")]
    else:
        if m.elem not in ACC_ELEMS:
            return Problem("type", f"an accumulator built from or split into arrays has i32, u32, f16 or f32 "
                                   f"components, not {m.elem}")
        free = [(m.rows, "rows"), (m.cols, "columns")]
    for d, name in free:
        v = default_value(d)
        if v is not None and v > MAX_SUBGROUP:
            return Problem("shape", f"{m} has {v} {name}, one per invocation of a subgroup, but a subgroup has "
                                    f"at most {MAX_SUBGROUP} invocations")
    return None


def line_length(m: T.CoopMatType, elem: T.ScalarType, extract: bool) -> T.Dim | Problem:
    """The length an array of ``elem`` has as one row/column of ``m``.

    A specialization-constant dimension is matched only by the same expression (spirv-val compares a
    specialization constant with nothing else), so ``MatA[f16, M, K]`` takes ``cd.array(f16, K)``.
    """
    line = m.rows if m.use == MatrixUse.B else m.cols
    if elem == m.elem:
        return line
    if elem != PACKED:
        return Problem("type", f"an array for a {line_name(m)} of {m} holds {m.elem} (its component type) or "
                               f"u32 (packed), not {elem}")
    if m.use in (MatrixUse.A, MatrixUse.B):
        return PACKED_AB_LENGTH
    if m.elem == T.f16:
        v = default_value(line)
        if v is not None and v % 2:
            shown = "" if isinstance(line, int) else f" ({T.dim_shown(line)})"
            return Problem("shape", f"{m} has an odd number of columns{shown}, so its rows do not pack into u32 "
                                    f"pairs")
        return line // 2 if isinstance(line, int) else T.symbolic("div", (line, 2))
    if extract and m.elem != T.f32:
        return Problem("type", f"rows of {m} are extracted as {m.elem} arrays; the packed u32 form is for f16 "
                               f"and f32 accumulators")
    return line


def conversion_problem(m: T.Type, arr: T.Type, extract: bool) -> Problem | None:
    """Construct (``extract`` False) or extract: ``arr`` is one invocation's row/column of matrix ``m``."""
    if not isinstance(m, T.CoopMatType):
        return Problem("type", f"expected a cooperative matrix, got {_name(m)}")
    what = f"the array for a {line_name(m)} of {m}" if isinstance(m.use, int) else "the array"
    p = matrix_problem(m) or array_problem(arr, what)
    if p is not None:
        return p
    assert isinstance(arr, T.ArrayType)  # array_problem checked it
    length = line_length(m, T.scalar_of(arr.elem), extract)
    if isinstance(length, Problem):
        return length
    if arr.length != length:
        return Problem("shape", f"a {line_name(m)} of {m} is {T.ArrayType(arr.elem, length)}"
                                f"{_packed_note(m, T.scalar_of(arr.elem))}, not {arr}")
    return None


def _packed_note(m: T.CoopMatType, elem: T.ScalarType) -> str:
    if elem != PACKED or m.elem == PACKED:
        return ""
    per = 4 // m.elem.nbytes
    return f" ({per} {m.elem} per u32)" if per > 1 else f" (one {m.elem} per u32)"


# -- OpExtractSubArrayQCOM ------------------------------------------------------------------------
def sub_array_problem(src: T.Type, dst: T.Type, start: int | None) -> Problem | None:
    """``dst`` is ``len(dst)`` elements of ``src`` from ``start`` (an int when it is a constant)."""
    p = array_problem(src, "the array sub_array slices", ARRAY_ELEMS)
    if p is not None:
        return p
    assert isinstance(src, T.ArrayType)  # array_problem checked it
    if not isinstance(dst, T.ArrayType) or dst.elem != src.elem:
        return Problem("type", f"a sub-array of {src} holds {src.elem}, got {_name(dst)}")
    n, total = dst.length, src.length
    if isinstance(n, int) and isinstance(total, int) and n > total:
        return Problem("shape", f"a sub-array of {n} elements does not fit in {src}")
    if start is not None:
        if start < 0:
            return Problem("shape", f"the start of a sub-array must not be negative, got {start}")
        if isinstance(n, int) and isinstance(total, int) and start + n > total:
            return Problem("shape", f"elements {start}..{start + n - 1} are out of range for {src} "
                                    f"(indices 0..{total - 1})")
    return None


def _name(t: T.Type) -> str:
    return f"a runtime {t}" if isinstance(t, T.Type) else str(t)


def _list(ts: tuple[T.Type, ...]) -> str:
    names = [str(t) for t in ts]
    return ", ".join(names[:-1]) + " or " + names[-1]


def k_multiple_problem(m: T.Type, arr: Value) -> Problem | None:
    """A constant sub-array start fed to an A or B matrix must be a multiple of its K (the slice length): each
    invocation's row or column is one K-long run of the array the slice comes from."""
    if not isinstance(m, T.CoopMatType) or m.use == MatrixUse.Acc or not (isinstance(arr, Op) and
                                                                         arr.kind == "sub_array"):
        return None
    start, n = arr.operands[1], arr.type.length if isinstance(arr.type, T.ArrayType) else None
    if isinstance(start, Const) and isinstance(n, int) and isinstance(start.value, int) and start.value % n:
        return Problem("shape", f"a sub-array that becomes a {line_name(m)} of {m} must start at a multiple of its "
                                f"length {n} (K), got {start.value}")
    return None


# -- the ops ----------------------------------------------------------------------------------------
def _verify_bitcast(op: Op) -> None:
    check(op, bitcast_problem(op.operands[0].type, op.type))


def _verify_from_array(op: Op) -> None:
    check(op, conversion_problem(op.type, op.operands[0].type, extract=False))
    check(op, k_multiple_problem(op.type, op.operands[0]))


def _verify_to_array(op: Op) -> None:
    check(op, conversion_problem(op.operands[0].type, op.type, extract=True))


def _verify_sub_array(op: Op) -> None:
    start = op.operands[1]
    if start.type != T.i32:
        fail(op, f"the start index is a signed 32-bit integer, got {start.type}")
    check(op, sub_array_problem(op.operands[0].type, op.type, start.value if isinstance(start, Const) else None))


define("bitcast_array", 1, verify=_verify_bitcast,
       doc="the bytes of a one-dimensional array as an array of another element type (OpBitCastArrayQCOM)")
define("coop_from_array", 1, verify=_verify_from_array, tangled="matrix", per_invocation_operands=True,
       doc="a subgroup matrix whose row i (A, accumulator) or column i (B) is invocation i's array "
           "(OpCompositeConstructCoopMatQCOM)")
define("coop_to_array", 1, verify=_verify_to_array, tangled="matrix",
       doc="invocation i's row (A, accumulator) or column (B) of a subgroup matrix as an array "
           "(OpCompositeExtractCoopMatQCOM)")
define("sub_array", 2, verify=_verify_sub_array,
       doc="(array, i32 start): the result's length of elements from start (OpExtractSubArrayQCOM)")
