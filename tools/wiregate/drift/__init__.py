"""The cross-repo drift gate: find the copies of the contract kept in other repositories and
judge each against the canonical contract, now or through its git history.

Library entry points: :func:`run_drift` (the gate), :func:`run_history` (one copy's history)
and :func:`discover` (files in a checkout that look like copies).
"""

from __future__ import annotations

from wiregate.drift.check import judge, run_drift
from wiregate.drift.config import CopySpec, MirrorsConfig, RepositorySpec, load_mirrors
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
    "judge",
    "load_mirrors",
    "run_drift",
]
