"""The ports of vk_cooperative_matrix_perf's kernels keep the harness's interface, and both compute
D = alpha * A x B + beta * C (checked on the CPU interpreter; the harness runs them on the GPU)."""

import numpy as np
import pytest

from benchmarks.peer_gemm import shmem, workgroup

PEER_SPEC_IDS = {0: "lM", 1: "lN", 2: "lK", 3: "TILE_M", 4: "TILE_N", 5: "TILE_K", 6: "K", 7: "strideA",
                 8: "strideB", 9: "strideC", 10: "strideD", 11: "alpha", 12: "beta", 13: "BColMajor",
                 14: "A_ROW_LEN", 15: "A_NUM_ROWS", 16: "B_ROW_LEN", 17: "B_NUM_ROWS", 19: "M", 20: "N"}


@pytest.mark.parametrize("port", [shmem, workgroup], ids=["shmem", "workgroup"])
@pytest.mark.parametrize("tokens", list(workgroup.VARIANTS), ids="_".join)
def test_the_port_keeps_the_harness_interface(port, tokens):
    a_type, c_type = port.VARIANTS[tokens]
    kernel = port.variant(a_type, c_type)
    r = kernel.reflect()                                   # compiled and accepted by spirv-val
    spec = {s["id"]: s["name"] for s in r["spec_constants"]}
    assert {i: spec[i] for i in PEER_SPEC_IDS} == PEER_SPEC_IDS
    assert spec[18] == "WG"                                # local_size_x_id = 18
    assert "LocalSizeId" in kernel.disassemble()
    (params,) = r["bindings"]
    assert (params["set"], params["binding"], params["kind"]) == (0, 0, "uniform_buffer")
    assert [(m["offset"], m["type"]) for m in params["members"]] == [(0, "ptr"), (8, "ptr"), (16, "ptr"), (24, "ptr")]
    assert r["entry_point"] == "main" and r["push_constants"]["size"] == 0


def _small_ints(tokens, m: int, n: int, k: int, seed: int):
    """A (m x k), B (k x n), C (m x n) of small integers in the pair's input and accumulator dtypes (exact in
    every type), and a zeroed D."""
    rng = np.random.default_rng(seed)
    dt_a = {"fp16": np.float16, "s8": np.int8}[tokens[0]]
    dt_c = {"fp16": np.float16, "fp32": np.float32, "s32": np.int32}[tokens[1]]
    a = rng.integers(-2, 3, (m, k)).astype(dt_a)
    b = rng.integers(-2, 3, (k, n)).astype(dt_a)
    c = rng.integers(-2, 3, (m, n)).astype(dt_c)
    return a, b, c, np.zeros((m, n), dt_c)


@pytest.mark.parametrize("forms", [(), ("glsl_order",)], ids=["default", "glsl_order"])
@pytest.mark.parametrize("tokens", [("fp16", "fp32"), ("fp16", "fp16"), ("s8", "s32")], ids="_".join)
@pytest.mark.parametrize("b_col_major", [False, True], ids=["B row-major", "B column-major"])
def test_the_workgroup_port_multiplies_on_the_interpreter(tokens, b_col_major, forms):
    a_type, c_type = workgroup.VARIANTS[tokens]
    kernel = workgroup.variant(a_type, c_type, forms)
    m, n, k, tile = 32, 48, 48, 16
    a, b, c, d = _small_ints(tokens, m, n, k, seed=1)
    kernel.launch((n // tile, m // tile, 1),
                  {"inputA": a, "inputB": b.T.copy() if b_col_major else b, "inputC": c, "outputO": d},
                  device="cpu", TILE_M=tile, TILE_N=tile, TILE_K=tile, K=k, M=m, N=n, alpha=2.0, beta=-1.0,
                  BColMajor=b_col_major, WG=64)
    ref = 2 * (a.astype(np.int64) @ b.astype(np.int64)) - c.astype(np.int64)
    np.testing.assert_array_equal(d.astype(np.int64), ref)


def test_shape_experiment_forms_are_valid_and_differ_where_they_say():
    from benchmarks.peer_gemm import shape_experiment
    from benchmarks.peer_gemm.shmem import variant
    from coopdsl import f16, f32
    from coopdsl.spirv import tools

    ours = variant(f16, f32).compile()
    builtin = shape_experiment.workgroup_size_builtin(ours)
    assert tools.validation_message(builtin, "vulkan1.3") is None
    text = tools.disassemble(builtin)
    assert "LocalSizeId" not in text and "OpExecutionMode %main LocalSize 1 1 1" in text
    assert "BuiltIn WorkgroupSize" in text
    forms = shape_experiment.forms(ours, ours)  # (the peer's module is not in this repository: ours stands in)
    assert set(forms) == {"theirs", "ours", "ours+wg-builtin", *shape_experiment.OPT}
    assert len(forms["ours -O"]) < len(ours)


def test_the_committed_bisection_forms_apply_and_validate():
    from pathlib import Path

    from benchmarks.peer_gemm import shape_experiment
    from benchmarks.peer_gemm.shmem import variant
    from coopdsl import f16, f32

    ours = variant(f16, f32).compile()
    for path in sorted((Path(__file__).resolve().parents[2] / "benchmarks" / "peer_gemm" / "forms").glob("*.txt")):
        opt = {label: passes.split(",") for label, passes in
               (line.split("=", 1) for line in path.read_text().splitlines() if line.strip())}
        assert opt and all(p.startswith("--") for ps in opt.values() for p in ps), path
        forms = shape_experiment.forms(ours, ours, opt)  # validated inside (the peer's module: ours stands in)
        assert set(forms) == {"theirs", "ours", *opt}


# the bit patterns of -2 .. 2 (exactly representable in both fp8 formats)
FP8_BITS = {"e4m3": {-2: 0xC0, -1: 0xB8, 0: 0x00, 1: 0x38, 2: 0x40},
            "e5m2": {-2: 0xC0, -1: 0xBC, 0: 0x00, 1: 0x3C, 2: 0x40}}


@pytest.mark.parametrize("tokens", [("e4m3", "fp32"), ("e5m2", "fp16")], ids="_".join)
def test_the_fp8_variants_multiply_on_the_interpreter(tokens):
    # fp8 data travels as uint8 bit patterns (docs/runtime.md); small integers are exact in every type here
    a_type, c_type = workgroup.VARIANTS[tokens]
    kernel = workgroup.variant(a_type, c_type)
    m, n, k, tile = 32, 32, 64, 16
    rng = np.random.default_rng(3)
    a, b = rng.integers(-2, 3, (m, k)), rng.integers(-2, 3, (k, n))
    bits = np.vectorize(FP8_BITS[tokens[0]].__getitem__, otypes=[np.uint8])
    dt_c = {"fp16": np.float16, "fp32": np.float32}[tokens[1]]
    c = rng.integers(-2, 3, (m, n)).astype(dt_c)
    d = np.zeros((m, n), dt_c)
    kernel.launch((n // tile, m // tile, 1), {"inputA": bits(a), "inputB": bits(b), "inputC": c, "outputO": d},
                  device="cpu", TILE_M=tile, TILE_N=tile, TILE_K=tile, K=k, M=m, N=n, alpha=1.0, beta=1.0,
                  BColMajor=False, WG=64)
    np.testing.assert_array_equal(d.astype(np.int64), a @ b + c.astype(np.int64))


@pytest.mark.parametrize("forms", [(), ("func",), ("func", "visibility"), ("outer_if",), ("func", "private"),
                                   ("func", "private", "writeback"), ("func", "aligned"), ("func", "glsl_order"),
                                   ("func", "reread"), shmem.DEFAULT_FORMS])
def test_the_shmem_code_shape_forms_validate_and_keep_the_interface(forms):
    kernel = shmem.variant(*shmem.VARIANTS[("fp16", "fp32")], forms)
    text = kernel.disassemble()                                   # accepted by spirv-val
    spec = {s["id"]: s["name"] for s in kernel.reflect()["spec_constants"]}
    assert {i: spec[i] for i in PEER_SPEC_IDS} == PEER_SPEC_IDS
    # "func": the offsets go through a device function, as the GLSL's coordToOffset
    assert ("OpFunctionCall" in text) == ("func" in forms)
    assert ("MakePointerAvailable" in text) == ("visibility" in forms)
    assert ("%result = OpVariable" in text and "Private" in text.split("%result = OpVariable")[1].split("\n")[0]) \
        == ("private" in forms)
    # "aligned": the C load and the D store declare glslang's 16 bytes
    assert ("OpCooperativeMatrixStoreKHR" in text and text.split("OpCooperativeMatrixStoreKHR")[1].split("\n")[0]
            .endswith("Aligned 16")) == ("aligned" in forms)
    # "reread": the invocation index read from its built-in at each use, not once
    assert (text.count("OpLoad %v3uint %local_invocation_id") > 1) == ("reread" in forms)
    # "glsl_order": B's base offset is computed after A's first loads, as in the GLSL
    first_a_load = text.index("OpLoad %v4uint")
    calls = [i for i in range(len(text)) if text.startswith("OpFunctionCall", i)]
    if "func" in forms:
        assert (calls[1] > first_a_load) == ("glsl_order" in forms)


def test_the_glsl_order_forms_need_the_function_and_the_per_row_test():
    with pytest.raises(ValueError, match="the glsl_order and reread forms need the func form"):
        shmem.variant(*shmem.VARIANTS[("fp16", "fp32")], ("glsl_order",))
    with pytest.raises(ValueError, match="the glsl_order and reread forms need the func form"):
        shmem.variant(*shmem.VARIANTS[("fp16", "fp32")], ("func", "reread", "outer_if"))


@pytest.mark.parametrize("forms", [(), ("func", "private"), shmem.DEFAULT_FORMS], ids=["no forms", "func,private",
                                                                                       "default"])
@pytest.mark.parametrize("tokens", [("fp16", "fp32"), ("fp16", "fp16"), ("s8", "s32")], ids="_".join)
@pytest.mark.parametrize("b_col_major", [False, True], ids=["B row-major", "B column-major"])
def test_the_shmem_port_multiplies_on_the_interpreter(forms, tokens, b_col_major):
    # the harness's smallest tiles (128 x 128, TILE_K 16 or 32 for 16-bit and 64 for 8-bit inputs) over two
    # K slices, with the spec constants the harness sets (its BColMajor picks B's layout at pipeline creation)
    a_type, c_type = shmem.VARIANTS[tokens]
    kernel = shmem.variant(a_type, c_type, forms)
    tm = tn = 128
    tk = 64 if tokens[0] == "s8" else 16
    m, n, k = tm, tn, 2 * tk
    a, b, c, d = _small_ints(tokens, m, n, k, seed=2)
    b_mem = b.T.copy() if b_col_major else b
    kernel.launch((n // tn, m // tm, 1),
                  {"inputAV4": a.view(np.uint32).reshape(-1, 4), "inputBV4": b_mem.view(np.uint32).reshape(-1, 4),
                   "inputC": c, "outputO": d},
                  device="cpu", lM=16, lN=16, lK=32 if tokens[0] == "s8" else 16, TILE_M=tm, TILE_N=tn, TILE_K=tk,
                  K=k, strideA=k, strideB=k if b_col_major else n, strideC=n, strideD=n, alpha=2.0, beta=-1.0,
                  BColMajor=b_col_major, A_ROW_LEN=tk, A_NUM_ROWS=tm, B_ROW_LEN=tk if b_col_major else tn,
                  B_NUM_ROWS=tn if b_col_major else tk, WG=256, M=m, N=n)
    ref = 2 * (a.astype(np.int64) @ b.astype(np.int64)) - c.astype(np.int64)
    np.testing.assert_array_equal(d.astype(np.int64), ref)


@pytest.mark.parametrize("group_m", [2, shmem.GROUP_M])
@pytest.mark.parametrize("b_col_major", [False, True], ids=["B row-major", "B column-major"])
def test_the_grouped_shmem_form_covers_every_block_once(monkeypatch, group_m, b_col_major):
    # 5 block rows x 2 block columns: with GROUP_M 2 the last group has one row; with 8, one group of 5
    monkeypatch.setattr(shmem, "GROUP_M", group_m)
    tokens = ("fp16", "fp32")
    kernel = shmem.variant(*shmem.VARIANTS[tokens], shmem.DEFAULT_FORMS + ("grouped",))
    assert "NumWorkgroups" in kernel.disassemble()
    tm = tn = 128
    tk = 16
    m, n, k = 5 * tm, 2 * tn, 2 * tk
    a, b, c, d = _small_ints(tokens, m, n, k, seed=4)
    b_mem = b.T.copy() if b_col_major else b
    kernel.launch((n // tn, m // tm, 1),
                  {"inputAV4": a.view(np.uint32).reshape(-1, 4), "inputBV4": b_mem.view(np.uint32).reshape(-1, 4),
                   "inputC": c, "outputO": d},
                  device="cpu", lM=16, lN=16, lK=16, TILE_M=tm, TILE_N=tn, TILE_K=tk,
                  K=k, strideA=k, strideB=k if b_col_major else n, strideC=n, strideD=n, alpha=1.0, beta=3.0,
                  BColMajor=b_col_major, A_ROW_LEN=tk, A_NUM_ROWS=tm, B_ROW_LEN=tk if b_col_major else tn,
                  B_NUM_ROWS=tn if b_col_major else tk, WG=256, M=m, N=n)
    ref = a.astype(np.int64) @ b.astype(np.int64) + 3 * c.astype(np.int64)
    np.testing.assert_array_equal(d.astype(np.int64), ref)


def test_an_unknown_shmem_form_is_refused():
    known = "outer_if, visibility, func, private, writeback"
    with pytest.raises(ValueError, match=rf"unknown forms \['fast'\]; known: {known}"):
        shmem.variant(*shmem.VARIANTS[("fp16", "fp32")], ["fast"])


def test_the_port_is_built_in_the_glsl_shape_by_default(monkeypatch):
    # offsets through a function, Private accumulators, the GLSL's statement order and built-in reads: the
    # shape whose timings docs/benchmarks.md reports
    monkeypatch.delenv("COOPDSL_PEER_OPTS", raising=False)
    default = shmem.variant(*shmem.VARIANTS[("fp16", "fp32")], shmem.DEFAULT_FORMS).compile()
    assert shmem.DEFAULT_FORMS == ("func", "private", "glsl_order", "reread")
    assert shmem.OPTS == set(shmem.DEFAULT_FORMS)
    assert shmem.variant(*shmem.VARIANTS[("fp16", "fp32")]).compile() == default


def test_the_binary_probe_reports_what_the_cache_data_holds():
    from benchmarks.peer_gemm.binary_probe import describe

    blob = bytes(56) + b"CPKV" + bytes(range(256)) * 4 + b"\x7fELF" + bytes(12)
    text = describe(blob)
    assert text.startswith(f"{len(blob)} bytes, 'CPKV' tag at 56, ") and text.endswith("ELF images at [1084]")
    assert describe(bytes(100)).endswith("'CPKV' tag at none, 0.00 bits/byte, ELF images at none")


def test_compare_runs_finds_configurations_below_in_every_run(tmp_path):
    import json

    from benchmarks.peer_gemm import compare_runs

    def raw(name, results):
        path = tmp_path / name
        path.write_text(json.dumps({"results": results}))
        return path

    k1, k2 = "fp16_fp16|16x8x16|256|128|32|0|256", "u8_u32|16x16x32|128|256|64|1|256"
    k3 = "s8_s32|16x8x32|128|128|64|1|256"
    run1 = compare_runs.ratios([raw("a.json", {k1: {"theirs": [100.0], "ours": [96.0]},
                                              k2: {"theirs": [100.0], "ours": [99.0]}}),
                                raw("b.json", {k3: {"theirs": [10.0, 10.0, 11.0], "ours": [10.0, 10.2, 9.0]}})])
    run2 = compare_runs.ratios([raw("c.json", {k1: {"theirs": [100.0], "ours": [97.0]},
                                              k2: {"theirs": [100.0], "ours": [100.2]},
                                              k3: {"theirs": [10.0], "ours": [10.0]}})])
    assert run1[k3] == 1.0  # medians: 10.0 / 10.0
    lines = compare_runs.report([run1, run2], ["one", "two"])
    assert lines[0] == "- one: 1 of 3 configurations at 1.00 or above, lowest 0.960"
    assert lines[1] == "- two: 2 of 3 configurations at 1.00 or above, lowest 0.970"
    assert lines[2] == f"- below 1.00 in every run: 1 ({k1})"
    assert "| fp16_fp16 | 16x8x16 | 256x128x32 | 0 | 0.960 | 0.970 |" in lines
    assert "| u8_u32 | 16x16x32 | 128x256x64 | 1 | 0.990 | 1.002 |" in lines
