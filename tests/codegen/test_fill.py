"""What codegen adds to the generator's output from the schema: ECMA-262 patterns as Python ones
where the translation is exact, and the record types whose Structs cannot hold every
constraint (their fast decoders defer)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from codegen.fill import python_pattern
from codegen.layout import OUTPUT_DIR

if TYPE_CHECKING:
    from tests.codegen.conftest import CliResult

    Cli = Callable[..., CliResult]


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("^[0-9a-f]{16}$", "^[0-9a-f]{16}\\Z"),
        ("^[0-9]+$", "^[0-9]+\\Z"),
        ("^\\d{2,4}-x$", "^[0-9]{2,4}-x\\Z"),
        ("abc", "abc"),
        ("^v[0-9]+\\.[0-9]+", "^v[0-9]+\\.[0-9]+"),
        # Not known to match the same strings in both dialects: left to the validator.
        ("^a|b$", None),
        ("^(ab)+$", None),
        ("^.+$", None),
        ("^\\w+$", None),
        ("^[^a]$", None),
        ("a$b", None),
        ("a^", None),
        ("\\p{L}", None),
    ],
)
def test_patterns_translate_only_where_exact(pattern: str, python: str | None) -> None:
    assert python_pattern(pattern) == python


@pytest.mark.parametrize(
    ("text", "matches"),
    [("0123456789abcdef", True), ("0123456789abcdef\n", False), ("0123456789ABCDEF", False)],
)
def test_the_translated_dollar_ends_the_text(text: str, matches: bool) -> None:
    translated = python_pattern("^[0-9a-f]{16}$")
    assert translated is not None
    assert bool(re.search(translated, text)) is matches


def _decode_in(root: Path, record_type: str, line: str) -> str:
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "import datafactory.wire as w\n"
        "from datafactory.records import fast_decoder\n"
        f"print(w.INEXACT, fast_decoder(w.{record_type})({line.encode()!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout


def test_a_keyword_msgspec_cannot_express_makes_its_record_type_defer(
    cli: Cli, contract_copy: Path, repo_root: Path
) -> None:
    path = contract_copy / "contracts" / "rollout-wire.schema.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    schema["$defs"]["ForkBranch"]["properties"]["final_answer"]["pattern"] = "^(a|b)+$"
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    assert cli("--root", str(contract_copy), "codegen").exit_code == 0
    init = (contract_copy / OUTPUT_DIR / "__init__.py").read_text(encoding="utf-8")
    pointer = "contracts/rollout-wire.schema.json#/$defs/ForkBranch/properties/final_answer/pattern"
    assert f'    "RolloutTreeRecord": "{pointer}",\n' in init
    # The copy holds only the generated package: give it the façade that reads INEXACT.
    (contract_copy / "datafactory" / "records.py").write_bytes(
        (repo_root / "datafactory" / "records.py").read_bytes()
    )
    tree = {
        "rollout_id": "r",
        "task": "t",
        "fork_map": {},
        "branches": [
            {
                "branch_index": 0,
                "forked_at_step": 0,
                "forked_at_event_id": "e",
                "shared_prefix_steps": 0,
                "final_answer": "c",
            }
        ],
    }
    assert _decode_in(contract_copy, "RolloutTreeRecord", json.dumps(tree)) == (
        f"{{'RolloutTreeRecord': '{pointer}'}} None\n"
    )


def test_a_required_key_without_a_property_is_inexact() -> None:
    from codegen.fill import inexact_types

    schema = {
        "$defs": {
            "A": {"type": "object", "required": ["x", "y"], "properties": {"x": {}}},
            "B": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}},
        }
    }
    assert inexact_types(schema, ["A", "B"]) == {"A": "/$defs/A/required"}


def test_property_names_beyond_a_class_property_are_inexact(cli: Cli, contract_copy: Path) -> None:
    """The template types the keys of a class's own map property; a map reached through a
    $ref alias keeps `str` keys, so its record type defers."""
    path = contract_copy / "contracts" / "rollout-wire.schema.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    schema["$defs"]["StepMap"] = {
        "type": "object",
        "propertyNames": {"pattern": "^[0-9]+$"},
        "additionalProperties": {"type": "integer"},
    }
    schema["$defs"]["DpoRecord"]["properties"]["steps"] = {"$ref": "#/$defs/StepMap"}
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    assert cli("--root", str(contract_copy), "codegen").exit_code == 0
    init = (contract_copy / OUTPUT_DIR / "__init__.py").read_text(encoding="utf-8")
    models = (contract_copy / OUTPUT_DIR / "rollout_wire.py").read_text(encoding="utf-8")
    assert "StepMap: TypeAlias = dict[str, int]\n" in models
    assert (
        '    "DpoRecord": "contracts/rollout-wire.schema.json#/$defs/StepMap/propertyNames",\n'
        in init
    )
    assert '    "RolloutTreeRecord": "' not in init  # its fork_map's keys are typed
