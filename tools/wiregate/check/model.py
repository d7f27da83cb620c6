"""Results of ``wiregate check``: one StepResult per step, and the report over all of them."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the check CLI starts light: the drift gate is imported when it runs
    from wiregate.drift.result import DriftReport


class StepStatus(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # the gate must fail: exit 1
    ERROR = "error"  # the step could not run (configuration or load error): exit 2
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Problem:
    """One thing a step found wrong (or that stopped it), in one line naming what it is about;
    ``file`` is that file relative to the repository root, when there is one."""

    message: str
    file: str | None = None


@dataclass(frozen=True)
class StepResult:
    """What one step found. ``details`` are the lines a maintainer reads to fix it;
    ``problems`` the same findings one by one, for annotations and error lines."""

    name: str
    status: StepStatus
    summary: str
    details: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    #: Ready-made workflow commands (the drift gate's own), used instead of ``problems``.
    annotations: tuple[str, ...] = field(default=(), compare=False)
    #: The later steps cannot run on top of this result (e.g. the schemas themselves are broken).
    blocking: bool = field(default=False, compare=False)
    #: The drift step's own report: the check reporters render its details and annotations
    #: with the drift reporters, from the result, never from rendered lines.
    drift: DriftReport | None = field(default=None, compare=False)


@dataclass(frozen=True)
class CheckReport:
    steps: tuple[StepResult, ...]

    @property
    def exit_code(self) -> int:
        statuses = {step.status for step in self.steps}
        if StepStatus.ERROR in statuses:
            return 2
        return 1 if StepStatus.FAILED in statuses else 0
