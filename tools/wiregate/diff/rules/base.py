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

from wiregate.diff.budget import Budget
from wiregate.diff.containment import Containment
from wiregate.diff.keywords import SUBSCHEMA_MAP_KEYWORDS
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
    as compatible and reports it at level ``unknown``). ``root_old_pointer``/
    ``root_new_pointer`` name where the edit behind the finding was made in each document (by
    default the finding's own pointers); findings caused by one edit share them.
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
    root_old_pointer: str = ""
    root_new_pointer: str = ""
    subject: str | None = None  # see Change.subject

    def __post_init__(self) -> None:
        if not self.root_old_pointer:
            object.__setattr__(self, "root_old_pointer", self.old_pointer)
        if not self.root_new_pointer:
            object.__setattr__(self, "root_new_pointer", self.new_pointer)


class Family(Protocol):
    KEYWORDS: frozenset[str]

    def check(self, cmp: Comparison, old: Schema, new: Schema) -> None: ...


class Comparison:
    def __init__(
        self,
        old: ResolvedSchema,
        new: ResolvedSchema,
        families: Iterable[Family],
        budget: Budget | None = None,
    ) -> None:
        self.old = old
        self.new = new
        self.families = tuple(families)
        self.budget = budget or Budget()
        self.handled = frozenset().union(*(f.KEYWORDS for f in self.families))
        self.findings: list[RawFinding] = []
        self.flipped = False
        # Memos keyed by object identity; each entry also holds both schemas, so an id is never
        # reused by a later temporary schema (``{**rest, **member}``) while the memo lives.
        self._visited: dict[tuple[int, int, bool], tuple[Schema, Schema]] = {}
        self._subsumes: dict[tuple[int, int], tuple[bool, Schema, Schema]] = {}
        asserts_format = any(getattr(f, "ASSERTS_FORMAT", False) for f in self.families)
        self.containment = Containment(self._probe, formats=asserts_format, spend=self.budget.spend)
        # The node pair being judged, where each was written, and the root edit (None while
        # both sides are read from the same place).
        self._frame: _Frame | None = None
        self._constraints: dict[tuple[int, str], tuple[Schema, Schema]] = {}

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
        keyword: str | None = None,
        subject: str | None = None,
    ) -> None:
        """Record a finding. A direction the rule could not grant is granted when set
        containment shows it in context: every value of the one node meets the other
        node's ``keyword`` (a constraint of its own), or the whole other node."""
        self.budget.spend()  # a probe may emit one finding per property of a wide schema
        frame = self._frame
        if undecided:
            backward = forward = lenient_backward = lenient_forward = False
        elif frame is not None and not (backward and forward):
            if keyword is None:
                keyword = self._keyword_at(frame, old_pointer, new_pointer)
            if not backward and self.implied(frame.old, frame.new, keyword):
                backward = True
                message += "; every value the old schema accepts already meets it"
            if not forward and self.implied(frame.new, frame.old, keyword):
                forward = True
                message += "; every value the new schema accepts still meets the old one"
        if self.flipped:  # inside ``not``: accepting more means rejecting more
            backward, forward = forward, backward
            lenient_backward, lenient_forward = lenient_forward, lenient_backward
        root = frame.root if frame is not None and frame.root else (old_pointer, new_pointer)
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
                *root,
                subject,
            )
        )

    def _keyword_at(self, frame: _Frame, old_pointer: str, new_pointer: str) -> str | None:
        """The keyword of the judged node pair that a finding points at, if any."""
        for pointer, source in ((new_pointer, frame.new_source), (old_pointer, frame.old_source)):
            keyword = pointer.rsplit("/", 1)[-1]
            if keyword in STANDALONE_KEYWORDS and pointer == _join(source, (keyword,)):
                return keyword
        return None

    def implied(self, node: Schema, other: Schema, keyword: str | None = None) -> bool:
        """Every value valid under ``node`` meets ``other``'s constraint ``keyword`` (one that
        holds on its own: not one read together with siblings, like ``properties``), or, with
        no such keyword, all of ``other``."""
        # Objects and arrays are not judged structurally here: that is what the rules that
        # called this are doing (asking them again would assume the answer).
        # A keyword ``other`` lacks is no constraint to meet: the whole schemas are compared
        # (what the finding's rule weighed, say the members of an added anyOf against the
        # constraints they replace).
        if keyword is None or keyword not in STANDALONE_KEYWORDS or keyword not in other:
            return self.containment.contains(other, node, structural=False)
        key = (id(other), keyword)
        if key not in self._constraints:
            self._constraints[key] = (other, {keyword: other[keyword]})
        return self.containment.contains(self._constraints[key][1], node, structural=False)

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
        self.budget.spend()
        if json_equal(old, new):
            return
        # A recursion on one side, the same recursion with keywords beside it on the other.
        if "$ref" in old and "$ref" not in new and _beside(new, old):
            old = self.old.as_member(old)
        elif "$ref" in new and "$ref" not in old and _beside(old, new):
            new = self.new.as_member(new)
        key = (id(old), id(new), self.flipped)
        if key in self._visited:
            return  # shared definitions are compared once; recursion terminates
        self._visited[key] = (old, new)
        outer = self._frame
        self._frame = self._enter(outer, old, new)
        try:
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
        finally:
            self._frame = outer

    def _enter(self, outer: _Frame | None, old: Schema, new: Schema) -> _Frame:
        """The frame of a node pair: where each node was written (its parent's place and the
        keyword path to it), and the root edit. Two nodes read from different places (a
        ``$ref`` retargeted, a reference replaced by a schema written inline) start a root
        edit at the places that hold them; everything found below shares it. A node whose
        source differs from where it is written was read through a ``$ref``."""
        old_source, new_source = self.old.pointer(old), self.new.pointer(new)
        frame = _Frame(old, new, old_source, new_source, outer, outer.root if outer else None)
        # In step: both read from one place (the same definition, or the same position in
        # both documents), or both written where they are read from.
        if frame.root is None and old_source != new_source:
            old_at, new_at = frame.written()
            if old_at != old_source or new_at != new_source:
                frame.root = (old_at, new_at)
        return frame

    def compare_flipped(self, old: Schema, new: Schema) -> None:
        """Compare the operands of ``not``: the directions swap."""
        self.flipped = not self.flipped
        try:
            self.compare(old, new)
        finally:
            self.flipped = not self.flipped

    def subsumes(self, sub: Schema, sup: Schema) -> bool:
        """Does every value valid under ``sub`` also validate under ``sup`` (strict semantics,
        as far as set containment or the rules can tell)?"""
        if json_equal(sub, sup) or is_false(sub) or is_true(sup):
            return True
        return self.containment.contains(sup, sub) or self._probe(sub, sup)

    def _probe(self, sub: Schema, sup: Schema) -> bool:
        """``subsumes`` judged by the rules: a silent comparison whose every finding is
        backward compatible."""
        if json_equal(sub, sup) or is_false(sub) or is_true(sup):
            return True
        key = (id(sub), id(sup))
        if key not in self._subsumes:
            self._subsumes[key] = (True, sub, sup)  # assume yes while recursing (coinductive)
            self.budget.spend()
            probe = Comparison(self.old, self.new, self.families, self.budget)
            probe._subsumes = self._subsumes
            probe.containment = self.containment
            probe._constraints = self._constraints
            probe.compare(sub, sup)
            self._subsumes[key] = (all(f.backward for f in probe.findings), sub, sup)
        return self._subsumes[key][0]


def _beside(node: Schema, marker: Schema) -> bool:
    """``node`` holds ``marker`` (a recursion) among its allOf members, keywords beside it."""
    return any(json_equal(member, marker) for member in node.get("allOf") or ())


def _join(base: str, tokens: tuple[Any, ...]) -> str:
    return join(base, *tokens)


@dataclass
class _Frame:
    old: Schema
    new: Schema
    old_source: str
    new_source: str
    parent: _Frame | None
    root: tuple[str, str] | None
    _at: tuple[str, str] | None = None

    def written(self) -> tuple[str, str]:
        """Where each node was written: its parent's place and the keyword path to it (a
        node read through a ``$ref`` is written at the reference, not at its target)."""
        if self._at is None:
            if self.parent is None:
                self._at = (self.old_source, self.new_source)
            else:
                old_at, new_at = self.parent.written()
                self._at = (
                    _written(self.parent.old, old_at, self.old) or self.old_source,
                    _written(self.parent.new, new_at, self.new) or self.new_source,
                )
        return self._at


def _written(parent: Schema, parent_at: str, child: Schema) -> str | None:
    """Where ``child`` (a subschema of ``parent``, found by identity) was written."""
    for key, value in parent.items():
        if value is child:
            return _join(parent_at, (key,))
        if isinstance(value, list):
            for index, member in enumerate(value):
                if member is child:
                    return _join(parent_at, (key, index))
        elif isinstance(value, dict) and key in SUBSCHEMA_MAP_KEYWORDS:
            for name, member in value.items():
                if member is child:
                    return _join(parent_at, (key, name))
    return None


# Keywords whose constraint holds on its own, whatever the schema's other keywords say
# (``{keyword: value}`` alone accepts exactly the values that the keyword lets through).
STANDALONE_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "required",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "propertyNames",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    }
)
