"""Generate docs/rules.md from the rule registry and the golden fixtures.

Run ``python tests/diff/rules_doc.py`` after adding or changing a rule; a test fails while the
committed file differs from what this produces.
"""

from __future__ import annotations

import json
from pathlib import Path

from wiregate.diff.registry import EVENTS, RULES

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
DOC = REPO_ROOT / "docs" / "rules.md"

EFFECT = {
    "yes": "compatible",
    "no": "incompatible",
    "depends": "decided per change by set containment",
    "lenient": "incompatible under `strict`, tolerated under `lenient`",
    "assertion": "compatible (an annotation); incompatible with `--format-assertion`",
    "unknown": "not decided: level `unknown`, never counted against the verdict",
}

HEADER = """\
# Schema diff rules

`wiregate diff` explains every difference between two JSON Schemas as findings. Each finding
has a stable rule id, a JSON pointer into the old and the new document, a message, a level,
and its effect in each direction:

- **backward**: the new schema still accepts every value the old one accepted (consumers can
  upgrade first; old records remain readable).
- **forward**: the old schema accepts every value the new one accepts (producers can upgrade
  first; old readers accept new records).

Before comparing, both documents are normalised, so none of these is ever a finding: key
order and whitespace, the order of `required`, `enum` and `oneOf`/`anyOf`/`allOf` members,
`type: "x"` vs `["x"]`, a `$ref` to a definition vs the same schema inline, draft-07
`definitions` vs 2020-12 `$defs`, draft-07 `dependencies` vs `dependentRequired` (array form)
and `dependentSchemas` (schema form), draft-07 array-form `items`/`additionalItems` vs
`prefixItems`/`items`, `true` vs `{}`, `false` vs `{"not": {}}`, and keywords that constrain
nothing (`additionalProperties: true`, `uniqueItems: false`, a `pattern` such as `a*` that
matches every string), and Pydantic's `Optional[X]` (`{"anyOf": [X, {"type": "null"}]}`) vs
X with `"null"` in its `type`. Pointers use the normalised spelling (`$defs`,
`dependentRequired`, `dependentSchemas`, `prefixItems`). A `oneOf` member written twice (the
same schema after normalisation) is not one member, though: a value matching it matches two
members and is rejected (`one-of-duplicate-added`, `one-of-duplicate-removed`).

Each document is read under one JSON Schema draft: the one its `$schema` names (draft-04,
draft-06, draft-07, 2019-09, 2020-12); without one (or with one jsonschema does not know), the
one its keywords show: array-form `items`, `additionalItems`, `definitions`, `dependencies`
mean draft-07, `prefixItems`, `$defs`, `dependentRequired`, `dependentSchemas`, `$dynamicRef`
mean 2020-12, `$recursiveRef`/`$recursiveAnchor` 2019-09 and a boolean `exclusiveMinimum`
draft-04; forms that fit only 2019-09 together (`$defs` with array-form `items`) mean
2019-09; no such form, or forms no one draft has (mixed signals), mean 2020-12.
`wiregate diff --draft 4|6|7|2019-09|2020-12` forces one for both documents. The report says
which draft each document was read under and why. Each draft's forms are normalised to the
2020-12 model, so a draft-07 copy compares cleanly with a 2020-12 contract: under draft-04/06/07
a `$ref` ignores its sibling keywords, draft-04's boolean `exclusiveMinimum`/`exclusiveMaximum`
become the numeric form, 2019-09's `$recursiveRef: "#"` is a `$ref` to the document root (any
other use is a load error), and a keyword the draft does not have (`dependencies` or
`additionalItems` under 2020-12, `prefixItems` under draft-07) constrains nothing, as that
draft's validators ignore it. `$schema` itself is not compared.

Each document is first checked against the metaschema of its draft: a keyword whose value has
the wrong shape (`"enum": 5`, `"type": "strin"`, array-form `items` under 2020-12, a `pattern`
that is no regex) is a load error naming the source and the JSON pointer of the keyword.

Local `$ref`s are resolved (recursive schemas terminate); a remote `$ref` is never fetched
and is a load error, like a reference chain that never reaches a schema (a cyclic `$ref`).
When both documents are compared at their roots, a `$defs` entry that the root does not
reference is compared as a schema of its own (a record type validated by name, as `wiregate
validate --record NAME` does): removing one is backward incompatible (every record validated
by that name is rejected, at least as breaking as changing it) and adding one forward
incompatible (old readers reject the name). Adding or removing an entry that the root
references changes nothing by itself: the references are judged where they are.

Every applicator and validation keyword of draft-07 and 2020-12 has a rule family below.
Annotations never change which values are accepted (info): `title`, `description`,
`examples`, `$comment`, `default`, `deprecated`, `readOnly`, `writeOnly`, `contentMediaType`,
`contentEncoding`, `contentSchema`, `$schema`, `$id`, `$anchor`, `x-*` extensions, and
`format`, which draft 2020-12 makes an annotation unless the format-assertion vocabulary is
on: `--format-assertion` (library: `diff(..., format_assertion=True)`) judges it as a
constraint instead. A keyword JSON Schema does not define (OpenAPI's `nullable` or
`discriminator`, `tsType`, a misspelling such as `minimun`) is ignored by validators, so its
change is the annotation `unknown-keyword-changed`, shown with its raw differences (a
misspelt keyword constrains nothing, which the message makes visible). Nothing is "assumed
incompatible": a construct beyond the engine (a changed `if`, `unevaluatedProperties` next to
`allOf`/`anyOf`/`oneOf`/`if`, `contains` changed under `maxContains`, a recursive or dynamic
reference that differs) is a finding of level **unknown**. The id that used to say so,
`keyword-changed`, is retired (it stays below, replaced by `unknown-keyword-changed`; undecided
references are `ref-changed`), because its published meaning was "incompatible both ways".

Regular expressions (`pattern`, `patternProperties` keys) are ECMA-262 and are never run by
a backtracking engine: they are translated to RE2 and run in linear time, so `^(a+)+$`
against a key `aaa...ab` is answered at once. Constructs RE2 lacks (lookahead, lookbehind,
backreferences) cannot be evaluated here: whether such a `patternProperties` key matches a
property name is not decided, and the finding claims neither direction. Every diff has a
budget of 50,000 schema nodes (resolving references, comparing, probing containment) and a
time limit of 10 s (`--time-limit`); a pair beyond either is a load error naming the
documents (`<old> vs <new>: comparison exceeded its budget of 50,000 schema nodes (schemas
too large or too recursive to compare)`).

## How a direction is decided: set containment

Each rule judges the keywords it owns, and a direction it cannot grant on its own is then
decided by set containment of the two schemas' instance sets, in context: a keyword's change
is backward compatible when every value the whole old schema accepts meets the new keyword
(forward: every value of the new schema meets the old keyword). So `pattern
"^[0-9a-f]{16}$"` replaced by `minLength: 1` is backward compatible (every such string has
16 or 17 characters: the anchors `^...$` bound the length, and `$` may match before a final
newline), a range `{minimum: 0, maximum: 10}` replaced by `enum [0, 1, 2]` is forward
compatible, `oneOf` of provably disjoint members is the same set as `anyOf` of them, and
`allOf [A, B]` compares equal to the merged schema.

Containment is decided over a normal form: each schema is split by JSON type into atoms
(null; booleans; numbers: range, integer-ness, `multipleOf`, finite values; strings: length
bounds, patterns with their least and greatest match length, formats, finite values; objects
and arrays, judged by the rules above), `allOf` intersects atoms, `anyOf` (and `oneOf` with
provably disjoint members) unites them, `enum`/`const` keep the listed values each atom
admits. An atom with few values is compared value by value: a bounded range of integers or
of multiples of a `multipleOf` that validators divide by exactly (a power of two below one,
such as 0.5: `{multipleOf: 0.5, minimum: 0, maximum: 1}` is `enum [0, 0.5, 1]`), and strings
of length 0 (`maxLength: 0` is `const ""`). Objects and arrays are also compared by how many
properties (items) their keywords allow: `minItems: 1` is `contains: {}`, `required: ["a"]`
implies `minProperties: 1`, and `items: false`, `propertyNames: false`, `maxItems: 0`,
`maxProperties: 0` all admit only the empty array (object). A direction is only ever granted
when proven; a schema beyond this fragment (`not`, `if`/`then`/`else`, a pattern whose match
length is unknown) is never assumed compatible.

When a subschema is replaced as a whole, by a union with the old schema as a member or the
reverse (`items: X` -> `items: anyOf [X, Y]`), and one provably contains the other, the
change is one finding at that keyword (`items-widened`, `property-narrowed`, ...), not the
differences inside `X`.

## Root changes

Each finding names its root change: the pointer in each document where the edit behind it
was made (`--format json`: `"root": {"old_pointer", "new_pointer"}`). It is the finding's own
pointers, except under a schema that the two documents hold at different places (a `$ref`
retargeted, a reference replaced by a schema written inline): every finding below shares the
place that holds it in each document.

## Levels

The level follows the effect under the chosen `--mode` and `--policy`: **error** when the
change is incompatible in a direction the mode requires, **warning** when it is compatible
under the mode but not in the other direction (or only because the lenient policy tolerates
it), **unknown** when the engine cannot decide it (its `backward`/`forward` are `true`, so it
never fails the verdict; the message says what is undecided), **info** when it is compatible
both ways. The default level below is the level under the defaults (`--mode backward
--policy strict`).

## Witnesses

Every change at level **error** carries a witness: one concrete JSON value that shows the
break, checked with the reference validator (`jsonschema`, the draft of each document) against
both documents as given before it is reported. A backward witness is valid under the old
schema and invalid under the new one; a forward witness the reverse (under `--mode full`, the
backward one when both directions break). For a finding inside a `$defs` entry compared on its
own, and for an added or removed record type, the witness is a value of that entry (a
definition that does not exist accepts nothing). The search starts at the finding's pointer:
the accepting side's schema there is located together with the path of keys and indexes that
leads to it, values are generated that this schema accepts and the other side's schema there
may reject (bound values, values of a removed type, enum values on one side only, an object
without a newly required name or with a key the other side forbids, ...), and each is embedded
into a minimal valid value of the whole schema. `wiregate diff --format json` gives each
change `"witness": {"direction": "backward"|"forward", "instance": ...}` (`null` when the
change breaks nothing under the mode); the text format shows it with `--verbose`, indented
under the change. The search is bounded (a few hundred validator calls per finding); a break
for which no value can exist (the change is only apparent, e.g. a change inside a schema that
accepts no value at all) keeps its level with `"witness": null`, and the tests treat every
such case on the golden pairs, the Karapace cases and the real revisions as a bug to fix.

## Policies

- `strict` (default): set semantics. Whatever the old schema accepted must still be accepted.
- `lenient`: as schema registries do, assume records carry no undeclared keys. A typed
  optional property added to an open content model, and closing `additionalProperties`, are
  tolerated in the backward direction; a property removed from an open model in the forward
  direction; and `oneOf` members that overlap only through undeclared keys of open models
  count as disjoint. A tolerated
  change says `tolerated_by: "lenient"`. (Open record types, members that each declare
  properties, sharing values only through such keys: a member changed among them gets no
  `one-of-overlap-changed` in either policy; it is judged on its own.)

## Rule ids

Grammar: `<subject>-<event>[-<qualifier>]`, lower-case kebab-case (`^[a-z]+(-[a-z]+)*$`).
The subject is a JSON Schema keyword in kebab-case (`minLength` -> `min-length`, `oneOf` ->
`one-of`) or a named concept (`property`, `tuple-item`, `nullable`, `definition`, `schema`,
`keyword`, `unknown-keyword`, `ref`; `dependent-schema` is one `dependentSchemas` entry). The event is one of: @EVENTS@. The qualifier narrows the context
(`to-open-model`, `from-closed-model`). A published id keeps its meaning and is never reused;
a retired id stays in the registry as deprecated, naming its replacement.

To add a rule: put its id constant at the top of its family module in
`tools/wiregate/diff/rules/`, emit it from the family's `check`, register it in
`tools/wiregate/diff/registry.py`, add `tests/diff/golden/<id>/{base,revision,expected}.json`,
run `python tests/diff/rules_doc.py`, and update the pinned id list in
`tests/diff/test_rules.py`.

@COUNT@ rules:

"""


def render() -> str:
    events = ", ".join(f"`{event}`" for event in EVENTS)
    parts = [HEADER.replace("@EVENTS@", events).replace("@COUNT@", str(len(RULES)))]
    family = None
    for rule in RULES:
        if rule.family != family:
            family = rule.family
            parts.append(f"### Family `{family}` (`rules/{family}.py`)\n\n")
        if rule.deprecated_by is not None:
            parts.append(
                f"#### `{rule.id}`\n\n"
                f"{rule.purpose}\n\n"
                f"- Deprecated: replaced by `{rule.deprecated_by}`; never reported.\n\n"
            )
            continue
        golden = GOLDEN / rule.id
        base = json.loads((golden / "base.json").read_text(encoding="utf-8"))
        revision = json.loads((golden / "revision.json").read_text(encoding="utf-8"))
        expected = json.loads((golden / "expected.json").read_text(encoding="utf-8"))
        finding = next(c for c in expected["changes"] if c["id"] == rule.id)
        parts.append(
            f"#### `{rule.id}`\n\n"
            f"{rule.purpose}\n\n"
            f"- Default level: {rule.default_level}\n"
            f"- Backward: {EFFECT[rule.backward]}\n"
            f"- Forward: {EFFECT[rule.forward]}\n"
            f"- Example: `{json.dumps(base)}` -> `{json.dumps(revision)}` reports it at "
            f"`{finding['old_pointer']}` -> `{finding['new_pointer']}`.\n\n"
        )
    return "".join(parts).rstrip("\n") + "\n"


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(render(), encoding="utf-8")
    print(f"wrote {DOC}")
