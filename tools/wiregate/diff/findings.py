"""Findings: one judged change between two schemas, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wiregate.diff.witness import Witness

__all__ = ["LEVELS", "Change"]

# Most severe first; the order of sorting and of reports. ``unknown``: a construct beyond the
# engine, reported as such and never counted against the verdict.
LEVELS = ("error", "warning", "unknown", "info")


@dataclass(frozen=True)
class Change:
    """One semantic change.

    ``backward``: the new schema still accepts every value the old one accepted (consumers can
    upgrade first). ``forward``: the old schema accepts every value the new one accepts
    (producers can upgrade first). ``tolerated_by`` names the policy that made a direction
    compatible that strict set semantics would not. A change the engine cannot decide has
    level ``unknown`` and both directions true: it never fails the verdict.
    ``root_old_pointer``/``root_new_pointer`` name where the edit behind the change was made in
    each document (by default the change's own pointers); changes caused by one edit share
    them. ``witness``: for a change that breaks the verdict, a value confirmed by the reference
    validator to show it (None when none was found). ``subject``: the item of the keyword's
    value the change is about when one keyword yields a change per item (the property name
    of a ``required`` change), so each such change has its own identity.
    """

    id: str
    level: str
    old_pointer: str
    new_pointer: str
    message: str
    backward: bool
    forward: bool
    tolerated_by: str | None = None
    root_old_pointer: str = ""
    root_new_pointer: str = ""
    # A value proving the direction that breaks the verdict (see ``wiregate.diff.witness``).
    witness: Witness | None = field(default=None, compare=False)
    subject: str | None = None

    def __post_init__(self) -> None:
        if not self.root_old_pointer:
            object.__setattr__(self, "root_old_pointer", self.old_pointer)
        if not self.root_new_pointer:
            object.__setattr__(self, "root_new_pointer", self.new_pointer)

    def sort_key(self) -> tuple[int, str, str, str, str]:
        return (LEVELS.index(self.level), self.old_pointer, self.new_pointer, self.id, self.message)
