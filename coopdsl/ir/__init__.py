"""The typed SSA IR: types, values and ops (one module a family in ``ops/``), the builder, verifier and printer."""
