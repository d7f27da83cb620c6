"""Stable fingerprints of changes: a hash of the rule id, both pointers and the change's
arguments (the value at each pointer), never of line numbers or message wording, so a
finding keeps its fingerprint when the file is reformatted or the wording improves. The drift
baseline and every SARIF report use them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from wiregate.diff.findings import Change
from wiregate.diff.keywords import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
)
from wiregate.diff.load import normalise_document
from wiregate.diff.rules.base import ANNOTATION_KEYWORDS
from wiregate.diff.values import json_key
from wiregate.pointer import PointerError, resolve, split

#: Part of every fingerprint: bumped if what goes into one ever changes.
DRIFT_SCHEME = "wiregate-drift-finding/1"
DIFF_SCHEME = "wiregate-diff-change/1"
_CHARS = 16


def fingerprint(
    scheme: str,
    rule: str,
    scope: Sequence[str],
    old_pointer: str,
    new_pointer: str,
    old_value: Any,
    new_value: Any,
) -> str:
    """The hash of a scheme, a rule id, what the change is scoped to (the drift gate: the
    repository and copy ids), both pointers and the canonical JSON of the value at each
    (None for an absent side)."""
    text = json.dumps(
        [scheme, rule, *scope, old_pointer, new_pointer, json_key(old_value), json_key(new_value)],
        ensure_ascii=True,  # lone surrogates in a pointer hash as escapes
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:_CHARS]


def change_fingerprints(
    changes: Sequence[Change],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    scheme: str = DIFF_SCHEME,
    scope: Sequence[str] = (),
) -> tuple[str, ...]:
    """The fingerprint of each of ``changes`` (found between ``old`` and ``new``), in order.
    Pointers and arguments are read as the diff engine normalised the documents, so
    ``type: "x"`` and ``type: ["x"]``, a reordered ``required`` or a draft-07 copy's
    ``definitions/X`` (``$defs/X``) read the same."""
    if not changes:
        return ()
    old_doc = normalise_document(old, origin="old schema")
    new_doc = normalise_document(new, origin="new schema")
    prints = []
    for change in changes:
        old_pointer = old_doc.as_normalised(change.old_pointer)
        new_pointer = new_doc.as_normalised(change.new_pointer)
        if change.subject is not None:
            # A change about one item of a keyword's value (a name in ``required``) is that
            # item's, whatever the rest of the value becomes.
            arguments = (change.subject, change.subject)
        else:
            arguments = _arguments(_value(old_doc, old_pointer), _value(new_doc, new_pointer))
        prints.append(fingerprint(scheme, change.id, scope, old_pointer, new_pointer, *arguments))
    return tuple(prints)


_ABSENT = object()


def _value(document: Any, pointer: str) -> tuple[Any, str | None]:
    """The value at ``pointer`` (``_ABSENT`` where there is none) and the keyword whose map
    holds it (``properties`` for ``#/properties/extra``)."""
    try:
        value = resolve(document, pointer)
    except PointerError:
        return _ABSENT, None
    tokens = split(pointer)
    return value, tokens[-2] if len(tokens) > 1 else None


def _arguments(old: tuple[Any, str | None], new: tuple[Any, str | None]) -> tuple[Any, Any]:
    """The value at each pointer: None when it is absent. A whole schema object counts as
    None, the pointer saying which (hashing it would make every unrelated edit inside it,
    another property, a new finding), except a property's schema in a finding between two
    whole schemas (a property the copy added or dropped): that counts as what it accepts,
    its annotations left out. Without it, a finding accepted as "extra is a string" stayed
    accepted when the copy made it ``false``."""
    both = isinstance(old[0], dict) and isinstance(new[0], dict)

    def argument(value: Any, holder: str | None) -> Any:
        if value is _ABSENT:
            return None
        if not isinstance(value, dict):
            return value
        return _without_annotations(value) if both and holder in _PROPERTY_MAPS else None

    return argument(*old), argument(*new)


_PROPERTY_MAPS = frozenset({"properties", "patternProperties"})


def _without_annotations(schema: Any) -> Any:
    """``schema`` without its annotation keywords, at every level that is a schema (a
    property named ``title`` stays; ``enum``'s and ``const``'s values are data)."""
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATION_KEYWORDS:
            continue
        if key in SUBSCHEMA_KEYWORDS:
            kept[key] = _without_annotations(value)
        elif key in SUBSCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            kept[key] = {name: _without_annotations(sub) for name, sub in value.items()}
        elif key in SUBSCHEMA_LIST_KEYWORDS and isinstance(value, list):
            kept[key] = [_without_annotations(sub) for sub in value]
        else:
            kept[key] = value
    return kept
