"""The one metaschema check (used by diff, check and codegen): the draft given decides, the
offending keyword's pointer and jsonschema's wording come back, one bounded line."""

from __future__ import annotations

import pytest

from wiregate.metaschema import DRAFTS, MetaschemaViolation, draft_of_dialect, violation


def test_the_drafts() -> None:
    assert DRAFTS == ("draft-04", "draft-06", "draft-07", "2019-09", "2020-12")
    assert draft_of_dialect("http://json-schema.org/draft-07/schema") == "draft-07"
    assert draft_of_dialect("https://json-schema.org/draft/2020-12/schema#") == "2020-12"
    assert draft_of_dialect("https://example.com/meta") is None
    assert draft_of_dialect(7) is None


@pytest.mark.parametrize("draft", DRAFTS)
def test_a_valid_document_passes_under_every_draft(draft: str) -> None:
    assert violation({"type": "object", "properties": {"a": {"type": "string"}}}, draft) is None


def test_the_given_draft_decides_not_the_documents_schema() -> None:
    tuple_07 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{}]}
    assert violation(tuple_07, "draft-07") is None
    found = violation(tuple_07, "2020-12")
    assert found == MetaschemaViolation(
        "2020-12", ("items",), "[{}] is not of type 'object', 'boolean'"
    )
    assert (found.pointer, found.metaschema) == (
        "/items",
        "https://json-schema.org/draft/2020-12/schema",
    )
    draft_04_bound = {"minimum": 0, "exclusiveMinimum": True}
    assert violation(draft_04_bound, "draft-04") is None
    assert violation(draft_04_bound, "draft-07") == MetaschemaViolation(
        "draft-07", ("exclusiveMinimum",), "True is not of type 'number'"
    )


def test_pointer_tokens_are_escaped_and_messages_bounded() -> None:
    found = violation({"properties": {"a/b~c": {"enum": "x" * 500}}}, "2020-12")
    assert found is not None
    assert found.pointer == "/properties/a~1b~0c/enum"
    assert len(found.message) == 200 and found.message.endswith("...")


def test_a_pattern_that_is_no_regex_is_caught() -> None:
    assert violation({"pattern": "("}, "2020-12") == MetaschemaViolation(
        "2020-12", ("pattern",), "'(' is not a 'regex'"
    )
    assert violation({"pattern": "^(?<=a)b\\d+$"}, "2020-12") is None


def test_an_unknown_draft_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown draft 'draft-08'"):
        violation({}, "draft-08")
