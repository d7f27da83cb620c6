"""docs/drift-report.md documents every field the JSON reports emit."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from wiregate.diff import Change
from wiregate.drift.baseline import BaselineEntry
from wiregate.drift.discovery import Candidate, RepositoryCandidates
from wiregate.drift.findings import make_finding
from wiregate.drift.result import (
    CopyResult,
    DriftReport,
    HistoryEntry,
    HistoryReport,
    Triage,
    Verdict,
)
from wiregate.positions import PositionIndex
from wiregate.reporters.drift import DISCOVERY_REPORTERS, DRIFT_REPORTERS, HISTORY_REPORTERS

CHANGE = Change("required-added", "error", "#/required", "#/required", "m", False, True)


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_every_json_field_is_documented(repo_root: Path) -> None:
    docs = (repo_root / "docs" / "drift-report.md").read_text(encoding="utf-8")
    documented = set(re.findall(r'"([a-z_-]+)"', docs)) | set(re.findall(r"`([a-z_-]+)`", docs))
    common: dict[str, Any] = {
        "repository": "r",
        "checkout": "c",
        "copy_id": "copy",
        "role": "consumer",
        "direction": "backward",
        "policy": "strict",
        "schema": "rollout-wire",
        "canonical_at": "#",
    }
    entry = BaselineEntry(
        "r", "copy", "required-added", "#", "#", "0" * 16, "why", date(2027, 1, 1)
    )
    index = PositionIndex.build('{"required": ["a"]}')
    finding = make_finding(
        CHANGE,
        breaking=True,
        repository="r",
        role="consumer",
        schema="rollout-wire",
        canonical_at="#",
        contract={"required": []},
        copy={"required": ["a"]},
        copy_file="p",
        copy_index=index,
        contract_file="c",
        contract_index=index,
        fingerprint="0" * 16,
    )
    result = CopyResult(
        **common,
        copy_at="#",
        verdict=Verdict.BREAKING,
        changes=(CHANGE,),
        failed=("backward",),
        judged=(finding,),
        contract_file="c",
        triage=(Triage("0" * 16, accepted=entry, expired=True),),
    )
    revision = HistoryEntry(
        commit="sha",
        date="date",
        subject="subject",
        status="modified",
        path="p",
        old_path=None,
        verdict=Verdict.BREAKING,
        changes=(CHANGE,),
        previous="sha0",
        since_previous=(CHANGE,),
    )
    history = HistoryReport(**common, ref="HEAD", entries=(revision,))
    found = RepositoryCandidates("r", "c", (Candidate("p", "rollout-wire", "#", ("file name",)),))
    emitted = (
        _keys(json.loads(DRIFT_REPORTERS["json"](DriftReport((result,), stale=(entry,)))))
        | _keys(json.loads(HISTORY_REPORTERS["json"]((history,))))
        | _keys(json.loads(DISCOVERY_REPORTERS["json"]((found,))))
    )
    assert {"copies", "revisions", "since_previous", "candidates", "breaking"} <= emitted
    assert {"fingerprint", "accepted", "expired", "stale", "present_at_ref"} <= emitted
    assert sorted(emitted - documented) == []
    assert {v.value for v in Verdict} <= documented
