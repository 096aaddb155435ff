"""The one error type a user can cause; the CLIs print its message and exit 2, no traceback."""


class GenebError(Exception):
    """A problem the user can fix: the message names the file, task or model and what to do."""
