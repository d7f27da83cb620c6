"""The verdict: every finding of one comparison and whether the schemas are compatible."""

from __future__ import annotations

from dataclasses import dataclass

from wiregate.diff.drafts import Drafts
from wiregate.diff.findings import Change

__all__ = ["MODES", "POLICIES", "DiffResult", "level_for"]

MODES = ("backward", "forward", "full")
POLICIES = ("strict", "lenient")


def level_for(
    backward: bool, forward: bool, mode: str, tolerated: bool, undecided: bool = False
) -> str:
    """``error`` breaks the verdict under ``mode``; ``warning`` is compatible under ``mode`` but
    not in the other direction (or only by policy); ``unknown`` is beyond the engine (never a
    break); ``info`` is compatible both ways."""
    if undecided:
        return "unknown"
    needed = {"backward": (backward,), "forward": (forward,), "full": (backward, forward)}[mode]
    if not all(needed):
        return "error"
    if not (backward and forward) or tolerated:
        return "warning"
    return "info"


@dataclass(frozen=True)
class DiffResult:
    mode: str
    policy: str
    changes: tuple[Change, ...]
    #: The draft each document was read under (None for a result not made by the engine).
    drafts: Drafts | None = None

    @property
    def backward_compatible(self) -> bool:
        return all(change.backward for change in self.changes)

    @property
    def forward_compatible(self) -> bool:
        return all(change.forward for change in self.changes)

    @property
    def compatible(self) -> bool:
        if self.mode == "backward":
            return self.backward_compatible
        if self.mode == "forward":
            return self.forward_compatible
        return self.backward_compatible and self.forward_compatible

    @property
    def equivalent(self) -> bool:
        """The schemas accept the same values: only changes compatible both ways by set semantics
        (annotations, defaults, an added or removed definition that something else references)
        remain; an undecided change leaves the question open."""
        return all(
            c.backward and c.forward and c.tolerated_by is None and c.level != "unknown"
            for c in self.changes
        )

    @property
    def identical(self) -> bool:
        return not self.changes
