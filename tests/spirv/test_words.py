from coopdsl.spirv.words import from_bytes, header, instruction, string_words, to_bytes


def test_string_padding_and_terminator():
    assert string_words("") == [0]
    assert string_words("abc") == [0x00636261]
    assert string_words("abcd") == [0x64636261, 0]  # NUL needs a new word
    assert len(string_words("GLSL.std.450")) == 4


def test_instruction_word_count_in_high_half():
    words = instruction(17, [1])  # OpCapability Shader
    assert words == [(2 << 16) | 17, 1]
    assert instruction(253, []) == [(1 << 16) | 253]


def test_header():
    h = header((1, 6), 42)
    assert h == [0x07230203, 0x00010600, 0, 42, 0]


def test_bytes_round_trip_little_endian():
    words = [0x07230203, 1, 0xFFFFFFFF]
    data = to_bytes(words)
    assert data[:4] == b"\x03\x02\x23\x07"
    assert from_bytes(data) == words
