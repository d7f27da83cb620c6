"""Errors caused by the user's input: reported as one line with exit code 2, never a traceback."""


class UserError(Exception):
    """Bad usage or unreadable input. The message names the file, line or field."""

    exit_code = 2
