"""Object members: ``properties``, ``patternProperties`` and ``additionalProperties``.

Whether adding or removing a property breaks anyone depends on the content model of the
other side for that key: open (any value was accepted), closed (the key was rejected) or
partially open (``additionalProperties`` or a matching ``patternProperties`` schema).
"""

from __future__ import annotations

from functools import partial

from wiregate.diff.load import Schema
from wiregate.diff.regex import translate
from wiregate.diff.rules.base import Comparison, is_false, is_true
from wiregate.diff.rules.subschemas import compare_subschemas
from wiregate.diff.rules.unevaluated import rest_schemas
from wiregate.diff.values import json_equal

PROPERTY_ADDED_TO_OPEN_MODEL = "property-added-to-open-model"
PROPERTY_ADDED_TO_CLOSED_MODEL = "property-added-to-closed-model"
PROPERTY_ADDED_TO_PARTIALLY_OPEN_MODEL = "property-added-to-partially-open-model"
PROPERTY_REMOVED_FROM_OPEN_MODEL = "property-removed-from-open-model"
PROPERTY_REMOVED_FROM_CLOSED_MODEL = "property-removed-from-closed-model"
PROPERTY_REMOVED_FROM_PARTIALLY_OPEN_MODEL = "property-removed-from-partially-open-model"
PROPERTY_WIDENED = "property-widened"
PROPERTY_NARROWED = "property-narrowed"
ADDITIONAL_PROPERTIES_CLOSED = "additional-properties-closed"
ADDITIONAL_PROPERTIES_OPENED = "additional-properties-opened"
ADDITIONAL_PROPERTIES_NARROWED = "additional-properties-narrowed"
ADDITIONAL_PROPERTIES_WIDENED = "additional-properties-widened"
PATTERN_PROPERTY_ADDED = "pattern-property-added"
PATTERN_PROPERTY_REMOVED = "pattern-property-removed"
PROPERTY_NAMES_ADDED = "property-names-added"
PROPERTY_NAMES_REMOVED = "property-names-removed"

KEYWORDS = frozenset({"properties", "patternProperties", "additionalProperties", "propertyNames"})
OPEN: Schema = {}
# Property names are strings: a propertyNames schema every string meets constrains nothing.
NAMES: Schema = {"type": ["string"]}


def undeclared_schema(node: Schema, key: str, rest: Schema | None = None) -> Schema | None:
    """The schema a key not in ``properties`` gets: a matching pattern, else ``rest``, by
    default ``additionalProperties`` (``{}`` when absent: the open model). None when a
    pattern cannot be evaluated here (lookaround, backreference: see ``wiregate.diff.regex``)."""
    patterns: dict[str, Schema] = node.get("patternProperties") or {}
    regexes = [(translate(pattern), schema) for pattern, schema in patterns.items()]
    if any(regex is None for regex, _ in regexes):
        return None
    for regex, schema in regexes:
        if regex is not None and regex.search(key):
            return schema
    if rest is not None:
        return rest
    return node.get("additionalProperties", OPEN)  # type: ignore[no-any-return]


def undecidable_patterns(node: Schema) -> list[str]:
    """The ``patternProperties`` keys of ``node`` that cannot be evaluated here."""
    return [p for p in node.get("patternProperties") or {} if translate(p) is None]


def _model(schema: Schema) -> str:
    if is_true(schema):
        return "open"
    return "closed" if is_false(schema) else "partially-open"


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    old_props: dict[str, Schema] = old.get("properties") or {}
    new_props: dict[str, Schema] = new.get("properties") or {}
    for name in sorted(set(old_props) | set(new_props)):
        if name in old_props and name in new_props:
            compare_subschemas(
                cmp,
                old_props[name],
                new_props[name],
                partial(_property_ptrs, cmp, old, new, name),
                (PROPERTY_WIDENED, PROPERTY_NARROWED),
                f"property {name!r}",
            )
        elif name in new_props:
            _added(cmp, old, new, name, new_props[name])
        else:
            _removed(cmp, old, new, name, old_props[name])
    _patterns(cmp, old, new)
    _additional(cmp, old, new)
    _names(cmp, old, new)


def _property_ptrs(cmp: Comparison, old: Schema, new: Schema, name: str) -> tuple[str, str]:
    return cmp.old_ptr(old, "properties", name), cmp.new_ptr(new, "properties", name)


def _added(cmp: Comparison, old: Schema, new: Schema, name: str, schema: Schema) -> None:
    before = undeclared_schema(old, name, rest_schemas(old, new, "additionalProperties")[0])
    where = (cmp.old_ptr(old), cmp.new_ptr(new, "properties", name))
    if before is None:
        message = (
            f"property {name!r} added where old records were checked by a patternProperties "
            f"pattern that cannot be evaluated here ({_undecidable(old)})"
        )
        _undecided(cmp, PROPERTY_ADDED_TO_PARTIALLY_OPEN_MODEL, where, message)
        return
    model = _model(before)
    if model == "open":
        message = (
            f"property {name!r} added to an open model: old records could hold any value "
            "under that key"
        )
        cmp.emit(
            PROPERTY_ADDED_TO_OPEN_MODEL,
            *where,
            message,
            backward=is_true(schema),
            forward=True,
            lenient_backward=True,
        )
    elif model == "closed":
        message = f"property {name!r} added to a closed model: old readers reject that key"
        cmp.emit(
            PROPERTY_ADDED_TO_CLOSED_MODEL,
            *where,
            message,
            backward=True,
            forward=is_false(schema),
        )
    else:
        message = (
            f"property {name!r} added where old records were checked by additionalProperties "
            "or patternProperties"
        )
        cmp.emit_moved(
            PROPERTY_ADDED_TO_PARTIALLY_OPEN_MODEL, *where, message, before=before, after=schema
        )


def _removed(cmp: Comparison, old: Schema, new: Schema, name: str, schema: Schema) -> None:
    after = undeclared_schema(new, name, rest_schemas(old, new, "additionalProperties")[1])
    where = (cmp.old_ptr(old, "properties", name), cmp.new_ptr(new))
    if after is None:
        message = (
            f"property {name!r} removed; its key is now checked by a patternProperties pattern "
            f"that cannot be evaluated here ({_undecidable(new)})"
        )
        _undecided(cmp, PROPERTY_REMOVED_FROM_PARTIALLY_OPEN_MODEL, where, message)
        return
    model = _model(after)
    if model == "open":
        message = (
            f"property {name!r} removed from an open model: new records may hold any value "
            "under that key"
        )
        cmp.emit(
            PROPERTY_REMOVED_FROM_OPEN_MODEL,
            *where,
            message,
            backward=True,
            forward=is_true(schema),
            lenient_forward=True,
        )
    elif model == "closed":
        message = f"property {name!r} removed from a closed model: new readers reject that key"
        cmp.emit(
            PROPERTY_REMOVED_FROM_CLOSED_MODEL,
            *where,
            message,
            backward=is_false(schema),
            forward=True,
        )
    else:
        message = (
            f"property {name!r} removed; its key is now checked by additionalProperties "
            "or patternProperties"
        )
        cmp.emit_moved(
            PROPERTY_REMOVED_FROM_PARTIALLY_OPEN_MODEL, *where, message, before=schema, after=after
        )


def _undecidable(node: Schema) -> str:
    names = ", ".join(repr(p) for p in undecidable_patterns(node))
    return f"{names}: lookaround, backreference or beyond RE2"


def _undecided(cmp: Comparison, rule_id: str, where: tuple[str, str], message: str) -> None:
    """Whether a key matches a pattern is not known here: neither direction is claimed, and
    the finding is undecided (level ``unknown``), never a break."""
    cmp.emit(rule_id, *where, message, backward=False, forward=False, undecided=True)


def _patterns(cmp: Comparison, old: Schema, new: Schema) -> None:
    old_patterns: dict[str, Schema] = old.get("patternProperties") or {}
    new_patterns: dict[str, Schema] = new.get("patternProperties") or {}
    for pattern in sorted(set(old_patterns) | set(new_patterns)):
        if pattern in old_patterns and pattern in new_patterns:
            cmp.compare(old_patterns[pattern], new_patterns[pattern])
            continue
        before, after = rest_schemas(old, new, "additionalProperties")
        if pattern in new_patterns:
            schema = new_patterns[pattern]
            cmp.emit_moved(
                PATTERN_PROPERTY_ADDED,
                cmp.old_ptr(old),
                cmp.new_ptr(new, "patternProperties", pattern),
                f"keys matching {pattern!r} are now checked by their own schema",
                before=before,
                after=schema,
            )
        else:
            schema = old_patterns[pattern]
            cmp.emit_moved(
                PATTERN_PROPERTY_REMOVED,
                cmp.old_ptr(old, "patternProperties", pattern),
                cmp.new_ptr(new),
                f"keys matching {pattern!r} are no longer checked by their own schema",
                before=schema,
                after=after,
            )


def _additional(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = rest_schemas(old, new, "additionalProperties")
    if json_equal(before, after):
        return
    where = cmp.keyword_ptrs(old, new, "additionalProperties")
    old_model, new_model = _model(before), _model(after)
    if new_model == "closed":
        cmp.emit(
            ADDITIONAL_PROPERTIES_CLOSED,
            *where,
            f"additionalProperties closed (was {old_model}): undeclared keys are now rejected",
            backward=False,
            forward=True,
            lenient_backward=True,
        )
    elif old_model == "closed":
        cmp.emit(
            ADDITIONAL_PROPERTIES_OPENED,
            *where,
            f"additionalProperties opened (now {new_model}): undeclared keys are accepted",
            backward=True,
            forward=False,
        )
    elif old_model == "open":
        cmp.emit(
            ADDITIONAL_PROPERTIES_NARROWED,
            *where,
            "undeclared keys must now match the additionalProperties schema",
            backward=False,
            forward=True,
        )
    elif new_model == "open":
        cmp.emit(
            ADDITIONAL_PROPERTIES_WIDENED,
            *where,
            "undeclared keys no longer have to match the additionalProperties schema",
            backward=True,
            forward=False,
        )
    else:
        ids = (ADDITIONAL_PROPERTIES_WIDENED, ADDITIONAL_PROPERTIES_NARROWED)
        compare_subschemas(cmp, before, after, lambda: where, ids, "additionalProperties")


def _names(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = old.get("propertyNames"), new.get("propertyNames")
    if json_equal(before, after):
        return
    if before is not None and after is not None:
        cmp.compare(before, after)
    elif after is not None:
        cmp.emit(
            PROPERTY_NAMES_ADDED,
            cmp.old_ptr(old),
            cmp.new_ptr(new, "propertyNames"),
            "property names are now constrained",
            backward=cmp.subsumes(NAMES, after),
            forward=True,
        )
    elif before is not None:
        cmp.emit(
            PROPERTY_NAMES_REMOVED,
            cmp.old_ptr(old, "propertyNames"),
            cmp.new_ptr(new),
            "property names are no longer constrained",
            backward=True,
            forward=cmp.subsumes(NAMES, before),
        )
