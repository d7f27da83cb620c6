"""The cross-repo drift gate: find the copies of the contract kept in other repositories and
judge each against the canonical contract, now or through its git history.

Library entry points: :func:`run_drift` (the gate), :func:`run_history` (a copy's history),
:func:`discover` (files in a checkout that look like copies) and :func:`expected_copy` (what
a copy that agrees exactly with the contract contains).
"""

from __future__ import annotations

from wiregate.drift.check import judge, run_drift
from wiregate.drift.config import CopySpec, MirrorsConfig, RepositorySpec, load_mirrors
from wiregate.drift.discovery import discover, discover_repositories
from wiregate.drift.expected import expected_copy
from wiregate.drift.history import run_history
from wiregate.drift.result import CopyResult, DriftReport, HistoryEntry, HistoryReport, Verdict

__all__ = [
    "CopyResult",
    "CopySpec",
    "DriftReport",
    "HistoryEntry",
    "HistoryReport",
    "MirrorsConfig",
    "RepositorySpec",
    "Verdict",
    "discover",
    "discover_repositories",
    "expected_copy",
    "judge",
    "load_mirrors",
    "run_drift",
    "run_history",
]
