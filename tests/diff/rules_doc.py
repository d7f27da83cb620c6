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
`dependentRequired`, `dependentSchemas`, `prefixItems`).

Each document is first checked against the metaschema of its draft (`$schema`: draft-07 or
2020-12; 2020-12 when absent): a keyword whose value has the wrong shape (`"enum": 5`,
`"type": "strin"`) is a load error naming the source and the JSON pointer of the keyword.

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
  count as disjoint. A tolerated change says `tolerated_by: "lenient"`.

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
