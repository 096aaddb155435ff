"""The one error type a user can cause; the CLIs print its message and exit 2, no traceback."""


class GenebError(Exception):
    """A problem the user can fix: the message names the file, task or model and what to do."""


def brief(exc: BaseException, limit: int = 160) -> str:
    """The first line of an exception's message, cut to `limit` characters (library errors,
    delta-rs' above all, can run to many lines of internals)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 1] + "…"
