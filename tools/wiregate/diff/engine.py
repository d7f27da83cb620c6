"""The pipeline: normalise and resolve both documents, let the rule families judge every
difference (consulting the structural facts for keywords no rule judges), apply the policy and
mode, and return the verdict."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Set
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from wiregate.diff.budget import NODE_BUDGET, TIME_LIMIT, Budget, BudgetExceeded
from wiregate.diff.drafts import Drafts, choose_draft
from wiregate.diff.findings import Change
from wiregate.diff.load import (
    NormalisedDocument,
    ResolvedSchema,
    Schema,
    SchemaLoadError,
    normalise_document,
    resolve,
)
from wiregate.diff.rules import FAMILIES, FORMAT_ASSERTION_FAMILIES, definitions
from wiregate.diff.rules.base import Comparison, Family, RawFinding
from wiregate.diff.rules.schema import REF_CHANGED
from wiregate.diff.values import canonical, json_equal
from wiregate.diff.verdict import MODES, POLICIES, DiffResult, level_for
from wiregate.diff.witness import Document, with_witnesses
from wiregate.exactjson import exact_integers
from wiregate.metaschema import METASCHEMAS
from wiregate.pointer import PointerError, fragment, join, split
from wiregate.pointer import resolve as resolve_pointer

__all__ = ["diff"]


@exact_integers()  # messages show integers of any size
def diff(
    old: Mapping[str, Any] | bool,
    new: Mapping[str, Any] | bool,
    *,
    mode: str = "backward",
    policy: str = "strict",
    old_at: str = "#",
    new_at: str = "#",
    old_origin: str = "old schema",
    new_origin: str = "new schema",
    draft: str | None = None,
    format_assertion: bool = False,
    node_budget: int = NODE_BUDGET,
    time_limit: float | None = TIME_LIMIT,
) -> DiffResult:
    """Compare the schema at ``old_at`` in ``old`` with the one at ``new_at`` in ``new``.

    Raises :class:`~wiregate.diff.load.SchemaLoadError` for a document that cannot be compared
    (its message starts with ``old_origin`` or ``new_origin``; a schema nested too deeply for
    the recursive walk is one, and so is a pair whose comparison exceeds ``node_budget``
    compared schema nodes or ``time_limit`` seconds, None: no time limit) and
    :class:`ValueError` for an unknown mode, policy or draft.
    Each document is read under its own draft (``$schema``, else detected from its keywords),
    or both under ``draft`` when given (``draft-07``, ``7``, ``2019-09``, ``2020-12``...); the
    result says which (:attr:`DiffResult.drafts`). ``format_assertion`` judges ``format`` as a
    constraint (by default it is an annotation, as in draft 2020-12 without the
    format-assertion vocabulary).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    drafts = Drafts(choose_draft(old, draft), choose_draft(new, draft))
    budget = Budget(node_budget, time_limit)
    with _nesting_limit(old_origin), _within_budget(old_origin), budget.active():
        old_doc = normalise_document(old, origin=old_origin, draft=drafts.old.draft, at=old_at)
        old_schema = resolve(old_doc, old_at, origin=old_origin)
    with _nesting_limit(new_origin), _within_budget(new_origin), budget.active():
        new_doc = normalise_document(new, origin=new_origin, draft=drafts.new.draft, at=new_at)
        new_schema = resolve(new_doc, new_at, origin=new_origin)
    # Each finding with the selections (old, new) it compares: where its witness is sought.
    raw: list[tuple[RawFinding, str, str]] = []
    families = FORMAT_ASSERTION_FAMILIES if format_assertion else FAMILIES
    at_roots = old_at == "#" and new_at == "#"
    with (
        _nesting_limit(old_origin, new_origin),
        _within_budget(old_origin, new_origin),
        budget.active(),
    ):
        if not json_equal(old_schema.tree, new_schema.tree):
            raw += [
                (finding, old_at, new_at)
                for finding in _judge(old_schema, new_schema, families, budget)
            ]
        if at_roots:
            # Pointers of every schema either root reaches: the definitions among them are
            # compared there; the others are compared on their own.
            reached = frozenset(old_schema.sources.values()) | frozenset(
                new_schema.sources.values()
            )
            for finding in definitions.check(old_doc, new_doc):
                # the definition added or removed, as a fragment (its name percent-encoded)
                shown = max(finding.old_pointer, finding.new_pointer, key=len)
                at = fragment(*split(shown, percent_encoded=False))
                raw.append((finding, at, at))
            raw += _unreferenced_definitions(
                old_doc, new_doc, reached, (old_origin, new_origin), families, budget
            )
    changes: dict[Change, tuple[str, str]] = {}
    for finding, finding_old_at, finding_new_at in raw:
        changes.setdefault(_apply(finding, mode, policy), (finding_old_at, finding_new_at))
    with _nesting_limit(old_origin, new_origin):
        witnessed = with_witnesses(
            changes,
            mode,
            Document(old, old_doc, {old_at: old_schema}, METASCHEMAS[drafts.old.draft]),
            Document(new, new_doc, {new_at: new_schema}, METASCHEMAS[drafts.new.draft]),
            format_assertion=format_assertion,
        )
    as_written = [_as_written(change, old_doc, new_doc) for change in witnessed]
    return DiffResult(mode, policy, tuple(sorted(as_written, key=Change.sort_key)), drafts)


def _as_written(change: Change, old: NormalisedDocument, new: NormalisedDocument) -> Change:
    """``change`` with its pointers naming locations as each document wrote them (a draft-07
    tuple's ``items/0``, not the normalised ``prefixItems/0``)."""
    if not (old.written or new.written):
        return change
    return replace(
        change,
        old_pointer=old.as_written(change.old_pointer),
        new_pointer=new.as_written(change.new_pointer),
        root_old_pointer=old.as_written(change.root_old_pointer),
        root_new_pointer=new.as_written(change.root_new_pointer),
    )


@contextmanager
def _nesting_limit(*origins: str) -> Iterator[None]:
    """Every stage walks schemas recursively (a few Python frames per level of nesting, or of
    ``$ref`` chain once inlined), so a schema some hundreds of levels deep exhausts Python's
    recursion limit: that is a load error naming the documents, never a traceback."""
    try:
        yield
    except RecursionError:
        names = " and ".join(origins)
        raise SchemaLoadError(
            f"{names}: nested too deeply to compare (Python's recursion limit was reached)"
        ) from None


@contextmanager
def _within_budget(*origins: str) -> Iterator[None]:
    """A diff that outgrows its budget is a load error naming the documents at work (one
    while its references are resolved, both while they are compared), never a hang."""
    try:
        yield
    except BudgetExceeded as exc:
        raise SchemaLoadError(
            f"{' vs '.join(origins)}: comparison exceeded {exc.limit} "
            "(schemas too large or too recursive to compare)"
        ) from None


def _judge(
    old: ResolvedSchema, new: ResolvedSchema, families: tuple[Family, ...], budget: Budget
) -> list[RawFinding]:
    comparison = Comparison(old, new, families, budget)
    comparison.compare(old.tree, new.tree)
    return comparison.findings + _twisted_recursions(old, new)


def _twisted_recursions(old: ResolvedSchema, new: ResolvedSchema) -> list[RawFinding]:
    """A recursion below ``not``, ``oneOf`` or ``if`` whose target changed: the change was
    judged where the target is defined, but through the recursion a schema that accepts more
    can make the one around it accept less. Undecided, one finding per place."""
    old_loops, new_loops = dict(old.twisted_loops), dict(new.twisted_loops)
    found: list[RawFinding] = []
    for where in sorted(old_loops.keys() | new_loops.keys()):
        target = old_loops.get(where) or new_loops[where]
        if _canonical_at(old.document, target) == _canonical_at(new.document, target):
            continue
        found.append(
            RawFinding(
                REF_CHANGED,
                where if where in old_loops else old.at,
                where if where in new_loops else new.at,
                f"the recursion to {target} below not/oneOf/if meets a changed {target}: "
                "through it, accepting more can mean accepting less: not decided",
                backward=False,
                forward=False,
                undecided=True,
            )
        )
    return found


def _canonical_at(document: Schema, pointer: str) -> bytes | None:
    """The canonical JSON of the schema at ``pointer`` (a shown pointer in the normalised
    document), None if none."""
    try:
        return canonical(resolve_pointer(document, pointer, percent_encoded=False))
    except PointerError:
        return None


def _unreferenced_definitions(
    old_doc: Schema,
    new_doc: Schema,
    reached: Set[str],
    origins: tuple[str, str],
    families: tuple[Family, ...],
    budget: Budget,
) -> Iterable[tuple[RawFinding, str, str]]:
    """A ``$defs`` entry that neither root reaches is compared on its own, so no difference
    goes unexplained: a record type validated by name, or a building block of one (its
    findings carry its own pointers either way, so they are reported once)."""
    old_defs: dict[str, Schema] = old_doc.get("$defs") or {}
    new_defs: dict[str, Schema] = new_doc.get("$defs") or {}
    for name in sorted(old_defs.keys() & new_defs.keys()):
        if join("#", "$defs", name) in reached or json_equal(old_defs[name], new_defs[name]):
            continue
        pointer = fragment("$defs", name)
        old_schema = resolve(old_doc, pointer, origin=origins[0])
        new_schema = resolve(new_doc, pointer, origin=origins[1])
        yield from (
            (finding, pointer, pointer)
            for finding in _judge(old_schema, new_schema, families, budget)
        )


def _apply(finding: RawFinding, mode: str, policy: str) -> Change:
    if finding.undecided:  # beyond the engine: reported as such, never against the verdict
        return Change(
            id=finding.id,
            level=level_for(True, True, mode, False, undecided=True),
            old_pointer=finding.old_pointer,
            new_pointer=finding.new_pointer,
            message=finding.message,
            backward=True,
            forward=True,
            root_old_pointer=finding.root_old_pointer,
            root_new_pointer=finding.root_new_pointer,
            subject=finding.subject,
        )
    lenient = policy == "lenient"
    backward = finding.backward or (lenient and finding.lenient_backward)
    forward = finding.forward or (lenient and finding.lenient_forward)
    tolerated = (backward and not finding.backward) or (forward and not finding.forward)
    return Change(
        id=finding.id,
        level=level_for(backward, forward, mode, tolerated),
        old_pointer=finding.old_pointer,
        new_pointer=finding.new_pointer,
        message=finding.message,
        backward=backward,
        forward=forward,
        tolerated_by=policy if tolerated else None,
        root_old_pointer=finding.root_old_pointer,
        root_new_pointer=finding.root_new_pointer,
        subject=finding.subject,
    )
