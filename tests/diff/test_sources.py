"""wiregate.sources: the one parser of schema documents (diff and drift) and the grammar of
``REPO_DIR@REF:PATH`` sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from wiregate.errors import UserError
from wiregate.sources import parse_document, parse_git_spec, split_pointer


def test_integers_of_any_size_stay_exact() -> None:
    document = parse_document(b'{"maximum": 18446744073709551617}', "s.json")
    assert document == {"maximum": 2**64 + 1}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "s.json: not valid JSON: Expecting property name enclosed in double quotes"),
        (b'{"a": 1} x', "s.json: not valid JSON: Extra data: line 1 column 10 (char 9)"),
        (b'{"maximum": NaN}', "s.json: not valid JSON: NaN is not a JSON value"),
        (b'{"a": Infinity}', "s.json: not valid JSON: Infinity is not a JSON value"),
        (b"[1, 2]", "s.json: a schema document must be a JSON object"),
        (b'"text"', "s.json: a schema document must be a JSON object"),
        (b'{"a": "\xff"}', "s.json: not UTF-8 text"),
        # An encoded surrogate got through json.loads, which decodes bytes leniently
        (b'{"a": "\xed\xa0\x80"}', "s.json: not UTF-8 text"),
    ],
)
def test_anything_else_is_one_line_naming_the_source(data: bytes, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_document(data, "s.json")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_byte_order_mark_is_allowed() -> None:
    assert parse_document(b'\xef\xbb\xbf{"type": "string"}', "s.json") == {"type": "string"}


def test_nesting_beyond_the_parser_is_one_line_naming_the_source() -> None:
    with pytest.raises(UserError) as caught:
        parse_document(b"[" * 100_000 + b"]" * 100_000, "s.json")
    assert str(caught.value) == (
        "s.json: nested too deeply to read (Python's recursion limit was reached)"
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("repo@HEAD:s.json", ("repo", "HEAD", "s.json")),
        ("repo/sub@main:a/b.json", ("repo/sub", "main", "a/b.json")),
        ("repo@HEAD@{1}:s.json", ("repo", "HEAD@{1}", "s.json")),
        ("repo@release@2:s.json", ("repo", "release@2", "s.json")),
        ("repo@HEAD:dir/@scope/x:y.json", ("repo", "HEAD", "dir/@scope/x:y.json")),
        # The longest existing directory wins: a folder whose name holds an "@".
        ("repo/@scope/pkg@v1:s.json", ("repo/@scope/pkg", "v1", "s.json")),
        ("at@dir@HEAD:s.json", ("at@dir", "HEAD", "s.json")),
        # A braced ":" belongs to the ref; a message search runs to the last ":".
        ("repo@HEAD@{2026-07-01 10:00}:s.json", ("repo", "HEAD@{2026-07-01 10:00}", "s.json")),
        ("repo@@{-1}:s.json", ("repo", "@{-1}", "s.json")),
        ("repo@:/fix: the parser:s.json", ("repo", ":/fix: the parser", "s.json")),
        ("repo@:/s.json", None),
        # Not git specs: no existing directory, no ref, no path, or an existing file.
        ("nope@HEAD:s.json", None),
        ("repo@:s.json", None),
        ("repo@HEAD:", None),
        ("repo@HEAD", None),
        ("file@HEAD:s.json", None),
        ("a" * 300 + "@HEAD:s.json", None),
    ],
)
def test_git_spec_grammar(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    expected: tuple[str, str, str] | None,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / "@scope" / "pkg").mkdir(parents=True)
    (tmp_path / "at").mkdir()
    (tmp_path / "at@dir").mkdir()
    (tmp_path / "file@HEAD:s.json").write_text("{}", encoding="utf-8")
    assert parse_git_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("s.json", ("s.json", None)),
        ("s.json#/$defs/X", ("s.json", "#/$defs/X")),
        ("s.json#", ("s.json", "#")),
        ("-#/$defs/X", ("-", "#/$defs/X")),
        ("odd#name.json", ("odd#name.json", None)),  # exists as typed
        ("odd#name.json#/a#b", ("odd#name.json", "#/a#b")),
        ("repo@HEAD~1:s.json#/$defs/X", ("repo@HEAD~1:s.json", "#/$defs/X")),
        ("repo@HEAD:s.json#/properties/a:b", ("repo@HEAD:s.json", "#/properties/a:b")),
        ("missing.json#/x", ("missing.json#/x", None)),  # no source before the "#"
        ("s.json#x", ("s.json#x", None)),  # not a pointer
    ],
)
def test_pointer_suffix_grammar(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    expected: tuple[str, str | None],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo").mkdir()
    (tmp_path / "s.json").write_text("{}", encoding="utf-8")
    (tmp_path / "odd#name.json").write_text("{}", encoding="utf-8")
    assert split_pointer(spec) == expected


def _diff_exit(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from wiregate.cli import main

    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.stderr


def test_a_fifo_or_device_source_is_one_line_not_a_hang(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)  # no writer: opening it for reading would wait forever
    schema = tmp_path / "s.json"
    schema.write_text("{}")
    assert _diff_exit(str(fifo), str(schema)) == (
        2,
        f"wiregate: error: {fifo}: a FIFO, not a regular file\n",
    )
    assert _diff_exit("/dev/zero", str(schema)) == (
        2,
        "wiregate: error: /dev/zero: a character device, not a regular file\n",
    )


def test_a_source_over_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import git

    import wiregate.sources

    monkeypatch.setattr(wiregate.sources, "MAX_SCHEMA_BYTES", 10)
    big = tmp_path / "big.json"
    big.write_text('{"title": "eleven+ bytes"}')
    assert _diff_exit(str(big), str(big)) == (
        2,
        f"wiregate: error: {big}: 26 bytes, over the limit of 10\n",
    )
    repo = git.Repo.init(tmp_path, initial_branch="main")
    repo.git.add("big.json")
    repo.git.commit(
        "-m",
        "big",
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    repo.close()
    code, message = _diff_exit(f"{tmp_path}@HEAD:big.json", str(tmp_path / "big.json"))
    assert (code, message) == (
        2,
        f"wiregate: error: {tmp_path}@HEAD:big.json: 26 bytes, over the limit of 10\n",
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "'': no file named"),
        ("#", "'#': no file named before the #POINTER"),
        ("#/$defs/A", "'#/$defs/A': no file named before the #POINTER"),
    ],
)
def test_a_source_that_names_no_file_is_one_line(spec: str, message: str) -> None:
    # "" was opened as the current directory: ": is a directory, not a schema file"
    from wiregate.sources import load_source

    with pytest.raises(UserError) as caught:
        load_source(spec)
    assert str(caught.value) == message


def test_a_key_written_twice_is_refused() -> None:
    # last-wins: the file showed required: ["a"] and the diff read required: []
    with pytest.raises(UserError) as caught:
        parse_document(b'{"type": "object",\n "required": ["a"], "required": []}', "dup.json")
    assert str(caught.value) == (
        "dup.json: not valid JSON: the key 'required' is written twice in one object"
    )
    with pytest.raises(UserError, match="the key 'b' is written twice"):
        parse_document(b'{"properties": {"a": {"b": 1, "b": 1}}}', "dup.json")
