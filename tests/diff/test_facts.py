"""The structural-facts stage: raw DeepDiff differences with the paths of the full values."""

from __future__ import annotations

from wiregate.diff.facts import ABSENT, Fact, structural_facts


def test_equal_values_have_no_facts() -> None:
    assert structural_facts({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == ()


def test_facts_keep_full_paths_after_pruning() -> None:
    old = {"keep": {"x": 1}, "props": {"a": {"type": "string"}, "b": {"maxLength": 3}}}
    new = {"keep": {"x": 1}, "props": {"a": {"type": "integer"}, "c": {}}, "extra": True}
    assert structural_facts(old, new) == (
        Fact("dictionary_item_added", ("extra",), ABSENT, True),
        Fact("values_changed", ("props", "a", "type"), "string", "integer"),
        Fact("dictionary_item_removed", ("props", "b"), {"maxLength": 3}, ABSENT),
        Fact("dictionary_item_added", ("props", "c"), ABSENT, {}),
    )


def test_unordered_lists_ignore_order_and_count_repeats() -> None:
    assert structural_facts({"enum": ["a", "b"]}, {"enum": ["b", "a"]}) == ()
    assert structural_facts({"oneOf": [{"a": 1}]}, {"oneOf": [{"a": 1}, {"a": 1}]}) == (
        Fact("dictionary_item_added", ("oneOf", 1), ABSENT, {"a": 1}),
    )


def test_ordered_lists_compare_by_position() -> None:
    old = {"prefixItems": [{"type": "string"}, {"type": "integer"}]}
    new = {"prefixItems": [{"type": "integer"}, {"type": "string"}]}
    assert structural_facts(old, new) == (
        Fact("values_changed", ("prefixItems", 0, "type"), "string", "integer"),
        Fact("values_changed", ("prefixItems", 1, "type"), "integer", "string"),
    )


def test_unordered_lists_pair_leftovers_without_losing_any() -> None:
    """Leftover items pair up under their old index (same index first), so an unpaired new
    item never takes the index of a pair: no difference is dropped or misplaced."""
    old = {"enum": ["a", "b", "x", "y"]}
    new = {"enum": ["p", "b", "q", "a", "a2", "r"]}
    assert structural_facts(old, new) == (
        Fact("values_changed", ("enum", 2), "x", "q"),
        Fact("values_changed", ("enum", 3), "y", "p"),
        Fact("dictionary_item_added", ("enum", 4), ABSENT, "a2"),
        Fact("dictionary_item_added", ("enum", 5), ABSENT, "r"),
    )


def test_ordered_lists_of_different_lengths_compare_by_position() -> None:
    old = {"prefixItems": [{"type": "string"}, {"type": "integer"}]}
    new = {"prefixItems": [{"type": "string"}, {"type": "number"}, {"type": "null"}]}
    assert structural_facts(old, new) == (
        Fact("values_changed", ("prefixItems", 1, "type"), "integer", "number"),
        Fact("dictionary_item_added", ("prefixItems", 2), ABSENT, {"type": "null"}),
    )
