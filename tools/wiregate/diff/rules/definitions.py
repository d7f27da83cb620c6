"""Document-level ``$defs`` entries (draft-07 ``definitions`` are normalised to ``$defs``).

An entry that something in the document references (the root, or another entry, directly or
through a chain of references) is a building block, judged where the references are: adding
or removing it changes nothing by itself (a ``$ref`` written inline instead is the same
schema), since every change it makes shows up in the schemas that reference it. An entry that
nothing references is a schema of its own, a record type validated by name
(``wiregate validate --record NAME``): removing it rejects every record validated by that
name, as a schema that now rejects every value would, and adding one accepts records under a
name old readers reject. Entries that only reference one another in a cycle, with nothing
outside the cycle referencing any of them, are record types too: otherwise a group of new
record types would pass unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Set
from contextlib import suppress

from wiregate.diff.keywords import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
)
from wiregate.diff.load import Schema
from wiregate.diff.rules.base import RawFinding
from wiregate.pointer import PointerError, escape, split

DEFINITION_ADDED = "definition-added"
DEFINITION_REMOVED = "definition-removed"

_DEFS_PREFIX = "#/$defs/"


def check(old_document: Schema, new_document: Schema) -> Iterator[RawFinding]:
    old_defs: dict[str, Schema] = old_document.get("$defs") or {}
    new_defs: dict[str, Schema] = new_document.get("$defs") or {}
    new_record_types = record_types(new_document)
    for name in sorted(new_defs.keys() - old_defs.keys()):
        named = name in new_record_types
        yield RawFinding(
            DEFINITION_ADDED,
            "#",
            _DEFS_PREFIX + escape(name),
            f"definition {name!r} added"
            + (": a record type of its own, unknown to old readers" if named else ""),
            backward=True,
            forward=not named,
        )
    old_record_types = record_types(old_document)
    for name in sorted(old_defs.keys() - new_defs.keys()):
        named = name in old_record_types
        yield RawFinding(
            DEFINITION_REMOVED,
            _DEFS_PREFIX + escape(name),
            "#",
            f"definition {name!r} removed"
            + (
                ": a record type of its own, records validated by that name are rejected"
                if named
                else ""
            ),
            backward=not named,
            forward=True,
        )


def record_types(document: Schema) -> frozenset[str]:
    """Names of the ``$defs`` entries of a normalised ``document`` that nothing else references.

    An entry is a building block when the root reaches it, or when an entry outside its own
    reference cycle reaches it (an entry referencing itself is still a record type).
    """
    defs: dict[str, Schema] = document.get("$defs") or {}
    edges = {name: _referenced_names(schema) & defs.keys() for name, schema in defs.items()}
    from_root = _reach(
        _referenced_names({k: v for k, v in document.items() if k != "$defs"}), edges
    )
    reach = {name: _reach(targets, edges) for name, targets in edges.items()}
    return frozenset(
        name
        for name in defs
        if name not in from_root
        and not any(
            name in reach[other] and other not in reach[name] for other in defs if other != name
        )
    )


def _reach(start: Set[str], edges: Mapping[str, Set[str]]) -> set[str]:
    """Every entry reached from the entries ``start`` names, following ``edges`` (the entries
    each entry references)."""
    seen: set[str] = set()
    pending = [name for name in start if name in edges]
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(edges[name] - seen)
    return seen


def _referenced_names(schema: Schema) -> set[str]:
    """Names of the ``$defs`` entries that ``$ref`` s anywhere in ``schema`` point into (a
    reference to a location inside an entry references the entry)."""
    names: set[str] = set()
    pending: list[object] = [schema]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_DEFS_PREFIX):
                with suppress(PointerError):  # a malformed $ref is reported where it is used
                    names.add(split(value)[1])
            elif key in SUBSCHEMA_KEYWORDS:
                pending.append(value)
            elif key in SUBSCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                pending.extend(value.values())
            elif key in SUBSCHEMA_LIST_KEYWORDS and isinstance(value, list):
                pending.extend(value)
    return names
