"""Step 3 of ``wiregate check``: the contract against its previous committed version.

A change that is not compatible in both directions breaks a producer or a consumer somewhere;
it must come with a version bump (the ``$id`` or the ``schema_version`` constant), or be
allowed explicitly with ``--allow-breaking``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contracts import SCHEMA_FILES, Contract
from wiregate.check.model import Problem, StepResult, StepStatus
from wiregate.errors import UserError
from wiregate.gitsource import file_at, open_repo, path_in_repo, resolve_commit
from wiregate.policy import DEFAULT_POLICY
from wiregate.sources import parse_document

STEP = "breaking"


def version_marks(schema: Any) -> tuple[str | None, tuple[str, ...]]:
    """The ``$id`` and every ``schema_version`` constant of a schema document: the ``const``
    of a property named ``schema_version`` or a definition named ``SchemaVersion`` (never a
    value inside data: ``examples``, ``default``, ``enum``, ``const``)."""

    def consts(node: Any, keyword: str | None = None) -> Iterator[str]:
        if isinstance(node, list):
            for child in node:
                yield from consts(child)
            return
        if not isinstance(node, dict):
            return
        for key, child in node.items():
            if keyword in _SCHEMA_MAPS:  # keys are names, values schemas
                mark = child.get("const") if isinstance(child, dict) else None
                if key in _MARK_NAMES and isinstance(mark, str):
                    yield mark
                yield from consts(child)
            elif key not in _DATA_KEYWORDS:
                yield from consts(child, key)

    schema_id = schema.get("$id") if isinstance(schema, dict) else None
    return schema_id, tuple(sorted(set(consts(schema))))


_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})
_MARK_NAMES = frozenset({"schema_version", "SchemaVersion"})
_DATA_KEYWORDS = frozenset({"examples", "default", "enum", "const"})
_TRAILING_VERSION = re.compile(r"v(\d+(?:\.\d+)*)/?$")


def _version(mark: str | None) -> tuple[tuple[int, str], ...] | None:
    """The trailing version of a ``$id`` or ``schema_version`` (``.../v2``, ``x/v1.1``), each
    number as (digits, digits) so that numbers of any length compare without conversion."""
    found = _TRAILING_VERSION.search(mark or "")
    if not found:
        return None
    numbers = (part.lstrip("0") for part in found.group(1).split("."))
    return tuple((len(number), number) for number in numbers)


def is_version_bump(
    old: tuple[str | None, tuple[str, ...]], new: tuple[str | None, tuple[str, ...]]
) -> bool:
    """The ``$id`` or a ``schema_version`` constant moved to a higher version.

    Where neither side's marks carry a version number, any change of them counts as a bump;
    where the old ones do, the new ones must carry a higher one (a move back to v1, or to a
    mark without a number such as ``latest``, is no bump)."""
    if old == new:
        return False
    old_versions = [v for v in map(_version, (old[0], *old[1])) if v is not None]
    new_versions = [v for v in map(_version, (new[0], *new[1])) if v is not None]
    if not old_versions:
        return True
    return bool(new_versions) and max(new_versions) > max(old_versions)


def _changes(count: int) -> str:
    return f"{count} breaking change{'' if count == 1 else 's'}"


def check_breaking(
    contract: Contract,
    *,
    against: str | None = None,
    allow_breaking: str | None = None,
    policy: str = DEFAULT_POLICY,
) -> StepResult:
    """Compare each contract file with its version at ``against`` (default ``HEAD``) in both
    directions.

    Without an explicit ``against``, a checkout with no previous version (no git repository,
    or no commit yet) has nothing to break: the step is skipped, so the first commit of a
    repository can pass its own hook. An explicit ``against`` that does not resolve is an error.

    The policy defaults to the one of ``diff`` and ``drift`` (strict), so a change is judged
    the same way by all three; the summary says which policy judged.
    """
    from wiregate.diff import SchemaLoadError, diff  # heavy: imported only when this step runs

    if contract.bundled:
        return StepResult(STEP, StepStatus.SKIPPED, "bundled contract: no git history to compare")
    ref = against or "HEAD"
    previous = _previous_versions(contract.directory.parent, against)
    if isinstance(previous, StepResult):
        return previous

    details: list[str] = []
    problems: list[Problem] = []
    failing = bumped = allowed = 0  # breaking changes, by how the step judges them
    for name, file_name in SCHEMA_FILES.items():
        relative = (Path("contracts") / file_name).as_posix()
        data = previous[name]
        if data is None:
            details.append(f"{relative}: new since {ref}")
            continue
        try:
            old = parse_document(data, f"{relative}@{ref}")
        except UserError as exc:
            details.append(f"{exc}; not compared")
            continue
        new = contract.schemas[name]
        try:
            result = diff(old, new, mode="full", policy=policy)
        except SchemaLoadError as exc:
            return _error(f"{relative}@{ref}: {exc}")
        incompatible = [c for c in result.changes if not (c.backward and c.forward)]
        if not incompatible:
            continue
        count = len(incompatible)
        findings = [
            f"  {c.id} at {c.new_pointer or c.old_pointer}: {c.message}" for c in incompatible
        ]
        old_marks, new_marks = version_marks(old), version_marks(new)
        if is_version_bump(old_marks, new_marks):
            bumped += count
            details.append(
                f"{relative}: {_changes(count)} with a version bump "
                f"({old_marks[0]} -> {new_marks[0]})"
            )
            continue
        if allow_breaking:
            allowed += count
            details.append(
                f"{relative}: {_changes(count)} without a version bump, "
                f"allowed by --allow-breaking: {allow_breaking}"
            )
        else:
            failing += count
            message = (
                f"{relative}: {_changes(count)} since {ref} without a version bump of $id or "
                "schema_version"
            )
            details.append(message)
            problems.append(Problem(message, relative))
        details.extend(findings)
    if failing:
        summary = f"breaking change without a version bump since {ref} ({policy})"
        return StepResult(STEP, StepStatus.FAILED, summary, tuple(details), tuple(problems))
    parts = []
    if bumped:
        parts.append(f"{_changes(bumped)} since {ref}, with a version bump")
    if allowed:
        parts.append(
            f"{_changes(allowed)} since {ref} allowed by --allow-breaking: {allow_breaking}"
        )
    summary = ("; ".join(parts) or f"no breaking change since {ref}") + f" ({policy})"
    return StepResult(STEP, StepStatus.PASSED, summary, tuple(details))


def _previous_versions(root: Path, against: str | None) -> dict[str, bytes | None] | StepResult:
    """Each contract file's bytes at ``against`` (None where it did not exist yet), or the
    step's result when there is nothing to compare with or ``against`` does not resolve."""
    ref = against or "HEAD"
    try:
        repo = open_repo(root)
    except UserError as exc:
        return _nothing_to_compare(str(exc)) if against is None else _error(str(exc))
    with repo:  # closes git's helper processes
        if against is None and not repo.head.is_valid():
            return _nothing_to_compare(f"{repo.working_dir}: no commit yet")
        try:
            commit = resolve_commit(repo, ref)
        except UserError as exc:
            return _error(str(exc))
        # git speaks of paths from its root, which may hold the wiregate folder further down.
        return {
            name: file_at(repo, commit, path_in_repo(repo, root, f"contracts/{file_name}"))
            for name, file_name in SCHEMA_FILES.items()
        }


def _error(message: str) -> StepResult:
    return StepResult(STEP, StepStatus.ERROR, message, problems=(Problem(message),))


def _nothing_to_compare(reason: str) -> StepResult:
    return StepResult(STEP, StepStatus.SKIPPED, f"no previous version to compare ({reason})")
