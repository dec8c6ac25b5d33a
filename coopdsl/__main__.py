"""``python -m coopdsl``: the coopdsl command line (same as the ``coopdsl`` script)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
