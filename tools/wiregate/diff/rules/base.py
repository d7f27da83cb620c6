"""The comparison walk that the rule families plug into.

A :class:`Comparison` walks two resolved schemas in parallel. At each pair of schema nodes
that differ, every rule family looks at the keywords it owns and emits findings; a keyword
no family owns is an annotation (``unknown-keyword-changed``), and a recursive reference the
walk cannot follow is undecided (``ref-changed``, level ``unknown``). Families recurse into
subschemas through :meth:`Comparison.compare`, and ask set questions ("does every value of A
satisfy B?") through :meth:`Comparison.subsumes`, which runs a silent comparison.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from wiregate.diff.load import ResolvedSchema, Schema
from wiregate.diff.rules.schema import check_false, keyword_changed, ref_changed
from wiregate.diff.values import json_equal
from wiregate.pointer import join

_MISSING = object()

__all__ = ["Comparison", "Family", "RawFinding", "is_false", "is_true"]


def is_false(node: Schema) -> bool:
    """The schema accepts no value at all."""
    return node.get("not") == {}


def is_true(node: Schema) -> bool:
    """The schema accepts every value (annotations aside)."""
    return all(key in ANNOTATION_KEYWORDS or key.startswith("x-") for key in node)


ANNOTATION_KEYWORDS = frozenset(
    {
        "title",
        "description",
        "examples",
        "$comment",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "$recursiveAnchor",
    }
)


@dataclass(frozen=True)
class RawFinding:
    """A finding before the policy and mode are applied.

    ``backward``/``forward`` are strict set semantics; ``lenient_backward``/``lenient_forward``
    say the lenient policy tolerates that direction. ``undecided``: beyond the engine (both
    directions are false here, so containment questions stay unproven; the verdict counts it
    as compatible and reports it at level ``unknown``).
    """

    id: str
    old_pointer: str
    new_pointer: str
    message: str
    backward: bool
    forward: bool
    lenient_backward: bool = False
    lenient_forward: bool = False
    undecided: bool = False


class Family(Protocol):
    KEYWORDS: frozenset[str]

    def check(self, cmp: Comparison, old: Schema, new: Schema) -> None: ...


class Comparison:
    def __init__(
        self,
        old: ResolvedSchema,
        new: ResolvedSchema,
        families: Iterable[Family],
    ) -> None:
        self.old = old
        self.new = new
        self.families = tuple(families)
        self.handled = frozenset().union(*(f.KEYWORDS for f in self.families))
        self.findings: list[RawFinding] = []
        self.flipped = False
        # Memos keyed by object identity; each entry also holds both schemas, so an id is never
        # reused by a later temporary schema (``{**rest, **member}``) while the memo lives.
        self._visited: dict[tuple[int, int, bool], tuple[Schema, Schema]] = {}
        self._subsumes: dict[tuple[int, int], tuple[bool, Schema, Schema]] = {}

    # -- pointers ---------------------------------------------------------------------------
    def old_ptr(self, node: Schema, *tokens: str | int) -> str:
        return _join(self.old.pointer(node), tokens)

    def new_ptr(self, node: Schema, *tokens: str | int) -> str:
        return _join(self.new.pointer(node), tokens)

    def old_member_ptr(self, node: Schema, keyword: str, index: int) -> str:
        return self.old.member_pointer(node, keyword, index)

    def new_member_ptr(self, node: Schema, keyword: str, index: int) -> str:
        return self.new.member_pointer(node, keyword, index)

    def keyword_ptrs(self, old: Schema, new: Schema, keyword: str) -> tuple[str, str]:
        """Where ``keyword`` is on each side, or the schema that lacks it."""
        return (
            self.old_ptr(old, keyword) if keyword in old else self.old_ptr(old),
            self.new_ptr(new, keyword) if keyword in new else self.new_ptr(new),
        )

    # -- findings ---------------------------------------------------------------------------
    def emit(
        self,
        rule_id: str,
        old_pointer: str,
        new_pointer: str,
        message: str,
        *,
        backward: bool,
        forward: bool,
        lenient_backward: bool = False,
        lenient_forward: bool = False,
        undecided: bool = False,
    ) -> None:
        if undecided:
            backward = forward = lenient_backward = lenient_forward = False
        if self.flipped:  # inside ``not``: accepting more means rejecting more
            backward, forward = forward, backward
            lenient_backward, lenient_forward = lenient_forward, lenient_backward
        self.findings.append(
            RawFinding(
                rule_id,
                old_pointer,
                new_pointer,
                message,
                backward,
                forward,
                lenient_backward and not backward,
                lenient_forward and not forward,
                undecided,
            )
        )

    def emit_moved(
        self,
        rule_id: str,
        old_pointer: str,
        new_pointer: str,
        message: str,
        *,
        before: Schema,
        after: Schema,
    ) -> None:
        """``emit`` for values that ``before`` checked and ``after`` checks now (a key or array
        position moved to or from a schema of its own): compatible in each direction as far as
        one schema subsumes the other."""
        self.emit(
            rule_id,
            old_pointer,
            new_pointer,
            message,
            backward=self.subsumes(before, after),
            forward=self.subsumes(after, before),
        )

    # -- the walk ---------------------------------------------------------------------------
    def compare(self, old: Schema, new: Schema) -> None:
        """Report every difference between two schema nodes (and their subschemas)."""
        if json_equal(old, new):
            return
        key = (id(old), id(new), self.flipped)
        if key in self._visited:
            return  # shared definitions are compared once; recursion terminates
        self._visited[key] = (old, new)
        if "$ref" in old or "$ref" in new:  # a recursive reference kept as a marker
            ref_changed(self, old, new)
            return
        old_false, new_false = is_false(old), is_false(new)
        if old_false or new_false:
            check_false(self, old, new, old_false, new_false)
            return
        for family in self.families:
            family.check(self, old, new)
        for keyword in sorted(set(old) | set(new)):
            if keyword in self.handled or keyword.startswith("x-"):
                continue
            if not json_equal(old.get(keyword, _MISSING), new.get(keyword, _MISSING)):
                keyword_changed(self, old, new, keyword)

    def compare_flipped(self, old: Schema, new: Schema) -> None:
        """Compare the operands of ``not``: the directions swap."""
        self.flipped = not self.flipped
        try:
            self.compare(old, new)
        finally:
            self.flipped = not self.flipped

    def subsumes(self, sub: Schema, sup: Schema) -> bool:
        """Does every value valid under ``sub`` also validate under ``sup`` (strict semantics,
        as far as the rules can tell)?"""
        if json_equal(sub, sup) or is_false(sub) or is_true(sup):
            return True
        key = (id(sub), id(sup))
        if key not in self._subsumes:
            self._subsumes[key] = (True, sub, sup)  # assume yes while recursing (coinductive)
            probe = Comparison(self.old, self.new, self.families)
            probe._subsumes = self._subsumes
            probe.compare(sub, sup)
            self._subsumes[key] = (all(f.backward for f in probe.findings), sub, sup)
        return self._subsumes[key][0]


def _join(base: str, tokens: tuple[Any, ...]) -> str:
    return join(base, *tokens)
