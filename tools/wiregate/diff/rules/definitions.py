"""Document-level ``$defs`` entries (draft-07 ``definitions`` are normalised to ``$defs``).

An entry that the root references is judged where the reference is: adding or removing it
changes nothing by itself (a ``$ref`` written inline instead is the same schema). An entry
that the root does not reference is a schema of its own, a record type validated by name
(``wiregate validate --record NAME``): removing it rejects every record validated by that
name, as a schema that now rejects every value would, and adding one accepts records under a
name old readers reject.
"""

from __future__ import annotations

from collections.abc import Iterator, Set

from wiregate.diff.load import Schema, escape
from wiregate.diff.rules.base import RawFinding

DEFINITION_ADDED = "definition-added"
DEFINITION_REMOVED = "definition-removed"


def check(old_document: Schema, new_document: Schema, reached: Set[str]) -> Iterator[RawFinding]:
    """``reached``: the pointers of every schema either root reaches through references."""
    old_defs: dict[str, Schema] = old_document.get("$defs") or {}
    new_defs: dict[str, Schema] = new_document.get("$defs") or {}
    for name in sorted(new_defs.keys() - old_defs.keys()):
        pointer = f"#/$defs/{escape(name)}"
        named = pointer not in reached
        yield RawFinding(
            DEFINITION_ADDED,
            "#",
            pointer,
            f"definition {name!r} added"
            + (": a record type of its own, unknown to old readers" if named else ""),
            backward=True,
            forward=not named,
        )
    for name in sorted(old_defs.keys() - new_defs.keys()):
        pointer = f"#/$defs/{escape(name)}"
        named = pointer not in reached
        yield RawFinding(
            DEFINITION_REMOVED,
            pointer,
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
