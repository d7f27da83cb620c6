"""Property test: records generated from the contract by hypothesis-jsonschema round-trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import datafactory.wire as wire
from contracts import locate
from datafactory.wire import from_wire, to_wire
from wiregate.record_validator import ValidatorSet

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTRACT = locate(REPO_ROOT)
VALIDATORS = ValidatorSet(CONTRACT)


def _draft7_spelling(node: Any) -> Any:
    """hypothesis-jsonschema knows ``dependentRequired`` by its draft-7 name ``dependencies``."""
    if isinstance(node, dict):
        return {
            ("dependencies" if key == "dependentRequired" else key): _draft7_spelling(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_draft7_spelling(value) for value in node]
    return node


def records(record_type: str) -> st.SearchStrategy[Any]:
    schema = CONTRACT.schemas[CONTRACT.record_types[record_type]]
    return from_schema(
        {"$defs": _draft7_spelling(schema["$defs"]), "$ref": f"#/$defs/{record_type}"}
    )


@pytest.mark.parametrize("record_type", list(CONTRACT.record_types))
def test_generated_valid_records_round_trip(record_type: str) -> None:
    validator = VALIDATORS.get(record_type)
    model_class = getattr(wire, record_type)

    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        # A trl record has some 30 required columns beside its message lists: large inputs.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    @given(records(record_type))
    def round_trip(record: Any) -> None:
        assert validator.is_valid(record), validator.problems(record)
        assert to_wire(from_wire(model_class, record)) == record

    round_trip()
