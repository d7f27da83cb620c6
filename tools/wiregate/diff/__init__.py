"""Semantic diff of JSON Schemas: stable rule ids, per-direction effects and a verdict.

Pipeline (one module per stage): ``drafts`` (which draft each document is read under) ->
``load`` (normalise to the 2020-12 model, resolve local references) ->
``facts`` (raw structural differences) -> ``rules`` (one family per module, judged by the
``registry``) -> ``findings`` (:class:`Change`) -> ``verdict`` (:class:`DiffResult`).
"""

from __future__ import annotations

from wiregate.diff.budget import NODE_BUDGET, TIME_LIMIT
from wiregate.diff.drafts import DraftChoice, Drafts
from wiregate.diff.engine import diff
from wiregate.diff.findings import Change
from wiregate.diff.load import SchemaLoadError
from wiregate.diff.verdict import MODES, POLICIES, DiffResult

__all__ = [
    "MODES",
    "NODE_BUDGET",
    "POLICIES",
    "TIME_LIMIT",
    "Change",
    "DiffResult",
    "DraftChoice",
    "Drafts",
    "SchemaLoadError",
    "diff",
]
