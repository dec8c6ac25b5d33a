"""SPIR-V: grammar tables, the module builder, the IR-to-SPIR-V writer and the SPIRV-Tools wrappers.

The lowerings of the op families are in ``lower/``.
"""
