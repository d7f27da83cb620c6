"""Object members: ``properties``, ``patternProperties`` and ``additionalProperties``.

Whether adding or removing a property breaks anyone depends on the content model of the
other side for that key: open (any value was accepted), closed (the key was rejected) or
partially open (``additionalProperties`` or a matching ``patternProperties`` schema).

A ``patternProperties`` entry applies to every key it matches, declared properties included:
the value under a declared name must meet ``properties[name]`` and every matching pattern's
schema; an undeclared key meets its matching patterns' schemas, else
``additionalProperties``. So an added (removed) pattern is also judged against each declared
name it matches, and against each other pattern it may share keys with.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from wiregate.diff.load import Schema
from wiregate.diff.regex import never_both, translate
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
    """The schema a key not in ``properties`` gets: every matching pattern's (all of them
    apply), else ``rest``, by default ``additionalProperties`` (``{}`` when absent: the open
    model). None when a pattern cannot be evaluated here (lookaround, backreference: see
    ``wiregate.diff.regex``)."""
    if undecidable_patterns(node):
        return None
    patterns: dict[str, Schema] = node.get("patternProperties") or {}
    matching = _matching(node, key)
    if matching:
        return conjoin(patterns[p] for p in matching)
    return _rest(node, rest)


def value_bound(node: Schema, key: str, rest: Schema | None = None) -> Schema | None:
    """A schema that every value ``node`` allows under ``key`` meets: for a declared name its
    ``properties`` schema with every matching pattern's, for an undeclared key the matching
    patterns' or else ``rest`` (by default ``additionalProperties``). Exact when every
    pattern runs here; a pattern that cannot be evaluated could only add a constraint, so the
    bound stays sound, except for an undeclared key that no pattern known here matches
    (None: not known)."""
    props: dict[str, Schema] = node.get("properties") or {}
    patterns: dict[str, Schema] = node.get("patternProperties") or {}
    matching = [patterns[p] for p in _matching(node, key)]
    if key in props:
        return conjoin([props[key], *matching])
    if matching:
        return conjoin(matching)
    if undecidable_patterns(node):
        return None
    return _rest(node, rest)


def _rest(node: Schema, rest: Schema | None) -> Schema:
    """The schema of the keys no property or pattern names: ``rest`` when the caller worked
    it out (``unevaluated.rest_schemas``), else ``additionalProperties``."""
    if rest is not None:
        return rest
    return node.get("additionalProperties", OPEN)  # type: ignore[no-any-return]


def conjoin(schemas: Iterable[Schema]) -> Schema:
    """One schema for the values every one of ``schemas`` accepts (``allOf`` of those that
    constrain anything; ``{}`` for none)."""
    kept = [schema for schema in schemas if not is_true(schema)]
    for schema in kept:
        if is_false(schema):
            return schema
    if not kept:
        return OPEN
    return kept[0] if len(kept) == 1 else {"allOf": kept}


def _matching(node: Schema, key: str) -> list[str]:
    """The ``patternProperties`` keys of ``node`` that run here and match ``key``."""
    out = []
    for pattern in node.get("patternProperties") or {}:
        regex = translate(pattern)
        if regex is not None and regex.search(key):
            out.append(pattern)
    return out


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
            _declared_patterns(cmp, old, new, name)
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
    # Old values under the key met ``before``; new ones meet the declaration and every new
    # pattern that matches the name. A pattern on both sides is judged as a pattern (compared
    # in depth, else the same constraint on both sides); judged here: the declaration, the
    # added and removed patterns that match, and the additionalProperties schema the key
    # leaves when no old pattern matched it.
    old_patterns: dict[str, Schema] = old.get("patternProperties") or {}
    new_patterns: dict[str, Schema] = new.get("patternProperties") or {}
    old_matching = _matching(old, name)
    gained = [new_patterns[p] for p in _matching(new, name) if p not in old_patterns]
    lost = [old_patterns[p] for p in old_matching if p not in new_patterns]
    after = value_bound(new, name)
    assert after is not None  # a declared name
    backward = cmp.subsumes(before, conjoin([schema, *gained]))
    forward = cmp.subsumes(after, conjoin(lost if old_matching else [before]))
    unknown = _maybe_matching(cmp, new, name, old_patterns, before)
    if backward and unknown:
        message = (
            f"property {name!r} added where a new patternProperties pattern that cannot be "
            f"evaluated here may apply to it ({_some_patterns(unknown)})"
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
            backward=backward,
            forward=forward,
            lenient_backward=True,
        )
    elif model == "closed":
        message = f"property {name!r} added to a closed model: old readers reject that key"
        cmp.emit(
            PROPERTY_ADDED_TO_CLOSED_MODEL,
            *where,
            message,
            backward=backward,
            forward=forward,
        )
    else:
        message = (
            f"property {name!r} added where old records were checked by additionalProperties "
            "or patternProperties"
        )
        cmp.emit(
            PROPERTY_ADDED_TO_PARTIALLY_OPEN_MODEL,
            *where,
            message,
            backward=backward,
            forward=forward,
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
    # The mirror image of ``_added``.
    old_patterns: dict[str, Schema] = old.get("patternProperties") or {}
    new_patterns: dict[str, Schema] = new.get("patternProperties") or {}
    new_matching = _matching(new, name)
    gained = [new_patterns[p] for p in new_matching if p not in old_patterns]
    lost = [old_patterns[p] for p in _matching(old, name) if p not in new_patterns]
    before = value_bound(old, name)
    assert before is not None  # a declared name
    backward = cmp.subsumes(before, conjoin(gained if new_matching else [after]))
    forward = cmp.subsumes(after, conjoin([schema, *lost]))
    unknown = _maybe_matching(cmp, old, name, new_patterns, after)
    if forward and unknown:
        message = (
            f"property {name!r} removed where an old patternProperties pattern that cannot be "
            f"evaluated here may have applied to it ({_some_patterns(unknown)})"
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
            backward=backward,
            forward=forward,
            lenient_forward=True,
        )
    elif model == "closed":
        message = f"property {name!r} removed from a closed model: new readers reject that key"
        cmp.emit(
            PROPERTY_REMOVED_FROM_CLOSED_MODEL,
            *where,
            message,
            backward=backward,
            forward=forward,
        )
    else:
        message = (
            f"property {name!r} removed; its key is now checked by additionalProperties "
            "or patternProperties"
        )
        cmp.emit(
            PROPERTY_REMOVED_FROM_PARTIALLY_OPEN_MODEL,
            *where,
            message,
            backward=backward,
            forward=forward,
        )


def _maybe_matching(
    cmp: Comparison, node: Schema, name: str, others: dict[str, Schema], bound: Schema
) -> list[str]:
    """The patterns of ``node`` beyond RE2 that the other side lacks (or holds with another
    schema) and that may constrain the value under ``name`` beyond ``bound``, which every
    value of the other side there meets: whether they match ``name`` is not known here."""
    patterns: dict[str, Schema] = node.get("patternProperties") or {}
    return [
        pattern
        for pattern in undecidable_patterns(node)
        if not (pattern in others and json_equal(others[pattern], patterns[pattern]))
        and not cmp.subsumes(bound, patterns[pattern])
    ]


def _some_patterns(patterns: list[str]) -> str:
    names = ", ".join(repr(p) for p in patterns)
    return f"{names}: lookaround, backreference or beyond RE2"


def _declared_patterns(cmp: Comparison, old: Schema, new: Schema, name: str) -> None:
    """A property declared on both sides: each pattern added (removed) that matches its name
    constrains its value (no longer does). A pattern kept on both sides is compared as a
    pattern (``_patterns``); one that cannot be evaluated here is undecided, unless every
    value of the other side meets its schema anyway."""
    old_patterns: dict[str, Schema] = old.get("patternProperties") or {}
    new_patterns: dict[str, Schema] = new.get("patternProperties") or {}
    for pattern in sorted(set(new_patterns) - set(old_patterns)):
        _declared_pattern(cmp, old, new, name, pattern, new_patterns[pattern], added=True)
    for pattern in sorted(set(old_patterns) - set(new_patterns)):
        _declared_pattern(cmp, old, new, name, pattern, old_patterns[pattern], added=False)


def _declared_pattern(
    cmp: Comparison,
    old: Schema,
    new: Schema,
    name: str,
    pattern: str,
    schema: Schema,
    *,
    added: bool,
) -> None:
    """One pattern added (or removed) beside the declared property ``name``."""
    regex = translate(pattern)
    bound = value_bound(old if added else new, name)  # the side without the pattern
    if (regex is not None and not regex.search(name)) or bound is None:
        return
    if cmp.subsumes(bound, schema):
        return  # the values there meet the pattern's schema anyway
    if added:
        rule = PATTERN_PROPERTY_ADDED
        where = (
            cmp.old_ptr(old, "properties", name),
            cmp.new_ptr(new, "patternProperties", pattern),
        )
    else:
        rule = PATTERN_PROPERTY_REMOVED
        where = (
            cmp.old_ptr(old, "patternProperties", pattern),
            cmp.new_ptr(new, "properties", name),
        )
    verb = "added" if added else "removed"
    if regex is None:
        message = (
            f"pattern {pattern!r} {verb}; whether it applie{'s' if added else 'd'} to property "
            f"{name!r} is not decided ({_some_patterns([pattern])})"
        )
        _undecided(cmp, rule, where, message)
        return
    if added:
        message = (
            f"property {name!r} matches the added pattern {pattern!r}: its value must now also "
            "meet that pattern's schema"
        )
    else:
        message = (
            f"property {name!r} matched the removed pattern {pattern!r}: its value no longer "
            "has to meet that pattern's schema"
        )
    cmp.emit(rule, *where, message, backward=not added, forward=added)


def _undecidable(node: Schema) -> str:
    return _some_patterns(undecidable_patterns(node))


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
            # A key matching an old pattern too was checked by that pattern (not by
            # additionalProperties): its values must meet this schema now as well.
            for other in _sharing(pattern, old_patterns):
                if cmp.subsumes(old_patterns[other], schema):
                    continue
                cmp.emit(
                    PATTERN_PROPERTY_ADDED,
                    cmp.old_ptr(old, "patternProperties", other),
                    cmp.new_ptr(new, "patternProperties", pattern),
                    f"keys matching both {other!r} and the added {pattern!r} (not proven "
                    f"apart) were checked by {other!r}'s schema; they must now also meet "
                    f"{pattern!r}'s",
                    backward=False,
                    forward=True,
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
            # A key matching a new pattern too is checked by that pattern alone now (not by
            # additionalProperties).
            for other in _sharing(pattern, new_patterns):
                if cmp.subsumes(new_patterns[other], schema):
                    continue
                cmp.emit(
                    PATTERN_PROPERTY_REMOVED,
                    cmp.old_ptr(old, "patternProperties", pattern),
                    cmp.new_ptr(new, "patternProperties", other),
                    f"keys matching both the removed {pattern!r} and {other!r} (not proven "
                    f"apart) had to meet {pattern!r}'s schema; they are now checked by "
                    f"{other!r}'s alone",
                    backward=True,
                    forward=False,
                )


def _sharing(pattern: str, patterns: dict[str, Schema]) -> list[str]:
    """The keys of ``patterns`` (other than ``pattern``) that may match a key ``pattern``
    matches: all but those proven apart (a pattern beyond RE2 is never proven apart)."""
    return sorted(
        other for other in patterns if other != pattern and not never_both(pattern, other)
    )


def _additional(cmp: Comparison, old: Schema, new: Schema) -> None:
    if "additionalProperties" not in old and "additionalProperties" not in new:
        return  # what unevaluatedProperties changes is the unevaluated family's
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
