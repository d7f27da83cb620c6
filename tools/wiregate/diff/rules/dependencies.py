"""Conditional requirements: ``dependentRequired`` and ``dependentSchemas`` (draft-07
``dependencies`` is normalised to them).

Each applies per trigger property: only objects that hold the trigger are constrained, so
removing a dependency, or a name from one, only loosens the schema.
"""

from __future__ import annotations

from typing import Any

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison, is_true

DEPENDENT_REQUIRED_ADDED = "dependent-required-added"
DEPENDENT_REQUIRED_REMOVED = "dependent-required-removed"
DEPENDENT_REQUIRED_EXTENDED = "dependent-required-extended"
DEPENDENT_REQUIRED_NARROWED = "dependent-required-narrowed"
DEPENDENT_SCHEMA_ADDED = "dependent-schema-added"
DEPENDENT_SCHEMA_REMOVED = "dependent-schema-removed"

KEYWORDS = frozenset({"dependentRequired", "dependentSchemas"})


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    _required(cmp, old, new)
    _schemas(cmp, old, new)


def _names(node: Schema) -> dict[str, frozenset[str]]:
    """Trigger -> the names it requires; a trigger requiring only itself requires nothing."""
    value = node.get("dependentRequired")
    if not isinstance(value, dict):
        return {}
    out = {}
    for trigger, names in value.items():
        wanted = frozenset(n for n in names if isinstance(n, str) and n != trigger)
        if wanted:
            out[trigger] = wanted
    return out


def _show(names: Any) -> str:
    return ", ".join(repr(name) for name in sorted(names))


def _ptr(cmp: Comparison, node: Schema, side: str, trigger: str) -> str:
    """The trigger's entry when it is written, else the keyword, else the schema."""
    ptr = cmp.old_ptr if side == "old" else cmp.new_ptr
    entries = node.get("dependentRequired")
    if isinstance(entries, dict) and trigger in entries:
        return ptr(node, "dependentRequired", trigger)
    return ptr(node, "dependentRequired") if entries is not None else ptr(node)


def _required(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = _names(old), _names(new)
    old_required = set(old.get("required") or ())
    new_required = set(new.get("required") or ())
    for trigger in sorted(set(before) | set(after)):
        where = (_ptr(cmp, old, "old", trigger), _ptr(cmp, new, "new", trigger))
        gained = after.get(trigger, frozenset()) - before.get(trigger, frozenset())
        lost = before.get(trigger, frozenset()) - after.get(trigger, frozenset())
        if trigger not in before:
            cmp.emit(
                DEPENDENT_REQUIRED_ADDED,
                *where,
                f"objects holding {trigger!r} must now hold {_show(gained)}: old records with "
                f"{trigger!r} and without them are rejected",
                # Names the old schema required anyway change nothing.
                backward=gained <= old_required,
                forward=True,
                keyword="dependentRequired",
            )
            continue
        if trigger not in after:
            cmp.emit(
                DEPENDENT_REQUIRED_REMOVED,
                *where,
                f"objects holding {trigger!r} no longer have to hold {_show(lost)}",
                backward=True,
                forward=lost <= new_required,
                keyword="dependentRequired",
            )
            continue
        if gained:
            cmp.emit(
                DEPENDENT_REQUIRED_EXTENDED,
                *where,
                f"objects holding {trigger!r} must now also hold {_show(gained)}",
                backward=gained <= old_required,
                forward=True,
                keyword="dependentRequired",
            )
        if lost:
            cmp.emit(
                DEPENDENT_REQUIRED_NARROWED,
                *where,
                f"objects holding {trigger!r} no longer have to hold {_show(lost)}",
                backward=True,
                forward=lost <= new_required,
                keyword="dependentRequired",
            )


def _schemas(cmp: Comparison, old: Schema, new: Schema) -> None:
    before: dict[str, Schema] = old.get("dependentSchemas") or {}
    after: dict[str, Schema] = new.get("dependentSchemas") or {}
    for trigger in sorted(set(before) | set(after)):
        if trigger in before and trigger in after:
            # Both apply to the same objects (those holding the trigger): compare in depth.
            cmp.compare(before[trigger], after[trigger])
        elif trigger in after:
            schema = after[trigger]
            cmp.emit(
                DEPENDENT_SCHEMA_ADDED,
                cmp.old_ptr(old, "dependentSchemas") if before else cmp.old_ptr(old),
                cmp.new_ptr(new, "dependentSchemas", trigger),
                f"objects holding {trigger!r} must now also match its dependent schema",
                # Every old value matching the schema anyway is a sufficient condition.
                backward=is_true(schema) or cmp.subsumes(old, schema),
                forward=True,
            )
        else:
            schema = before[trigger]
            cmp.emit(
                DEPENDENT_SCHEMA_REMOVED,
                cmp.old_ptr(old, "dependentSchemas", trigger),
                cmp.new_ptr(new, "dependentSchemas") if after else cmp.new_ptr(new),
                f"objects holding {trigger!r} no longer have to match its dependent schema",
                backward=True,
                forward=is_true(schema) or cmp.subsumes(new, schema),
            )
