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
ONE_OF_OVERLAP_CHANGED = "one-of-overlap-changed"
ONE_OF_DUPLICATE_ADDED = "one-of-duplicate-added"
ONE_OF_DUPLICATE_REMOVED = "one-of-duplicate-removed"
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
        apart = _Apart(cmp, members)
        backward = any(
            cmp.subsumes(old, {**rest, **member}) and (keyword == "anyOf" or apart(k))
            for k, member in enumerate(members)
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


class _Apart:
    """Which members of one list share no value with any other member of it (by position:
    a member written twice, or a definition referenced twice, overlaps its copy), proven by
    the structural check or by the containment normal forms; ``closed_world``: open models
    read as closed (the lenient policy)."""

    def __init__(self, cmp: Comparison, members: list[Schema]) -> None:
        self.cmp = cmp
        self.members = members
        self._pairs: dict[tuple[int, int, bool], bool] = {}

    def __call__(self, k: int, *, closed_world: bool = False) -> bool:
        return all(
            self._disjoint(min(k, other), max(k, other), closed_world)
            for other in range(len(self.members))
            if other != k
        )

    def records_apart(self, k: int) -> bool:
        """Member ``k`` shares values with the others only through undeclared keys of open
        record types: each pair is disjoint, or both declare properties and are disjoint
        once read as closed."""
        return all(
            self._disjoint(min(k, other), max(k, other), False)
            or (
                _declares_properties(self.members[k])
                and _declares_properties(self.members[other])
                and self._disjoint(min(k, other), max(k, other), True)
            )
            for other in range(len(self.members))
            if other != k
        )

    def _disjoint(self, i: int, j: int, closed_world: bool) -> bool:
        key = (i, j, closed_world)
        if key not in self._pairs:
            a, b = self.members[i], self.members[j]
            self._pairs[key] = self.cmp.containment.disjoint(a, b) or (
                closed_world and disjoint(a, b, closed_world=True)
            )
        return self._pairs[key]


def _declares_properties(member: Schema) -> bool:
    return bool(member.get("properties"))


def _keyword_removed(
    cmp: Comparison, old: Schema, new: Schema, keyword: str, members: list[Schema]
) -> None:
    removed_id = _IDS[keyword][1]
    rest = without_composition(old, keyword)
    if keyword == "allOf":
        backward = True
        forward = all(cmp.subsumes(new, member) for member in members)
    else:
        apart = _Apart(cmp, members)
        backward = all(cmp.subsumes(member, new) for member in members)
        forward = any(
            cmp.subsumes(new, {**rest, **member}) and (keyword == "anyOf" or apart(k))
            for k, member in enumerate(members)
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
    """Members are compared as sets. A oneOf member written twice is not one member, though:
    a value matching it matches two and is rejected, so ``oneOf [A, A, B...]`` means
    ``oneOf [B...]`` minus the values of A. Such members are reported on their own
    (``_duplicates``), and the sets compared here are the members written once."""
    _, _, member_added, member_removed = _IDS[keyword]
    union = keyword != "allOf"
    exclusive = keyword == "oneOf"
    if exclusive:
        old_at, new_at = _duplicates(cmp, old, new, before, after)
    else:
        old_at, new_at = list(range(len(before))), list(range(len(after)))
    olds, news = [before[i] for i in old_at], [after[j] for j in new_at]
    old_apart, new_apart = _Apart(cmp, olds), _Apart(cmp, news)
    old_left = [a for a, m in enumerate(olds) if not _among(m, news)]
    new_left = [b for b, m in enumerate(news) if not _among(m, olds)]
    pairs = _pair(cmp, [olds[a] for a in old_left], [news[b] for b in new_left])
    paired_old = {old_left[a] for a, _ in pairs}
    paired_new = {new_left[b] for _, b in pairs}
    for a, b in pairs:
        a, b = old_left[a], new_left[b]
        start = len(cmp.findings)
        cmp.compare(olds[a], news[b])
        if exclusive:
            where = (
                cmp.old_member_ptr(old, keyword, old_at[a]),
                cmp.new_member_ptr(new, keyword, new_at[b]),
            )
            _overlap(cmp, where, (olds, old_apart, a), (news, new_apart, b), start)
    for b in new_left:
        if b in paired_new:
            continue
        member = news[b]
        name = _describe(cmp.new.pointer(member), member)
        # For oneOf, old accepts a value of the member only through an old member that no
        # other old member overlaps (a value matching two is rejected).
        covered = any(
            cmp.subsumes(member, m) and (not exclusive or old_apart(a)) for a, m in enumerate(olds)
        )
        implied = cmp.subsumes(old, member)
        # A oneOf member that overlaps another makes values matching both invalid.
        apart = not exclusive or new_apart(b)
        cmp.emit(
            member_added,
            cmp.old_ptr(old, keyword),
            cmp.new_member_ptr(new, keyword, new_at[b]),
            f"{keyword} member {name} added"
            + ("" if apart else "; a value matching it and another member is now rejected"),
            backward=apart if union else implied,
            forward=covered if union else True,
            lenient_backward=union and new_apart(b, closed_world=True),
        )
    for a in old_left:
        if a in paired_old:
            continue
        member = olds[a]
        name = _describe(cmp.old.pointer(member), member)
        # Covered by one remaining member no other overlaps (for oneOf, a value matching two
        # is rejected), or by the remaining ones together.
        covered = any(
            cmp.subsumes(member, m) and (not exclusive or new_apart(b)) for b, m in enumerate(news)
        ) or (union and cmp.implied(old, new, keyword))
        implied = cmp.subsumes(new, member)
        apart = not exclusive or old_apart(a)
        lost = ""
        if union and not covered:
            which = "it" if exclusive else "it and no other member"
            lost = f": records matching {which} ({records_of(member)}) are now rejected"
        cmp.emit(
            member_removed,
            cmp.old_member_ptr(old, keyword, old_at[a]),
            cmp.new_ptr(new, keyword),
            f"{keyword} member {name} removed{lost}"
            + ("" if apart else "; a value matching it and another member is now accepted"),
            backward=covered if union else True,
            forward=apart if union else implied,
            lenient_forward=union and old_apart(a, closed_world=True),
        )


def _duplicates(
    cmp: Comparison, old: Schema, new: Schema, before: list[Schema], after: list[Schema]
) -> tuple[list[int], list[int]]:
    """Report the oneOf members written more than once on one side only, and return the
    positions of the members written once on each side that are left to compare as sets.

    ``oneOf`` of members D written twice (or more) and S written once accepts the values
    that match no member of D and exactly one of S. A member now written twice rejects its
    values (compatible backward only where no old value matching it was valid: it accepts
    nothing, or it lies inside another old member); one no longer written twice may accept
    its values again (compatible forward only where no new value matching it is valid)."""
    old_groups, new_groups = _groups(before), _groups(after)
    old_single = [g for g in old_groups if len(g) == 1]
    new_single = [h for h in new_groups if len(h) == 1]
    old_twice = [before[g[0]] for g in old_groups if len(g) > 1]
    new_twice = [after[h[0]] for h in new_groups if len(h) > 1]
    moved_old: set[int] = set()  # written once in old, more often in new, or the reverse
    moved_new: set[int] = set()
    for h in new_groups:
        if len(h) == 1:
            continue
        member = after[h[0]]
        name = _describe(cmp.new.pointer(member), member)
        was = next((g for g in old_groups if json_equal(before[g[0]], member)), None)
        if was is not None and len(was) > 1:
            continue  # written more than once on both sides: rejected on both
        if was is None:
            message = f"oneOf member {name} added {_times(len(h))}"
            old_pointer = cmp.old_ptr(old, "oneOf")
            holders = old_twice  # a value of it matched one of these: rejected before too
        else:
            message = f"oneOf member {name} is now written {_times(len(h))}"
            old_pointer = cmp.old_member_ptr(old, "oneOf", was[0])
            moved_old.add(was[0])
            holders = [before[o[0]] for o in old_groups if o is not was]  # it and another
        cmp.emit(
            ONE_OF_DUPLICATE_ADDED,
            old_pointer,
            cmp.new_member_ptr(new, "oneOf", h[-1]),
            message + ": a value matching it matches more than one member and is rejected",
            backward=is_false(member) or any(cmp.subsumes(member, m) for m in holders),
            forward=True,
        )
    for g in old_groups:
        if len(g) == 1:
            continue
        member = before[g[0]]
        name = _describe(cmp.old.pointer(member), member)
        now = next((h for h in new_groups if json_equal(after[h[0]], member)), None)
        if now is not None and len(now) > 1:
            continue
        if now is None:
            message = (
                f"oneOf member {name}, written {_times(len(g))}, removed: a value matching "
                "it is no longer rejected for matching more than one member"
            )
            new_pointer = cmp.new_ptr(new, "oneOf")
            holders = new_twice
        else:
            message = (
                f"oneOf member {name} was written {_times(len(g))} and is now written once: "
                "a value matching it and no other member is accepted"
            )
            new_pointer = cmp.new_member_ptr(new, "oneOf", now[0])
            moved_new.add(now[0])
            holders = [after[n[0]] for n in new_groups if n is not now]
        cmp.emit(
            ONE_OF_DUPLICATE_REMOVED,
            cmp.old_member_ptr(old, "oneOf", g[-1]),
            new_pointer,
            message,
            backward=True,
            forward=is_false(member) or any(cmp.subsumes(member, m) for m in holders),
        )
    return (
        [g[0] for g in old_single if g[0] not in moved_old],
        [h[0] for h in new_single if h[0] not in moved_new],
    )


def _groups(members: list[Schema]) -> list[list[int]]:
    """The positions of equal members, grouped, in the order first written."""
    groups: list[list[int]] = []
    for index, member in enumerate(members):
        for group in groups:
            if json_equal(members[group[0]], member):
                group.append(index)
                break
        else:
            groups.append([index])
    return groups


def _times(count: int) -> str:
    return "twice" if count == 2 else f"{count} times"


_Side = tuple[list[Schema], _Apart, int]  # a oneOf's members written once, apartness, one


def _overlap(
    cmp: Comparison,
    where: tuple[str, str],
    old_side: _Side,
    new_side: _Side,
    start: int,
) -> None:
    """A paired oneOf member compared in depth (its findings are ``cmp.findings[start:]``)
    is judged as if the oneOf were an anyOf, which holds only while it shares no value with
    the other members on both sides. Otherwise a value matching two members is rejected, so
    overlap gained rejects values that one member accepted before, overlap lost accepts
    values that two members matched, and a member changed while it may overlap another can
    turn values either way: the directions the member's findings grant are not granted for
    the oneOf. Disjointness is proven or not; overlap is claimed proven only where one
    member provably holds another."""
    before, old_apart, i = old_side
    after, new_apart, j = new_side
    old_member, new_member = before[i], after[j]
    was_apart, is_apart = old_apart(i), new_apart(j)
    if was_apart and is_apart:
        return
    if was_apart:
        name = _describe(cmp.new.pointer(new_member), new_member)
        verb = "now overlaps" if _overlapping(cmp, after, j) else "may now overlap"
        cmp.emit(
            ONE_OF_OVERLAP_ADDED,
            *where,
            f"oneOf member {name} {verb} another member: a value matching both is rejected",
            backward=False,
            forward=True,
            lenient_backward=new_apart(j, closed_world=True),
        )
        return
    if is_apart:
        name = _describe(cmp.old.pointer(old_member), old_member)
        verb = "overlapped" if _overlapping(cmp, before, i) else "may have overlapped"
        cmp.emit(
            ONE_OF_OVERLAP_REMOVED,
            *where,
            f"oneOf member {name} {verb} another member and no longer does: a value that "
            "matched both is accepted",
            backward=True,
            forward=False,
            lenient_forward=old_apart(i, closed_world=True),
        )
        return
    # The member's own findings (an undecided one counts as granted, as the verdict reads
    # it), in the orientation ``emit`` takes.
    found = cmp.findings[start:]
    grants = (
        all(f.backward or f.undecided for f in found),
        all(f.forward or f.undecided for f in found),
    )
    if cmp.flipped:
        grants = grants[::-1]
    if grants == (False, False):
        return  # the member's findings already grant neither direction
    lenient = old_apart(i, closed_world=True) and new_apart(j, closed_world=True)
    if old_apart.records_apart(i) and new_apart.records_apart(j):
        # Members apart but for undeclared keys (open record types, a oneOf over them): a
        # value carrying every field of two record types is a record of neither, and such a
        # value is all a change of one member could flip. Deliberately not reported, in
        # either policy: it would make every edit of a record type in such a oneOf a break.
        # A member that declares no properties is no record type: any object may match it.
        return
    if grants == (True, True) and (
        (found and not any(f.undecided for f in found))
        or (cmp.subsumes(old_member, new_member) and cmp.subsumes(new_member, old_member))
    ):
        return  # the member accepts the same values as before
    name = _describe(cmp.new.pointer(new_member), new_member)
    if grants == (True, False):
        effect = "a value it now accepts may match two members and be rejected"
    elif grants == (False, True):
        effect = "a value it no longer accepts may match one member only and be accepted"
    else:
        effect = "a value it now accepts may be rejected, and one it no longer accepts accepted"
    cmp.emit(
        ONE_OF_OVERLAP_CHANGED,
        *where,
        f"oneOf member {name} changed while it may overlap another member (a value matching "
        f"two members is rejected): {effect}",
        backward=not grants[0],
        forward=not grants[1],
        lenient_backward=lenient,  # apart once records carry no undeclared keys
        lenient_forward=lenient,
    )


def _overlapping(cmp: Comparison, members: list[Schema], k: int) -> bool:
    """Member ``k`` provably shares a value with another of ``members``: one holds the
    other (both accepting something)."""
    member = members[k]
    if is_false(member):
        return False
    return any(
        not is_false(other) and (cmp.subsumes(member, other) or cmp.subsumes(other, member))
        for index, other in enumerate(members)
        if index != k
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
