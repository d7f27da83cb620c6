"""Document-level ``$defs`` entries (draft-07 ``definitions`` are normalised to ``$defs``)."""

from __future__ import annotations

from collections.abc import Iterator

from wiregate.diff.load import Schema, escape
from wiregate.diff.rules.base import RawFinding

DEFINITION_ADDED = "definition-added"
DEFINITION_REMOVED = "definition-removed"


def check(old_document: Schema, new_document: Schema) -> Iterator[RawFinding]:
    """An added or removed entry changes nothing by itself: a reference to it does, and that
    reference is judged where it is."""
    old_defs: dict[str, Schema] = old_document.get("$defs") or {}
    new_defs: dict[str, Schema] = new_document.get("$defs") or {}
    for name in sorted(new_defs.keys() - old_defs.keys()):
        yield RawFinding(
            DEFINITION_ADDED,
            "#",
            f"#/$defs/{escape(name)}",
            f"definition {name!r} added",
            backward=True,
            forward=True,
        )
    for name in sorted(old_defs.keys() - new_defs.keys()):
        yield RawFinding(
            DEFINITION_REMOVED,
            f"#/$defs/{escape(name)}",
            "#",
            f"definition {name!r} removed",
            backward=True,
            forward=True,
        )
