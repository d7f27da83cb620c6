"""Errors of the code generator; the message is one line naming the file and the place."""

from __future__ import annotations


class CodegenError(Exception):
    """The contract cannot be turned into code (a construct the stubs do not support)."""


class BrokenSchemaError(CodegenError):
    """A schema file is not valid JSON, not a valid draft 2020-12 schema, or a ``$ref`` in it
    does not resolve."""
