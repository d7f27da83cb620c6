"""Composition: ``oneOf``, ``anyOf``, ``allOf`` and ``not``.

Members are matched across the two sides (identical members first, then the closest member
that shares a type), matched members are compared in depth, and unmatched ones are reported
as added or removed. Whether an added or removed member changes what is accepted is decided
by set containment against the other side's members.
"""

from __future__ import annotations

from wiregate.diff.load import Schema
from wiregate.diff.rules.base import Comparison, is_false
from wiregate.diff.rules.disjoint import disjoint
from wiregate.diff.rules.subschemas import records_of
from wiregate.diff.rules.types import effective_types
from wiregate.diff.values import json_equal
from wiregate.pointer import split

ONE_OF_ADDED = "one-of-added"
ONE_OF_REMOVED = "one-of-removed"
ONE_OF_MEMBER_ADDED = "one-of-member-added"
ONE_OF_MEMBER_REMOVED = "one-of-member-removed"
ONE_OF_OVERLAP_ADDED = "one-of-overlap-added"
ONE_OF_OVERLAP_REMOVED = "one-of-overlap-removed"
ANY_OF_ADDED = "any-of-added"
ANY_OF_REMOVED = "any-of-removed"
ANY_OF_MEMBER_ADDED = "any-of-member-added"
ANY_OF_MEMBER_REMOVED = "any-of-member-removed"
ALL_OF_ADDED = "all-of-added"
ALL_OF_REMOVED = "all-of-removed"
ALL_OF_MEMBER_ADDED = "all-of-member-added"
ALL_OF_MEMBER_REMOVED = "all-of-member-removed"
NOT_ADDED = "not-added"
NOT_REMOVED = "not-removed"

KEYWORDS = frozenset({"oneOf", "anyOf", "allOf", "not"})
_IDS = {
    "oneOf": (ONE_OF_ADDED, ONE_OF_REMOVED, ONE_OF_MEMBER_ADDED, ONE_OF_MEMBER_REMOVED),
    "anyOf": (ANY_OF_ADDED, ANY_OF_REMOVED, ANY_OF_MEMBER_ADDED, ANY_OF_MEMBER_REMOVED),
    "allOf": (ALL_OF_ADDED, ALL_OF_REMOVED, ALL_OF_MEMBER_ADDED, ALL_OF_MEMBER_REMOVED),
}
COMPOSITION = ("oneOf", "anyOf", "allOf")


def without_composition(node: Schema, keyword: str) -> Schema:
    return {k: v for k, v in node.items() if k != keyword}


def check(cmp: Comparison, old: Schema, new: Schema) -> None:
    for keyword in COMPOSITION:
        before, after = old.get(keyword), new.get(keyword)
        if json_equal(before, after):
            continue
        if isinstance(before, list) and isinstance(after, list):
            _members(cmp, old, new, keyword, before, after)
        elif isinstance(after, list):
            _keyword_added(cmp, old, new, keyword, after)
        elif isinstance(before, list):
            _keyword_removed(cmp, old, new, keyword, before)
    _not(cmp, old, new)


def _keyword_added(
    cmp: Comparison, old: Schema, new: Schema, keyword: str, members: list[Schema]
) -> None:
    added_id = _IDS[keyword][0]
    rest = without_composition(new, keyword)
    if keyword == "allOf":
        backward = all(cmp.subsumes(old, member) for member in members)
        forward = True
    else:
        # Every old value must fit one member (together with the rest of the new schema),
        # and for oneOf no other member.
        backward = any(
            cmp.subsumes(old, {**rest, **member})
            and (keyword == "anyOf" or _apart(member, members))
            for member in members
        )
        forward = all(cmp.subsumes(member, old) for member in members)
    cmp.emit(
        added_id,
        cmp.old_ptr(old),
        cmp.new_ptr(new, keyword),
        f"{keyword} with {len(members)} members added",
        backward=backward,
        forward=forward,
    )


def _apart(member: Schema, members: list[Schema], *, closed_world: bool = False) -> bool:
    """``member`` shares no value with any other of ``members``."""
    return all(
        disjoint(member, other, closed_world=closed_world)
        for other in members
        if other is not member
    )


def _keyword_removed(
    cmp: Comparison, old: Schema, new: Schema, keyword: str, members: list[Schema]
) -> None:
    removed_id = _IDS[keyword][1]
    rest = without_composition(old, keyword)
    if keyword == "allOf":
        backward = True
        forward = all(cmp.subsumes(new, member) for member in members)
    else:
        backward = all(cmp.subsumes(member, new) for member in members)
        forward = any(
            cmp.subsumes(new, {**rest, **member})
            and (keyword == "anyOf" or _apart(member, members))
            for member in members
        )
    cmp.emit(
        removed_id,
        cmp.old_ptr(old, keyword),
        cmp.new_ptr(new),
        f"{keyword} with {len(members)} members removed",
        backward=backward,
        forward=forward,
    )


def _members(
    cmp: Comparison,
    old: Schema,
    new: Schema,
    keyword: str,
    before: list[Schema],
    after: list[Schema],
) -> None:
    _, _, member_added, member_removed = _IDS[keyword]
    old_left = [i for i, m in enumerate(before) if not _among(m, after)]
    new_left = [j for j, m in enumerate(after) if not _among(m, before)]
    pairs = _pair(cmp, [before[i] for i in old_left], [after[j] for j in new_left])
    paired_old = {old_left[a] for a, _ in pairs}
    paired_new = {new_left[b] for _, b in pairs}
    for a, b in pairs:
        cmp.compare(before[old_left[a]], after[new_left[b]])
    union = keyword != "allOf"
    exclusive = keyword == "oneOf"
    if exclusive:
        for a, b in pairs:
            _overlap(cmp, old, new, before, after, old_left[a], new_left[b])
    for j in new_left:
        if j in paired_new:
            continue
        member = after[j]
        name = _describe(cmp.new.pointer(member), member)
        # For oneOf, old accepts a value of the member only through an old member that no
        # other old member overlaps (a value matching two is rejected).
        covered = any(
            cmp.subsumes(member, m) and (not exclusive or _apart(m, before)) for m in before
        )
        implied = cmp.subsumes(old, member)
        # A oneOf member that overlaps another makes values matching both invalid.
        apart = not exclusive or _apart(member, after)
        cmp.emit(
            member_added,
            cmp.old_ptr(old, keyword),
            cmp.new_member_ptr(new, keyword, j),
            f"{keyword} member {name} added"
            + ("" if apart else "; a value matching it and another member is now rejected"),
            backward=apart if union else implied,
            forward=covered if union else True,
            lenient_backward=union and _apart(member, after, closed_world=True),
        )
    for i in old_left:
        if i in paired_old:
            continue
        member = before[i]
        name = _describe(cmp.old.pointer(member), member)
        # Covered by one remaining member no other overlaps (for oneOf, a value matching two
        # is rejected), or by the remaining ones together.
        covered = any(
            cmp.subsumes(member, m) and (not exclusive or _apart(m, after)) for m in after
        ) or (union and cmp.implied(old, new, keyword))
        implied = cmp.subsumes(new, member)
        apart = not exclusive or _apart(member, before)
        lost = ""
        if union and not covered:
            which = "it" if exclusive else "it and no other member"
            lost = f": records matching {which} ({records_of(member)}) are now rejected"
        cmp.emit(
            member_removed,
            cmp.old_member_ptr(old, keyword, i),
            cmp.new_ptr(new, keyword),
            f"{keyword} member {name} removed{lost}"
            + ("" if apart else "; a value matching it and another member is now accepted"),
            backward=covered if union else True,
            forward=apart if union else implied,
            lenient_forward=union and _apart(member, before, closed_world=True),
        )


def _overlap(
    cmp: Comparison,
    old: Schema,
    new: Schema,
    before: list[Schema],
    after: list[Schema],
    i: int,
    j: int,
) -> None:
    """A paired oneOf member compared in depth can change whether it overlaps the others: a
    value matching two members is rejected, so overlap gained rejects values that one member
    accepted before, and overlap lost accepts values that two members matched. Disjointness
    is proven or not; overlap is claimed only where one member provably holds another, and
    is otherwise undecided (never a break without proof)."""
    old_member, new_member = before[i], after[j]
    was_apart, is_apart = _apart(old_member, before), _apart(new_member, after)
    if was_apart == is_apart:
        return
    where = (cmp.old_member_ptr(old, "oneOf", i), cmp.new_member_ptr(new, "oneOf", j))
    if was_apart:
        name = _describe(cmp.new.pointer(new_member), new_member)
        proven = _overlapping(cmp, new_member, after)
        verb = "now overlaps" if proven else "may now overlap"
        cmp.emit(
            ONE_OF_OVERLAP_ADDED,
            *where,
            f"oneOf member {name} {verb} another member: a value matching both is rejected",
            backward=False,
            forward=True,
            lenient_backward=_apart(new_member, after, closed_world=True),
            undecided=not proven,
        )
    else:
        name = _describe(cmp.old.pointer(old_member), old_member)
        proven = _overlapping(cmp, old_member, before)
        verb = "overlapped" if proven else "may have overlapped"
        cmp.emit(
            ONE_OF_OVERLAP_REMOVED,
            *where,
            f"oneOf member {name} {verb} another member and no longer does: a value that "
            "matched both is accepted",
            backward=True,
            forward=False,
            lenient_forward=_apart(old_member, before, closed_world=True),
            undecided=not proven,
        )


def _overlapping(cmp: Comparison, member: Schema, members: list[Schema]) -> bool:
    """``member`` provably shares a value with another of ``members``: one holds the other
    (both accepting something)."""
    if is_false(member):
        return False
    return any(
        not is_false(other) and (cmp.subsumes(member, other) or cmp.subsumes(other, member))
        for other in members
        if other is not member
    )


def _among(member: Schema, members: list[Schema]) -> bool:
    return any(json_equal(member, other) for other in members)


def _describe(pointer: str, member: Schema) -> str:
    """A definition's name, else the member's types."""
    if pointer.startswith("#/$defs/") and pointer.count("/") == 2:
        return split(pointer, percent_encoded=False)[1]
    types = sorted(effective_types(member))
    return "of type " + "|".join(types) if len(types) < 7 else "accepting any type"


def _pair(cmp: Comparison, olds: list[Schema], news: list[Schema]) -> list[tuple[int, int]]:
    """Match changed members: references to the same definition first, then one-to-one when
    one member is left on each side, else by shared types, closest pair first (fewest
    differing keywords)."""
    pairs: list[tuple[int, int]] = []
    by_definition: dict[str, int] = {}
    for b, n in enumerate(news):
        pointer = cmp.new.pointer(n)
        if pointer.startswith("#/$defs/"):
            by_definition.setdefault(pointer, b)
    used_old: set[int] = set()
    used_new: set[int] = set()
    for a, o in enumerate(olds):
        b = by_definition.get(cmp.old.pointer(o), -1)
        if b >= 0 and b not in used_new:
            pairs.append((a, b))
            used_old.add(a)
            used_new.add(b)
    rest_old = [a for a in range(len(olds)) if a not in used_old]
    rest_new = [b for b in range(len(news)) if b not in used_new]
    if len(rest_old) == 1 and len(rest_new) == 1:
        return sorted([*pairs, (rest_old[0], rest_new[0])])
    candidates = []
    for a in rest_old:
        for b in rest_new:
            if effective_types(olds[a]) & effective_types(news[b]):
                o, n = olds[a], news[b]
                distance = len({k for k in set(o) | set(n) if not json_equal(o.get(k), n.get(k))})
                candidates.append((distance, a, b))
    for _, a, b in sorted(candidates):
        if a not in used_old and b not in used_new:
            pairs.append((a, b))
            used_old.add(a)
            used_new.add(b)
    return sorted(pairs)


def _not(cmp: Comparison, old: Schema, new: Schema) -> None:
    before, after = old.get("not"), new.get("not")
    if json_equal(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        if before == {} or after == {}:
            return  # accepting nothing is the schema family's concern
        cmp.compare_flipped(before, after)
    elif isinstance(after, dict):
        if after == {}:
            return
        cmp.emit(
            NOT_ADDED,
            *cmp.keyword_ptrs(old, new, "not"),
            "values matching the 'not' schema are now rejected",
            backward=False,
            forward=True,
        )
    elif isinstance(before, dict):
        if before == {}:
            return
        cmp.emit(
            NOT_REMOVED,
            *cmp.keyword_ptrs(old, new, "not"),
            "values matching the old 'not' schema are accepted again",
            backward=True,
            forward=False,
        )
