"""Structural facts: the raw differences between two JSON values, no judgement.

DeepDiff reports them. The rule families judge every keyword they know without them; the
facts explain what no rule judges (``keyword-changed``) and serve callers that want the raw
difference. DeepDiff takes a noticeable time to import and is slow on large trees, so it is
imported on first use and equal subtrees are pruned before it runs (the reported paths stay
those of the full values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wiregate.diff.values import json_equal, json_key

__all__ = ["ABSENT", "Fact", "structural_facts"]


@dataclass(frozen=True)
class Fact:
    """One raw difference: ``kind`` is DeepDiff's report type (``values_changed``,
    ``dictionary_item_added``...), ``path`` the keys and indexes leading to it."""

    kind: str
    path: tuple[str | int, ...]
    old: Any
    new: Any


class _Absent:
    """The side of a fact where the value does not exist."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


# Lists whose order carries no meaning; every other list is compared position by position.
UNORDERED = frozenset({"oneOf", "anyOf", "allOf", "enum", "required", "type"})


def _prune(old: Any, new: Any, unordered: bool = False) -> tuple[Any, Any]:
    """Copies of two values keeping only what differs (by JSON equality: ``1`` and ``1.0``
    are one value, ``1`` and ``true`` are not). Lists become ``{index: item}`` maps of their
    differing items (DeepDiff prints an int key like a list index, so paths stay those of the
    full trees); DeepDiff never sees two items that are equal by Python but not by JSON."""
    if isinstance(old, dict) and isinstance(new, dict):
        old_out: dict[Any, Any] = {}
        new_out: dict[Any, Any] = {}
        for key in old.keys() | new.keys():
            if key in old and key in new:
                if not json_equal(old[key], new[key]):
                    old_out[key], new_out[key] = _prune(old[key], new[key], key in UNORDERED)
            elif key in old:
                old_out[key] = old[key]
            else:
                new_out[key] = new[key]
        return old_out, new_out
    if isinstance(old, list) and isinstance(new, list):
        if unordered:
            old_left, new_left = _unmatched(old, new)
        else:
            shared = min(len(old), len(new))
            differ = [i for i in range(shared) if not json_equal(old[i], new[i])]
            old_left = differ + list(range(shared, len(old)))
            new_left = differ + list(range(shared, len(new)))
        pairs, old_alone, new_alone = _pair_up(old_left, new_left)
        old_items: dict[int, Any] = {i: old[i] for i in old_alone}
        new_items: dict[int, Any] = {j: new[j] for j in new_alone}
        for i, j in pairs:
            old_items[i], new_items[i] = _prune(old[i], new[j])
        return old_items, new_items
    return old, new


def _pair_up(
    old_left: list[int], new_left: list[int]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pair the differing items of two lists, each pair reported under its old index: the
    same index on both sides first, so no unpaired new item shares an index with a pair."""
    same = set(old_left) & set(new_left)
    rest_old = [i for i in old_left if i not in same]
    rest_new = [j for j in new_left if j not in same]
    count = min(len(rest_old), len(rest_new))
    pairs = [(i, i) for i in sorted(same)] + list(
        zip(rest_old[:count], rest_new[:count], strict=True)
    )
    return pairs, rest_old[count:], rest_new[count:]


def _unmatched(old: list[Any], new: list[Any]) -> tuple[list[int], list[int]]:
    """Indexes of the items of each list that the other lacks, counting repeats."""
    available: dict[str, list[int]] = {}
    for j, item in enumerate(new):
        available.setdefault(json_key(item), []).append(j)
    old_left = []
    for i, item in enumerate(old):
        matches = available.get(json_key(item))
        if matches:
            matches.pop(0)
        else:
            old_left.append(i)
    new_left = sorted(j for indexes in available.values() for j in indexes)
    return old_left, new_left


def structural_facts(old: Any, new: Any) -> tuple[Fact, ...]:
    """Every raw difference between two JSON values, sorted by path."""
    if json_equal(old, new):
        return ()
    from deepdiff import DeepDiff  # heavy: imported only when there is something to report

    pruned_old, pruned_new = _prune(old, new)
    report = DeepDiff(pruned_old, pruned_new, view="tree", verbose_level=2)
    facts = []
    for kind, items in report.items():
        for item in items:
            path = tuple(item.path(output_format="list"))
            before = ABSENT if _missing(item.t1) else item.t1
            after = ABSENT if _missing(item.t2) else item.t2
            facts.append(Fact(kind, path, before, after))
    return tuple(sorted(facts, key=lambda f: (tuple(str(p) for p in f.path), f.kind)))


def _missing(value: Any) -> bool:
    """DeepDiff marks a missing side with its own ``NotPresent`` object."""
    return type(value).__name__ == "NotPresent"
