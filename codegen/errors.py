"""Errors of the code generator; the message is one line naming the file and the place."""

from __future__ import annotations


class CodegenError(Exception):
    """The contract cannot be turned into code (a construct the stubs do not support)."""


class BrokenSchemaError(CodegenError):
    """A schema file is not valid JSON, not a valid draft 2020-12 schema, or a ``$ref`` in it
    does not resolve."""


class GeneratorMissingError(CodegenError):
    """The generator stack (the ``codegen`` extra) is not installed."""

    def __init__(self, missing: str) -> None:
        super().__init__(
            f"the code generator needs the codegen extra ({missing} is not installed): "
            "pip install 'wiregate[codegen]'"
        )


def shorten(message: str, limit: int = 200) -> str:
    """One line of bounded length: a generator's message may repeat a large value."""
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
