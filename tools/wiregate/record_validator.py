"""Compiled validators for the contract's record types.

Two engines: jsonschema-rs answers "is this record valid?" fast; the reference ``jsonschema``
package, which gives the better messages, only explains the records that fail. A test checks
that both agree on every fixture. Neither ever fetches a ``$ref`` over the network.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from contracts import Contract, ContractError

if TYPE_CHECKING:  # imported when a record fails: most runs never explain one
    from jsonschema.exceptions import ValidationError

__all__ = ["Problem", "RecordValidator", "ValidatorSet", "guess_record_type", "pointer"]

_MAX_REPR = 60


@dataclass(frozen=True)
class Problem:
    """One reason a record breaks the contract, at a JSON pointer inside the record."""

    pointer: str
    message: str


def pointer(parts: Iterator[str | int] | list[str | int] | tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer for a path; the empty pointer is shown as ``/``."""
    escaped = [str(p).replace("~", "~0").replace("/", "~1") for p in parts]
    return "/" + "/".join(escaped) if escaped else "/"


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _describe(error: ValidationError) -> Problem:
    """A short message for an error; the instance is abbreviated so huge records stay readable."""
    path = list(error.absolute_path)
    keyword = error.validator
    value: Any = error.validator_value
    instance: Any = error.instance
    schema: Any = error.schema
    if keyword == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        name = missing[0] if missing else "?"
        return Problem(pointer([*path, name]), "required property is missing")
    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = set(schema.get("properties", {}))
        extras = sorted(k for k in instance if k not in allowed)
        name = extras[0] if extras else "?"
        return Problem(pointer([*path, name]), "property is not allowed here (closed object)")
    if keyword == "dependentRequired" and isinstance(instance, dict):
        for trigger, needed in value.items():
            for name in needed:
                if trigger in instance and name not in instance:
                    return Problem(pointer([*path, name]), f"required when {trigger!r} is present")
    messages = {
        "type": lambda: f"expected type {value}, got {_short(instance)}",
        "enum": lambda: f"{_short(instance)} is not one of {value}",
        "const": lambda: f"must be {_short(value)}, got {_short(instance)}",
        "pattern": lambda: f"{_short(instance)} does not match {value}",
        "minLength": lambda: f"must be at least {value} characters long, got {_short(instance)}",
        "maxLength": lambda: f"must be at most {value} characters long",
        "minimum": lambda: f"must be >= {value}, got {_short(instance)}",
        "maximum": lambda: f"must be <= {value}, got {_short(instance)}",
        "exclusiveMinimum": lambda: f"must be > {value}, got {_short(instance)}",
        "exclusiveMaximum": lambda: f"must be < {value}, got {_short(instance)}",
        "minItems": lambda: f"must have at least {value} items",
        "maxItems": lambda: f"must have at most {value} items",
    }
    make = messages.get(str(keyword))
    if make is not None:
        return Problem(pointer(path), make())
    if keyword in ("oneOf", "anyOf") and error.context:
        # Explain with the branch that came closest (the deepest, most specific error).
        return _describe(min(error.context, key=_relevance))
    return Problem(pointer(path), error.message if len(error.message) < 200 else str(keyword))


def _relevance(error: ValidationError) -> tuple[int, int]:
    """Sort key for the alternatives of a oneOf/anyOf: the branch whose type fitted and that
    got deepest into the instance explains the failure best."""
    wrong_type_here = error.validator == "type" and not error.relative_path
    return (1 if wrong_type_here else 0, -len(error.absolute_path))


class RecordValidator:
    """Validates instances of one ``$defs`` entry of a contract schema."""

    def __init__(self, name: str, schema: Mapping[str, Any]) -> None:
        self.name = name
        # A self-contained schema whose root refers to the definition: all $refs stay local.
        wrapped = {
            "$schema": schema.get("$schema", "https://json-schema.org/draft/2020-12/schema"),
            "$defs": schema.get("$defs", {}),
            "$ref": f"#/$defs/{name}",
        }
        self._wrapped = wrapped
        self._fast = jsonschema_rs.validator_for(wrapped, offline=True)
        self._reference: Any = None  # built on first use: importing jsonschema takes a while

    @property
    def reference(self) -> Any:
        """The reference engine (``jsonschema``) for this definition."""
        if self._reference is None:
            import jsonschema

            self._reference = jsonschema.validators.validator_for(self._wrapped)(self._wrapped)
        return self._reference

    def is_valid(self, record: Any) -> bool:
        return bool(self._fast.is_valid(record))

    def problems(self, record: Any) -> list[Problem]:
        """Every problem, sorted by pointer; empty when the record is valid."""
        if self.is_valid(record):
            return []
        return self.explain(record)

    def explain(self, record: Any) -> list[Problem]:
        """Problems as the reference engine reports them (slow path)."""
        found = {_describe(e) for e in self.reference.iter_errors(record)}
        return sorted(found, key=lambda p: (p.pointer, p.message))


class ValidatorSet:
    """Lazily compiled validators for every definition of a contract."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self._cache: dict[str, RecordValidator] = {}

    def names(self) -> list[str]:
        return list(self.contract.definitions)

    def get(self, name: str) -> RecordValidator:
        if name not in self._cache:
            schema_name = self.contract.definitions.get(name)
            if schema_name is None:
                known = ", ".join(self.contract.record_types)
                raise ContractError(f"unknown record type {name!r} (record types: {known})")
            self._cache[name] = RecordValidator(name, self.contract.schemas[schema_name])
        return self._cache[name]


def guess_record_type(record: Any) -> str | None:
    """The record type a record's shape says it is, or None when nothing fits."""
    if not isinstance(record, dict):
        return None
    version = record.get("schema_version")
    training = "messages" in record or (
        isinstance(version, str) and version.startswith("training-record/")
    )
    if training:
        if "reward" in record and "chosen" not in record:
            return "PpoTrainingRecord"
        return "DpoTrainingRecord"
    if "branches" in record or "fork_map" in record:
        return "RolloutTreeRecord"
    if "completion" in record or ("reward" in record and "chosen" not in record):
        return "PpoRecord"
    if "chosen" in record or "rejected" in record:
        return "DpoRecord"
    if "branch_index" in record or "final_answer" in record or "rollout_id" in record:
        return "RolloutBranchRecord"
    return None
