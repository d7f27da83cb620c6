"""Structural facts: the raw differences between two normalised schema trees, no judgement.

DeepDiff reports them. It is slow on large trees, so equal subtrees are pruned first: only
keys whose values differ are handed to DeepDiff, which keeps the reported paths the paths of
the full trees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Fact", "structural_facts"]


@dataclass(frozen=True)
class Fact:
    """One raw difference: ``kind`` is DeepDiff's report type (``values_changed``,
    ``dictionary_item_added``...), ``path`` the keys and indexes leading to it."""

    kind: str
    path: tuple[str | int, ...]
    old: Any
    new: Any


_ABSENT = "<absent>"


def _prune(old: Any, new: Any) -> tuple[Any, Any]:
    """Copies of two values keeping only the dict keys whose values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        old_out: dict[str, Any] = {}
        new_out: dict[str, Any] = {}
        for key in old.keys() | new.keys():
            if key in old and key in new:
                if old[key] != new[key]:
                    old_out[key], new_out[key] = _prune(old[key], new[key])
            elif key in old:
                old_out[key] = old[key]
            else:
                new_out[key] = new[key]
        return old_out, new_out
    return old, new


def structural_facts(old: Any, new: Any) -> tuple[Fact, ...]:
    """Every raw difference between two JSON values, sorted by path."""
    if old == new:
        return ()
    from deepdiff import DeepDiff  # heavy: imported only when there is something to report

    pruned_old, pruned_new = _prune(old, new)
    report = DeepDiff(pruned_old, pruned_new, view="tree", verbose_level=2)
    facts = []
    for kind, items in report.items():
        for item in items:
            path = tuple(item.path(output_format="list"))
            before = item.t1 if item.t1 is not _NOT_PRESENT(item.t1) else _ABSENT
            after = item.t2 if item.t2 is not _NOT_PRESENT(item.t2) else _ABSENT
            facts.append(Fact(kind, path, before, after))
    return tuple(sorted(facts, key=lambda f: (tuple(str(p) for p in f.path), f.kind)))


def _NOT_PRESENT(value: Any) -> Any:
    """DeepDiff marks a missing side with its own ``NotPresent`` object."""
    return value if type(value).__name__ == "NotPresent" else object()
