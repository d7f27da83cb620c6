"""Loading stage: normalise a schema document and resolve the schema selected by a pointer.

Normalisation removes differences that do not change meaning, so no later stage sees them:
draft-07 ``definitions`` become ``$defs``, ``dependencies`` become ``dependentRequired`` (array
form) and ``dependentSchemas`` (schema form), array-form ``items``/``additionalItems`` become
``prefixItems``/``items``, boolean schemas become ``{}`` / ``{"not": {}}``, ``type`` becomes a
sorted list, ``required``, ``enum`` and the name lists of ``dependentRequired`` are sorted,
``oneOf``/``anyOf``/``allOf`` members are
compared as sets by the rules (a ``oneOf`` member written twice is not folded into one: a value
matching it matches two members and is rejected, see ``rules.composition``), and trivial
keywords (``additionalProperties: true``, ``minContains: 1``, ``minContains``/``maxContains``
without ``contains``, ``then``/``else`` without ``if``...) are dropped.
``{"anyOf": [X, {"type": "null"}]}`` (Pydantic's ``Optional[X]``) becomes X with ``null``
added to its ``type`` when that means the same.

Every document is read under one draft (:mod:`wiregate.diff.drafts`: ``$schema``, else the
keywords it uses, else 2020-12, unless the caller forces one) and normalised to the one 2020-12
model: under draft-04/06/07 a ``$ref`` ignores its sibling keywords and draft-04's boolean
``exclusiveMinimum``/``exclusiveMaximum`` become the numeric form; under 2019-09
``$recursiveRef: "#"`` is a ``$ref`` to the document root; a keyword the draft does not have
(``dependencies`` under 2020-12, ``prefixItems`` under draft-07...) constrains nothing and is
dropped, as validators of that draft ignore it.

Before normalising, each document is checked against the metaschema of its draft
(:mod:`wiregate.metaschema`), so a keyword with a value of the wrong shape (``"enum": 5``,
``"type": "strin"``, array-form ``items`` under 2020-12) is a load error naming its JSON
pointer instead of a crash or a wrong verdict.

Local ``$ref`` s are inlined (the referenced schema replaces the reference), so a reference to
a definition and the same schema written inline compare equal. A reference back into a schema
that is being inlined (a recursive type) is kept as a ``{"$ref": ...}`` marker, so recursion
terminates. A remote reference, a reference to a missing location and a reference chain that
never reaches a schema are load errors.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from wiregate.diff.budget import charge
from wiregate.diff.drafts import choose_draft
from wiregate.diff.keywords import (
    IN_PLACE_KEYWORDS,
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LIST_KEYWORDS,
    SUBSCHEMA_MAP_KEYWORDS,
)
from wiregate.diff.regex import matches_everything
from wiregate.diff.values import json_equal, json_key
from wiregate.errors import UserError
from wiregate.metaschema import violation
from wiregate.pointer import PointerError, escape, fragment, join, split

__all__ = [
    "NormalisedDocument",
    "ResolvedSchema",
    "SchemaLoadError",
    "escape",
    "holds_key",
    "normalise_document",
    "resolve",
]

Schema = dict[str, Any]

# Keywords whose trivial value ``{}`` (after normalisation) means the same as their absence.
TRIVIAL_WHEN_EMPTY = frozenset(
    {"additionalProperties", "items", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
)
FALSE_SCHEMA: Schema = {"not": {}}


class SchemaLoadError(UserError):
    """A schema document that cannot be compared: the message names the source and location."""


class NormalisedDocument(dict[str, Any]):
    """A normalised document (a schema), and where normalisation moved what the document
    wrote: ``written`` maps a pointer in it (of a schema, a renamed keyword, an entry of a
    draft-07 ``dependencies``) to the pointer of the same thing as written, where the two
    differ (draft-07 ``definitions/X`` is ``$defs/X`` here, tuple ``items/0`` is
    ``prefixItems/0``, ``additionalItems`` is ``items``). Pointers are shown pointers
    (:func:`wiregate.pointer.join`)."""

    def __init__(
        self, schema: Schema, written: dict[str, str], normalised: dict[str, str] | None = None
    ) -> None:
        """``normalised``: the inverse of ``written``, when the caller has it already."""
        super().__init__(schema)
        self.written = written
        self._normalised = (
            normalised
            if normalised is not None
            else {shown: pointer for pointer, shown in written.items()}
        )

    @functools.cached_property
    def has_dynamic_ref(self) -> bool:
        """Whether a ``$dynamicRef`` is left in it (one to a JSON pointer became a ``$ref``)."""
        return holds_key(self, ("$dynamicRef",))

    def as_written(self, pointer: str) -> str:
        """``pointer`` (in this document) as the document wrote it: findings show that."""
        return _translate(pointer, self.written)

    def as_normalised(self, pointer: str) -> str:
        """The inverse of :meth:`as_written`; a pointer the document did not write is kept."""
        return _translate(pointer, self._normalised)


def _translate(pointer: str, moved: Mapping[str, str]) -> str:
    """``pointer`` with its longest prefix found in ``moved`` replaced by what it maps to."""
    if not moved or pointer in ("", "#"):
        return pointer
    try:
        tokens = split(pointer, percent_encoded=False)
    except PointerError:
        return pointer  # said by whoever reads it
    for length in range(len(tokens), 0, -1):
        found = moved.get(join("#", *tokens[:length]))
        if found is not None:
            return join(found, *tokens[length:])
    return pointer


def normalise_document(
    document: Mapping[str, Any] | bool,
    *,
    origin: str = "schema",
    draft: str | None = None,
    at: str = "#",
) -> NormalisedDocument:
    """The document with every meaning-preserving difference removed (see the module
    docstring), read under ``draft`` (a name of :data:`wiregate.metaschema.DRAFTS`; None:
    the draft :func:`~wiregate.diff.drafts.choose_draft` picks). ``at``: the location that
    will be resolved; a schema there, or where a ``$ref`` points, is read as one even under
    a keyword no draft knows (``#/components/schemas/A``, as OpenAPI documents keep them)."""
    if isinstance(document, bool):
        return NormalisedDocument({} if document else dict(FALSE_SCHEMA), {})
    if not isinstance(document, Mapping):
        raise SchemaLoadError(f"{origin}: a schema document must be a JSON object")
    if draft is None:
        draft = choose_draft(document).draft
    check_document(document, origin=origin, draft=draft)
    nested_id = draft == "2019-09" and _has_nested_id(document)
    reading = _Reading(
        origin,
        draft,
        nested_id,
        *_targets(document, at),
        unevaluated=holds_key(document, _UNEVALUATED),
    )
    # $schema has done its work (the draft is chosen, and reported with the result).
    root = {k: v for k, v in document.items() if k != "$schema"}
    schema = _normalise_schema(root, "#", reading, "#")
    normalised_at = {shown: pointer for pointer, shown in reading.written_at.items()}
    for node in reading.refs:  # each $ref as the normalised document names its target
        target = _shown_ref(node["$ref"])
        moved = _translate(target, normalised_at)
        if moved != target:
            node["$ref"] = fragment(*split(moved, percent_encoded=False))
    return NormalisedDocument(schema, reading.written_at, normalised_at)


def check_document(document: Mapping[str, Any], *, origin: str = "schema", draft: str) -> None:
    """Raise :class:`SchemaLoadError` naming the source and the JSON pointer of the first
    offending keyword when ``document`` is not valid against the metaschema of ``draft``."""
    found = violation(document, draft)
    if found is not None:
        raise SchemaLoadError(
            f"{origin}: #{found.pointer}: {found.message} "
            f"(not a valid schema under {found.metaschema})"
        )


@dataclass(frozen=True)
class _Reading:
    origin: str
    draft: str
    nested_id: bool  # 2019-09: a subschema has its own $id (a resource of its own)
    # Where schemas are below keywords no draft knows (each a pointer as normalisation
    # writes them), and every pointer on the way to one: read as schemas there
    targets: frozenset[str] = frozenset()
    on_the_way: frozenset[str] = frozenset()
    # Filled while normalising: NormalisedDocument.written, and the $ref objects made, whose
    # targets are translated once every location is known.
    written_at: dict[str, str] = field(default_factory=dict)
    unevaluated: bool = False  # the document has unevaluatedProperties/unevaluatedItems
    # The resources being read, innermost last: where a "#..." reference is resolved.
    resources: list[str] = field(default_factory=lambda: ["#"])
    refs: list[Schema] = field(default_factory=list)

    @property
    def up_to_07(self) -> bool:
        return self.draft in _DRAFT_07_FAMILY


_DRAFT_07_FAMILY = frozenset({"draft-04", "draft-06", "draft-07"})
_NEWER_KEYWORDS = frozenset(
    {
        "prefixItems",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "minContains",
        "maxContains",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
    }
)
# Keywords of other drafts that a draft does not have: its validators ignore them.
_FOREIGN_KEYWORDS: dict[str, frozenset[str]] = {
    "draft-04": _NEWER_KEYWORDS | {"const", "contains", "propertyNames", "if", "then", "else"},
    "draft-06": _NEWER_KEYWORDS | {"if", "then", "else"},
    "draft-07": _NEWER_KEYWORDS,
    "2019-09": frozenset({"prefixItems", "$dynamicRef", "$dynamicAnchor", "dependencies"}),
    "2020-12": frozenset({"additionalItems", "dependencies", "$recursiveRef", "$recursiveAnchor"}),
}


def holds_key(document: Any, keys: Collection[str]) -> bool:
    """Whether an object anywhere in ``document`` has one of ``keys`` (a key of that name
    inside data counts too; iterative, so any depth)."""
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if any(key in node for key in keys):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _has_nested_id(document: Mapping[str, Any]) -> bool:
    """Whether any value below the root, outside data (``DATA_KEYWORDS``: an example may
    hold an ``$id`` of its own), is an object with a string ``$id`` (iterative, so a deep
    document is left to the recursion-limit error of the walk that follows)."""
    stack: list[Any] = [v for k, v in document.items() if k not in DATA_KEYWORDS]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("$id"), str):
                return True
            stack.extend(v for k, v in node.items() if k not in DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _draft_forms(raw: Schema, pointer: str, reading: _Reading) -> Schema:
    """``raw`` (a copy) with its draft's own forms rewritten to the 2020-12 model."""
    foreign = _FOREIGN_KEYWORDS[reading.draft] & raw.keys()
    if reading.draft == "2019-09" and "$recursiveRef" in raw:
        foreign = foreign | {"$recursiveRef"}
        raw["$ref"] = _recursive_ref(raw, pointer, reading)
    for key in foreign:
        del raw[key]
    raw.pop("$recursiveAnchor", None)
    dynamic = raw.get("$dynamicRef")
    if isinstance(dynamic, str) and dynamic.startswith("#/") and "$ref" not in raw:
        # A fragment that is a JSON pointer names no $dynamicAnchor: it is a plain $ref.
        raw["$ref"] = raw.pop("$dynamicRef")
    if reading.up_to_07 and "$ref" in raw:
        # Up to draft-07 a $ref object is the reference alone; its siblings are ignored.
        return {k: v for k, v in raw.items() if k in ("$ref", "definitions", "$defs")}
    if reading.draft == "draft-04":
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            flag = raw.pop(exclusive, False)
            if flag is True and bound in raw:
                raw[exclusive] = raw.pop(bound)
    return raw


def _recursive_ref(raw: Schema, pointer: str, reading: _Reading) -> str:
    """2019-09's ``$recursiveRef: "#"`` in a document that is one schema resource (no nested
    ``$id``) can only reach the document root: it is a ``$ref`` to it."""
    value = raw["$recursiveRef"]
    if value != "#" or reading.nested_id or "$ref" in raw:
        why = (
            "only '#' is supported"
            if value != "#"
            else "a subschema has its own $id"
            if reading.nested_id
            else "it stands beside a $ref"
        )
        raise SchemaLoadError(
            f"{reading.origin}: {pointer}/$recursiveRef: $recursiveRef {value!r} cannot be "
            f"compared ({why})"
        )
    return "#"


def _normalise_schema(node: Any, pointer: str, reading: _Reading, written: str) -> Schema:
    """``node``, found at ``pointer`` in the normalised document and at ``written`` in the
    document as written (they differ below a renamed keyword: ``_Reading.written``). A
    subschema with an ``$id`` of its own is a resource: the ``#...`` references below it
    name places in it, not in the document (a bundle's embedded schemas)."""
    if written != "#" and _starts_resource(node, reading, written):
        reading.resources.append(written)
        try:
            return _normalise_node(node, pointer, reading, written)
        finally:
            reading.resources.pop()
    return _normalise_node(node, pointer, reading, written)


def _starts_resource(node: Any, reading: _Reading, written: str) -> bool:
    """``node`` has an identifier of its own (draft-04's ``id``), not a plain-name fragment
    (an anchor), and one its draft reads: not beside a ``$ref`` up to draft-07, nor under the
    other drafts' definitions keyword (``$defs`` up to draft-07, ``definitions`` after), where
    validators find no schema to take an identifier from."""
    if not isinstance(node, Mapping) or (reading.up_to_07 and "$ref" in node):
        return False
    unknown = "$defs" if reading.up_to_07 else "definitions"
    if f"/{unknown}/" in f"{written}/":
        return False
    identifier = node.get("id" if reading.draft == "draft-04" else "$id")
    return isinstance(identifier, str) and identifier != "" and not identifier.startswith("#")


def _normalise_node(node: Any, pointer: str, reading: _Reading, written: str) -> Schema:
    origin = reading.origin
    if written != pointer:
        reading.written_at[pointer] = written
    if isinstance(node, bool):
        return {} if node else dict(FALSE_SCHEMA)
    if not isinstance(node, Mapping):
        raise SchemaLoadError(f"{origin}: {written}: a schema must be an object or a boolean")
    raw = _draft_forms(dict(node), written, reading)
    renamed: dict[str, str] = {}  # a keyword of ``raw`` -> the keyword the document wrote
    from_definitions: frozenset[str] = frozenset()  # $defs entries written in definitions
    if "definitions" in raw:
        definitions = raw.pop("definitions")
        if isinstance(definitions, Mapping):
            defs = raw.get("$defs") or {}
            for name in definitions.keys() & defs.keys():
                if not json_equal(definitions[name], defs[name]):
                    raise SchemaLoadError(
                        f"{origin}: {written}/definitions/{escape(name)}: also defined, "
                        f"differently, at {written}/$defs/{escape(name)}"
                    )
            from_definitions = frozenset(definitions.keys() - defs.keys())
            if not defs:
                renamed["$defs"] = "definitions"
            raw["$defs"] = {**definitions, **defs}
    if "dependencies" in raw:
        renamed["dependentRequired"] = renamed["dependentSchemas"] = "dependencies"
        _split_dependencies(raw, raw.pop("dependencies"))
    if isinstance(raw.get("items"), list):
        raw["prefixItems"] = raw.pop("items")
        renamed["prefixItems"] = "items"
        if "additionalItems" in raw:
            raw["items"] = raw.pop("additionalItems")
            renamed["items"] = "additionalItems"
    else:
        raw.pop("additionalItems", None)  # ignored by JSON Schema when items is not a list
    out: Schema = {}
    for key, value in raw.items():
        here = f"{pointer}/{escape(key)}"
        written_here = f"{written}/{escape(renamed.get(key, key))}"
        if here != written_here and key != "dependentRequired":
            # (draft-07 ``dependencies`` is read back as the keyword of its schemas)
            reading.written_at[here] = written_here
        if key in SUBSCHEMA_KEYWORDS:
            out[key] = _normalise_schema(value, here, reading, written_here)
        elif key in SUBSCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
            out[key] = {
                name: _normalise_schema(
                    sub, f"{here}/{escape(name)}", reading, f"{holder}/{escape(name)}"
                )
                for name, sub in value.items()
                for holder in (
                    f"{written}/definitions" if name in from_definitions else written_here,
                )
            }
        elif key in SUBSCHEMA_LIST_KEYWORDS and isinstance(value, list):
            out[key] = [
                _normalise_schema(sub, f"{here}/{index}", reading, f"{written_here}/{index}")
                for index, sub in enumerate(value)
            ]
        elif key == "type" and isinstance(value, (str, list)):
            out[key] = sorted({value} if isinstance(value, str) else set(value))
        elif key == "required" and isinstance(value, list):
            out[key] = sorted(set(value))
        elif key == "dependentRequired" and isinstance(value, Mapping):
            out[key] = {
                name: sorted(set(names)) if isinstance(names, list) else names
                for name, names in value.items()
            }
            if here != written_here:
                for name in value:
                    reading.written_at[f"{here}/{escape(name)}"] = f"{written_here}/{escape(name)}"
        elif key == "enum" and isinstance(value, list):
            # One item per JSON value (``1`` and ``1.0`` are one; ``1`` and ``true`` are not),
            # the first written kept, so messages show values as written.
            unique: dict[str, Any] = {}
            for item in value:
                unique.setdefault(json_key(item), item)
            out[key] = [unique[k] for k in sorted(unique)]
        elif key == "$ref":
            if not isinstance(value, str):
                raise SchemaLoadError(f"{origin}: {written_here}: $ref must be a string")
            out[key] = _local_ref(value, written_here, reading)
            reading.refs.append(out)
        elif written_here in reading.on_the_way:  # a keyword no draft knows holds a schema
            out[key] = _schemas_inside(value, here, reading, written_here)
        else:
            out[key] = value
    if isinstance(out.get("pattern"), str) and matches_everything(out["pattern"]):
        del out["pattern"]
    if out.get("uniqueItems") is False:
        del out["uniqueItems"]
    if "contains" not in out:  # they count the items matching contains: no effect without it
        out.pop("minContains", None)
        out.pop("maxContains", None)
    elif out.get("minContains") == 1:  # the default
        del out["minContains"]
    if "if" not in out:  # the branches apply only after an ``if``
        out.pop("then", None)
        out.pop("else", None)
    for key in TRIVIAL_WHEN_EMPTY:
        if out.get(key) == {} and not (reading.unevaluated and key in _EVALUATING_ALL):
            del out[key]
    return out


_UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
# ``{}`` under these still marks every member evaluated, which unevaluated* reads (in a
# document that has one, they are kept).
_EVALUATING_ALL = frozenset(
    {"additionalProperties", "items", "unevaluatedProperties", "unevaluatedItems"}
)


# Applicators under which accepting more can make the enclosing schema accept less.
_TWISTING = frozenset({"not", "oneOf", "if"})

# Keywords whose values are data, never schemas: a $ref into one is refused (``_lookup``).
DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


def _targets(document: Mapping[str, Any], at: str) -> tuple[frozenset[str], frozenset[str]]:
    """(targets, on the way) of ``_Reading``: the locations ``at`` and the document's local
    ``$ref`` s name below a keyword no draft knows, where the document has them, as
    normalisation writes pointers; and every pointer that leads to one. A ``$ref`` counts
    wherever a schema may be (not inside ``enum``, ``const``, ``default`` or ``examples``);
    each target is looked for in the document, so the work follows the document's depth,
    not the length of what a ``$ref`` says."""
    found = [at]
    todo: list[Any] = [document]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                found.append(ref)
            todo += [value for key, value in node.items() if key not in DATA_KEYWORDS]
        elif isinstance(node, list):
            todo += node
    targets: set[str] = set()
    on_the_way: set[str] = set()
    for written in found:
        steps = _below_unknown(document, written)
        if steps:
            targets.add("#" + "".join(steps))
            path = "#"
            for step in steps:
                path += step
                on_the_way.add(path)
    return frozenset(targets), frozenset(on_the_way)


def _below_unknown(document: Mapping[str, Any], written: str) -> list[str]:
    """The steps (``/`` and an escaped token each) of the location ``written`` names, when it
    is in the document and below a keyword no draft knows; else none."""
    try:
        tokens = split(written)
    except PointerError:
        return []  # said when the reference is followed
    node: Any = document
    steps: list[str] = []
    unknown = False
    expect = "schema"  # what the next token is read as: a keyword, or a member of a map/list
    for token in tokens:
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return []  # points to nothing: said when the reference is followed
        steps.append("/" + escape(token))
        if unknown:
            continue
        if expect == "member":
            expect = "schema"
        elif token in _SCHEMA_MAPS or token in _SCHEMA_LISTS:
            expect = "member"
        elif token not in SUBSCHEMA_KEYWORDS and token != "additionalItems":
            unknown = token not in DATA_KEYWORDS
            if not unknown:
                return []
    return steps if unknown else []


# Where subschemas are, in every draft's forms (as written, before normalisation).
_SCHEMA_MAPS = SUBSCHEMA_MAP_KEYWORDS | {"definitions", "dependencies"}
_SCHEMA_LISTS = SUBSCHEMA_LIST_KEYWORDS | {"items"}


class _Target(dict[str, Any]):
    """A schema read below a keyword no draft knows (``_schemas_inside``): ``_lookup`` reads
    keywords again from there."""


def _schemas_inside(value: Any, pointer: str, reading: _Reading, written: str) -> Any:
    """``value`` (under a keyword no draft knows, at ``pointer``; ``written``: as the
    document wrote it) with the schemas it holds at the targets normalised, the rest as it
    is."""
    if written in reading.targets and isinstance(value, (Mapping, bool)):
        return _Target(_normalise_schema(value, pointer, reading, written))
    if isinstance(value, Mapping):
        return {
            key: _schemas_inside(item, f"{pointer}/{token}", reading, below)
            if below in reading.on_the_way
            else item
            for key, item in value.items()
            for token in (escape(key),)
            for below in (f"{written}/{token}",)
        }
    if isinstance(value, list):
        return [
            _schemas_inside(item, f"{pointer}/{n}", reading, f"{written}/{n}")
            if f"{written}/{n}" in reading.on_the_way
            else item
            for n, item in enumerate(value)
        ]
    return value


def _local_ref(ref: str, here: str, reading: _Reading) -> str:
    """The ``$ref`` at ``here``, a ``#/...`` pointer, as a pointer into the document (one
    below a subschema with an ``$id`` of its own names a place in that resource); anything
    else is a load error."""
    resource = reading.resources[-1]
    if ref in ("", "#"):  # the empty reference names the resource itself, as "#" does
        return resource if resource == "#" else fragment(*split(resource, percent_encoded=False))
    if ref.startswith("#/"):
        if resource == "#":
            return ref
        try:
            return fragment(*split(resource, percent_encoded=False), *split(ref))
        except PointerError:
            return ref  # said where it is followed
    if ref.startswith("#"):
        raise SchemaLoadError(
            f"{reading.origin}: {here}: $ref {_shown(ref)} names an anchor: only JSON-pointer "
            "references (#/...) are followed"
        )
    raise SchemaLoadError(
        f"{reading.origin}: {here}: remote $ref {_shown(ref)} is not fetched, nor one by $id "
        "followed; bundle it into the document and refer to it by a JSON pointer (#/...)"
    )


def _shown(text: str, limit: int = 120) -> str:
    """``text`` quoted, cut to ``limit`` characters (a $ref can be as long as the file)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def _shown_ref(ref: str) -> str:
    """A local ``$ref`` (a URI fragment) as a shown pointer; as it is when it is none."""
    try:
        return join("#", *split(ref))
    except PointerError:
        return ref


def _split_dependencies(raw: Schema, dependencies: Any) -> None:
    """Draft-07 ``dependencies`` is 2020-12's ``dependentRequired`` (array form) and
    ``dependentSchemas`` (schema form); no draft has both (the other is dropped as foreign)."""
    if not isinstance(dependencies, Mapping):
        return
    required = {k: v for k, v in dependencies.items() if isinstance(v, list)}
    schemas = {k: v for k, v in dependencies.items() if not isinstance(v, list)}
    if required:
        raw["dependentRequired"] = required
    if schemas:
        raw["dependentSchemas"] = schemas


@dataclass(frozen=True)
class ResolvedSchema:
    """The selected schema with local references inlined, and where each node came from.

    ``sources`` maps ``id(node)`` of every schema node in ``tree`` to its JSON pointer in the
    normalised document (an inlined definition keeps the pointer of the definition);
    ``positions`` maps ``id()`` of each subschema list to where its members were written.
    """

    tree: Schema
    sources: Mapping[int, str]
    document: Schema
    positions: Mapping[int, list[str]]
    at: str = "#"  # the selection's pointer in the normalised document
    # (where, target) of each recursion below not/oneOf/if: a change of the target may have
    # the opposite effect through it (``rules.schema.twisted_recursions``)
    twisted_loops: tuple[tuple[str, str], ...] = ()

    def pointer(self, node: Schema) -> str:
        return self.sources.get(id(node), "#")

    def as_member(self, marker: Schema) -> Schema:
        """A bare recursion (a ``{"$ref": ...}`` marker) as ``{"allOf": [marker]}``, at the
        marker's place: the form it has where keywords stand beside it (``resolve``), so
        that the two compare keyword by keyword."""
        wrapper: Schema = {"allOf": [marker]}
        sources = self.sources
        if isinstance(sources, _Sources):
            sources.nodes.append(wrapper)  # held, so its id stays unique
            sources[id(wrapper)] = self.pointer(marker)
        return wrapper

    def member_pointer(self, node: Schema, keyword: str, index: int) -> str:
        """Where member ``index`` of a subschema list was written in the document."""
        members = node.get(keyword)
        written = self.positions.get(id(members))
        if written is None or index >= len(written):
            return f"{self.pointer(node)}/{escape(keyword)}/{index}"
        return written[index]


class _NoSuchLocation(SchemaLoadError):
    """A pointer that names nothing in the document."""


def _lookup(
    document: Schema,
    pointer: str,
    origin: str,
    what: str,
    *,
    as_shown: bool = False,
    as_written: bool = False,
) -> tuple[str, Any]:
    """The location ``pointer`` (a URI fragment, as ``$ref`` writes it) names in a normalised
    document: its pointer as shown (``#`` and the unencoded JSON pointer) and its value.
    ``as_shown``: also read ``pointer`` as wiregate shows pointers (not percent-encoded),
    when the fragment reading names nothing. ``as_written``: ``pointer`` names a location as
    the document wrote it (draft-07 ``items/0``), else as normalisation put it."""
    if not pointer.startswith("#"):
        raise SchemaLoadError(f"{origin}: {what} {pointer!r} is not a local JSON pointer")
    encoded = True
    if as_shown and "%" in pointer:  # a name holding "%": one of the readings names it
        try:
            return _lookup(document, pointer, origin, what, as_written=as_written)
        except _NoSuchLocation:
            encoded = False
    try:
        tokens = split(pointer, percent_encoded=encoded)
    except PointerError as exc:
        raise SchemaLoadError(f"{origin}: {what} {exc}") from None
    if as_written and isinstance(document, NormalisedDocument):
        tokens = split(document.as_normalised(join("#", *tokens)), percent_encoded=False)
    node: Any = document
    holder = ""  # the keyword whose value holds data, not schemas, once the pointer is inside
    container = ""  # the keyword whose list or map of subschemas the location is, if it is
    beyond = False  # below a keyword no draft knows (``components``, ``x-shared``)
    for index, token in enumerate(tokens):
        if token == "definitions" and isinstance(node, dict) and "definitions" not in node:
            tokens[index] = token = "$defs"  # draft-07 spelling of a normalised $defs
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise _NoSuchLocation(f"{origin}: {what} {_shown(pointer)} points to nothing")
        if holder:
            continue
        if beyond:  # below a keyword no draft knows: any name, until a schema read there
            beyond = type(node) is not _Target
        elif container:  # a member of a list or map of subschemas
            container = ""
        elif token in DATA_KEYWORDS:
            holder = token
        elif token in SUBSCHEMA_MAP_KEYWORDS or token in SUBSCHEMA_LIST_KEYWORDS:
            container = token
        elif token not in SUBSCHEMA_KEYWORDS:  # ``normalise_document`` read what it names
            beyond = type(node) is not _Target
    if beyond and isinstance(node, dict):  # raw data: never read as a schema
        raise SchemaLoadError(
            f"{origin}: {what} {_shown(pointer)} points below a keyword no draft knows, where "
            "no schema was read"
        )
    if isinstance(node, dict) and (holder or container):
        # Validators read such a value as a schema, but it was never read as one here (an
        # enum's object, say, keeps its "type" as written): refused rather than misread.
        where = (
            f"inside {holder!r}, whose value is data"
            if holder
            else f"at the subschemas of {container!r}, not at one"
        )
        raise SchemaLoadError(
            f"{origin}: {what} {_shown(pointer)} points {where}: only a schema's location can be "
            "compared"
        )
    return join("#", *tokens), node


def resolve(document: Schema, at: str = "#", *, origin: str = "schema") -> ResolvedSchema:
    """Inline the local references of the schema at ``at`` in a normalised ``document``
    (``at``: a location as the document wrote it, or as normalisation put it)."""
    written = at
    # A source's #POINTER: as a URI fragment, or as the findings show it (copied from them)
    at, selected = _lookup(document, at, origin, "schema location", as_shown=True, as_written=True)
    if not isinstance(selected, dict):
        raise SchemaLoadError(f"{origin}: {written!r} is not a schema")
    sources: dict[int, str] = {}
    positions: dict[int, list[str]] = {}
    done: dict[str, Schema] = {}
    keep_alive: list[object] = []

    def target_of(ref: str, where: str) -> tuple[str, Schema]:
        """Follow a chain of bare references to a schema that has content."""
        seen: list[str] = []
        while True:
            if not ref.startswith("#"):
                raise SchemaLoadError(
                    f"{origin}: {where}: remote $ref {ref!r} is not fetched; "
                    "bundle it into the document"
                )
            shown, node = _lookup(document, ref, origin, "$ref")
            if shown in seen:
                chain = " -> ".join([*seen, shown])
                raise SchemaLoadError(f"{origin}: {where}: cyclic $ref {chain}")
            seen.append(shown)
            if not isinstance(node, dict):
                raise SchemaLoadError(f"{origin}: {where}: $ref {ref!r} is not a schema")
            nxt = node.get("$ref")
            if not isinstance(nxt, str) or len(node) > 1:
                return shown, node
            ref = nxt

    def inline(
        node: Schema,
        pointer: str,
        stack: tuple[str, ...],
        twisted: bool = False,
        in_place: tuple[str, ...] = (),
    ) -> tuple[Schema, bool]:
        """The inlined node and whether it is independent of ``stack`` (safe to reuse).
        ``twisted``: below ``not``, ``oneOf`` or ``if``, where accepting more can make the
        enclosing schema accept less. ``in_place``: the entries of ``stack`` entered since
        the last keyword that applies to a part of the value."""
        charge()  # definitions that reference each other are inlined once per path
        independent = True
        ref = node.get("$ref")
        if isinstance(ref, str):
            target_pointer, target = target_of(ref, pointer)
            if target_pointer in in_place:
                chain = " -> ".join([*in_place[in_place.index(target_pointer) :], target_pointer])
                raise SchemaLoadError(
                    f"{origin}: {pointer}: $ref cycle {chain} never applies to a part "
                    "of the value: validating with it never ends"
                )
            if target_pointer in stack:
                marker: Schema = {"$ref": target_pointer}
                sources[id(marker)] = pointer
                keep_alive.append(marker)
                if twisted:
                    twisted_loops.append((pointer, target_pointer))
                siblings = {k: v for k, v in node.items() if k not in ("$ref", "$defs")}
                if not siblings:
                    return marker, False
                # The siblings apply beside the recursion: compared as keywords of their own,
                # the reference an allOf member (it was dropped with them).
                sibling_schema, _ = inline(siblings, pointer, stack, twisted, in_place)
                merged = {**sibling_schema, "allOf": [*(sibling_schema.get("allOf") or ()), marker]}
                sources[id(merged)] = pointer
                keep_alive.append(merged)
                return merged, False
            if target_pointer in done:
                resolved: Schema = done[target_pointer]
            else:
                resolved, independent = inline(
                    target,
                    target_pointer,
                    (*stack, target_pointer),
                    twisted,
                    (*in_place, target_pointer),
                )
                if independent:
                    done[target_pointer] = resolved
            siblings = {k: v for k, v in node.items() if k not in ("$ref", "$defs")}
            if not siblings:
                return resolved, independent
            sibling_schema, sib_independent = inline(siblings, pointer, stack, twisted, in_place)
            merged = _merge(resolved, sibling_schema)
            sources[id(merged)] = pointer
            keep_alive.append(merged)
            return merged, independent and sib_independent
        out: Schema = {}
        for key, value in node.items():
            here = f"{pointer}/{escape(key)}"
            if key == "$defs":
                continue  # definitions are reached through references, never compared as data
            below = twisted or key in _TWISTING
            same = in_place if key in IN_PLACE_KEYWORDS else ()
            if key in SUBSCHEMA_KEYWORDS and isinstance(value, dict):
                out[key], ok = inline(value, here, stack, below, same)
            elif key in SUBSCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                children = {}
                for name, sub in value.items():
                    children[name], ok = inline(sub, f"{here}/{escape(name)}", stack, below, same)
                    independent = independent and ok
                out[key] = children
                continue
            elif key in SUBSCHEMA_LIST_KEYWORDS and isinstance(value, list):
                items = []
                for index, sub in enumerate(value):
                    inlined, ok = inline(sub, f"{here}/{index}", stack, below, same)
                    items.append((inlined, f"{here}/{index}"))
                    independent = independent and ok
                members = [item for item, _ in items]
                positions[id(members)] = [where for _, where in items]
                keep_alive.append(members)
                out[key] = members
                continue
            else:
                out[key] = value
                continue
            independent = independent and ok
        out = _fold_nullable(out)
        sources[id(out)] = pointer
        keep_alive.append(out)
        return out, independent

    twisted_loops: list[tuple[str, str]] = []
    tree, _ = inline(selected, at, (at,), in_place=(at,))
    # keep_alive holds every node so that no id() in ``sources`` is reused by another object.
    return ResolvedSchema(
        tree=tree,
        sources=_Sources(sources, keep_alive),
        document=document,
        positions=positions,
        at=at,
        twisted_loops=tuple(twisted_loops),
    )


class _Sources(dict[int, str]):
    """The id -> pointer map, holding the nodes alive so their ids stay unique."""

    def __init__(self, sources: dict[int, str], nodes: list[object]) -> None:
        super().__init__(sources)
        self.nodes = nodes


NULL_SCHEMA: Schema = {"type": ["null"]}
# Keywords that constrain null values too: a member holding one cannot be folded.
_APPLIES_TO_NULL = frozenset(
    {"enum", "const", "not", "allOf", "anyOf", "oneOf", "if", "then", "else", "$ref"}
)
_ANNOTATIONS = frozenset({"title", "description", "examples", "$comment", "default"})


def _fold_nullable(node: Schema) -> Schema:
    """``{"anyOf": [X, {"type": "null"}]}`` (how Pydantic writes ``Optional[X]``) means X with
    ``null`` added to its types, when X's other keywords only constrain non-null values."""
    for keyword in ("anyOf", "oneOf"):
        members = node.get(keyword)
        if not isinstance(members, list) or len(members) != 2:
            continue
        if json_equal(members[0], NULL_SCHEMA):
            other = members[1]
        elif json_equal(members[1], NULL_SCHEMA):
            other = members[0]
        else:
            continue
        types = other.get("type")
        if not isinstance(types, list) or "null" in types or _APPLIES_TO_NULL & other.keys():
            continue
        rest = {k: v for k, v in node.items() if k != keyword}
        if any(
            k in rest and not json_equal(rest[k], other[k]) and k not in _ANNOTATIONS for k in other
        ):
            continue
        return {**other, **rest, "type": sorted([*types, "null"])}
    return node


# Keywords that constrain no value (annotations, and identifiers, which only name a
# location): a clash of theirs is no reason for an ``allOf``.
_NOT_CONSTRAINTS = frozenset(
    {"title", "description", "examples", "$comment", "default", "$id", "$anchor", "$dynamicAnchor"}
)


def _merge(target: Schema, siblings: Schema) -> Schema:
    """A ``$ref`` with sibling keywords: both apply, the reference as an in-place applicator
    beside the siblings. Written as one schema when that means the same: no constraint
    clashes, and no keyword meets one it depends on from the other side (``additionalProperties``
    reads the ``properties`` beside it, ``items`` the ``prefixItems``...)."""
    clashes = {k for k in siblings if k in target and not json_equal(target[k], siblings[k])}
    if clashes <= _NOT_CONSTRAINTS and not _interdependent(target, siblings):
        return {**target, **siblings}
    # The referenced schema as an allOf member, the siblings where they are: unevaluated*
    # among the siblings still sees what the reference evaluates, as a $ref's would.
    return {**siblings, "allOf": [*(siblings.get("allOf") or ()), target]}


# Keywords that read their neighbours: one from each side of a $ref would read the other's.
_READ_TOGETHER = (
    frozenset({"properties", "patternProperties", "additionalProperties"}),
    frozenset({"prefixItems", "items"}),
    frozenset({"contains", "minContains", "maxContains"}),
    frozenset({"if", "then", "else"}),
)
_READ_EVERYTHING = frozenset({"unevaluatedProperties", "unevaluatedItems"})


def _interdependent(target: Schema, siblings: Schema) -> bool:
    """Would a keyword of one schema read a neighbour from the other if written together? (A
    ``$dynamicAnchor`` on either stays where it was: which schema it names matters.)"""
    if "$dynamicAnchor" in target or "$dynamicAnchor" in siblings:
        return True
    if _READ_EVERYTHING & target.keys() and siblings.keys() - _NOT_CONSTRAINTS:
        return True  # what the target's unevaluated* sees would grow
    return any(group & target.keys() and group & siblings.keys() for group in _READ_TOGETHER)
