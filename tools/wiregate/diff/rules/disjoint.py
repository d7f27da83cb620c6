"""Can two schemas accept the same value? ``oneOf`` needs the answer: a value that matches two
members is rejected, so adding a member that overlaps another one rejects values that were
accepted before.

The answer is "disjoint" only when it is certain: different JSON types, disjoint
``enum``/``const`` values, or, where objects are the only type both accept, a required
property whose schemas are disjoint or a required key that the other side's closed model
rejects. With ``closed_world`` (the lenient policy's
assumption that records carry no undeclared keys), open models are treated as closed.
"""

from __future__ import annotations

from wiregate.diff.budget import charge
from wiregate.diff.load import Schema
from wiregate.diff.regex import translate
from wiregate.diff.rules.base import is_false
from wiregate.diff.rules.enums import allowed_values
from wiregate.diff.rules.types import effective_types

__all__ = ["disjoint"]


def disjoint(a: Schema, b: Schema, *, closed_world: bool = False, depth: int = 0) -> bool:
    charge()
    if is_false(a) or is_false(b):
        return True
    if depth > 8:
        return False  # deep recursion proves nothing more; stay conservative
    if not effective_types(a) & effective_types(b):
        return True
    a_values, b_values = allowed_values(a), allowed_values(b)
    if a_values is not None and b_values is not None and not a_values & b_values:
        return True
    if effective_types(a) & effective_types(b) != {"object"}:
        return False  # what tells objects apart lets a value of another shared type match both
    return _objects_disjoint(a, b, closed_world, depth) or _objects_disjoint(
        b, a, closed_world, depth
    )


def _objects_disjoint(a: Schema, b: Schema, closed_world: bool, depth: int) -> bool:
    """Every object ``a`` accepts has a required key that ``b`` rejects or constrains
    incompatibly."""
    a_props: dict[str, Schema] = a.get("properties") or {}
    b_props: dict[str, Schema] = b.get("properties") or {}
    b_closed = is_false(b.get("additionalProperties", {})) or (
        closed_world and "additionalProperties" not in b
    )
    for name in a.get("required") or ():
        if name in b_props:
            if name in a_props and disjoint(
                a_props[name], b_props[name], closed_world=closed_world, depth=depth + 1
            ):
                return True
        elif b_closed and not _may_match_a_pattern(b, name):
            return True
    return False


def _may_match_a_pattern(node: Schema, name: str) -> bool:
    """Is ``name`` matched (or maybe matched: a pattern beyond RE2) by a patternProperties key?"""
    for pattern in node.get("patternProperties") or ():
        regex = translate(pattern)
        if regex is None or regex.search(name):
            return True
    return False
