"""``mem[i].member`` reads only the member (an access chain to it, as glslang does), and ``mem[i].arr[j]``
one element of an array member: loading the whole struct and extracting the member made the driver read
every byte of a 144-byte ggml q4_K block to get its 16-byte head."""

from __future__ import annotations

import numpy as np

import coopdsl as cd
from coopdsl import f32, u32, vec4

from ..conftest import compile_checked


@cd.struct
class Block:
    head: vec4[u32]
    scale: f32
    qs: cd.array[u32, 7]


BLOCK = np.dtype({"names": ["head", "scale", "qs"], "formats": [(np.uint32, 4), np.float32, (np.uint32, 7)],
                  "offsets": [0, 16, 20], "itemsize": 48})


@cd.kernel(workgroup_size=(4, 1, 1))
def k_reads(blocks: cd.Buffer[Block], out: cd.Buffer[u32], outf: cd.Buffer[f32]):
    i = cd.global_invocation_id.x
    h = blocks[i].head
    out[i] = h.y + blocks[i].qs[i + 1]
    outf[i] = blocks[i].scale


@cd.kernel(workgroup_size=(4, 1, 1))
def k_writes(blocks: cd.Buffer[Block]):
    i = cd.global_invocation_id.x
    blocks[i].qs[6] = blocks[i].qs[0] + u32(1)


@cd.kernel(workgroup_size=(4, 1, 1))
def k_ptr(blocks: cd.Ptr[Block], out: cd.Buffer[u32]):
    i = cd.global_invocation_id.x
    out[i] = blocks[i].qs[2] + blocks[i].head.x


def _blocks() -> np.ndarray:
    b = np.zeros(4, BLOCK)
    b["head"] = np.arange(16, dtype=np.uint32).reshape(4, 4)
    b["scale"] = [0.5, 1.5, 2.5, 3.5]
    b["qs"] = 100 * np.arange(4, dtype=np.uint32)[:, None] + np.arange(7, dtype=np.uint32)
    return b


def test_a_member_read_is_an_access_chain_to_the_member_not_a_load_of_the_element():
    text = compile_checked(k_reads, r"OpAccessChain %_ptr_StorageBuffer_v4uint %\w+ %uint_0",
                           r"OpLoad %v4uint", r"OpLoad %float", r"OpAccessChain %_ptr_StorageBuffer_uint %\w+ %uint_2 ")
    assert "OpLoad %Block" not in text


def test_member_reads_on_the_interpreter():
    b = _blocks()
    out = np.zeros(4, np.uint32)
    outf = np.zeros(4, np.float32)
    k_reads.launch((1, 1, 1), b, out, outf, device="cpu")
    i = np.arange(4)
    assert out.tolist() == (b["head"][:, 1] + b["qs"][i, i + 1]).tolist()
    assert outf.tolist() == [0.5, 1.5, 2.5, 3.5]


def test_an_array_member_element_can_be_written_and_the_buffer_is_writable():
    text = compile_checked(k_writes, r"OpStore %\w+ %\w+")
    assert "NonWritable" not in text
    b = _blocks()
    k_writes.launch((1, 1, 1), b, device="cpu")
    assert b["qs"][:, 6].tolist() == (b["qs"][:, 0] + 1).tolist()


def test_member_reads_through_a_device_pointer():
    text = compile_checked(k_ptr, r"OpAccessChain %_ptr_PhysicalStorageBuffer_uint %\w+ %uint_2 ",
                           r"OpLoad %uint %\w+ Aligned 4", r"OpLoad %v4uint %\w+ Aligned 4")
    assert "OpLoad %Block" not in text


@cd.kernel(workgroup_size=(4, 1, 1))
def k_global_element(o: cd.Buffer[f32]):
    o[0] = f32(1.0)            # the global type, as Python reads it: f32 is not local here
    f32[0] = 2.0  # E:global


def test_an_element_assignment_does_not_make_its_root_a_local_name():
    from coopdsl.errors import TypeMismatchError

    from ..conftest import expect_error

    expect_error(k_global_element, TypeMismatchError, "cannot assign to an element of the type f32", "# E:global", 5)
