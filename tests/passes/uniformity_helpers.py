"""A device function in a module of its own, for tests/passes/test_uniformity.py's cross-module call site."""

import coopdsl as cd


@cd.func
def sync_if(n):
    if n > 2:
        cd.barrier()
