"""The one check of a schema document against the metaschema of a JSON Schema draft.

Used by ``wiregate diff`` (each document under its own draft), ``wiregate check`` and codegen
(the canonical contract, always draft 2020-12). The compiled validator (``jsonschema_rs``,
formats asserted, so a ``pattern`` that is no regex is caught) answers first; only a document
it rejects is checked again by ``jsonschema``, whose ``check_schema`` error names the
offending keyword and gives the wording. Where the two disagree, ``jsonschema`` decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from wiregate.pointer import join

__all__ = [
    "DRAFTS",
    "METASCHEMAS",
    "MetaschemaViolation",
    "draft_of_dialect",
    "validator_class",
    "violation",
]

#: Draft name -> the URI a document names it by in ``$schema`` (as the metaschema writes it).
METASCHEMAS: dict[str, str] = {
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
}
DRAFTS = tuple(METASCHEMAS)
_BY_DIALECT = {uri.rstrip("#"): draft for draft, uri in METASCHEMAS.items()}
MESSAGE_LIMIT = 200


def draft_of_dialect(dialect: object) -> str | None:
    """The draft a ``$schema`` value names (with or without the empty fragment), else None."""
    if not isinstance(dialect, str):
        return None
    return _BY_DIALECT.get(dialect.rstrip("#"))


@dataclass(frozen=True)
class MetaschemaViolation:
    """The first keyword of a document that its draft's metaschema rejects."""

    draft: str
    path: tuple[str | int, ...]
    #: One line, at most ``MESSAGE_LIMIT`` characters (the message repeats the offending
    #: value, however large).
    message: str

    @property
    def pointer(self) -> str:
        """The JSON pointer of the offending keyword (``""`` for the document itself)."""
        return join("", *self.path)

    @property
    def metaschema(self) -> str:
        """The metaschema's URI, without the empty fragment."""
        return METASCHEMAS[self.draft].rstrip("#")


def violation(document: Mapping[str, Any], draft: str) -> MetaschemaViolation | None:
    """None when ``document`` is valid against the metaschema of ``draft`` (one of
    :data:`DRAFTS`), whatever its own ``$schema`` says; else the offending keyword."""
    if draft not in METASCHEMAS:
        raise ValueError(f"unknown draft {draft!r}; expected one of {', '.join(DRAFTS)}")
    schema = dict(document)  # both validators take a dict (a shallow copy is cheap)
    try:
        if _compiled(draft).is_valid(schema):
            return None
    except UnicodeEncodeError:
        pass  # a lone surrogate in a key, which the compiled validator cannot take
    from jsonschema.exceptions import SchemaError

    try:
        validator_class(draft).check_schema(schema)
    except SchemaError as exc:
        message = " ".join(exc.message.split())
        if len(message) > MESSAGE_LIMIT:
            message = message[: MESSAGE_LIMIT - 3] + "..."
        return MetaschemaViolation(draft, tuple(exc.absolute_path), message)
    return None


@cache
def _compiled(draft: str) -> Any:
    # Imported here: start-up stays light for commands that never check a schema.
    import jsonschema_rs

    # The metaschema by reference: jsonschema_rs ships every draft's, and importing jsonschema
    # for its copy would cost more than the whole check.
    uri = METASCHEMAS[draft]
    return jsonschema_rs.validator_for({"$schema": uri, "$ref": uri}, validate_formats=True)


def validator_class(draft: str) -> Any:
    """The reference validator (jsonschema) of ``draft``: what a document read under that
    draft means."""
    from jsonschema import validators

    return {
        "draft-04": validators.Draft4Validator,
        "draft-06": validators.Draft6Validator,
        "draft-07": validators.Draft7Validator,
        "2019-09": validators.Draft201909Validator,
        "2020-12": validators.Draft202012Validator,
    }[draft]
