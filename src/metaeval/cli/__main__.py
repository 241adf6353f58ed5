"""``python -m metaeval.cli``: the same command as ``metaeval``."""

from . import main

if __name__ == "__main__":  # pragma: no cover
    main(prog_name="metaeval")
