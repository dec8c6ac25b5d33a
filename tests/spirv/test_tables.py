import json

from coopdsl.spirv import gen_tables
from coopdsl.spirv._tables import ENUMS, GLSL_STD_450, GRAMMAR_VERSION, INSTRUCTIONS, MAGIC, OPERAND_KINDS


def test_generated_tables_are_current():
    assert gen_tables.OUTPUT.read_text() == gen_tables.render(), \
        "coopdsl/spirv/_tables.json is stale: run python -m coopdsl.spirv.gen_tables"


def test_the_generated_file_says_do_not_edit_and_holds_one_row_a_line():
    text = gen_tables.OUTPUT.read_text()
    assert json.loads(text)["comment"].startswith("DO NOT EDIT.")
    assert '\n"OpCooperativeMatrixMulAddKHR":[4459,' in text


def test_rows_load_as_tuples():
    """The loader gives the rows the shape the generator describes (tuples, as the tables always had)."""
    assert MAGIC == 0x07230203 and GRAMMAR_VERSION == (1, 6)
    opcode, operands, caps, exts, version = INSTRUCTIONS["OpCooperativeMatrixLoadKHR"]
    assert operands[:3] == (("IdResultType", "", ""), ("IdResult", "", ""), ("IdRef", "", "Pointer"))
    assert (caps, exts, version) == (("CooperativeMatrixKHR",), (), None)  # the extension comes with the capability
    assert ENUMS["Decoration"]["SpecId"][1] == ("LiteralInteger",)
    assert GLSL_STD_450["FMix"] == (46, 3)


def test_cooperative_matrix_opcodes_from_the_grammar():
    assert INSTRUCTIONS["OpTypeCooperativeMatrixKHR"][0] == 4456
    assert INSTRUCTIONS["OpCooperativeMatrixLoadKHR"][0] == 4457
    assert INSTRUCTIONS["OpCooperativeMatrixStoreKHR"][0] == 4458
    assert INSTRUCTIONS["OpCooperativeMatrixMulAddKHR"][0] == 4459
    assert INSTRUCTIONS["OpCooperativeMatrixLengthKHR"][0] == 4460
    assert INSTRUCTIONS["OpCooperativeMatrixLoadTensorNV"][0] == 5367
    assert INSTRUCTIONS["OpBitCastArrayQCOM"][0] == 4497
    assert INSTRUCTIONS["OpCooperativeMatrixMulAddKHR"][2] == ("CooperativeMatrixKHR",)


def test_enumerants_and_their_requirements():
    assert ENUMS["Capability"]["CooperativeMatrixKHR"][0] == 6022
    assert ENUMS["Capability"]["CooperativeMatrixKHR"][3] == ("SPV_KHR_cooperative_matrix",)
    assert ENUMS["CooperativeMatrixOperands"]["SaturatingAccumulationKHR"][0] == 0x10
    assert ENUMS["MemoryAccess"]["Aligned"][1] == ("LiteralInteger",)
    assert ENUMS["TensorClampMode"]["RepeatMirrored"][0] == 4
    assert OPERAND_KINDS["IdRef"] == "Id"


def test_generator_without_the_grammar_says_it_needs_a_checkout(monkeypatch, tmp_path, capsys):
    """The wheel leaves the grammar JSON out; the generator then explains instead of a traceback."""
    monkeypatch.setattr(gen_tables, "GRAMMAR", tmp_path / "spirv.core.grammar.json")
    assert gen_tables.main(["--check"]) == 2
    assert "not in the wheel: run this from a coopdsl checkout" in capsys.readouterr().err


def test_the_lazily_decoded_tables_hold_every_row_of_the_file():
    """INSTRUCTIONS and ENUMS decode rows on first use; all of them equal a plain decode of the file."""
    data = json.loads(gen_tables.OUTPUT.read_text())
    assert list(INSTRUCTIONS) == list(data["instructions"]) and len(INSTRUCTIONS) == len(data["instructions"])
    for name, (code, operands, caps, exts, version) in data["instructions"].items():
        assert INSTRUCTIONS[name] == (code, tuple(map(tuple, operands)), tuple(caps), tuple(exts), version)
    assert list(ENUMS) == list(data["enums"])
    for kind, rows in data["enums"].items():
        assert ENUMS[kind] == {n: (v, tuple(p), tuple(c), tuple(e), ver) for n, (v, p, c, e, ver) in rows.items()}
    assert OPERAND_KINDS == data["operand_kinds"]
    assert GLSL_STD_450 == {n: tuple(r) for n, r in data["glsl_std_450"].items()}
    assert "OpNoSuchThing" not in INSTRUCTIONS and INSTRUCTIONS.get("OpNoSuchThing") is None
