"""SPIR-V: grammar tables, the module builder, the IR-to-SPIR-V writer (lowerings in ``lower/``) and the SPIRV-Tools wrappers."""
