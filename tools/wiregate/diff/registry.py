# ruff: noqa: E501  (a table: one rule per entry, purposes on one line)
"""The one registry of rule ids: default level, purpose and effect per direction.

Id grammar (written down in docs/rules.md): ``<subject>-<event>[-<qualifier>]``, all
lower-case kebab-case, matching ``ID_PATTERN``. The subject is a JSON Schema keyword in
kebab-case (``minLength`` -> ``min-length``, ``oneOf`` -> ``one-of``) or a named concept
(``property``, ``tuple-item``, ``nullable``, ``definition``, ``schema``, ``keyword``); the
event is one of ``EVENTS``; the qualifier narrows the context (``to-open-model``). An id,
once published, keeps its meaning forever and is never reused: a retired id stays here with
``deprecated_by`` set.

Effects: ``yes`` (always compatible in that direction), ``no`` (never), ``depends`` (decided
per change by set containment), ``lenient`` (incompatible under the strict policy,
tolerated by the lenient one), ``assertion`` (compatible while ``format`` is an annotation,
incompatible under ``format_assertion``), ``unknown`` (beyond the engine: the finding has level
``unknown`` and never fails the verdict). The default level is the level under the default mode
(``backward``) and policy (``strict``): ``unknown`` for undecided rules, ``error`` when backward
is not ``yes``, ``warning`` when only forward is not ``yes``, ``info`` otherwise. Each change's actual level follows its
actual effect under the chosen mode and policy (see ``wiregate.diff.verdict.level_for``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wiregate.diff.rules import annotations as annotation_rules
from wiregate.diff.rules import (
    arrays,
    bounds,
    composition,
    conditionals,
    definitions,
    dependencies,
    enums,
    properties,
    required,
    schema,
    strings,
    types,
    unevaluated,
)

__all__ = ["EFFECTS", "EVENTS", "ID_PATTERN", "RULES", "Rule"]

ID_PATTERN = re.compile(r"^[a-z]+(-[a-z]+)*$")
EVENTS = (
    "added",
    "removed",
    "changed",
    "widened",
    "narrowed",
    "extended",
    "tightened",
    "loosened",
    "opened",
    "closed",
    "rejects-all",
    "accepts-values-again",
)
EFFECTS = ("yes", "no", "depends", "lenient", "assertion", "unknown")


@dataclass(frozen=True)
class Rule:
    id: str
    family: str
    purpose: str
    backward: str
    forward: str
    deprecated_by: str | None = None

    @property
    def default_level(self) -> str:
        if self.backward == "unknown":
            return "unknown"
        if self.backward not in ("yes", "assertion"):
            return "error"
        return "warning" if self.forward not in ("yes", "assertion") else "info"


def _bound_rules() -> list[Rule]:
    subjects = {
        "minLength": "the minimum string length",
        "maxLength": "the maximum string length",
        "minimum": "the inclusive minimum",
        "maximum": "the inclusive maximum",
        "exclusiveMinimum": "the exclusive minimum",
        "exclusiveMaximum": "the exclusive maximum",
        "minItems": "the minimum array length",
        "maxItems": "the maximum array length",
        "minProperties": "the minimum number of object members",
        "maxProperties": "the maximum number of object members",
        "minContains": "the minimum number of items matching contains",
        "maxContains": "the maximum number of items matching contains",
    }
    rules = []
    for keyword, what in subjects.items():
        added, removed, tightened, loosened = bounds.bound_ids(keyword)
        if keyword == "minContains":  # 1 when absent: adding 0 loosens, removing 0 tightens
            rules += [
                Rule(
                    added,
                    "bounds",
                    f"{keyword} added: {what} is no longer 1 (its default while contains applies).",
                    "depends",
                    "depends",
                ),
                Rule(
                    removed,
                    "bounds",
                    f"{keyword} removed: {what} is 1 again (its default while contains applies).",
                    "depends",
                    "depends",
                ),
                Rule(tightened, "bounds", f"{keyword} changed to admit fewer values.", "no", "yes"),
                Rule(loosened, "bounds", f"{keyword} changed to admit more values.", "yes", "no"),
            ]
            continue
        rules += [
            Rule(added, "bounds", f"{keyword} added: {what} now limits values.", "no", "yes"),
            Rule(removed, "bounds", f"{keyword} removed: {what} no longer applies.", "yes", "no"),
            Rule(tightened, "bounds", f"{keyword} changed to admit fewer values.", "no", "yes"),
            Rule(loosened, "bounds", f"{keyword} changed to admit more values.", "yes", "no"),
        ]
    return rules


RULES: tuple[Rule, ...] = (
    # types
    Rule(
        types.TYPE_WIDENED,
        "types",
        "The accepted JSON types grew (integer -> number, a type added to the list, type removed).",
        "yes",
        "no",
    ),
    Rule(
        types.TYPE_NARROWED,
        "types",
        "The accepted JSON types shrank (number -> integer, a type dropped, type added).",
        "no",
        "yes",
    ),
    Rule(
        types.TYPE_CHANGED,
        "types",
        "The accepted JSON types changed so that neither side contains the other.",
        "no",
        "no",
    ),
    Rule(types.NULLABLE_ADDED, "types", "null became an accepted value.", "yes", "no"),
    Rule(types.NULLABLE_REMOVED, "types", "null is no longer an accepted value.", "no", "yes"),
    # enum and const
    Rule(enums.ENUM_ADDED, "enums", "An enum now limits the accepted values.", "depends", "yes"),
    Rule(
        enums.ENUM_REMOVED,
        "enums",
        "The enum that limited the accepted values was removed.",
        "yes",
        "depends",
    ),
    Rule(enums.ENUM_EXTENDED, "enums", "Values were added to an enum.", "yes", "no"),
    Rule(enums.ENUM_NARROWED, "enums", "Values were removed from an enum.", "no", "yes"),
    Rule(
        enums.ENUM_CHANGED,
        "enums",
        "Values were both added to and removed from an enum.",
        "no",
        "no",
    ),
    Rule(enums.CONST_ADDED, "enums", "A const now fixes the accepted value.", "depends", "yes"),
    Rule(
        enums.CONST_REMOVED,
        "enums",
        "The const that fixed the accepted value was removed.",
        "yes",
        "depends",
    ),
    Rule(enums.CONST_CHANGED, "enums", "The const value changed.", "no", "no"),
    # required
    Rule(required.REQUIRED_ADDED, "required", "A property became required.", "no", "yes"),
    Rule(required.REQUIRED_REMOVED, "required", "A property is no longer required.", "yes", "no"),
    # dependentRequired and dependentSchemas
    Rule(
        dependencies.DEPENDENT_REQUIRED_ADDED,
        "dependencies",
        "A property got a dependentRequired entry: objects holding it must hold the listed names (compatible backward when the old schema required them anyway).",
        "depends",
        "yes",
    ),
    Rule(
        dependencies.DEPENDENT_REQUIRED_REMOVED,
        "dependencies",
        "A property's dependentRequired entry was removed: objects holding it no longer have to hold the listed names (compatible forward when the new schema requires them anyway).",
        "yes",
        "depends",
    ),
    Rule(
        dependencies.DEPENDENT_REQUIRED_EXTENDED,
        "dependencies",
        "Names were added to a property's dependentRequired entry: objects holding it must hold them too.",
        "depends",
        "yes",
    ),
    Rule(
        dependencies.DEPENDENT_REQUIRED_NARROWED,
        "dependencies",
        "Names were removed from a property's dependentRequired entry: objects holding it no longer have to hold them.",
        "yes",
        "depends",
    ),
    Rule(
        dependencies.DEPENDENT_SCHEMA_ADDED,
        "dependencies",
        "A property got a dependentSchemas entry: objects holding it must match that schema (compatible backward when every old value provably does).",
        "depends",
        "yes",
    ),
    Rule(
        dependencies.DEPENDENT_SCHEMA_REMOVED,
        "dependencies",
        "A property's dependentSchemas entry was removed: objects holding it no longer have to match that schema. A changed entry is compared in depth.",
        "yes",
        "depends",
    ),
    # properties
    Rule(
        properties.PROPERTY_ADDED_TO_OPEN_MODEL,
        "properties",
        "A property was declared where any value was accepted under that key (additionalProperties absent or true).",
        "lenient",
        "yes",
    ),
    Rule(
        properties.PROPERTY_ADDED_TO_CLOSED_MODEL,
        "properties",
        "A property was declared where its key was rejected (additionalProperties false).",
        "yes",
        "no",
    ),
    Rule(
        properties.PROPERTY_ADDED_TO_PARTIALLY_OPEN_MODEL,
        "properties",
        "A property was declared where its key was checked by an additionalProperties or patternProperties schema.",
        "depends",
        "depends",
    ),
    Rule(
        properties.PROPERTY_REMOVED_FROM_OPEN_MODEL,
        "properties",
        "A property declaration was removed; any value is now accepted under that key.",
        "yes",
        "lenient",
    ),
    Rule(
        properties.PROPERTY_REMOVED_FROM_CLOSED_MODEL,
        "properties",
        "A property was removed from a closed model: its key is now rejected.",
        "no",
        "yes",
    ),
    Rule(
        properties.PROPERTY_REMOVED_FROM_PARTIALLY_OPEN_MODEL,
        "properties",
        "A property declaration was removed; its key is now checked by an additionalProperties or patternProperties schema.",
        "depends",
        "depends",
    ),
    Rule(
        properties.PROPERTY_WIDENED,
        "properties",
        "A property's schema was replaced by one that provably accepts every value it accepted, and more (X -> anyOf [X, Y]): one finding, not the differences inside X.",
        "yes",
        "no",
    ),
    Rule(
        properties.PROPERTY_NARROWED,
        "properties",
        "A property's schema was replaced by one that provably accepts only some of the values it accepted (anyOf [X, Y] -> X): one finding, not the differences inside X.",
        "no",
        "yes",
    ),
    Rule(
        properties.ADDITIONAL_PROPERTIES_CLOSED,
        "properties",
        "additionalProperties became false: undeclared keys are rejected.",
        "lenient",
        "yes",
    ),
    Rule(
        properties.ADDITIONAL_PROPERTIES_OPENED,
        "properties",
        "additionalProperties was false and now accepts undeclared keys.",
        "yes",
        "no",
    ),
    Rule(
        properties.ADDITIONAL_PROPERTIES_NARROWED,
        "properties",
        "Undeclared keys, accepted with any value before, must now match an additionalProperties schema, or its schema was replaced by one that provably accepts only some of the values it accepted.",
        "no",
        "yes",
    ),
    Rule(
        properties.ADDITIONAL_PROPERTIES_WIDENED,
        "properties",
        "Undeclared keys no longer have to match the additionalProperties schema, or its schema was replaced by one that provably accepts every value it accepted, and more.",
        "yes",
        "no",
    ),
    Rule(
        properties.PATTERN_PROPERTY_ADDED,
        "properties",
        "A patternProperties entry was added: every key it matches gets its schema, declared properties and keys another pattern matches too (one finding for the undeclared keys, one per declared name and per other pattern whose values it constrains further; a pattern beyond RE2 over a declared name is undecided).",
        "depends",
        "depends",
    ),
    Rule(
        properties.PATTERN_PROPERTY_REMOVED,
        "properties",
        "A patternProperties entry was removed: keys it matched no longer have to meet its schema (undeclared keys fall back to the other matching patterns, else additionalProperties; one finding for the undeclared keys, one per declared name and per other pattern that constrains them less; a pattern beyond RE2 over a declared name is undecided).",
        "depends",
        "depends",
    ),
    Rule(
        properties.PROPERTY_NAMES_ADDED,
        "properties",
        "propertyNames now constrains the keys of an object (compatible when every string meets it; a changed propertyNames is compared in depth).",
        "depends",
        "yes",
    ),
    Rule(
        properties.PROPERTY_NAMES_REMOVED,
        "properties",
        "propertyNames no longer constrains the keys of an object (compatible forward when every string met it).",
        "yes",
        "depends",
    ),
    # arrays
    Rule(
        arrays.ITEMS_ADDED,
        "arrays",
        "An items schema now checks the array items (after any tuple prefix).",
        "no",
        "yes",
    ),
    Rule(
        arrays.ITEMS_REMOVED,
        "arrays",
        "The items schema no longer checks the array items.",
        "yes",
        "no",
    ),
    Rule(
        arrays.ITEMS_WIDENED,
        "arrays",
        "The items schema was replaced by one that provably accepts every item it accepted, and more (X -> anyOf [X, Y]): one finding, not the differences inside X.",
        "yes",
        "no",
    ),
    Rule(
        arrays.ITEMS_NARROWED,
        "arrays",
        "The items schema was replaced by one that provably accepts only some of the items it accepted (anyOf [X, Y] -> X): one finding, not the differences inside X.",
        "no",
        "yes",
    ),
    Rule(
        arrays.TUPLE_ITEM_ADDED,
        "arrays",
        "A tuple position got its own schema (prefixItems, or draft-07 array-form items).",
        "depends",
        "depends",
    ),
    Rule(
        arrays.TUPLE_ITEM_REMOVED,
        "arrays",
        "A tuple position lost its own schema and falls back to items.",
        "depends",
        "depends",
    ),
    Rule(
        arrays.CONTAINS_ADDED,
        "arrays",
        "Arrays must now contain an item matching contains (with the minContains/maxContains next to it; compatible backward only when minContains is 0 and there is no maxContains).",
        "depends",
        "yes",
    ),
    Rule(
        arrays.CONTAINS_REMOVED,
        "arrays",
        "Arrays no longer have to contain an item matching contains.",
        "yes",
        "depends",
    ),
    Rule(
        arrays.CONTAINS_CHANGED,
        "arrays",
        "contains changed where maxContains bounds the matching items: a wider contains can reject arrays with too many matches, so the change is not decided (without maxContains, contains is compared in depth).",
        "unknown",
        "unknown",
    ),
    # unevaluatedProperties and unevaluatedItems
    Rule(
        unevaluated.UNEVALUATED_PROPERTIES_ADDED,
        "unevaluated",
        "unevaluatedProperties was added: judged like additionalProperties when no in-place applicator (allOf, anyOf, oneOf, if/then/else, dependentSchemas, a reference) can evaluate keys, undecided otherwise.",
        "depends",
        "depends",
    ),
    Rule(
        unevaluated.UNEVALUATED_PROPERTIES_REMOVED,
        "unevaluated",
        "unevaluatedProperties was removed (judged as when added).",
        "depends",
        "depends",
    ),
    Rule(
        unevaluated.UNEVALUATED_PROPERTIES_CHANGED,
        "unevaluated",
        "unevaluatedProperties changed where it has no effect on one side (additionalProperties evaluates every key), or next to in-place applicators (undecided); otherwise the two schemas are compared in depth.",
        "depends",
        "depends",
    ),
    Rule(
        unevaluated.UNEVALUATED_PROPERTIES_REACH_CHANGED,
        "unevaluated",
        "unevaluatedProperties is the same, but the keywords beside it that evaluate keys changed next to an in-place applicator, so which keys it checks is not decided; without applicators it checks what additionalProperties would, and the property rules judge such changes with it.",
        "unknown",
        "unknown",
    ),
    Rule(
        unevaluated.UNEVALUATED_ITEMS_ADDED,
        "unevaluated",
        "unevaluatedItems was added: judged like items when no in-place applicator or contains can evaluate items and the tuple prefix is unchanged, undecided otherwise.",
        "depends",
        "depends",
    ),
    Rule(
        unevaluated.UNEVALUATED_ITEMS_REMOVED,
        "unevaluated",
        "unevaluatedItems was removed (judged as when added).",
        "depends",
        "depends",
    ),
    Rule(
        unevaluated.UNEVALUATED_ITEMS_CHANGED,
        "unevaluated",
        "unevaluatedItems changed where it has no effect on one side (items evaluates every item), or where which items it checks is not known (undecided); otherwise the two schemas are compared in depth.",
        "depends",
        "depends",
    ),
    Rule(
        unevaluated.UNEVALUATED_ITEMS_REACH_CHANGED,
        "unevaluated",
        "unevaluatedItems is the same, but the keywords beside it that evaluate items changed next to contains or an in-place applicator, so which items it checks is not decided; without them it checks what items would, and the array rules judge such changes with it.",
        "unknown",
        "unknown",
    ),
    # bounds
    *_bound_rules(),
    Rule(bounds.MULTIPLE_OF_ADDED, "bounds", "multipleOf now restricts numbers.", "no", "yes"),
    Rule(
        bounds.MULTIPLE_OF_REMOVED, "bounds", "multipleOf no longer restricts numbers.", "yes", "no"
    ),
    Rule(
        bounds.MULTIPLE_OF_TIGHTENED,
        "bounds",
        "multipleOf became a multiple of the old step (fewer numbers).",
        "no",
        "yes",
    ),
    Rule(
        bounds.MULTIPLE_OF_LOOSENED,
        "bounds",
        "multipleOf became a divisor of the old step (more numbers).",
        "yes",
        "no",
    ),
    Rule(
        bounds.MULTIPLE_OF_CHANGED,
        "bounds",
        "multipleOf changed to a step neither dividing nor multiplying the old one; or to one that does, where a step is a decimal no double holds (0.1): validators divide in floating point and disagree on its multiples, so the change is not decided.",
        "depends",
        "depends",
    ),
    Rule(bounds.UNIQUE_ITEMS_ADDED, "bounds", "Arrays must no longer repeat items.", "no", "yes"),
    Rule(bounds.UNIQUE_ITEMS_REMOVED, "bounds", "Arrays may repeat items again.", "yes", "no"),
    # strings
    Rule(
        strings.PATTERN_ADDED,
        "strings",
        "Strings must now match a regular expression.",
        "no",
        "yes",
    ),
    Rule(
        strings.PATTERN_REMOVED,
        "strings",
        "Strings no longer have to match a regular expression.",
        "yes",
        "no",
    ),
    Rule(
        strings.PATTERN_CHANGED,
        "strings",
        "The regular expression changed: a direction is compatible where one pattern provably accepts every string the other does (same shape, wider character sets and repeat counts); level unknown for a pattern beyond RE2.",
        "depends",
        "depends",
    ),
    Rule(
        strings.FORMAT_ADDED,
        "strings",
        "A format was added: an annotation (info) unless --format-assertion, which makes it a constraint strings must now meet.",
        "assertion",
        "yes",
    ),
    Rule(
        strings.FORMAT_REMOVED,
        "strings",
        "A format was removed: an annotation (info) unless --format-assertion, under which strings no longer have to meet it.",
        "yes",
        "assertion",
    ),
    Rule(
        strings.FORMAT_CHANGED,
        "strings",
        "The format changed: an annotation (info) unless --format-assertion, under which containment of formats is not decided (treated as incompatible).",
        "assertion",
        "assertion",
    ),
    # composition
    Rule(
        composition.ONE_OF_ADDED,
        "composition",
        "A oneOf now applies: values must match exactly one member.",
        "depends",
        "depends",
    ),
    Rule(
        composition.ONE_OF_REMOVED,
        "composition",
        "The oneOf no longer applies.",
        "depends",
        "depends",
    ),
    Rule(
        composition.ONE_OF_MEMBER_ADDED,
        "composition",
        "A oneOf member was added: more values are accepted, but a value matching it and another member is rejected (compatible when the member is provably disjoint from the others; the lenient policy tolerates overlap through undeclared keys).",
        "depends",
        "depends",
    ),
    Rule(
        composition.ONE_OF_OVERLAP_ADDED,
        "composition",
        "A oneOf member changed so that it now overlaps another member: a value matching both is rejected, although one member alone accepted it before (incompatible unless the member is provably disjoint from the others, whether or not the overlap is proven; the message says 'may now overlap' where it is not; the lenient policy tolerates overlap through undeclared keys).",
        "depends",
        "yes",
    ),
    Rule(
        composition.ONE_OF_OVERLAP_REMOVED,
        "composition",
        "A oneOf member changed so that it is now provably disjoint from the others: a value that matched it and another member, rejected before, is accepted (incompatible forward whether or not the old overlap is proven; the message says 'may have overlapped' where it is not).",
        "yes",
        "depends",
    ),
    Rule(
        composition.ONE_OF_OVERLAP_CHANGED,
        "composition",
        "A oneOf member changed while it may overlap another member on both sides: a value matching two members is rejected, so a value the member gained may now be rejected and one it lost may now be accepted; the directions its own findings grant (judged as if the oneOf were an anyOf) are not granted for the oneOf. Where the members are open record types (each declares properties) that share values only through undeclared keys (a value carrying every field of two of them is a record of neither), this is deliberately not reported, in either policy: every edit of such a record type would be a break. Other overlap through undeclared keys the lenient policy tolerates.",
        "depends",
        "depends",
    ),
    Rule(
        composition.ONE_OF_DUPLICATE_ADDED,
        "composition",
        "A oneOf member is now written twice (or more): a value matching it matches two members and is rejected (compatible only where no old value matching it was valid: it accepts nothing, or lies inside another old member).",
        "depends",
        "yes",
    ),
    Rule(
        composition.ONE_OF_DUPLICATE_REMOVED,
        "composition",
        "A oneOf member written twice (or more) is written once now, or is gone: a value matching it, rejected before, may be accepted (compatible forward only where no new value matching it is valid).",
        "yes",
        "depends",
    ),
    Rule(
        composition.ONE_OF_MEMBER_REMOVED,
        "composition",
        "A oneOf member was removed: its values are rejected unless another member accepts them, and values that matched it and another member become valid.",
        "depends",
        "depends",
    ),
    Rule(
        composition.ANY_OF_ADDED,
        "composition",
        "An anyOf now applies: values must match a member.",
        "depends",
        "depends",
    ),
    Rule(
        composition.ANY_OF_REMOVED,
        "composition",
        "The anyOf no longer applies.",
        "depends",
        "depends",
    ),
    Rule(
        composition.ANY_OF_MEMBER_ADDED,
        "composition",
        "An anyOf member was added: more values are accepted.",
        "yes",
        "depends",
    ),
    Rule(
        composition.ANY_OF_MEMBER_REMOVED,
        "composition",
        "An anyOf member was removed: its values are rejected unless another member accepts them.",
        "depends",
        "yes",
    ),
    Rule(
        composition.ALL_OF_ADDED,
        "composition",
        "An allOf now applies: values must match every member.",
        "depends",
        "yes",
    ),
    Rule(
        composition.ALL_OF_REMOVED, "composition", "The allOf no longer applies.", "yes", "depends"
    ),
    Rule(
        composition.ALL_OF_MEMBER_ADDED,
        "composition",
        "An allOf member was added: values must also match it.",
        "depends",
        "yes",
    ),
    Rule(
        composition.ALL_OF_MEMBER_REMOVED,
        "composition",
        "An allOf member was removed: values no longer have to match it.",
        "yes",
        "depends",
    ),
    Rule(
        composition.NOT_ADDED,
        "composition",
        "A not schema now rejects the values it matches.",
        "no",
        "yes",
    ),
    Rule(
        composition.NOT_REMOVED,
        "composition",
        "The not schema no longer rejects values.",
        "yes",
        "no",
    ),
    # if/then/else
    Rule(
        conditionals.IF_ADDED,
        "conditionals",
        "An if/then/else now applies: values must meet the branch they take (compatible backward when every old value provably meets it).",
        "depends",
        "yes",
    ),
    Rule(
        conditionals.IF_REMOVED,
        "conditionals",
        "The if/then/else no longer applies.",
        "yes",
        "depends",
    ),
    Rule(
        conditionals.IF_CHANGED,
        "conditionals",
        "The if schema of a conditional changed: which values take which branch is not decided (with the same if, then and else are compared in depth).",
        "unknown",
        "unknown",
    ),
    Rule(
        conditionals.THEN_ADDED,
        "conditionals",
        "The same if got a then schema: values matching if must now match it.",
        "depends",
        "yes",
    ),
    Rule(
        conditionals.THEN_REMOVED,
        "conditionals",
        "The then schema was removed: values matching if no longer have to match it.",
        "yes",
        "depends",
    ),
    Rule(
        conditionals.ELSE_ADDED,
        "conditionals",
        "The same if got an else schema: values not matching if must now match it.",
        "depends",
        "yes",
    ),
    Rule(
        conditionals.ELSE_REMOVED,
        "conditionals",
        "The else schema was removed: values not matching if no longer have to match it.",
        "yes",
        "depends",
    ),
    # whole schemas
    Rule(
        schema.SCHEMA_REJECTS_ALL,
        "schema",
        'The schema became false (or {"not": {}}): it rejects every value.',
        "no",
        "yes",
    ),
    Rule(
        schema.SCHEMA_ACCEPTS_VALUES_AGAIN,
        "schema",
        "The schema rejected every value and now accepts some.",
        "yes",
        "no",
    ),
    Rule(
        schema.KEYWORD_CHANGED,
        "schema",
        "Retired: a keyword that no rule judged changed, assumed incompatible both ways. Every keyword of draft-07 and 2020-12 is judged now; other keywords are annotations.",
        "no",
        "no",
        deprecated_by=schema.UNKNOWN_KEYWORD_CHANGED,
    ),
    Rule(
        schema.UNKNOWN_KEYWORD_CHANGED,
        "schema",
        "A keyword JSON Schema does not define (OpenAPI's nullable or discriminator, tsType, a misspelt minimun) was added, removed or changed: validators ignore it, so it is an annotation. x-* extensions are annotation-changed.",
        "yes",
        "yes",
    ),
    Rule(
        schema.REF_CHANGED,
        "schema",
        "A recursive $ref (or a $dynamicRef/$recursiveRef) differs from the other side: recursive schemas are compared where they are defined, but whether this position accepts the same values is not decided.",
        "unknown",
        "unknown",
    ),
    # definitions
    Rule(
        definitions.DEFINITION_ADDED,
        "definitions",
        "A $defs entry was added. One that something in the document references (the root or another entry, directly or through other entries) is a building block judged where the references are (compatible both ways by itself); one that nothing references is a new record type validated by name, which old readers reject (forward incompatible). Entries in a reference cycle that nothing outside the cycle references are record types too.",
        "yes",
        "depends",
    ),
    Rule(
        definitions.DEFINITION_REMOVED,
        "definitions",
        "A $defs entry was removed. One that something in the old document referenced (the root or another entry, directly or through other entries) was a building block judged where the references were (compatible both ways by itself); one that nothing referenced is a record type validated by name, so every record validated by that name is now rejected (backward incompatible), at least as breaking as changing it. Entries in a reference cycle that nothing outside the cycle referenced were record types too.",
        "depends",
        "yes",
    ),
    # annotations
    Rule(
        annotation_rules.TITLE_CHANGED,
        "annotations",
        "title added, removed or changed.",
        "yes",
        "yes",
    ),
    Rule(
        annotation_rules.DESCRIPTION_CHANGED,
        "annotations",
        "description added, removed or changed.",
        "yes",
        "yes",
    ),
    Rule(
        annotation_rules.EXAMPLES_CHANGED,
        "annotations",
        "examples added, removed or changed.",
        "yes",
        "yes",
    ),
    Rule(
        annotation_rules.COMMENT_CHANGED,
        "annotations",
        "$comment added, removed or changed.",
        "yes",
        "yes",
    ),
    Rule(
        annotation_rules.DEFAULT_CHANGED,
        "annotations",
        "default added, removed or changed (validation ignores it; readers that fill defaults see a different value).",
        "yes",
        "yes",
    ),
    Rule(
        annotation_rules.ANNOTATION_CHANGED,
        "annotations",
        "Another annotation changed ($schema, $id, $anchor, deprecated, readOnly, writeOnly, contentMediaType, contentEncoding, contentSchema, x-* extensions).",
        "yes",
        "yes",
    ),
)

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
