"""A subschema replaced as a whole: ``items: X`` -> ``items: anyOf [X, Y]``.

Comparing such a pair keyword by keyword explains one widening as a pile of removals inside
``X`` (it is matched against the new union's members). When ``anyOf``/``oneOf`` appeared or
went at that place and one side provably contains the other, the change is one finding at
the keyword that holds the subschema: ``<keyword>-widened`` (the new subschema accepts every
value the old one did, and more) or ``<keyword>-narrowed`` (the reverse).

Also here: how a subschema is named in messages, and what a union member stands for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wiregate.diff.load import Schema
from wiregate.diff.values import canonical, json_equal

if TYPE_CHECKING:
    from wiregate.diff.rules.base import Comparison

__all__ = ["compare_subschemas", "describe", "records_of"]

_UNIONS = ("anyOf", "oneOf")
_NAMES_SHOWN = 3


def compare_subschemas(
    cmp: Comparison,
    old: Schema,
    new: Schema,
    where: Callable[[], tuple[str, str]],
    ids: tuple[str, str],
    what: str,
) -> None:
    """Compare the subschemas ``old`` and ``new`` that two parents hold at one place (named
    ``what``, reported at the pointers ``where()`` gives); ``ids`` are the widened and
    narrowed rule ids."""
    if json_equal(old, new):
        return
    if any((keyword in old) != (keyword in new) for keyword in _UNIONS):
        backward, forward = cmp.subsumes(old, new), cmp.subsumes(new, old)
        if backward != forward:
            widened, narrowed = ids
            before, after = describe(cmp, old, new=False), describe(cmp, new, new=True)
            if backward:
                message = (
                    f"{what} widened from {before} to {after}, "
                    "which accepts every value the old one did"
                )
                cmp.emit(widened, *where(), message, backward=True, forward=False)
            else:
                message = (
                    f"{what} narrowed from {before} to {after}, "
                    "which accepts only some of the values the old one did"
                )
                cmp.emit(narrowed, *where(), message, backward=False, forward=True)
            return
    cmp.compare(old, new)


def describe(cmp: Comparison, node: Schema, *, new: bool) -> str:
    """A short name: the definition's name, a union of named members, else its types."""
    pointer = (cmp.new if new else cmp.old).pointer(node)
    if pointer.startswith("#/$defs/") and pointer.count("/") == 2:
        return pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
    for keyword in _UNIONS:
        members = node.get(keyword)
        if isinstance(members, list) and set(node) - _ANNOTATIONS == {keyword}:
            return f"{keyword} [" + ", ".join(describe(cmp, m, new=new) for m in members) + "]"
    from wiregate.diff.rules.types import ALL_TYPES, effective_types

    types = effective_types(node)
    if types == ALL_TYPES:
        return "any value" if not set(node) - _ANNOTATIONS else "a schema of any type"
    shown = sorted(types - {"integer"} if "number" in types else types)
    if set(node) - _ANNOTATIONS <= {"type"}:
        return "any " + "|".join(shown)
    return "a schema of type " + "|".join(shown)


_ANNOTATIONS = frozenset({"title", "description", "examples", "$comment", "default"})


def records_of(member: Schema) -> str:
    """What the values of a union member look like: its types, and for objects the property
    values it fixes (discriminators) and the properties it requires."""
    from wiregate.diff.rules.types import ALL_TYPES, effective_types

    types = effective_types(member)
    if "object" not in types or len(types - {"object"}) > 0:
        if types == ALL_TYPES:
            return "values of any type"
        shown = sorted(types - {"integer"} if "number" in types else types)
        return "values of type " + "|".join(shown)
    parts = []
    properties: dict[str, Any] = member.get("properties") or {}
    fixed = [
        f"{name} = {canonical(schema['const']).decode()}"
        for name, schema in sorted(properties.items())
        if isinstance(schema, dict) and "const" in schema
    ]
    if fixed:
        parts.append(_some(fixed))
    required = [str(name) for name in member.get("required") or ()]
    if required:
        parts.append("required " + _some(required))
    return "objects" + (" with " + "; ".join(parts) if parts else "")


def _some(names: list[str]) -> str:
    more = len(names) - _NAMES_SHOWN
    return ", ".join(names[:_NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")
