"""The position index: the line and column where a JSON pointer's target is named."""

from __future__ import annotations

import json

import pytest

from wiregate.positions import Position, PositionIndex

TEXT = '{\n  "a": {"b": [1, {"c": 2}, [3]]},\n  "d\\"e": "x:y,{",\n  "f/g": null,\n  "h~i": [\n    true\n  ]\n}\n'


@pytest.mark.parametrize(
    ("pointer", "line", "column"),
    [
        ("#", 1, 1),
        ("", 1, 1),
        ("#/a", 2, 3),
        ("#/a/b", 2, 9),
        ("#/a/b/0", 2, 15),
        ("#/a/b/1", 2, 18),
        ("#/a/b/1/c", 2, 19),
        ("#/a/b/2/0", 2, 29),
        ('#/d"e', 3, 3),
        ("#/f~1g", 4, 3),
        ("#/h~0i", 5, 3),
        ("#/h~0i/0", 6, 5),
        ("/h~0i/0", 6, 5),
    ],
)
def test_each_value_is_located_at_what_names_it(pointer: str, line: int, column: int) -> None:
    assert PositionIndex.build(TEXT).locate(pointer) == Position(line, column)


def test_a_pointer_the_text_lacks_falls_back_to_its_nearest_written_ancestor() -> None:
    index = PositionIndex.build(TEXT)
    assert index.locate("#/a/missing/deeper") == Position(2, 3)
    assert index.locate("#/nothing") == Position(1, 1)


def test_columns_count_code_points_and_every_line_ending_counts() -> None:
    text = '{"\u00e9\U0001f600": 1,\r\n "k": {\r "z": 2}}'
    index = PositionIndex.build(text)
    assert index.locate("#/k") == Position(2, 2)
    assert index.locate("#/k/z") == Position(3, 2)
    assert index.locate("#/\u00e9\U0001f600") == Position(1, 2)


def test_escaped_keys_are_decoded_and_structural_characters_in_strings_ignored() -> None:
    text = '{"\\u0061": {"]": "}", "x": ["[", "{"]}, "b": 1}'
    index = PositionIndex.build(text)
    assert index.locate("#/a/]") == Position(1, 13)
    assert index.locate("#/a/x/1") == Position(1, 34)
    assert index.locate("#/b") == Position(1, 41)


def test_depth_costs_no_recursion() -> None:
    depth = 100_000
    text = '{"k": ' * depth + "1" + "}" * depth
    index = PositionIndex.build(text)
    assert index.locate("#" + "/k" * depth) == Position(1, 2 + 6 * (depth - 1))


def test_the_real_contract_locates_a_property_on_its_line(repo_root: object) -> None:
    from pathlib import Path

    assert isinstance(repo_root, Path)
    text = (repo_root / "contracts" / "rollout-wire.schema.json").read_text(encoding="utf-8")
    index = PositionIndex.build(text)
    document = json.loads(text)
    for name in document["$defs"]["RolloutBranchRecord"]["properties"]:
        position = index.locate(f"#/$defs/RolloutBranchRecord/properties/{name}")
        assert position is not None
        line = text.splitlines()[position.line - 1]
        assert line[position.column - 1 :].startswith(json.dumps(name))


def test_text_that_is_not_json_still_gives_an_index() -> None:
    # UTF-16 bytes read as UTF-8: NULs between the characters, so no key before a value.
    text = json.dumps({"a": {"b": 1}}).encode("utf-16").decode("utf-8", "replace")
    index = PositionIndex.build(text)
    assert index.locate("#/a/b") == Position(1, 1)
