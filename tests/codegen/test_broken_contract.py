"""A broken contract makes ``wiregate codegen`` (and ``--check``) exit 2 with one line naming the
schema file and the place, never a traceback, and leaves the generated package untouched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from codegen.layout import OUTPUT_DIR

if TYPE_CHECKING:
    from tests.codegen.conftest import CliResult

    Cli = Callable[..., CliResult]

SCHEMA = "contracts/rollout-wire.schema.json"
PREFIX = f"wiregate: error: {SCHEMA}: "
COMMANDS = [pytest.param(["codegen"], id="write"), pytest.param(["codegen", "--check"], id="check")]


def _edit(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = root / SCHEMA
    schema = json.loads(path.read_text(encoding="utf-8"))
    edit(schema)
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")


def _prop(def_name: str, prop: str, subschema: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"][def_name]["properties"][prop] = subschema

    return edit


def _key(def_name: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"][def_name][key] = value

    return edit


def _defs(entries: dict[str, Any], ref: str = "") -> Callable[[dict[str, Any]], None]:
    """Add ``$defs`` entries; with ``ref``, DpoRecord.meta refers to that one."""

    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"].update(entries)
        if ref:
            schema["$defs"]["DpoRecord"]["properties"]["meta"] = {"$ref": f"#/$defs/{ref}"}

    return edit


# Each broken contract -> the exact message after "wiregate: error: <file>: ".
BROKEN: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "unknown-type": (
        _prop("ToolEventData", "name", {"type": "strin"}),
        "not a valid JSON Schema (draft 2020-12) at /$defs/ToolEventData/properties/name/type: "
        "'strin' is not valid under any of the given schemas",
    ),
    "remote-ref": (
        _prop("DpoRecord", "provenance", {"$ref": "https://example.com/x.json"}),
        "$ref 'https://example.com/x.json' at /$defs/DpoRecord/properties/provenance does not "
        "resolve (expected #/$defs/<name> of this file)",
    ),
    "missing-def-ref": (
        _prop("DpoRecord", "provenance", {"$ref": "#/$defs/Nope"}),
        "$ref '#/$defs/Nope' at /$defs/DpoRecord/properties/provenance does not resolve "
        "(expected #/$defs/<name> of this file)",
    ),
    "required-not-array": (
        _key("DpoRecord", "required", "abc"),
        "not a valid JSON Schema (draft 2020-12) at /$defs/DpoRecord/required: "
        "'abc' is not of type 'array'",
    ),
    "recursive-alias": (
        _defs({"Tree": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}, ref="Tree"),
        "a recursive $ref to Tree (not an object type) at /$defs/Tree/items is not supported "
        "by codegen",
    ),
    "enum-object-value": (
        _prop("DpoRecord", "meta", {"enum": [{"a": 1}]}),
        "enum value {'a': 1} (only strings, numbers, booleans and null) at "
        "/$defs/DpoRecord/properties/meta/enum is not supported by codegen",
    ),
    "def-name-not-python": (
        _defs({"my-type": {"type": "object", "properties": {"a": {"type": "string"}}}}),
        "$defs name 'my-type' (not a Python name) at /$defs/my-type is not supported by codegen",
    ),
    "items-not-schema": (
        _prop("DpoRecord", "meta", {"type": "array", "items": 5}),
        "not a valid JSON Schema (draft 2020-12) at /$defs/DpoRecord/properties/meta/items: "
        "5 is not of type 'object', 'boolean'",
    ),
    "ref-not-string": (
        _prop("DpoRecord", "meta", {"$ref": 5}),
        "not a valid JSON Schema (draft 2020-12) at /$defs/DpoRecord/properties/meta/$ref: "
        "5 is not of type 'string'",
    ),
    "additional-properties-not-schema": (
        _key("ToolEventData", "additionalProperties", "no"),
        "not a valid JSON Schema (draft 2020-12) at /$defs/ToolEventData/additionalProperties: "
        "'no' is not of type 'object', 'boolean'",
    ),
    "enum-not-array": (
        _prop("DpoRecord", "meta", {"enum": "abc"}),
        "not a valid JSON Schema (draft 2020-12) at /$defs/DpoRecord/properties/meta/enum: "
        "'abc' is not of type 'array'",
    ),
    "defs-not-object": (
        lambda schema: schema.update({"$defs": []}),
        "not a valid JSON Schema (draft 2020-12) at /$defs: [] is not of type 'object'",
    ),
    "properties-not-object": (
        _key("ToolEventData", "properties", []),
        "not a valid JSON Schema (draft 2020-12) at /$defs/ToolEventData/properties: "
        "[] is not of type 'object'",
    ),
}


def _package(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / OUTPUT_DIR).glob("*.py")}


def _assert_one_error_line(result: CliResult, message: str) -> None:
    assert "Traceback" not in result.stdout + result.stderr
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1
    assert result.stderr == PREFIX + message + "\n"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_schema_exits_2_with_one_line(
    cli: Cli, contract_copy: Path, case: str, command: list[str]
) -> None:
    edit, message = BROKEN[case]
    _edit(contract_copy, edit)
    before = _package(contract_copy)
    result = cli("--root", str(contract_copy), *command)
    _assert_one_error_line(result, message)
    assert _package(contract_copy) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_invalid_json_names_the_file_relative_to_the_root(
    cli: Cli, contract_copy: Path, command: list[str]
) -> None:
    (contract_copy / SCHEMA).write_text('{"$defs": {,}}', encoding="utf-8")
    before = _package(contract_copy)
    result = cli("--root", str(contract_copy), *command)
    try:
        json.loads('{"$defs": {,}}')
    except ValueError as exc:
        detail = str(exc)  # the parser's wording differs between Python versions
    _assert_one_error_line(result, f"not valid JSON: {detail}")
    assert _package(contract_copy) == before


def test_a_boolean_def_is_a_schema_like_any_other(cli: Cli, contract_copy: Path) -> None:
    """``true`` is a valid ``$defs`` entry (anything); a $ref to it is an untyped value."""

    def add(schema: dict[str, Any]) -> None:
        schema["$defs"]["Anything"] = True
        schema["$defs"]["DpoRecord"]["properties"]["meta"] = {"$ref": "#/$defs/Anything"}

    _edit(contract_copy, add)
    assert cli("--root", str(contract_copy), "codegen").exit_code == 0
    result = cli("--root", str(contract_copy), "codegen", "--check")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    models = (contract_copy / OUTPUT_DIR / "rollout_wire.py").read_text(encoding="utf-8")
    assert "Anything: TypeAlias = Any\n" in models
    assert "    meta: Anything | UnsetType = UNSET\n" in models


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_refused(
    cli: Cli, contract_copy: Path, constant: str, command: list[str]
) -> None:
    path = contract_copy / SCHEMA
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"type": "object"', f'"const": {constant}, "type": "object"', 1))
    result = cli("--root", str(contract_copy), *command)
    _assert_one_error_line(result, f"not valid JSON: {constant} is not a JSON value")


@pytest.mark.parametrize("command", COMMANDS)
def test_too_deeply_nested_schema_is_refused(
    cli: Cli, contract_copy: Path, command: list[str]
) -> None:
    (contract_copy / SCHEMA).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = cli("--root", str(contract_copy), *command)
    _assert_one_error_line(result, "nested too deeply")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_generator_failure_names_the_schema_on_one_line(
    cli: Cli, contract_copy: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import codegen.generate

    def fail(*_args: Any, **_kwargs: Any) -> str:
        raise ValueError("cannot parse\n  at line 2")

    monkeypatch.setattr(codegen.generate, "generate", fail)
    _edit(contract_copy, _prop("DpoRecord", "meta", {"type": "string"}))
    result = cli("--root", str(contract_copy), *command)
    _assert_one_error_line(result, "datamodel-code-generator failed: cannot parse at line 2")


@pytest.mark.parametrize(
    "command",
    [*COMMANDS, pytest.param(["codegen", "--target", "pydantic", "--out", "-"], id="target")],
)
def test_a_fifo_in_place_of_a_schema_is_refused_not_waited_on(
    cli: Cli, contract_copy: Path, command: list[str]
) -> None:
    import os

    path = contract_copy / "contracts/training-record.schema.json"  # (the other finds the root)
    path.unlink()
    os.mkfifo(path)
    result = cli("--root", str(contract_copy), *command)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.endswith("cannot read: a FIFO, not a regular file\n"), result.stderr


@pytest.mark.parametrize(
    "command",
    [
        *COMMANDS,
        pytest.param(["codegen", "--target", "typescript", "--out", "OUT"], id="typescript"),
        pytest.param(["codegen", "--target", "pydantic", "--out", "OUT"], id="pydantic"),
    ],
)
def test_a_lone_surrogate_is_named_where_it_is(
    cli: Cli, contract_copy: Path, tmp_path: Path, command: list[str]
) -> None:
    """Valid in JSON text (written ``\\ud800``), it has no UTF-8 form: every target failed to
    write it, exit 3 with an internal error (and the generator's warning of several kB)."""

    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"]["ToolEventData"]["description"] = "call \ud800 data"

    _edit(contract_copy, edit)
    out = tmp_path / "out.file"
    before = _package(contract_copy)
    result = cli("--root", str(contract_copy), *[str(out) if a == "OUT" else a for a in command])
    _assert_one_error_line(
        result,
        "#/$defs/ToolEventData/description: a lone surrogate (\\ud800) at character 5, which "
        "no UTF-8 file can hold: no code can be generated from it",
    )
    assert _package(contract_copy) == before
    assert not out.exists()
