"""Build small IR modules by hand, lower them and run spirv-val (no front end involved)."""

from __future__ import annotations

from coopdsl.errors import SourceLoc
from coopdsl.ir import types as T
from coopdsl.ir.builder import Emitter
from coopdsl.ir.core import Function, GlobalVar, Module
from coopdsl.ir.layout import array_block
from coopdsl.passes import run_pipeline
from coopdsl.spirv import tools
from coopdsl.spirv.words import to_bytes
from coopdsl.spirv.writer import write

LOC = SourceLoc("hand-built.py", 7, 3)


def kernel_module(name: str = "k") -> tuple[Module, Emitter]:
    """A module with an empty entry function and an emitter positioned in its entry block."""
    m = Module(name, workgroup_size=(1, 1, 1))
    f = Function(name, T.FunctionType(T.void, ()), [], is_entry=True, loc=LOC)
    m.functions.append(f)
    em = Emitter(m, f, LOC)
    em.start(em.new_block("entry"))
    return m, em


def buffer(m: Module, name: str, elem: T.Type, binding: int) -> GlobalVar:
    """A storage buffer ``{ elem data[]; }`` at set 0."""
    g = GlobalVar(T.PointerType(array_block(f"{name}_block", elem), "StorageBuffer"), name, "buffer", set=0,
                  binding=binding)
    m.globals.append(g)
    return g


def lower(m: Module, env: str = "vulkan1.3") -> tuple[bytes, str]:
    """Verify, run the pipeline, write words, validate; returns (binary, disassembly)."""
    run_pipeline(m)
    binary = to_bytes(write(m, tools.TARGET_ENVS[env]))
    message = tools.validation_message(binary, env)
    assert message is None, message
    return binary, tools.disassemble(binary)
