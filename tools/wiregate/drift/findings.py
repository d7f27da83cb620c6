"""Drift findings in a maintainer's terms: each change of a copy with where it is written (file,
line, column in the copy and in the contract), whether it breaks the copy's role, a message
that names the contract and the copy, and the root change it belongs to.

Built once per copy from the diff engine's data (rule id, direction, pointers, witness, the
two documents); the reporters only render it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from wiregate.diff import Change
from wiregate.diff.rules import arrays, composition, properties, required
from wiregate.diff.rules import types as type_rules
from wiregate.exactjson import dumps
from wiregate.pointer import PointerError, follow_through_refs, split
from wiregate.positions import PositionIndex

__all__ = [
    "DriftFinding",
    "Location",
    "RootEntry",
    "field_path",
    "group_by_root",
    "make_finding",
]

# Keywords whose value is a subschema: walking through them reaches a field of the record.
_INTO = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
_STEP = {
    "items": "[]",
    "prefixItems": "[]",
    "additionalItems": "[]",
    "contains": "[]",
    "additionalProperties": ".*",
    "unevaluatedProperties": ".*",
    "unevaluatedItems": "[]",
}
_COMBINATORS = {"anyOf", "oneOf", "allOf", "not", "if", "then", "else"}


@dataclass(frozen=True)
class Location:
    """Where a pointer is written: ``file`` relative to its checkout, 1-based line and column
    (Unicode code points)."""

    file: str
    line: int
    column: int


@dataclass(frozen=True)
class DriftFinding:
    """One change of a copy, judged for its role and placed in both files."""

    change: Change
    breaking: bool  # fails the direction the copy's role requires
    message: str  # names the contract and the copy, in the role's terms
    root_message: str  # the same, naming no property or keyword (``RootEntry.message``)
    record_type: str  # the record type (or definition) the change sits in
    copy_location: Location | None
    contract_location: Location | None
    # The baseline's fingerprint (wiregate.drift.baseline.fingerprint): rule id, repository,
    # copy, both pointers and the values there; never the wording of the message.
    fingerprint: str
    # A ``required`` change's message naming the properties given (``RootEntry.message``).
    names_message: Callable[[Sequence[str]], str] | None = field(default=None, compare=False)

    @property
    def root(self) -> tuple[str, str]:
        """(contract pointer, copy pointer) of the edit behind this change."""
        return (self.change.root_old_pointer, self.change.root_new_pointer)


@dataclass(frozen=True)
class RootEntry:
    """The changes one edit causes in one copy: one line in the text report, one annotation."""

    findings: tuple[DriftFinding, ...]  # the consequences, most severe first
    record_types: tuple[str, ...]

    @property
    def head(self) -> DriftFinding:
        return self.findings[0]

    @property
    def level(self) -> str:
        return self.head.change.level

    @property
    def message(self) -> str:
        """The entry's line: its head's message, when that says what every consequence says
        (one change; one edit of ``required`` names the properties shown); else, as the
        consequences differ (``--verbose`` lists them), where the head is and what it means."""
        head = self.head
        same_rule = all(f.change.id == head.change.id for f in self.findings)
        if head.names_message is not None and same_rule:  # one edit of ``required``
            # Each name once: an edit of a shared definition is one finding per record type.
            subjects = (f.change.subject for f in self.findings)
            return head.names_message(list(dict.fromkeys(s for s in subjects if s is not None)))
        if all(f.message == head.message for f in self.findings):
            return head.message
        return head.root_message

    @property
    def breaking(self) -> bool:
        return any(f.breaking for f in self.findings)

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.change.id for f in self.findings))


def field_path(pointer: str) -> str:
    """The record field a schema pointer describes, in instance terms:
    ``#/$defs/R/properties/a/items/properties/b/type`` -> ``a[].b`` (empty: the record)."""
    tokens = split(pointer)
    path = ""
    index = 0
    if len(tokens) >= 2 and tokens[0] in ("$defs", "definitions"):
        index = 2  # the record type itself
    while index < len(tokens):
        token = tokens[index]
        if token in ("properties", "patternProperties") and index + 1 < len(tokens):
            name = tokens[index + 1]
            path += ("." if path else "") + (name if token == "properties" else f"<{name}>")
            index += 2
        elif token in _STEP:
            step = _STEP[token]
            path += step if step == "[]" or path else "*"
            # a tuple's member: 2020-12's prefixItems/N, draft-07's items/N
            tuple_member = index + 1 < len(tokens) and tokens[index + 1].isdigit()
            index += 2 if token in ("prefixItems", "items") and tuple_member else 1
        elif token in _COMBINATORS:
            index += 2 if token in ("anyOf", "oneOf", "allOf") else 1
        else:
            break  # a keyword of the field itself (type, minimum, required ...)
    return path


def _subject(change: Change, default: str) -> tuple[str, str]:
    """(record type, field) the change is about, read from whichever of its pointers names the
    deeper field (a removed key is only in the contract, an added one only in the copy): the
    record type is that pointer's ``$defs`` entry, else ``default`` (the record type the copy
    is compared with)."""
    old_field, new_field = field_path(change.old_pointer), field_path(change.new_pointer)
    pointer, field = change.new_pointer, new_field
    if len(old_field) > len(new_field):
        pointer, field = change.old_pointer, old_field
    tokens = split(pointer)
    if len(tokens) >= 2 and tokens[0] in ("$defs", "definitions"):
        return tokens[1], field
    return default, field


def _value(document: Any, pointer: str) -> tuple[bool, Any]:
    try:
        return True, follow_through_refs(document, pointer)
    except (PointerError, KeyError, IndexError, TypeError, ValueError):
        return False, None


def _shown(keyword: str, value: Any) -> str:
    if keyword == "type" and isinstance(value, str):
        return value
    if keyword == "type" and isinstance(value, list):
        return " or ".join(str(v) for v in value)
    return dumps(value)


def _keyword_words(change: Change, contract: Any, copy: Any) -> tuple[str, str, str] | None:
    """(keyword, contract's value, copy's value) when both pointers name the same keyword and
    both documents hold it where they say."""
    old_tokens, new_tokens = split(change.old_pointer), split(change.new_pointer)
    if not old_tokens or not new_tokens or old_tokens[-1] != new_tokens[-1]:
        return None
    keyword = old_tokens[-1]
    if keyword in _INTO or keyword in _STEP or keyword in _COMBINATORS or keyword.isdigit():
        return None
    has_old, old_value = _value(contract, change.old_pointer)
    has_new, new_value = _value(copy, change.new_pointer)
    if not (has_old and has_new) or isinstance(old_value, dict) or isinstance(new_value, dict):
        return None
    return keyword, _shown(keyword, old_value), _shown(keyword, new_value)


REQUIRED_ADDED, REQUIRED_REMOVED = required.REQUIRED_ADDED, required.REQUIRED_REMOVED


def _required_words(
    change: Change,
    writes: bool,
    who: str,
    where: str,
    contract: Any,
    copy: Any,
    names: Sequence[str] | None = None,
) -> str:
    """The names one side requires and the other does not: ``names`` (those of a root
    change's findings shown together), else this finding's own."""
    if names is None:
        names = [change.subject] if change.subject is not None else []
    if not names:  # no subject: every name the two lists differ by
        _, required = _value(contract, change.old_pointer)
        _, kept = _value(copy, change.new_pointer)
        required = required if isinstance(required, list) else []
        kept = kept if isinstance(kept, list) else []
        if change.id == REQUIRED_REMOVED:
            names = [str(p) for p in required if p not in kept]
        else:
            names = [str(p) for p in kept if p not in required]
    shown = ", ".join(names)
    them = "them" if len(names) > 1 else "it"
    if change.id == REQUIRED_REMOVED:
        if writes:
            return f"{who} may omit {shown} in {where}; the contract requires {them}"
        return f"{who} reads records without {shown} in {where}; the contract requires {them}"
    if writes:
        return f"{who} always writes {shown} in {where}; the contract does not require {them}"
    return f"{who} requires {shown} in {where}; the contract does not"


_DEPENDENT = ("dependentRequired", "dependentSchemas", "dependencies")  # (draft-07's)


def _dependency_words(
    change: Change,
    old_tokens: list[str],
    new_tokens: list[str],
    who: str,
    where: str,
    contract: Any,
    copy: Any,
) -> str | None:
    """A dependency that one side has for a property: ``trace-pipeline has no
    dependentRequired for chosen_branch in `Provenance`; the contract requires
    ["rejected_branch"] with it``."""
    for only, tokens, document, pointer in (
        ("contract", old_tokens, contract, change.old_pointer),
        ("copy", new_tokens, copy, change.new_pointer),
    ):
        if len(tokens) >= 2 and tokens[-2] in _DEPENDENT:
            keyword, name = tokens[-2], tokens[-1]
            other = new_tokens if only == "contract" else old_tokens
            if other[-2:] == tokens[-2:]:
                return None  # both have it: a change of the dependency itself
            found, value = _value(document, pointer)
            shown = f" {dumps(value)}" if found and keyword == "dependentRequired" else ""
            if only == "contract":
                return (
                    f"{who} has no {keyword} for {name} in {where}; the contract requires"
                    f"{shown or ' a schema'} with it"
                )
            return (
                f"{who} has {keyword} for {name} in {where} (requires{shown or ' a schema'} "
                "with it); the contract has none"
            )
    return None


_PROPERTY_KEYWORDS = ("properties", "patternProperties")


def _one_side(
    change: Change, old_tokens: list[str], new_tokens: list[str]
) -> tuple[str, list[str]] | None:
    """("contract"|"copy", its tokens) when one pointer names a property or a keyword that the
    other does not: the other names the schema around it. Only the ends are compared: the two
    documents may lay a record out differently (a ``$defs`` entry in one, inline in the other).

    A property is one side's alone only for the rules that say so (a property added or
    removed): a pointer of another rule may end at a property on one side and at the schema a
    ``$ref`` there names on the other (``#/$defs/Hash/pattern`` beside ``.../properties/h``),
    where the property is on both sides and the keyword is what one side has alone."""
    for only, tokens, rules in (
        ("contract", old_tokens, _UNDECLARED),
        ("copy", new_tokens, _DECLARED),
    ):
        if change.id in rules and len(tokens) >= 2 and tokens[-2] in _PROPERTY_KEYWORDS:
            return only, tokens
    for only, tokens, other in (
        ("contract", old_tokens, new_tokens),
        ("copy", new_tokens, old_tokens),
    ):
        keyword = tokens[-1] if tokens else ""
        if len(tokens) >= 2 and tokens[-2] in _INTO:
            continue  # a property (or definition) called "title", say: no keyword
        # The other names the schema around the keyword, not a keyword of its own.
        if keyword in _VALUE_KEYWORDS and (not other or other[-1] not in _VALUE_KEYWORDS):
            return only, tokens
    return None


# Keywords one side may have alone, whose value is shown as it is.
_VALUE_KEYWORDS = {
    "const", "enum", "type", "format", "pattern", "minLength", "maxLength", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
    "uniqueItems", "minProperties", "maxProperties", "minContains", "maxContains", "required",
    "propertyNames", "contentEncoding", "contentMediaType", "title", "description", "default",
    "examples", "deprecated", "readOnly", "writeOnly", "$comment",
}  # fmt: skip

# What a property declared by one side only means, by the model around it on the other side.
_UNDECLARED = {
    properties.PROPERTY_REMOVED_FROM_OPEN_MODEL: ", so any value may be there",
    properties.PROPERTY_REMOVED_FROM_CLOSED_MODEL: " and allows no undeclared key",
    properties.PROPERTY_REMOVED_FROM_PARTIALLY_OPEN_MODEL: (
        ", so its other schemas decide what is there"
    ),
}
_DECLARED = {
    properties.PROPERTY_ADDED_TO_OPEN_MODEL: ", where any value may be",
    properties.PROPERTY_ADDED_TO_CLOSED_MODEL: ", and allows no undeclared key",
    properties.PROPERTY_ADDED_TO_PARTIALLY_OPEN_MODEL: (
        ", where its other schemas decide what is there"
    ),
}


def _declared_where(change: Change, only: str, tokens: list[str], where: str) -> str:
    """Where a property that one side alone declares would be. ``where`` is the field of the
    deeper of the two pointers (``_subject``): the property itself when that is its own side's
    (its record laid out inline there), else the schema around it on the other side, to which
    its name is added."""
    contract_deeper = len(field_path(change.old_pointer)) > len(field_path(change.new_pointer))
    if contract_deeper == (only == "contract"):  # ``where`` is the property's own field
        return where
    name = tokens[-1] if tokens[-2] == "properties" else f"<{tokens[-1]}>"
    return f"{where[:-1]}.{name}`"


def _one_sided_words(change: Change, who: str, where: str, contract: Any, copy: Any) -> str | None:
    """A keyword or a property that only one side has: ``wasmagent-js has no minLength at
    `R.task`; the contract has minLength 1``, ``trace-pipeline does not declare `R.seed`, so
    any value may be there; the contract declares it``."""
    old_tokens, new_tokens = split(change.old_pointer), split(change.new_pointer)
    dependency = _dependency_words(change, old_tokens, new_tokens, who, where, contract, copy)
    if dependency is not None:
        return dependency
    side = _one_side(change, old_tokens, new_tokens)
    if side is None:
        return None
    only, tokens = side
    if len(tokens) >= 2 and tokens[-2] in ("properties", "patternProperties"):
        where = _declared_where(change, only, tokens, where)
        if only == "contract":
            return f"{who} does not declare {where}{_UNDECLARED.get(change.id, '')}; " + (
                "the contract declares it"
            )
        return f"{who} declares {where}; the contract does not{_DECLARED.get(change.id, '')}"
    keyword = tokens[-1]
    found, value = _value(
        contract if only == "contract" else copy,
        change.old_pointer if only == "contract" else change.new_pointer,
    )
    if not found or isinstance(value, dict):
        return None
    shown = _shown(keyword, value)
    if only == "contract":
        return f"{who} has no {keyword} at {where}; the contract has {keyword} {shown}"
    return f"{who} has {keyword} {shown} at {where}; the contract has none"


# Rules whose change the pointers alone do not show (``null`` through a Pydantic ``anyOf``,
# ``additionalProperties`` on one side only, a schema's whole subschema), in the drift's terms.
_RULE_WORDS = {
    type_rules.NULLABLE_ADDED: "{who} allows null at {where}; the contract does not",
    type_rules.NULLABLE_REMOVED: "{who} does not allow null at {where}; the contract does",
    properties.ADDITIONAL_PROPERTIES_OPENED: (
        "{who} allows undeclared keys at {where}; the contract does not"
    ),
    properties.ADDITIONAL_PROPERTIES_CLOSED: (
        "{who} allows no undeclared key at {where}; the contract does"
    ),
    arrays.ITEMS_ADDED: "{who} checks the items at {where}; the contract does not",
    arrays.ITEMS_REMOVED: "{who} does not check the items at {where}; the contract does",
    arrays.ITEMS_WIDENED: "{who}'s items at {where} accept every item the contract's do, and more",
    arrays.ITEMS_NARROWED: (
        "{who}'s items at {where} accept only some of the items the contract's do"
    ),
    composition.ANY_OF_ADDED: "{who} has an anyOf at {where}; the contract has none",
    composition.ANY_OF_REMOVED: "{who} has no anyOf at {where}; the contract has one",
    properties.PROPERTY_NAMES_ADDED: (
        "{who} constrains the property names at {where}; the contract does not"
    ),
    properties.PROPERTY_NAMES_REMOVED: (
        "{who} does not constrain the property names at {where}; the contract does"
    ),
}
# The engine's message speaks of an old and a new schema; a drift's sides are the contract and
# a copy, so a message in those words is left out.
_OLD_OR_NEW = re.compile(r"\b(?:old|new)\b", re.IGNORECASE)


def _fallback_words(change: Change, who: str, where: str) -> str:
    said = f"{who}'s copy differs from the contract at {where}"
    return said if _OLD_OR_NEW.search(change.message) else f"{said}: {change.message}"


def _message(
    change: Change,
    breaking: bool,
    role: str,
    who: str,
    subject: tuple[str, str],
    contract: Any,
    copy: Any,
    names: Sequence[str] | None = None,
) -> str:
    """The change in the role's terms: who writes or reads what, and what the contract says;
    ``names``: a ``required`` change's, when several are said together.
    A producer's break is what it writes (forward), a consumer's what it rejects (backward);
    a mirror's whichever direction fails."""
    where = _where(subject)
    writes = _writes(change, role)
    words = _keyword_words(change, contract, copy)
    if change.id in (REQUIRED_ADDED, REQUIRED_REMOVED):
        said = _required_words(change, writes, who, where, contract, copy, names)
    elif words is not None and words[0] == "type":
        _, contract_types, copy_types = words
        if writes:
            wants = "requires" if breaking else "allows"
            said = f"{who} writes {where} as {copy_types}; the contract {wants} {contract_types}"
        else:
            said = f"the contract allows {where} as {contract_types}; {who} reads {copy_types}"
    elif words is not None:
        keyword, contract_value, copy_value = words
        said = (
            f"{who} has {keyword} {copy_value} at {where}; "
            f"the contract has {keyword} {contract_value}"
        )
    else:
        # Else the rule's words, else the engine's.
        said = _one_sided_words(change, who, where, contract, copy) or (
            _RULE_WORDS[change.id].format(who=who, where=where)
            if change.id in _RULE_WORDS
            else _fallback_words(change, who, where)
        )
    return _verdict(said, change, breaking, role, who)


def _verdict(said: str, change: Change, breaking: bool, role: str, who: str) -> str:
    """``said``, the rule's id and what the change means for the copy's role."""
    writes = _writes(change, role)
    rule = f" ({change.id})"
    if not breaking:
        if writes:
            return f"{said}{rule}; not breaking: every record {who} writes meets the contract"
        return f"{said}{rule}; not breaking: {who} reads every record the contract allows"
    if writes:
        return f"{said}{rule}: {who} may write records the contract rejects"
    return f"{said}{rule}: the contract allows records {who} rejects"


def _where(subject: tuple[str, str]) -> str:
    """A (record type, field) as a message names it: ```R.a[].b```, or ```R``` for the record."""
    record_type, field = subject
    return f"`{record_type}.{field}`" if field else f"`{record_type}`"


def _writes(change: Change, role: str) -> bool:
    """Whether the copy's side of the change is what it writes (else what it reads)."""
    return role == "producer" or (role == "mirror" and not change.forward)


def make_finding(
    change: Change,
    *,
    breaking: bool,
    repository: str,
    role: str,
    schema: str,
    canonical_at: str,
    contract: Any,
    copy: Any,
    copy_file: str | None,
    copy_index: PositionIndex | None,
    contract_file: str | None,
    contract_index: PositionIndex | None,
    fingerprint: str,
    copy_locate: Callable[[Change], Location | None] | None = None,
) -> DriftFinding:
    """One finding; the position indexes are built once per file by the caller. A code
    copy's positions come from ``copy_locate`` (its pointers name the extracted schema, whose
    places are declared in the source, in the file that declares each type)."""
    record = split(canonical_at)
    default = record[1] if len(record) >= 2 and record[0] in ("$defs", "definitions") else schema
    subject = _subject(change, default)
    # An entry whose consequences differ is said of where the head's change is, no more.
    root_said = f"{repository}'s copy differs from the contract at {_where(subject)}"
    copy_location = contract_location = None
    if copy_locate is not None:
        copy_location = copy_locate(change)
    elif copy_file is not None and copy_index is not None:
        at = copy_index.locate(change.new_pointer)
        if at is not None:
            copy_location = Location(copy_file, at.line, at.column)
    if contract_file is not None and contract_index is not None:
        at = contract_index.locate(change.old_pointer)
        if at is not None:
            contract_location = Location(contract_file, at.line, at.column)
    return DriftFinding(
        change=change,
        breaking=breaking,
        message=_message(change, breaking, role, repository, subject, contract, copy),
        root_message=_verdict(root_said, change, breaking, role, repository),
        names_message=(
            partial(_message, change, breaking, role, repository, subject, contract, copy)
            if change.id in (REQUIRED_ADDED, REQUIRED_REMOVED)
            else None
        ),
        record_type=subject[0],
        copy_location=copy_location,
        contract_location=contract_location,
        fingerprint=fingerprint,
    )


def _severity(finding: DriftFinding) -> tuple[int, int]:
    from wiregate.diff.findings import LEVELS

    return (0 if finding.breaking else 1, LEVELS.index(finding.change.level))


def group_by_root(findings: Sequence[DriftFinding]) -> tuple[RootEntry, ...]:
    """One entry per root change, in the order of the findings. Entries whose consequences
    are the same contract-side changes (one edit of a shared definition, written out once
    per record type in the copy) are one entry naming each record type."""
    by_root: dict[tuple[str, str], list[DriftFinding]] = {}
    for finding in findings:
        by_root.setdefault(finding.root, []).append(finding)
    merged: dict[tuple[Any, ...], list[list[DriftFinding]]] = {}
    for members in by_root.values():
        signature = tuple(
            sorted((f.change.id, f.change.old_pointer, f.change.message) for f in members)
        )
        merged.setdefault(signature, []).append(members)
    entries = []
    for groups in merged.values():
        members = [finding for group in groups for finding in group]
        ordered = sorted(members, key=_severity)
        types: Mapping[str, None] = dict.fromkeys(f.record_type for f in members)
        entries.append(RootEntry(tuple(ordered), tuple(types)))
    return tuple(entries)
