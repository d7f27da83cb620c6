"""The rule registry: the pinned id list, the id grammar, documentation, messages, and one
golden base/revision pair per id producing exactly that id at exactly that pointer."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from wiregate.diff import diff
from wiregate.diff.registry import EFFECTS, EVENTS, ID_PATTERN, RULES, RULES_BY_ID

GOLDEN = Path(__file__).resolve().parent / "golden"
RULES_DIR = Path(__file__).resolve().parents[2] / "tools" / "wiregate" / "diff" / "rules"
DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"

# Adding, renaming or retiring a rule changes this list on purpose (ids are never reused;
# a retired id stays, with deprecated_by).
EXPECTED_IDS = (
    "type-widened",
    "type-narrowed",
    "type-changed",
    "nullable-added",
    "nullable-removed",
    "enum-added",
    "enum-removed",
    "enum-extended",
    "enum-narrowed",
    "enum-changed",
    "const-added",
    "const-removed",
    "const-changed",
    "required-added",
    "required-removed",
    "dependent-required-added",
    "dependent-required-removed",
    "dependent-required-extended",
    "dependent-required-narrowed",
    "dependent-schema-added",
    "dependent-schema-removed",
    "property-added-to-open-model",
    "property-added-to-closed-model",
    "property-added-to-partially-open-model",
    "property-removed-from-open-model",
    "property-removed-from-closed-model",
    "property-removed-from-partially-open-model",
    "property-widened",
    "property-narrowed",
    "additional-properties-closed",
    "additional-properties-opened",
    "additional-properties-narrowed",
    "additional-properties-widened",
    "pattern-property-added",
    "pattern-property-removed",
    "property-names-added",
    "property-names-removed",
    "items-added",
    "items-removed",
    "items-widened",
    "items-narrowed",
    "tuple-item-added",
    "tuple-item-removed",
    "contains-added",
    "contains-removed",
    "contains-changed",
    "unevaluated-properties-added",
    "unevaluated-properties-removed",
    "unevaluated-properties-changed",
    "unevaluated-properties-reach-changed",
    "unevaluated-items-added",
    "unevaluated-items-removed",
    "unevaluated-items-changed",
    "unevaluated-items-reach-changed",
    "min-length-added",
    "min-length-removed",
    "min-length-tightened",
    "min-length-loosened",
    "max-length-added",
    "max-length-removed",
    "max-length-tightened",
    "max-length-loosened",
    "minimum-added",
    "minimum-removed",
    "minimum-tightened",
    "minimum-loosened",
    "maximum-added",
    "maximum-removed",
    "maximum-tightened",
    "maximum-loosened",
    "exclusive-minimum-added",
    "exclusive-minimum-removed",
    "exclusive-minimum-tightened",
    "exclusive-minimum-loosened",
    "exclusive-maximum-added",
    "exclusive-maximum-removed",
    "exclusive-maximum-tightened",
    "exclusive-maximum-loosened",
    "min-items-added",
    "min-items-removed",
    "min-items-tightened",
    "min-items-loosened",
    "max-items-added",
    "max-items-removed",
    "max-items-tightened",
    "max-items-loosened",
    "min-properties-added",
    "min-properties-removed",
    "min-properties-tightened",
    "min-properties-loosened",
    "max-properties-added",
    "max-properties-removed",
    "max-properties-tightened",
    "max-properties-loosened",
    "min-contains-added",
    "min-contains-removed",
    "min-contains-tightened",
    "min-contains-loosened",
    "max-contains-added",
    "max-contains-removed",
    "max-contains-tightened",
    "max-contains-loosened",
    "multiple-of-added",
    "multiple-of-removed",
    "multiple-of-tightened",
    "multiple-of-loosened",
    "multiple-of-changed",
    "unique-items-added",
    "unique-items-removed",
    "pattern-added",
    "pattern-removed",
    "pattern-changed",
    "format-added",
    "format-removed",
    "format-changed",
    "one-of-added",
    "one-of-removed",
    "one-of-member-added",
    "one-of-overlap-added",
    "one-of-overlap-removed",
    "one-of-overlap-changed",
    "one-of-duplicate-added",
    "one-of-duplicate-removed",
    "one-of-member-removed",
    "any-of-added",
    "any-of-removed",
    "any-of-member-added",
    "any-of-member-removed",
    "all-of-added",
    "all-of-removed",
    "all-of-member-added",
    "all-of-member-removed",
    "not-added",
    "not-removed",
    "if-added",
    "if-removed",
    "if-changed",
    "then-added",
    "then-removed",
    "else-added",
    "else-removed",
    "schema-rejects-all",
    "schema-accepts-values-again",
    "keyword-changed",
    "unknown-keyword-changed",
    "ref-changed",
    "definition-added",
    "definition-removed",
    "title-changed",
    "description-changed",
    "examples-changed",
    "comment-changed",
    "default-changed",
    "annotation-changed",
)


def test_the_registry_holds_exactly_the_pinned_ids() -> None:
    assert len(RULES) == 154
    assert tuple(rule.id for rule in RULES) == EXPECTED_IDS
    assert len(RULES_BY_ID) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_id_grammar_and_registry_entry(rule: Any) -> None:
    assert ID_PATTERN.match(rule.id)
    assert any(rule.id.endswith(event) or f"-{event}-" in rule.id for event in EVENTS)
    assert rule.purpose.endswith(".")
    assert rule.backward in EFFECTS
    assert rule.forward in EFFECTS
    assert rule.default_level in ("error", "warning", "unknown", "info")
    # Undecided rules are undecided both ways.
    assert (rule.backward == "unknown") is (rule.forward == "unknown")
    if rule.deprecated_by is not None:
        assert RULES_BY_ID[rule.deprecated_by].deprecated_by is None
        assert rule.purpose.startswith("Retired: ")


RETIRED = ("keyword-changed",)
LIVE_IDS = tuple(rule_id for rule_id in EXPECTED_IDS if rule_id not in RETIRED)


def test_retired_ids_stay_registered_with_their_replacement() -> None:
    assert {rule.id: rule.deprecated_by for rule in RULES if rule.deprecated_by} == {
        "keyword-changed": "unknown-keyword-changed"
    }


def _constants() -> dict[str, str]:
    """Every rule-id constant defined at the top of a family module: NAME -> id."""
    found: dict[str, str] = {}
    for module in sorted(RULES_DIR.glob("*.py")):
        for node in ast.parse(module.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.isupper()
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and ID_PATTERN.match(node.value.value)
                and "-" in node.value.value
            ):
                found[f"{module.stem}.{node.targets[0].id}"] = node.value.value
    return found


def test_every_id_constant_is_registered() -> None:
    registered = set(RULES_BY_ID)
    assert {value for value in _constants().values()} <= registered


def test_every_id_has_exactly_one_documentation_entry() -> None:
    text = DOC.read_text(encoding="utf-8")
    headings = re.findall(r"^#### `([a-z-]+)`$", text, flags=re.MULTILINE)
    assert headings == list(EXPECTED_IDS)


def test_the_documentation_is_generated_from_the_registry() -> None:
    spec = importlib.util.spec_from_file_location(
        "rules_doc", Path(__file__).parent / "rules_doc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render()
    assert DOC.read_text(encoding="utf-8") == expected, "run: python tests/diff/rules_doc.py"


def test_every_live_id_has_a_golden_pair_and_nothing_else_is_there() -> None:
    assert sorted(path.name for path in GOLDEN.iterdir()) == sorted(LIVE_IDS)


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("rule_id", LIVE_IDS)
def test_golden_pair_produces_exactly_its_id_at_its_pointers(rule_id: str) -> None:
    folder = GOLDEN / rule_id
    expected = _load(folder / "expected.json")
    result = diff(
        _load(folder / "base.json"), _load(folder / "revision.json"), **expected.get("options", {})
    )
    found = [
        {
            "id": c.id,
            "old_pointer": c.old_pointer,
            "new_pointer": c.new_pointer,
            "backward": c.backward,
            "forward": c.forward,
        }
        for c in result.changes
    ]
    assert found == expected["changes"]
    # A rule whose finding only ever comes with the edit that causes it names that cause.
    assert sorted(c["id"] for c in expected["changes"]) == sorted(
        [rule_id, *expected.get("cause", [])]
    )
    rule = RULES_BY_ID[rule_id]
    (change,) = (c for c in result.changes if c.id == rule_id)
    assert change.message
    # The golden pair shows the rule's documented effect whenever that effect is fixed.
    for direction in ("backward", "forward"):
        effect = getattr(rule, direction)
        if effect in ("yes", "no"):
            assert getattr(change, direction) is (effect == "yes"), direction
        if effect == "unknown":
            assert change.level == "unknown"
            assert getattr(change, direction) is True, direction
        if effect == "assertion":
            # format is an annotation unless asserted; then it constrains.
            assert getattr(change, direction) is True, direction
            asserted = diff(
                _load(folder / "base.json"), _load(folder / "revision.json"), format_assertion=True
            )
            assert [c.id for c in asserted.changes] == [rule_id]
            assert getattr(asserted.changes[0], direction) is False, direction
        if effect == "lenient":
            assert getattr(change, direction) is False, direction
            lenient = diff(
                _load(folder / "base.json"), _load(folder / "revision.json"), policy="lenient"
            )
            assert getattr(lenient.changes[0], direction) is True
            assert lenient.changes[0].tolerated_by == "lenient"
