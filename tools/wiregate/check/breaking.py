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
from wiregate.check.model import StepResult, StepStatus
from wiregate.errors import UserError
from wiregate.gitsource import open_repo, path_in_repo, read_at_ref, resolve_commit
from wiregate.sources import parse_document

STEP = "breaking"


def version_marks(schema: Any) -> tuple[str | None, tuple[str, ...]]:
    """The ``$id`` and every ``schema_version`` constant of a schema document."""

    def consts(node: Any, key: str | None = None) -> Iterator[str]:
        if isinstance(node, dict):
            if key in ("schema_version", "SchemaVersion") and isinstance(node.get("const"), str):
                yield node["const"]
            for child_key, child in node.items():
                yield from consts(child, child_key)
        elif isinstance(node, list):
            for child in node:
                yield from consts(child)

    schema_id = schema.get("$id") if isinstance(schema, dict) else None
    return schema_id, tuple(sorted(set(consts(schema))))


_TRAILING_VERSION = re.compile(r"v(\d+(?:\.\d+)*)/?$")


def _version(mark: str | None) -> tuple[int, ...] | None:
    """The trailing version of a ``$id`` or ``schema_version`` (``.../v2``, ``x/v1.1``)."""
    found = _TRAILING_VERSION.search(mark or "")
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def is_version_bump(
    old: tuple[str | None, tuple[str, ...]], new: tuple[str | None, tuple[str, ...]]
) -> bool:
    """The ``$id`` or a ``schema_version`` constant moved to a higher version.

    Where the marks carry no version number, any change of them counts as a bump; where they
    do, a change must raise the highest one (a move back to v1 is no bump)."""
    if old == new:
        return False
    old_versions = [v for v in map(_version, (old[0], *old[1])) if v is not None]
    new_versions = [v for v in map(_version, (new[0], *new[1])) if v is not None]
    if not old_versions or not new_versions:
        return True
    return max(new_versions) > max(old_versions)


def check_breaking(
    contract: Contract,
    *,
    against: str = "HEAD",
    allow_breaking: str | None = None,
    policy: str = "lenient",
) -> StepResult:
    """Compare each contract file with its version at ``against`` in both directions.

    The lenient policy is the default here: adding a typed optional property to an open record
    is the everyday contract change, and strict set semantics would call it breaking.
    """
    from wiregate.diff import SchemaLoadError, diff  # heavy: imported only when this step runs

    if contract.bundled:
        return StepResult(STEP, StepStatus.SKIPPED, "bundled contract: no git history to compare")
    root = contract.directory.parent
    try:
        repo = open_repo(root)
        resolve_commit(repo, against)
    except UserError as exc:
        return StepResult(STEP, StepStatus.ERROR, str(exc))

    details: list[str] = []
    breaking = allowed = 0
    for name, file_name in SCHEMA_FILES.items():
        relative = (Path("contracts") / file_name).as_posix()
        # git speaks of paths from its root, which may hold the wiregate folder further down.
        in_repo = path_in_repo(repo, root, relative)
        try:
            data = read_at_ref(root, against, in_repo)
        except UserError:
            details.append(f"{relative}: new since {against}")
            continue
        try:
            old = parse_document(data, f"{relative}@{against}")
        except UserError as exc:
            details.append(f"{exc}; not compared")
            continue
        new = contract.schemas[name]
        try:
            result = diff(old, new, mode="full", policy=policy)
        except SchemaLoadError as exc:
            return StepResult(STEP, StepStatus.ERROR, f"{relative}@{against}: {exc}")
        incompatible = [c for c in result.changes if not (c.backward and c.forward)]
        if not incompatible:
            continue
        findings = [
            f"  {c.id} at {c.new_pointer or c.old_pointer}: {c.message}" for c in incompatible
        ]
        old_marks, new_marks = version_marks(old), version_marks(new)
        if is_version_bump(old_marks, new_marks):
            details.append(
                f"{relative}: {len(incompatible)} breaking changes with a version bump "
                f"({old_marks[0]} -> {new_marks[0]})"
            )
            continue
        if allow_breaking:
            allowed += 1
            details.append(
                f"{relative}: {len(incompatible)} breaking changes without a version bump, "
                f"allowed by --allow-breaking: {allow_breaking}"
            )
        else:
            breaking += 1
            details.append(
                f"{relative}: {len(incompatible)} breaking changes since {against} without a "
                "version bump of $id or schema_version"
            )
        details.extend(findings)
    if breaking:
        return StepResult(
            STEP, StepStatus.FAILED, f"breaking change without a version bump since {against}",
            tuple(details),
        )  # fmt: skip
    summary = f"no breaking change since {against}"
    if allowed:
        summary = f"breaking change since {against} allowed by --allow-breaking: {allow_breaking}"
    return StepResult(STEP, StepStatus.PASSED, summary, tuple(details))
