"""Percent-encoded and ``~0``/``~1`` pointers in ``$ref``: resolved as both validators do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
from click.testing import CliRunner

from wiregate.cli import main


def _schema(name_schema: dict[str, Any], tilde_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "$defs": {"a b": name_schema, "c~d/e": tilde_schema},
        "type": "object",
        "properties": {
            "x": {"$ref": "#/$defs/a%20b"},
            "y": {"$ref": "#/$defs/c~0d~1e"},
        },
    }


OLD = _schema({"type": "string"}, {"type": "integer"})
NEW = _schema({"type": "string", "maxLength": 3}, {"type": "number"})


def _diff(tmp_path: Path, *args: str, old: dict[str, Any] = OLD) -> tuple[int, str, str]:
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(NEW), encoding="utf-8")
    files = [str(tmp_path / "old.json"), str(tmp_path / "new.json")]
    result = CliRunner().invoke(main, ["diff", *files, *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_validators_resolve_these_refs() -> None:
    """The premise: both validators follow the references (NEW's maxLength is reached)."""
    record = {"x": "long", "y": 2.5}
    assert jsonschema.Draft202012Validator(OLD).is_valid({"x": "long", "y": 2})
    assert not jsonschema.Draft202012Validator(NEW).is_valid({"x": "long", "y": 2})
    assert jsonschema.Draft202012Validator(NEW).is_valid({"x": "abc", "y": 2.5})
    assert not jsonschema_rs.validator_for(NEW).is_valid(record)
    assert jsonschema_rs.validator_for(NEW).is_valid({"x": "abc", "y": 2.5})


def test_percent_encoded_and_tilde_refs_are_compared(tmp_path: Path) -> None:
    assert _diff(tmp_path) == (
        1,
        "old: 2020-12 (detected: $defs at #/$defs)\nnew: 2020-12 (detected: $defs at #/$defs)\n"
        "error: max-length-added at #/$defs/a b -> #/$defs/a b/maxLength: maxLength 3 added "
        "(backward: no, forward: yes)\n"
        "warning: type-widened at #/$defs/c~0d~1e/type: type widened from integer to number "
        "(backward: yes, forward: no)\n"
        "INCOMPATIBLE (backward, strict): 2 changes (1 error, 1 warning)\n",
        "",
    )
    assert _diff(tmp_path, "--mode", "forward")[0] == 1


def test_a_malformed_escape_is_one_exit_2_line(tmp_path: Path) -> None:
    old = {**OLD, "properties": {"y": {"$ref": "#/$defs/c~2d"}}}
    code, out, err = _diff(tmp_path, old=old)
    assert (code, out) == (2, "")
    assert err == (
        f"wiregate: error: {tmp_path / 'old.json'}: $ref '#/$defs/c~2d' is malformed: "
        "holds a ~ that is neither ~0 nor ~1\n"
    )
