"""``wiregate diff`` end to end through the click command: exit codes, formats, sources and
one-line errors for malformed input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from wiregate.cli import main

OLD = {
    "$defs": {
        "Rec": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}},
        }
    },
    "$ref": "#/$defs/Rec",
}
NEW = {
    "$defs": {
        "Rec": {
            "type": "object",
            "required": ["id", "tag"],
            "properties": {"id": {"type": "number"}, "tag": {"type": "string"}},
        }
    },
    "$ref": "#/$defs/Rec",
}


def _write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    return _write(tmp_path / "old.json", OLD), _write(tmp_path / "new.json", NEW)


# The first lines of every text report: the draft each document was read under.
DEFS_DRAFTS = (
    "old: 2020-12 (detected: $defs at #/$defs)\nnew: 2020-12 (detected: $defs at #/$defs)\n"
)
NO_SIGNAL = "2020-12 (default: no draft-specific keyword)"
PLAIN_DRAFTS = f"old: {NO_SIGNAL}\nnew: {NO_SIGNAL}\n"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_text_output_and_exit_1_when_incompatible(files: tuple[str, str]) -> None:
    code, out, err = run(*files)
    assert (code, err) == (1, "")
    assert out == DEFS_DRAFTS + (
        "error: required-added at #/$defs/Rec/required: property 'tag' became required: "
        "old records without it are rejected (backward: no, forward: yes)\n"
        "warning: type-widened at #/$defs/Rec/properties/id/type: type widened from integer "
        "to number (backward: yes, forward: no)\n"
        "INCOMPATIBLE (backward, strict): 2 changes (1 error, 1 warning)\n"
    )


def test_verbose_text_shows_the_witness_of_each_breaking_change(files: tuple[str, str]) -> None:
    code, out, _ = run(*files, "--verbose", "--mode", "full")
    assert code == 1
    assert out == (
        "old: 2020-12 (detected: $defs at #/$defs)\n"
        "new: 2020-12 (detected: $defs at #/$defs)\n"
        "error: type-widened at #/$defs/Rec/properties/id/type: type widened from integer "
        "to number (backward: yes, forward: no)\n"
        '  witness (forward): {"id":0.5,"tag":""}\n'
        "error: required-added at #/$defs/Rec/required: property 'tag' became required: "
        "old records without it are rejected (backward: no, forward: yes)\n"
        '  witness (backward): {"id":0}\n'
        "INCOMPATIBLE (full, strict): 2 changes (2 error)\n"
    )
    # A warning (compatible under the mode) has no witness to show.
    assert run(*files, "-v")[1].count("witness") == 1


def test_forward_mode_is_compatible_and_full_is_not(files: tuple[str, str]) -> None:
    assert run(*files, "--mode", "forward")[0] == 1  # the widening breaks forward
    assert run(files[1], files[1], "--mode", "full")[0] == 0
    code, out, _ = run(files[0], files[0], "--format", "json")
    assert (code, json.loads(out)["changes"]) == (0, [])


def test_json_format(files: tuple[str, str]) -> None:
    code, out, _ = run(*files, "--format", "json", "--mode", "full")
    assert code == 1
    assert json.loads(out) == {
        "compatible": False,
        "mode": "full",
        "policy": "strict",
        "drafts": {
            side: {"draft": "2020-12", "how": "detected", "evidence": "$defs at #/$defs"}
            for side in ("old", "new")
        },
        "backward_compatible": False,
        "forward_compatible": False,
        "changes": [
            {
                "id": "type-widened",
                "level": "error",
                "old_pointer": "#/$defs/Rec/properties/id/type",
                "new_pointer": "#/$defs/Rec/properties/id/type",
                "message": "type widened from integer to number",
                "backward": True,
                "forward": False,
                "tolerated_by": None,
                "root": {
                    "old_pointer": "#/$defs/Rec/properties/id/type",
                    "new_pointer": "#/$defs/Rec/properties/id/type",
                },
                # valid under the new schema only: the widening's own value
                "witness": {"direction": "forward", "instance": {"id": 0.5, "tag": ""}},
            },
            {
                "id": "required-added",
                "level": "error",
                "old_pointer": "#/$defs/Rec/required",
                "new_pointer": "#/$defs/Rec/required",
                "message": "property 'tag' became required: old records without it are rejected",
                "backward": False,
                "forward": True,
                "tolerated_by": None,
                "root": {
                    "old_pointer": "#/$defs/Rec/required",
                    "new_pointer": "#/$defs/Rec/required",
                },
                "witness": {"direction": "backward", "instance": {"id": 0}},
            },
        ],
    }


def test_github_format(files: tuple[str, str]) -> None:
    code, out, _ = run(*files, "--format", "github")
    assert code == 1
    # Each annotation names NEW and the line and column where the change's pointer is written.
    new = files[1]
    assert out.splitlines() == [
        f"::error file={new},line=5,col=7,title=required-added::required-added at "
        "#/$defs/Rec/required: property 'tag' became required: old records without it are "
        "rejected (backward: no, forward: yes)",
        f"::warning file={new},line=11,col=11,title=type-widened::type-widened at "
        "#/$defs/Rec/properties/id/type: type widened from integer to number "
        "(backward: yes, forward: no)",
        "INCOMPATIBLE (backward, strict): 2 changes (1 error, 1 warning)",
    ]


def test_markdown_format(files: tuple[str, str]) -> None:
    code, out, _ = run(*files, "--format", "markdown")
    assert code == 1
    assert out.splitlines() == [
        "### Schema diff: **incompatible** (backward, policy strict)",
        "",
        "- old: **2020-12** (detected: `$defs at #/$defs`)",
        "- new: **2020-12** (detected: `$defs at #/$defs`)",
        "",
        "| Level | Rule | Old pointer | New pointer | Message | Backward | Forward |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| error | `required-added` | `#/$defs/Rec/required` | `#/$defs/Rec/required` | "
        "property 'tag' became required: old records without it are rejected | no | yes |",
        "| warning | `type-widened` | `#/$defs/Rec/properties/id/type` | "
        "`#/$defs/Rec/properties/id/type` | type widened from integer to number | yes | no |",
    ]


def test_def_option_and_lenient_policy(tmp_path: Path) -> None:
    old = {"definitions": {"R": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    new = {
        "$defs": {
            "R": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            }
        }
    }
    old_file, new_file = _write(tmp_path / "o.json", old), _write(tmp_path / "n.json", new)
    assert run(old_file, new_file, "--def", "R")[0] == 1
    code, out, _ = run(old_file, new_file, "--def", "R", "--policy", "lenient")
    assert code == 0
    assert "tolerated by lenient" in out
    code, _, err = run(old_file, new_file, "--def", "Missing")
    assert (code, err) == (
        2,
        f"wiregate: error: {old_file}: schema location '#/$defs/Missing' points to nothing\n",
    )


def test_stdin_source(files: tuple[str, str]) -> None:
    code, out, _ = run("-", files[1], "--format", "json", stdin=json.dumps(OLD))
    assert code == 1 and len(json.loads(out)["changes"]) == 2
    code, _, err = run("-", "-", stdin="{}")
    assert (code, err) == (2, "wiregate: error: OLD and NEW cannot both be stdin\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "a schema document must be a JSON object or a boolean"),
        (
            json.dumps({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}),
            "#: cyclic $ref #/$defs/A -> #/$defs/A",
        ),
        (
            json.dumps({"anyOf": [{"type": "string"}, {"not": {"$ref": "#"}}]}),
            "#/anyOf/1/not: $ref cycle # -> # never applies to a part of the value: validating "
            "with it never ends",
        ),
        (
            json.dumps({"properties": {"a": {"$ref": "https://example.com/a.json"}}}),
            "#/properties/a/$ref: remote $ref 'https://example.com/a.json' is not fetched",
        ),
        (json.dumps({"enum": 5}), "#/enum: 5 is not of type 'array'"),
        (
            json.dumps({"properties": {"a": {"type": "strin"}}}),
            "#/properties/a/type: 'strin' is not valid under any of the given schemas",
        ),
    ],
)
def test_malformed_input_exits_2_with_one_line(
    tmp_path: Path, files: tuple[str, str], content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    for args in ((str(bad), files[1]), (files[0], str(bad))):
        code, out, err = run(*args)
        assert code == 2 and out == ""
        assert err.startswith(f"wiregate: error: {bad}: ") and message in err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_file(files: tuple[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert run(str(missing), files[1]) == (2, "", f"wiregate: error: {missing}: no such file\n")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _write(root / "schema.json", OLD)
    _git(root, "add", "schema.json")
    _git(root, "commit", "-q", "-m", "old")
    _write(root / "schema.json", NEW)  # uncommitted work-tree change
    return root


def test_git_sources_read_without_touching_the_work_tree(repo: Path) -> None:
    before = (repo / "schema.json").read_bytes()
    code, out, err = run(f"{repo}@HEAD:schema.json", str(repo / "schema.json"), "--format", "json")
    assert (code, err) == (1, "")
    assert [c["id"] for c in json.loads(out)["changes"]] == ["required-added", "type-widened"]
    assert run(f"{repo}@main:schema.json", f"{repo}@HEAD:schema.json")[0] == 0
    assert (repo / "schema.json").read_bytes() == before


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "{repo}@no-such-ref:schema.json",
            "{repo}@no-such-ref:schema.json: unknown git ref 'no-such-ref'",
        ),
        (
            "{repo}@HEAD:missing.json",
            "{repo}@HEAD:missing.json: no file missing.json in the repository at HEAD",
        ),
        ("{repo}@HEAD:../x.json", "{repo}@HEAD:../x.json: ../x.json is outside the repository"),
        ("{tmp}@HEAD:schema.json", "{tmp}@HEAD:schema.json: {tmp} is not a git repository"),
        (
            "{tmp}/nope@HEAD:schema.json",
            "{tmp}/nope@HEAD:schema.json: no such file "
            "(nor a REPO_DIR@REF:PATH source: no existing directory before an '@')",
        ),
    ],
)
def test_bad_git_sources_exit_2(repo: Path, spec: str, message: str) -> None:
    outside = repo.parent / "plain"
    outside.mkdir(exist_ok=True)
    source = spec.format(repo=repo, tmp=outside)
    expected = message.format(repo=repo, tmp=outside)
    assert run(source, str(repo / "schema.json")) == (2, "", f"wiregate: error: {expected}\n")


def test_an_unknown_ref_names_the_source_as_typed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the absolute path of the repository that git resolved it to."""
    (repo / "sub").mkdir()
    _write(repo / "sub" / "s.json", OLD)
    monkeypatch.chdir(repo)
    assert run("sub@nope:s.json", "sub/s.json") == (
        2,
        "",
        "wiregate: error: sub@nope:s.json: unknown git ref 'nope'\n",
    )


@pytest.fixture
def nested_repo(tmp_path: Path) -> Path:
    """A repository whose schemas live in a subfolder, with two commits (so ``HEAD@{1}``
    exists) and a branch whose name holds an ``@``."""
    root = tmp_path / "repo"
    (root / "schemas").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _write(root / "schemas" / "rec.schema.json", OLD)
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "old")
    _git(root, "branch", "release@2")
    _write(root / "schemas" / "rec.schema.json", NEW)
    _git(root, "commit", "-q", "-a", "-m", "new")
    return root


REQUIRED_TAG = (
    "error: required-added at #/$defs/Rec/required: property 'tag' became required: "
    "old records without it are rejected (backward: no, forward: yes)\n"
)


def _ids_of(*args: str) -> tuple[int, list[str]]:
    code, out, err = run(*args, "--format", "json")
    assert err == ""
    return code, [c["id"] for c in json.loads(out)["changes"]]


def test_git_path_is_relative_to_a_subfolder(nested_repo: Path) -> None:
    """As ``wiregate drift`` resolves a copy's path: from the directory given, not the root."""
    sub = nested_repo / "schemas"
    assert _ids_of(f"{sub}@HEAD~1:rec.schema.json", f"{sub}@HEAD:rec.schema.json") == (
        1,
        ["required-added", "type-widened"],
    )
    same = (f"{nested_repo}@HEAD:schemas/rec.schema.json", f"{sub}@HEAD:rec.schema.json")
    assert _ids_of(*same) == (0, [])
    # A path that climbs out of the subfolder stays inside the repository.
    assert _ids_of(f"{sub}@HEAD:../schemas/rec.schema.json", f"{sub}@HEAD:rec.schema.json") == (
        0,
        [],
    )
    missing = f"{sub}@HEAD:rollout-wire.schema.json"
    assert run(missing, f"{sub}@HEAD:rec.schema.json") == (
        2,
        "",
        f"wiregate: error: {missing}: no file schemas/rollout-wire.schema.json in the "
        "repository at HEAD\n",
    )


@pytest.mark.parametrize("ref", ["HEAD@{1}", "release@2", "main@{1}"])
def test_refs_containing_an_at_sign(nested_repo: Path, ref: str) -> None:
    old = f"{nested_repo}@{ref}:schemas/rec.schema.json"
    code, out, err = run(old, f"{nested_repo}@main:schemas/rec.schema.json")
    assert (code, err) == (1, "") and out.startswith(DEFS_DRAFTS + REQUIRED_TAG)


def test_a_directory_name_containing_an_at_sign(tmp_path: Path) -> None:
    """An installed scoped package: ``node_modules/@scope/pkg@REF:PATH``."""
    package = tmp_path / "node_modules" / "@scope" / "pkg"
    package.mkdir(parents=True)
    _git(package, "init", "-q", "-b", "main")
    _write(package / "s.json", OLD)
    _git(package, "add", "s.json")
    _git(package, "commit", "-q", "-m", "old")
    _write(package / "s.json", NEW)
    code, out, err = run(f"{package}@HEAD:s.json", str(package / "s.json"))
    assert (code, err) == (1, "") and out.startswith(DEFS_DRAFTS + REQUIRED_TAG)


def test_a_file_name_too_long_exits_2(files: tuple[str, str]) -> None:
    name = "a" * 300
    assert run(name, files[1]) == (
        2,
        "",
        f"wiregate: error: {name}: cannot read: File name too long\n",
    )
    assert run(files[0], f"{name}@HEAD:x.json") == (
        2,
        "",
        f"wiregate: error: {name}@HEAD:x.json: cannot read: File name too long\n",
    )


def test_a_nul_byte_in_a_file_name_exits_2(files: tuple[str, str]) -> None:
    assert run("a\0b", files[1]) == (
        2,
        "",
        "wiregate: error: a\\u0000b: cannot read: embedded null byte\n",  # shown, not sent
    )


def _nested(keyword: str, levels: int) -> Any:
    node: Any = {"type": "string"}
    for _ in range(levels):
        node = {keyword: node}
    return node


def test_a_document_too_deep_to_parse_exits_2(tmp_path: Path, files: tuple[str, str]) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert run(str(deep), files[1]) == (
        2,
        "",
        f"wiregate: error: {deep}: nested too deeply to read (Python's recursion limit was "
        "reached)\n",
    )


def test_a_schema_too_deep_to_compare_exits_2(tmp_path: Path) -> None:
    """400 levels of ``not`` parse, normalise and resolve, but the comparison recurses a few
    frames per level."""
    old = tmp_path / "old.json"
    new = tmp_path / "new.json"
    old.write_text(json.dumps(_nested("not", 400)), encoding="utf-8")
    new.write_text(json.dumps(_nested("not", 400)).replace("string", "integer"), encoding="utf-8")
    assert run(str(old), str(new)) == (
        2,
        "",
        f"wiregate: error: {old} and {new}: nested too deeply to compare (Python's recursion "
        "limit was reached)\n",
    )


def test_usage_errors_exit_2(files: tuple[str, str]) -> None:
    code, out, err = run(*files, "--mode", "sideways")
    assert (code, out) == (2, "") and "Invalid value for '--mode'" in err
    assert run(files[0])[0] == 2


def test_option_choices_are_the_engine_registries(files: tuple[str, str]) -> None:
    from wiregate.cli.diff_cmd import diff_command
    from wiregate.diff import MODES, POLICIES
    from wiregate.reporters.diff import DIFF_FORMATS

    choices = {
        param.name: tuple(param.type.choices)
        for param in diff_command.params
        if isinstance(param.type, click.Choice)
    }
    assert choices == {
        "mode": MODES,
        "policy": POLICIES,
        "draft": ("4", "6", "7", "2019-09", "2020-12"),
        "output_format": DIFF_FORMATS,
    }
    code, out, err = run(*files, "--format", "yaml")
    assert (code, out) == (2, "")
    assert "'yaml' is not one of 'text', 'json', 'github', 'markdown'" in err


def test_load_errors_name_the_source_even_when_a_value_reads_like_a_side(
    tmp_path: Path, files: tuple[str, str]
) -> None:
    """The origin is passed to the engine, not patched into its message afterwards."""
    bad = _write(tmp_path / "bad.json", {"properties": {"a": {"enum": "old schema"}}})
    assert run(files[0], bad) == (
        2,
        "",
        f"wiregate: error: {bad}: #/properties/a/enum: 'old schema' is not of type 'array' "
        "(not a valid schema under https://json-schema.org/draft/2020-12/schema)\n",
    )


def test_integers_beyond_64_bits_are_compared_exactly(tmp_path: Path) -> None:
    old = _write(tmp_path / "old.json", {"enum": [2**64, 1], "maximum": 2**64})
    new = _write(tmp_path / "new.json", {"enum": [2**64 + 1, 1], "maximum": 2**64})
    # The new maximum rejects the added 2**64 + 1, exactly: the new schema accepts only 1,
    # which the old one accepts too (forward compatible).
    assert run(old, new) == (
        1,
        PLAIN_DRAFTS
        + "error: enum-changed at #/enum: enum changed: added 18446744073709551617; removed "
        "18446744073709551616; every value the new schema accepts still meets the old one "
        "(backward: no, forward: yes)\n"
        "INCOMPATIBLE (backward, strict): 1 change (1 error)\n",
        "",
    )


REF_OLD = {
    "$defs": {"Rec": {"type": "object", "properties": {"a": {"type": "string"}}}},
    "type": "object",
}
REF_NEW = {
    "$defs": {
        "Rec": {"type": "object", "properties": {"a": {"$ref": "#/$defs/Str"}}},
        "Str": {"type": "string"},
    },
    "type": "object",
}


def test_moving_a_schema_into_a_definition_another_one_references_exits_0(
    tmp_path: Path,
) -> None:
    """``Str`` is referenced by ``Rec`` (itself a record type): a building block, not a
    record type, so the refactor changes nothing either way."""
    old = _write(tmp_path / "old.json", REF_OLD)
    new = _write(tmp_path / "new.json", REF_NEW)
    assert run(old, new, "--mode", "full") == (
        0,
        DEFS_DRAFTS + "info: definition-added at # -> #/$defs/Str: definition 'Str' added "
        "(backward: yes, forward: yes)\n"
        "compatible (full, strict): 1 change (1 info)\n",
        "",
    )
    assert run(new, old, "--mode", "full") == (
        0,
        DEFS_DRAFTS + "info: definition-removed at #/$defs/Str -> #: definition 'Str' removed "
        "(backward: yes, forward: yes)\n"
        "compatible (full, strict): 1 change (1 info)\n",
        "",
    )


def test_removing_a_record_type_validated_by_name_exits_1(tmp_path: Path) -> None:
    """``Side`` is referenced by nothing (neither the root nor ``Rec``): a record type of its
    own."""
    defs = {"Rec": {"type": "object"}, "Side": {"type": "integer"}}
    old = _write(tmp_path / "old.json", {"$defs": defs, "$ref": "#/$defs/Rec"})
    new = _write(tmp_path / "new.json", {"$defs": {"Rec": defs["Rec"]}, "$ref": "#/$defs/Rec"})
    assert run(old, new) == (
        1,
        DEFS_DRAFTS
        + "error: definition-removed at #/$defs/Side -> #: definition 'Side' removed: a record "
        "type of its own, records validated by that name are rejected (backward: no, "
        "forward: yes)\n"
        "INCOMPATIBLE (backward, strict): 1 change (1 error)\n",
        "",
    )
    assert run(old, new, "--mode", "forward")[0] == 0
    assert run(new, old, "--mode", "full")[0] == 1
    assert run(new, old)[0] == 0


BOOLEAN_DRAFTS = (
    "old: 2020-12 (default: a boolean schema)\nnew: 2020-12 (default: a boolean schema)\n"
)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "true",
            "false",
            (
                1,
                BOOLEAN_DRAFTS
                + "error: schema-rejects-all at #: the schema now rejects every value "
                "(backward: no, forward: yes)\n"
                "INCOMPATIBLE (backward, strict): 1 change (1 error)\n",
                "",
            ),
        ),
        (
            "true",
            "{}",
            (
                0,
                "old: 2020-12 (default: a boolean schema)\n"
                f"new: {NO_SIGNAL}\n"
                "compatible (backward, strict): no changes\n",
                "",
            ),
        ),
        (
            '{"type": "string"}',
            "true",
            (
                0,
                f"old: {NO_SIGNAL}\nnew: 2020-12 (default: a boolean schema)\n"
                "warning: type-widened at #/type -> #: type widened from string to any type "
                "(backward: yes, forward: no)\n"
                "compatible (backward, strict): 1 change (1 warning)\n",
                "",
            ),
        ),
    ],
)
def test_a_boolean_schema_document_is_compared_like_any_schema(
    tmp_path: Path, old: str, new: str, expected: tuple[int, str, str]
) -> None:
    (tmp_path / "old.json").write_text(old)
    (tmp_path / "new.json").write_text(new)
    assert run(str(tmp_path / "old.json"), str(tmp_path / "new.json")) == expected


def test_a_name_with_a_newline_or_an_escape_sequence_is_shown_not_sent(tmp_path: Path) -> None:
    """A property name cannot add a line of its own (a forged workflow command) or send a
    terminal escape: text, github and error output show such characters as escapes."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"type": "object"}', encoding="utf-8")
    evil = "evil\n::error file=README.md,line=1::pwned\x1b[2J\u202e"
    new.write_text(json.dumps({"type": "object", "required": [evil]}), encoding="utf-8")
    for output_format in ("text", "github"):
        result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", output_format])
        lines = result.stdout.splitlines()
        assert len(lines) == {"text": 4, "github": 2}[output_format], lines  # drafts in text
        assert not any(line.startswith("::error file=README.md") for line in lines)
        assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
        assert "pwned\\x1b[2J\\u202e" in lines[-2]
