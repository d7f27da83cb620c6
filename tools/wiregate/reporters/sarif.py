"""SARIF 2.1.0 logs (code scanning) for ``wiregate diff`` and ``wiregate drift``.

One rule per rule id, documented from the registry (``wiregate.diff.registry``); one result per
finding with a physical location (the file relative to the checkout, the line and column where
the JSON key its pointer names is written) and a partial fingerprint that does not depend on
line numbers, so code scanning keeps one alert per finding across runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wiregate.exactjson import dumps

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "SarifLocation", "SarifResult", "render_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "wiregate/v1"
_LEVELS = {"error": "error", "warning": "warning", "unknown": "warning", "info": "note"}


@dataclass(frozen=True)
class SarifLocation:
    file: str  # relative to the checkout (forward slashes)
    line: int
    column: int
    description: str | None = None  # what this place is ("the contract", "the copy")


@dataclass(frozen=True)
class SarifResult:
    rule_id: str
    level: str  # a finding level: error, warning, unknown, info
    message: str
    location: SarifLocation | None
    fingerprint: str
    related: tuple[SarifLocation, ...] = ()
    properties: dict[str, Any] | None = None


def _rule(rule_id: str) -> dict[str, Any]:
    from wiregate.diff.registry import RULES_BY_ID

    rule = RULES_BY_ID.get(rule_id)
    if rule is None:
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    effects = f"Backward compatible: {rule.backward}. Forward compatible: {rule.forward}."
    document: dict[str, Any] = {
        "id": rule.id,
        "name": rule.id,
        "shortDescription": {"text": rule.purpose},
        "fullDescription": {"text": f"{rule.purpose} {effects}"},
        "help": {
            "text": f"{rule.purpose} {effects} (wiregate docs/rules.md, family {rule.family})"
        },
        "defaultConfiguration": {"level": _LEVELS[rule.default_level]},
        "properties": {
            "family": rule.family,
            "backward": rule.backward,
            "forward": rule.forward,
        },
    }
    if rule.deprecated_by:
        document["properties"]["deprecated_by"] = rule.deprecated_by
    return document


def _physical(location: SarifLocation) -> dict[str, Any]:
    document: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": location.file},
            "region": {"startLine": location.line, "startColumn": location.column},
        }
    }
    if location.description:
        document["message"] = {"text": location.description}
    return document


def render_sarif(
    results: Sequence[SarifResult], *, tool: str = "wiregate", invocation_ok: bool = True
) -> str:
    """The SARIF log of ``results`` (one run)."""
    rule_ids = sorted({result.rule_id for result in results})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    documents = []
    for result in results:
        document: dict[str, Any] = {
            "ruleId": result.rule_id,
            "ruleIndex": index[result.rule_id],
            "level": _LEVELS[result.level],
            "message": {"text": result.message},
            "partialFingerprints": {FINGERPRINT_KEY: result.fingerprint},
        }
        if result.location is not None:
            document["locations"] = [_physical(result.location)]
        if result.related:
            document["relatedLocations"] = [
                {"id": i, **_physical(location)} for i, location in enumerate(result.related)
            ]
        if result.properties:
            document["properties"] = result.properties
        documents.append(document)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": tool,
                        "rules": [_rule(rule_id) for rule_id in rule_ids],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "invocations": [{"executionSuccessful": invocation_ok}],
                "results": documents,
            }
        ],
    }
    return dumps(log, indent=True) + "\n"
