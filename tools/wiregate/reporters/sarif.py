"""SARIF 2.1.0 logs (code scanning) for ``wiregate diff`` and ``wiregate drift``.

One rule per rule id, documented from the registry (``wiregate.diff.registry``); one result per
finding with a physical location (the file relative to the checkout, the line and column where
the JSON key its pointer names is written) and a partial fingerprint that does not depend on
line numbers, so code scanning keeps one alert per finding across runs.

Locations in several repositories (the contract's, each governed checkout) share one run:
each artifact location names its repository's base id (``uriBaseId``), and the run's
``originalUriBaseIds`` says where each base is (a ``file://`` URI when known).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wiregate.exactjson import dumps

__all__ = [
    "SARIF_SCHEMA",
    "SARIF_VERSION",
    "SarifBase",
    "SarifLocation",
    "SarifResult",
    "render_sarif",
]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "wiregate/v1"
_LEVELS = {"error": "error", "warning": "warning", "unknown": "warning", "info": "note"}


@dataclass(frozen=True)
class SarifBase:
    """A root that artifact locations are relative to: one repository's checkout."""

    id: str  # WASMAGENT_JS, WIREGATE, ...
    uri: str | None  # file:///.../checkout/ (trailing slash); None when unknown
    description: str


@dataclass(frozen=True)
class SarifLocation:
    file: str  # relative to the checkout (forward slashes)
    line: int | None  # None: the whole file (no region)
    column: int | None
    description: str | None = None  # what this place is ("the contract", "the copy")
    base: str | None = None  # the SarifBase id the file is relative to


@dataclass(frozen=True)
class SarifResult:
    rule_id: str
    level: str  # a finding level: error, warning, unknown, info
    message: str
    location: SarifLocation | None
    fingerprint: str
    related: tuple[SarifLocation, ...] = ()
    properties: dict[str, Any] | None = None


def _rule(rule_id: str, described: Mapping[str, str]) -> dict[str, Any]:
    from wiregate.diff.registry import RULES_BY_ID

    rule = RULES_BY_ID.get(rule_id)
    if rule is None:
        text = described.get(rule_id)
        if text is None:
            return {"id": rule_id, "shortDescription": {"text": rule_id}}
        return {
            "id": rule_id,
            "name": rule_id,
            "shortDescription": {"text": text},
            "fullDescription": {"text": text},
        }
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
    artifact: dict[str, Any] = {"uri": location.file}
    if location.base is not None:
        artifact["uriBaseId"] = location.base
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if location.line is not None:
        physical["region"] = {"startLine": location.line}
        if location.column is not None:
            physical["region"]["startColumn"] = location.column
    document: dict[str, Any] = {"physicalLocation": physical}
    if location.description:
        document["message"] = {"text": location.description}
    return document


def render_sarif(
    results: Sequence[SarifResult],
    *,
    tool: str = "wiregate",
    invocation_ok: bool = True,
    bases: Sequence[SarifBase] = (),
    rules: Mapping[str, str] | None = None,
    notifications: Sequence[str] = (),
) -> str:
    """The SARIF log of ``results`` (one run). ``bases`` are the roots their locations are
    relative to; ``rules`` describes rule ids the diff registry does not have; each of
    ``notifications`` is an error that stopped part of the run (the invocation's
    ``toolExecutionNotifications``)."""
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
                        "rules": [_rule(rule_id, rules or {}) for rule_id in rule_ids],
                    }
                },
                **({"originalUriBaseIds": _bases(bases)} if bases else {}),
                "columnKind": "unicodeCodePoints",
                "invocations": [_invocation(invocation_ok, notifications)],
                "results": documents,
            }
        ],
    }
    return dumps(log, indent=True) + "\n"


def _bases(bases: Sequence[SarifBase]) -> dict[str, Any]:
    documents: dict[str, Any] = {}
    for base in bases:
        document: dict[str, Any] = {"uri": base.uri} if base.uri else {}
        document["description"] = {"text": base.description}
        documents[base.id] = document
    return documents


def _invocation(ok: bool, notifications: Sequence[str]) -> dict[str, Any]:
    document: dict[str, Any] = {"executionSuccessful": ok}
    if notifications:
        document["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": text}} for text in notifications
        ]
    return document
