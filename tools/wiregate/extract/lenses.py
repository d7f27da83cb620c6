"""Language lenses: what an extracted schema says because of its language, not its author.

TypeScript has one ``number`` type, no string patterns or lengths, no numeric or array bounds,
and no way to say "additional properties allowed" (ts-json-schema-generator closes every
interface). Pydantic writes (serialization mode) only a model's declared fields unless
``extra="allow"``. A lens rewrites such a place of the extracted schema to what the contract
says there, so the diff engine judges what the author wrote, and reports it as a finding of
its own (level ``info``: never a break by default). See docs/lenses.md for each lens's
golden pair.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from wiregate import pointer as json_pointer
from wiregate.diff import Change

__all__ = ["LENSES", "apply_lenses"]

#: Lens id -> what it says (docs/lenses.md has a golden pair for each).
LENSES = {
    "ts-number-for-integer": "TypeScript has one number type: the contract's integer is number",
    "ts-no-string-constraints": "TypeScript cannot say a string's pattern, length or format",
    "ts-no-numeric-bounds": "TypeScript cannot say a number's bounds or multiple",
    "ts-no-array-bounds": "TypeScript cannot say an array's length bounds or uniqueness",
    "ts-open-object": (
        "TypeScript cannot say that undeclared properties are allowed (a reader's type "
        "does not reject them)"
    ),
    "pydantic-declared-fields-only": (
        "a Pydantic model without extra='allow' writes its declared fields only"
    ),
}

_STRING = ("pattern", "minLength", "maxLength", "format")
_NUMBER = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_ARRAY = ("minItems", "maxItems", "uniqueItems")
_MAX_DEPTH = 64


def _types(node: Mapping[str, Any]) -> set[str]:
    value = node.get("type")
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {t for t in value if isinstance(t, str)}
    if "const" in node or "enum" in node:
        values = [node["const"]] if "const" in node else list(node.get("enum") or [])
        kinds = {type(v) for v in values}
        return {"string"} if kinds == {str} else set()
    return set()


class _Lens:
    def __init__(
        self, language: str, mode: str | None, direction: str, canonical: Any, document: Any
    ) -> None:
        self.language = language
        self.mode = mode
        self.direction = direction
        self.canonical = canonical
        self.document = document
        self.findings: dict[tuple[str, str], Change] = {}
        # (canonical pointer, copy pointer) -> the least depth walked from there.
        self._walked: dict[tuple[str, str], int] = {}

    def _deref(self, root: Any, node: Any, at: str) -> tuple[Any, str]:
        for _ in range(_MAX_DEPTH):
            if not isinstance(node, dict) or not isinstance(node.get("$ref"), str):
                return node, at
            target = node["$ref"]
            if not target.startswith("#"):
                return node, at
            try:
                node, at = json_pointer.resolve(root, target), target
            except json_pointer.PointerError:
                return node, at
        return node, at

    def _note(self, lens: str, canonical_at: str, copy_at: str, detail: str) -> None:
        message = f"{LENSES[lens]}{detail}"
        self.findings.setdefault(
            (lens, copy_at), Change(lens, "info", canonical_at, copy_at, message, True, True)
        )

    def walk(self, canon: Any, canon_at: str, node: Any, at: str, depth: int = 0) -> None:
        canon, canon_at = self._deref(self.canonical, canon, canon_at)
        node, at = self._deref(self.document, node, at)
        if depth > _MAX_DEPTH or not isinstance(canon, dict) or not isinstance(node, dict):
            return
        # A pair walked already from no deeper gives nothing new: without this, a recursive
        # type with two recursive members (a binary tree) is walked 2**64 times.
        if self._walked.get((canon_at, at), depth + 1) <= depth:
            return
        self._walked[(canon_at, at)] = depth
        # Optional[X] / X | null in the copy: each member is judged against the contract.
        for keyword in ("anyOf", "oneOf"):
            members = node.get(keyword)
            if isinstance(members, list) and keyword not in canon:
                for index, member in enumerate(members):
                    if isinstance(member, dict) and member.get("type") != "null":
                        where = json_pointer.join(at, keyword, str(index))
                        self.walk(canon, canon_at, member, where, depth + 1)
        if self.language == "typescript":
            self._typescript(canon, canon_at, node, at)
        properties = node.get("properties")
        canon_properties = canon.get("properties")
        if isinstance(properties, dict) and isinstance(canon_properties, dict):
            for name, value in properties.items():
                if name in canon_properties:
                    self.walk(
                        canon_properties[name],
                        json_pointer.join(canon_at, "properties", name),
                        value,
                        json_pointer.join(at, "properties", name),
                        depth + 1,
                    )
        for keyword in ("items", "additionalProperties"):
            if isinstance(node.get(keyword), dict) and isinstance(canon.get(keyword), dict):
                self.walk(
                    canon[keyword],
                    json_pointer.join(canon_at, keyword),
                    node[keyword],
                    json_pointer.join(at, keyword),
                    depth + 1,
                )

    def _typescript(
        self, canon: dict[str, Any], canon_at: str, node: dict[str, Any], at: str
    ) -> None:
        canon_types, types = _types(canon), _types(node)
        if "integer" in canon_types and "number" in types and "integer" not in types:
            value = node["type"]
            node["type"] = (
                "integer"
                if value == "number"
                else ["integer" if t == "number" else t for t in value]
            )
            self._note("ts-number-for-integer", f"{canon_at}/type", f"{at}/type", "")
        for lens, keywords, kind in (
            ("ts-no-string-constraints", _STRING, "string"),
            ("ts-no-numeric-bounds", _NUMBER, None),
            ("ts-no-array-bounds", _ARRAY, "array"),
        ):
            fits = kinds_fit(kind, types)
            missing = [k for k in keywords if k in canon and k not in node] if fits else []
            for keyword in missing:
                node[keyword] = copy.deepcopy(canon[keyword])
            if missing:
                self._note(lens, canon_at, at, f" ({', '.join(missing)})")
        # A producer writes the keys its type declares (closed is faithful); a reader's type
        # does not reject others at run time, whatever the generator says.
        closed = node.get("additionalProperties") is False and self.direction != "forward"
        if closed and canon.get("additionalProperties", True) is True and "properties" in node:
            del node["additionalProperties"]
            self._note("ts-open-object", canon_at, at, "")

    def written_models(self, node: Any, at: str, canonical_at: str, depth: int = 0) -> None:
        """Serialization mode: every model without extra="allow" (no additionalProperties in
        Pydantic's schema) writes its declared fields only, wherever it is used."""
        if depth > _MAX_DEPTH:
            return
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
                node["additionalProperties"] = False
                self._note("pydantic-declared-fields-only", canonical_at, at, "")
            for key, value in node.items():
                self.written_models(value, json_pointer.join(at, key), canonical_at, depth + 1)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                self.written_models(
                    value, json_pointer.join(at, str(index)), canonical_at, depth + 1
                )


def kinds_fit(kind: str | None, types: set[str]) -> bool:
    if kind is None:
        return bool(types & {"number", "integer"})
    return kind in types


def apply_lenses(
    language: str,
    mode: str | None,
    direction: str,
    canonical: Mapping[str, Any],
    canonical_at: str,
    extracted: Mapping[str, Any],
) -> tuple[dict[str, Any], tuple[Change, ...]]:
    """(the extracted schema seen through its language's lens, the lens findings).

    ``canonical_at`` is the part of the canonical schema the copy stands for; ``mode`` the
    Pydantic mode of a python copy; ``direction`` the one its role requires."""
    document = copy.deepcopy(dict(extracted))
    lens = _Lens(language, mode, direction, canonical, document)
    try:
        start = json_pointer.resolve(canonical, canonical_at)
    except json_pointer.PointerError:
        return document, ()
    if language == "typescript":
        lens.walk(start, canonical_at, document, "#")
    elif language == "python" and mode == "serialization":
        lens.written_models(document, "#", canonical_at)
    return document, tuple(sorted(lens.findings.values(), key=Change.sort_key))
