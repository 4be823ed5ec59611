"""A samples-hook module that stops the interpreter while it is imported (a CLI module imported by mistake): the
audit exited 0 with no output at all (hunt 60)."""

import sys

sys.exit(0)


def samples(op):
    return []
