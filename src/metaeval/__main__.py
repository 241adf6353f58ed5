"""``python -m metaeval``: the same command as ``metaeval``."""

from .cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    main(prog_name="metaeval")
