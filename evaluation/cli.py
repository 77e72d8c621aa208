"""What the command lines over evaluation/ share: `UsageError`, raised by a library call for an argument it cannot
use (a missing file, a missing option), which the script turns into argparse's usage error (exit status 2)."""


class UsageError(ValueError):
    """A command-line argument the library cannot use; its message is what the user is told."""
