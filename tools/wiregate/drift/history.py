"""``wiregate drift history``: every revision of a copy, judged against the canonical contract
and against the revision before it, so the output says since which commit a copy drifted."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contracts import Contract
from wiregate.diff import Change
from wiregate.drift.check import Judgement, judge
from wiregate.drift.code import judge_code
from wiregate.drift.config import (
    CopySpec,
    MirrorsConfig,
    RepositorySpec,
    copy_identity,
    load_mirrors,
)
from wiregate.drift.result import FIRST_VISIBLE, HistoryEntry, HistoryReport, Verdict
from wiregate.errors import UserError
from wiregate.files import not_a_directory
from wiregate.sources import parse_document

if TYPE_CHECKING:
    import git

    from wiregate.gitsource import FileRevision

__all__ = ["run_history"]


def run_history(
    contract: Contract,
    repository_name: str,
    overrides: Mapping[str, Path | None] | None = None,
    copies: str | Collection[str] | None = None,
    ref: str = "HEAD",
    *,
    config: MirrorsConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[HistoryReport, ...]:
    """The history of the copies named (``copies``: ids) or of every copy of a repository."""
    config = config or load_mirrors(contract)
    if isinstance(copies, str):
        copies = (copies,)  # one copy id
    ((repository, specs),) = config.select([repository_name], copies)
    generated = [spec.id for spec in specs if spec.kind == "generated"]
    if generated and copies is not None:
        raise UserError(
            f"copy {generated[0]!r} is generated: drift checks it for staleness, it has no "
            "history to judge"
        )
    specs = tuple(spec for spec in specs if spec.kind != "generated")
    checkout, _ = config.checkout(repository, dict(overrides or {}), environ)
    problem = not_a_directory(checkout)
    if problem is not None:
        raise UserError(f"{checkout}: checkout of {repository.name!r} not found: {problem}")
    return tuple(_copy_history(contract, repository, spec, checkout, ref, config) for spec in specs)


def _copy_history(
    contract: Contract,
    repository: RepositorySpec,
    spec: CopySpec,
    checkout: Path,
    ref: str,
    config: MirrorsConfig,
) -> HistoryReport:
    # Imported here, not at the top: plain `wiregate drift` runs never need GitPython.
    from wiregate.gitsource import open_repo

    with open_repo(checkout) as repo:  # closes git's helper processes
        entries = _entries(contract, repository, spec, checkout, ref, repo, config)
    return HistoryReport(
        **copy_identity(repository, spec, checkout),
        ref=ref,
        entries=tuple(reversed(entries)),
    )


def _entries(
    contract: Contract,
    repository: RepositorySpec,
    spec: CopySpec,
    checkout: Path,
    ref: str,
    repo: git.Repo,
    config: MirrorsConfig,
) -> list[HistoryEntry]:
    """The judged revisions of a copy, oldest first."""
    from wiregate.gitsource import file_at, file_history, path_in_repo, shallow_boundary

    paths = [path_in_repo(repo, checkout, candidate) for candidate in spec.paths]
    revisions = file_history(repo, paths, ref)
    if spec.code and revisions:
        revisions = _with_referenced(repo, checkout, spec, ref, revisions, config)
    # In a shallow clone, the copy seems "added" at the oldest commit git has.
    boundary = shallow_boundary(repo)
    canonical = contract.schemas[spec.schema]

    # Oldest first, so each revision can be compared with the one before it.
    entries: list[HistoryEntry] = []
    verdicts: dict[bytes, Judgement] = {}
    previous: tuple[str, dict[str, Any]] | None = None  # (commit, document)
    for revision in reversed(revisions):
        if revision.commit in boundary:
            revision = replace(revision, status=FIRST_VISIBLE, old_path=None)
        if revision.deleted:
            entries.append(_entry(revision, Verdict.DELETED))
            previous = None
            continue
        if revision.moved_away and revision.path not in paths:
            message = f"renamed to {revision.path} (not a configured path)"
            entries.append(_entry(revision, Verdict.RENAMED_AWAY, message=message))
            previous = None
            continue
        label = f"{checkout}@{revision.commit[:7]}:{revision.path}"
        try:
            data = file_at(repo, revision.commit, revision.path, config.max_file_bytes) or b""
            if spec.code:
                document = _code_document(repo, checkout, spec, revision, config)
                data = json.dumps(document, sort_keys=True).encode()  # what is judged
            else:
                document = parse_document(data, label)
            judged = judge_code if spec.code else judge
            if data not in verdicts:
                verdicts[data] = judged(canonical, document, spec, repository.policy, label=label)
            verdict, changes, failed = verdicts[data]
            step: tuple[Change, ...] = ()
            step_failed: tuple[str, ...] = ()
            if previous is not None:
                # Two revisions of the same code: compared as extracted, without a lens.
                _, step, step_failed = judge(
                    previous[1],
                    document,
                    spec,
                    repository.policy,
                    label=label,
                    canonical_at=spec.copy_at,
                    canonical_origin="previous revision",
                )
        except UserError as exc:
            entries.append(_entry(revision, Verdict.ERROR, message=str(exc)))
            continue
        entries.append(
            _entry(
                revision,
                verdict,
                changes=changes,
                failed=failed,
                previous=previous[0] if previous else None,
                since_previous=step,
                previous_failed=step_failed,
            )
        )
        previous = (revision.commit, document)
    return entries


#: The status of a revision that changed a file a code copy's type is extracted from (a
#: referenced type's file, a tsconfig, an imported module), not the declaring file.
REFERENCED = "referenced"


def _with_referenced(
    repo: git.Repo,
    checkout: Path,
    spec: CopySpec,
    ref: str,
    revisions: list[FileRevision],
    config: MirrorsConfig,
) -> list[FileRevision]:
    """The declaring file's revisions (newest first) and, among them, the commits that changed
    only one of the other files the type is extracted from at ``ref``: status "referenced"."""
    from wiregate.drift.code import CodeCopies
    from wiregate.drift.copies import GitTree
    from wiregate.gitsource import path_in_repo, resolve_commit

    newest = revisions[0]
    if newest.deleted or newest.moved_away:
        return revisions
    tree = GitTree(checkout, ref, config.max_file_bytes, repo=repo, bounds=config.ref_bounds)
    try:
        root = Path(repo.working_dir).resolve()
        path = (root / newest.path).relative_to(checkout.resolve()).as_posix()
        files = CodeCopies(tree.code_root(), [spec]).files(spec, path)
    except (UserError, ValueError):
        return revisions  # judged (and reported) revision by revision below
    finally:
        tree.close()
    others = sorted({path_in_repo(repo, checkout, f) for f in files} - {newest.path})
    if not others:
        return revisions
    commit = resolve_commit(repo, ref)
    order = {sha: index for index, sha in enumerate(repo.git.rev_list(commit).split())}
    output = repo.git.log("--format=%H%x1f%aI%x1f%s%x1e", commit, "--", *others)
    known = {r.commit for r in revisions}
    merged = list(revisions)
    for record in output.split("\x1e"):
        fields = record.strip().split("\x1f")
        if len(fields) != 3 or fields[0] in known or fields[0] not in order:
            continue
        sha, date, subject = fields
        # The declaring file as of that commit: its newest revision at or before it.
        older = [r for r in revisions if order.get(r.commit, -1) >= order[sha]]
        if not older or older[0].deleted or older[0].moved_away:
            continue  # the type was not declared yet (or no more) at that commit
        merged.append(
            replace(
                older[0], commit=sha, date=date, subject=subject, status=REFERENCED, old_path=None
            )
        )
    merged.sort(key=lambda r: order.get(r.commit, len(order)))
    return merged


def _code_document(
    repo: git.Repo, checkout: Path, spec: CopySpec, revision: FileRevision, config: MirrorsConfig
) -> dict[str, Any]:
    """A code copy's schema extracted from the files committed at ``revision``."""
    from wiregate.drift.code import CodeCopies
    from wiregate.drift.copies import GitTree

    tree = GitTree(
        checkout, revision.commit, config.max_file_bytes, repo=repo, bounds=config.ref_bounds
    )
    try:
        root = Path(repo.working_dir).resolve()
        path = (root / revision.path).relative_to(checkout.resolve()).as_posix()
        return CodeCopies(tree.code_root(), [spec]).schema(spec, path)
    finally:
        tree.close()


def _entry(revision: FileRevision, verdict: Verdict, **fields: Any) -> HistoryEntry:
    return HistoryEntry(
        commit=revision.commit,
        date=revision.date,
        subject=revision.subject,
        status=revision.status,
        path=revision.path,
        old_path=revision.old_path,
        verdict=verdict,
        **fields,
    )
