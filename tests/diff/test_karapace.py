"""Karapace's labelled backward-compatibility cases (writer = old, reader = new).

Where the engine disagrees on purpose, the case is listed under one of at most five reasons,
each stating the set semantics the engine follows instead. Every other case must agree.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from wiregate.diff import diff

# reason -> case ids. Each reason says what the engine does instead of the registry's label.
XFAIL_REASONS: dict[str, tuple[int, ...]] = {
    "A writer that accepts no value (false, {'not': {}}, {'not': true}) is backward compatible "
    "with every reader: the empty set is a subset of every set. Karapace calls some of these "
    "incompatible.": (84, 233, 234, 235, 236, 237, 239, 241, 243),
    "A false reader rejects every value a true writer produced: true -> false is incompatible "
    "(Karapace labels it compatible).": (101,),
    "The true schema accepts every value of every type, so every writer is compatible with it; "
    "Karapace accepts a true reader only for object writers.": tuple(range(137, 198)),
    "A tuple with an open rest ({'prefixItems': [T]}, draft-07 array-form items) accepts every "
    "array of T, so array of T -> open tuple of T is compatible.": (106,),
    "A declaration that constrains nothing (a property or pattern property with the empty "
    "schema {}, a pattern such as 'a*' that matches every string) accepts the same values as "
    "no declaration.": (248, 300, 301, 306),
}
_XFAIL = {case: reason for reason, cases in XFAIL_REASONS.items() for case in cases}


def _cases(corpus: Path) -> list[dict[str, Any]]:
    # No $schema in any case: each schema is read under the draft its keywords show (the
    # tuple cases' array-form items: draft-07, as Karapace reads every schema).
    cases: list[dict[str, Any]] = json.loads(
        (corpus / "compat" / "karapace-cases.json").read_text(encoding="utf-8")
    )["cases"]
    return cases


@pytest.fixture(scope="module")
def karapace_cases(corpus_dir: Path) -> list[dict[str, Any]]:
    return _cases(corpus_dir)


def test_at_most_five_documented_reasons() -> None:
    assert len(XFAIL_REASONS) <= 5
    assert len(_XFAIL) == sum(len(cases) for cases in XFAIL_REASONS.values())  # no overlap


def test_corpus_size(karapace_cases: list[dict[str, Any]]) -> None:
    assert len(karapace_cases) == 321
    assert [case["id"] for case in karapace_cases] == list(range(321))


def test_each_schema_is_read_under_the_draft_its_keywords_show(
    karapace_cases: list[dict[str, Any]],
) -> None:
    """No case names its draft: the tuple cases (array-form items) are read as draft-07,
    the rest as 2020-12, and none is refused."""
    drafts: Counter[tuple[str, str]] = Counter()
    for case in karapace_cases:
        result = diff(case["writer_schema"], case["reader_schema"])
        assert result.drafts is not None
        for choice in (result.drafts.old, result.drafts.new):
            drafts[choice.draft, choice.how] += 1
    assert drafts == {
        ("2020-12", "default"): 608,
        ("draft-07", "detected"): 29,
        ("2020-12", "detected"): 5,
    }


def test_every_case_outside_the_reasons_agrees(karapace_cases: list[dict[str, Any]]) -> None:
    disagreements = []
    for case in karapace_cases:
        if case["id"] in _XFAIL:
            continue
        result = diff(case["writer_schema"], case["reader_schema"], mode="backward")
        if result.compatible != case["compatible"]:
            disagreements.append(
                (case["id"], case["writer_name"], case["reader_name"], case["compatible"])
            )
    assert disagreements == []
    assert len(karapace_cases) - len(_XFAIL) == 245


def test_every_listed_case_really_disagrees(karapace_cases: list[dict[str, Any]]) -> None:
    """A listed case that starts agreeing must leave the list (the list cannot go stale)."""
    by_id = {case["id"]: case for case in karapace_cases}
    agreeing = [
        case_id
        for case_id in sorted(_XFAIL)
        if diff(by_id[case_id]["writer_schema"], by_id[case_id]["reader_schema"]).compatible
        == by_id[case_id]["compatible"]
    ]
    assert agreeing == []
