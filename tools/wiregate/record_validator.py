"""Compiled validators for the contract's record types.

Two engines: jsonschema-rs answers "is this record valid?" fast; the reference ``jsonschema``
package, which gives the better messages, only explains the records that fail. A test checks
that both agree on every fixture. Neither ever fetches a ``$ref`` over the network.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from contracts import Contract, ContractError
from wiregate.pointer import fragment, join

if TYPE_CHECKING:  # imported when a record fails: most runs never explain one
    from jsonschema.exceptions import ValidationError

__all__ = [
    "REFERENCE_MAX_LEVELS",
    "Problem",
    "RecordValidator",
    "ValidatorSet",
    "guess_record_type",
    "pointer",
]

_MAX_REPR = 60


@dataclass(frozen=True)
class Problem:
    """One reason a record breaks the contract, at a JSON pointer inside the record.
    ``keyword``: the JSON Schema keyword it breaks (``enum``, ``required``,
    ``additionalProperties``, ...; ``nesting`` for a record too deep to explain), whichever
    engine found it; the validate baseline matches problems by it, not by their wording."""

    pointer: str
    message: str
    keyword: str = field(default="", compare=False)


def pointer(parts: Iterator[str | int] | list[str | int] | tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer for a path; the empty pointer is shown as ``/``."""
    return join("", *parts) or "/"


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


REQUIRED = "required property is missing"
CLOSED = "property is not allowed here (closed object)"


def _required_when(trigger: str) -> str:
    return f"required when {trigger!r} is present"


def _keyword_message(keyword: str, value: Any, instance: Any) -> str | None:
    """The wording for a failed value keyword, whichever engine found it."""
    short = _short(instance)
    messages = {
        "type": lambda: f"expected type {value}, got {short}",
        "enum": lambda: f"{short} is not one of {value}",
        "const": lambda: f"must be {_short(value)}, got {short}",
        "pattern": lambda: f"{short} does not match {value}",
        "minLength": lambda: f"must be at least {value} characters long, got {short}",
        "maxLength": lambda: f"must be at most {value} characters long",
        "minimum": lambda: f"must be >= {value}, got {short}",
        "maximum": lambda: f"must be <= {value}, got {short}",
        "exclusiveMinimum": lambda: f"must be > {value}, got {short}",
        "exclusiveMaximum": lambda: f"must be < {value}, got {short}",
        "minItems": lambda: f"must have at least {value} items",
        "maxItems": lambda: f"must have at most {value} items",
    }
    make = messages.get(keyword)
    return make() if make is not None else None


def _describe(error: ValidationError) -> Problem:
    """A short message for an error; the instance is abbreviated so huge records stay readable."""
    path = list(error.absolute_path)
    keyword = error.validator
    value: Any = error.validator_value
    instance: Any = error.instance
    schema: Any = error.schema
    if keyword == "required":
        # One error per missing property; its message names it ("'x' is a required property").
        missing = [n for n in value if isinstance(instance, dict) and n not in instance]
        named = [n for n in missing if error.message.startswith(repr(n))]
        name = (named or missing or ["?"])[0]
        return Problem(pointer([*path, name]), REQUIRED, "required")
    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = set(schema.get("properties", {}))
        extras = sorted(k for k in instance if k not in allowed)
        name = extras[0] if extras else "?"
        return Problem(pointer([*path, name]), CLOSED, "additionalProperties")
    if keyword == "dependentRequired" and isinstance(instance, dict):
        for trigger, needed in value.items():
            for name in needed:
                if trigger in instance and name not in instance:
                    return Problem(
                        pointer([*path, name]), _required_when(trigger), "dependentRequired"
                    )
    message = _keyword_message(str(keyword), value, instance)
    if message is not None:
        return Problem(pointer(path), message, str(keyword))
    if keyword in ("oneOf", "anyOf") and error.context:
        # Explain with the branch that came closest (the deepest, most specific error).
        return _describe(min(error.context, key=_relevance))
    text = error.message if len(error.message) < 200 else str(keyword)
    return Problem(pointer(path), text, str(keyword))


def _relevance(error: ValidationError) -> tuple[int, int]:
    """Sort key for the alternatives of a oneOf/anyOf: the branch whose type fitted and that
    got deepest into the instance explains the failure best."""
    wrong_type_here = error.validator == "type" and not error.relative_path
    return (1 if wrong_type_here else 0, -len(error.absolute_path))


def _at(document: Any, path: list[Any]) -> Any:
    """The node at ``path`` in ``document``, or None."""
    node = document
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


_LIMITS = {
    "MinLength": "minLength",
    "MaxLength": "maxLength",
    "Minimum": "minimum",
    "Maximum": "maximum",
    "ExclusiveMinimum": "exclusiveMinimum",
    "ExclusiveMaximum": "exclusiveMaximum",
    "MinItems": "minItems",
    "MaxItems": "maxItems",
}


# jsonschema-rs raises this (a ValueError) when it converts an error's instance nested more
# than about 255 levels deep to Python.
_RS_TOO_DEEP = "Recursion limit reached"
#: The deepest record the reference engine is asked to explain: well within Python's default
#: recursion limit (1000), which its messages (the repr of the failing value) run into.
REFERENCE_MAX_LEVELS = 500


def _levels(value: Any) -> int:
    """How many arrays and objects deep ``value`` goes (0 for a scalar); iterative, as recursion
    is what failed."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in _children(node))
    return deepest


def _children(node: dict[str, Any] | list[Any]) -> Iterator[Any]:
    return iter(node.values()) if isinstance(node, dict) else iter(node)


def _too_deep(record: Any) -> Problem:
    """The problem for a record too deeply nested to explain, at its member (the first of the
    deepest) whose value is nested deepest."""
    members: list[tuple[str | int, Any]] = []
    if isinstance(record, dict):
        members = list(record.items())
    elif isinstance(record, list):
        members = list(enumerate(record))
    levels = _levels(record)
    where: list[str | int] = []
    if members:
        levels, name = max(((_levels(v), n) for n, v in members), key=lambda m: m[0])
        where = [name]
    return Problem(
        pointer(where),
        f"nested {levels} levels deep: too deep to explain the record's problems",
        "nesting",
    )


def _fast_relevance(error: Any, here: list[Any]) -> tuple[int, int]:
    """As ``_relevance``, for the compiled engine's errors."""
    path = list(error.instance_path)
    wrong_type_here = type(error.kind).__name__ == "Type" and path == here
    return (1 if wrong_type_here else 0, -len(path))


def _fast_keyword(name: str, kind: Any, value: Any) -> tuple[str | None, Any]:
    """The keyword a compiled-engine error kind stands for, with the keyword's value: the
    schema's own (``value``) when known, so the wording matches the reference engine's."""
    if name == "Type":
        types = list(kind.types)
        return "type", value if value is not None else (types[0] if len(types) == 1 else types)
    if name == "Enum":
        return "enum", value if isinstance(value, list) else list(kind.options)
    if name == "Constant":
        return "const", kind.expected_value
    if name == "Pattern":
        return "pattern", kind.pattern
    if name in _LIMITS:
        return _LIMITS[name], kind.limit
    return None, None


def _fast_problems(error: Any, schema: Any, record: Any) -> list[Problem] | None:
    """The compiled engine's error as Problems worded like ``_describe``; None when unknown."""
    kind = error.kind
    name = type(kind).__name__
    path = list(error.instance_path)
    schema_path = list(error.schema_path)
    instance = _at(record, path)
    # The keyword's own value from the schema, when the error says where it is.
    value = _at(schema, schema_path) if schema_path else None
    if name == "Required":
        if schema_path and schema_path[-1] == "dependentRequired" and isinstance(value, dict):
            triggers = [t for t, needed in value.items() if kind.property in needed]
            present = [t for t in triggers if isinstance(instance, dict) and t in instance]
            if present:
                where = pointer([*path, kind.property])
                return [Problem(where, _required_when(present[0]), "dependentRequired")]
        return [Problem(pointer([*path, kind.property]), REQUIRED, "required")]
    if name == "AdditionalProperties":
        return [
            Problem(pointer([*path, extra]), CLOSED, "additionalProperties")
            for extra in sorted(kind.unexpected)
        ]
    if name in ("OneOfNotValid", "AnyOf"):
        candidates = [e for branch in kind.context for e in branch]
        if not candidates:
            return None
        return _fast_problems(
            min(candidates, key=lambda e: _fast_relevance(e, path)), schema, record
        )
    keyword, keyword_value = _fast_keyword(name, kind, value)
    if keyword is None:
        return None
    message = _keyword_message(keyword, keyword_value, instance)
    return None if message is None else [Problem(pointer(path), message, keyword)]


class RecordValidator:
    """Validates instances of one ``$defs`` entry of a contract schema."""

    def __init__(self, name: str, schema: Mapping[str, Any], label: str = "schema") -> None:
        self.name = name
        # A self-contained schema whose root refers to the definition: all $refs stay local.
        wrapped = {
            "$schema": schema.get("$schema", "https://json-schema.org/draft/2020-12/schema"),
            "$defs": schema.get("$defs", {}),
            "$ref": fragment("$defs", name),
        }
        self._wrapped = wrapped
        try:
            self._fast = jsonschema_rs.validator_for(wrapped, offline=True)
        except ValueError as exc:
            # A schema that breaks the metaschema, or a $ref that does not resolve locally.
            where = pointer(getattr(exc, "instance_path", None) or [])
            message = str(getattr(exc, "message", exc)).splitlines()[0]
            raise ContractError(f"{label}: {where}: {message}") from None
        self._reference: Any = None  # built on first use: importing jsonschema takes a while

    @property
    def reference(self) -> Any:
        """The reference engine (``jsonschema``) for this definition."""
        if self._reference is None:
            import jsonschema

            self._reference = jsonschema.validators.validator_for(self._wrapped)(self._wrapped)
        return self._reference

    def is_valid(self, record: Any) -> bool:
        # Never raises on depth: no error, so no deep value, is handed over to Python (tested).
        return bool(self._fast.is_valid(record))

    def problems(self, record: Any) -> list[Problem]:
        """Every problem, sorted by pointer; empty when the record is valid.

        Deep nesting (orjson parses up to 1024 levels) never ends a run: the compiled engine
        cannot hand over an error whose value is nested more than about 255 levels, so such a
        record is explained by the reference engine, and one nested deeper than
        ``REFERENCE_MAX_LEVELS`` gets one problem saying so at the member that holds it."""
        if self.is_valid(record):
            return []
        try:
            return self.explain(record)
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, ValueError) and str(exc) != _RS_TOO_DEEP:
                raise
        if _levels(record) <= REFERENCE_MAX_LEVELS:
            try:
                return self.explain_reference(record)
            except RecursionError:
                pass
        return [_too_deep(record)]

    def explain(self, record: Any) -> list[Problem]:
        """Every problem of an invalid record, sorted by pointer.

        The compiled engine's errors are translated into the same messages the reference
        engine's give (about 15 times faster on a file of invalid records); an error of a
        kind the translation does not know hands the record to the reference engine."""
        found: set[Problem] = set()
        for error in self._fast.iter_errors(record):
            problems = _fast_problems(error, self._wrapped, record)
            if problems is None:
                return self.explain_reference(record)
            found.update(problems)
        return sorted(found, key=lambda p: (p.pointer, p.message))

    def explain_reference(self, record: Any) -> list[Problem]:
        """Problems as the reference ``jsonschema`` engine reports them."""
        found: set[Problem] = set()
        for error in self.reference.iter_errors(record):
            if error.validator == "additionalProperties" and isinstance(error.instance, dict):
                # One problem per extra key, as the compiled engine reports them.
                allowed = set(error.schema.get("properties", {}))
                base = list(error.absolute_path)
                found.update(
                    Problem(pointer([*base, k]), CLOSED, "additionalProperties")
                    for k in error.instance
                    if k not in allowed
                )
            else:
                found.add(_describe(error))
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
                raise ContractError(
                    f"unknown record type {name!r} (record types: {known}; "
                    "any other $defs name of the contract is accepted too)"
                )
            self._cache[name] = RecordValidator(
                name, self.contract.schemas[schema_name], _label(self.contract, schema_name)
            )
        return self._cache[name]


def _label(contract: Contract, schema_name: str) -> str:
    """The schema file as a maintainer knows it: relative to the repository when possible."""
    path = contract.schema_path(schema_name)
    return f"contracts/{path.name}" if not contract.bundled else str(path)


def guess_record_type(record: Any) -> str | None:
    """The record type a record's shape says it is, or None when nothing fits."""
    if not isinstance(record, dict):
        return None
    trl = _trl_record_type(record)
    if trl is not None:
        return trl
    version = record.get("schema_version")
    layer3 = isinstance(version, str) and version.startswith("training-record/")
    sft = isinstance(version, str) and version.startswith("sft/")
    if layer3 or sft or "messages" in record:
        if "reward" in record and "chosen" not in record:
            return "PpoTrainingRecord"
        if sft or "output_type" in record:
            return "SftTrainingRecord"
        if layer3 or "chosen" in record or "rejected" in record or "prompt_messages" in record:
            return "DpoTrainingRecord"
        return "SftTrainingRecord"  # a conversation and nothing to prefer or reward
    if "branches" in record or "fork_map" in record:
        return "RolloutTreeRecord"
    if "completion" in record or ("reward" in record and "chosen" not in record):
        return "PpoRecord"
    if "chosen" in record or "rejected" in record:
        return "DpoRecord"
    if "branch_index" in record or "final_answer" in record or "rollout_id" in record:
        return "RolloutBranchRecord"
    return None


def _trl_record_type(record: dict[str, Any]) -> str | None:
    """A record of ``datafactory --target trl``: message lists beside lineage columns and no
    ``schema_version`` (a Layer 2 or 3 prompt is a string)."""
    if "schema_version" in record:
        return None
    if isinstance(record.get("prompt"), list):
        if "chosen" in record or "rejected" in record:
            return "TrlPreferenceRecord"
        return "TrlKtoRecord" if "label" in record else "TrlPromptRecord"
    if isinstance(record.get("messages"), list) and "task_hash" in record:
        return "TrlSftRecord"
    return None
