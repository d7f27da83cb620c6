"""``wiregate drift``: judge every configured copy against the canonical contract."""

from __future__ import annotations

import os
import shlex
from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from contracts import Contract
from wiregate.diff import Change, SchemaLoadError, diff
from wiregate.drift.baseline import (
    Baseline,
    BaselineEntry,
    finding_fingerprints,
    load_baseline,
    today,
)
from wiregate.drift.config import (
    CopySpec,
    MirrorsConfig,
    RepositorySpec,
    copy_identity,
    env_var_name,
    load_mirrors,
)
from wiregate.drift.copies import CopySource, CopyUnreadable, FoundCopy, GitTree, WorkTree
from wiregate.drift.findings import make_finding
from wiregate.drift.result import CopyResult, DriftReport, Triage, Verdict, is_breaking
from wiregate.errors import UserError
from wiregate.files import not_a_directory
from wiregate.positions import PositionIndex
from wiregate.sources import DocumentError, parse_document

__all__ = ["Judgement", "judge", "reproduce_command", "run_drift"]

#: (verdict, changes, required directions that fail)
Judgement = tuple[Verdict, tuple[Change, ...], tuple[str, ...]]


def judge(
    canonical: Mapping[str, Any],
    copy: Mapping[str, Any],
    spec: CopySpec,
    policy: str,
    *,
    label: str,
    canonical_at: str | None = None,
    canonical_origin: str = "canonical contract",
) -> Judgement:
    """(verdict, changes, failed directions) of ``copy`` against ``canonical``.

    ``label`` names the copy in the one-line error raised when it cannot be compared (an
    unresolvable ``$ref``, say), and that error says which side is at fault: ``copy`` or
    ``canonical_origin``. ``canonical_at`` overrides the spec's pointer: history compares two
    revisions of the copy.
    """
    try:
        result = diff(
            canonical,
            copy,
            mode=spec.direction,
            policy=policy,
            old_at=spec.canonical_at if canonical_at is None else canonical_at,
            new_at=spec.copy_at,
            old_origin=canonical_origin,
            new_origin="copy",
        )
    except SchemaLoadError as exc:
        raise UserError(f"{label}: {exc}") from None
    if result.identical:
        return Verdict.IDENTICAL, result.changes, ()
    if result.equivalent:
        return Verdict.EQUIVALENT, result.changes, ()
    failed = []
    if spec.direction in ("forward", "full") and not result.forward_compatible:
        failed.append("forward")
    if spec.direction in ("backward", "full") and not result.backward_compatible:
        failed.append("backward")
    verdict = Verdict.BREAKING if failed else Verdict.COMPATIBLE
    return verdict, result.changes, tuple(failed)


def reproduce_command(
    contract: Contract,
    spec: CopySpec,
    policy: str,
    checkout: Path,
    path: str,
    commit: str | None = None,
) -> str:
    """The ``wiregate diff`` command (shell-quoted) that compares the canonical definition with
    the copy at ``path`` in ``checkout`` (at ``commit``: a ``REPO_DIR@REF:PATH`` source) as
    the gate did: same pointers, mode and policy, so it reports the same changes."""
    canonical = _shown(contract.schema_path(spec.schema))
    old = canonical if spec.canonical_at == "#" else canonical + spec.canonical_at
    new = f"{_shown(checkout)}@{commit}:{path}" if commit else _shown(checkout / path)
    new = new if spec.copy_at == "#" else new + spec.copy_at
    return shlex.join(["wiregate", "diff", old, new, "--mode", spec.direction, "--policy", policy])


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when inside it, else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.path.abspath(Path.cwd())).as_posix()
    except ValueError:
        return str(absolute)


def run_drift(
    contract: Contract,
    overrides: Mapping[str, Path | None] | None = None,
    ref: str | None = None,
    strict: bool = False,
    *,
    repositories: Collection[str] | None = None,
    copies: Collection[str] | None = None,
    config: MirrorsConfig | None = None,
    environ: Mapping[str, str] | None = None,
    baseline: Baseline | None = None,
    new_since: str | None = None,
    on: date | None = None,
) -> DriftReport:
    """Check the copies in ``contracts/mirrors.toml`` against ``contract``.

    ``overrides`` maps repository names to checkouts (``--repo NAME=PATH``; None keeps the
    configured place); ``repositories`` and ``copies`` (copy ids) limit the check to those
    names (default: all). A copy that cannot be read becomes an ``error`` result, so one bad
    repository never hides the others; a bad config or an unknown name raises UserError.

    Findings the ``baseline`` accepts (default: ``contracts/drift-baseline.toml``, when it
    exists) do not fail the gate until their entry expires ``on`` a day (default: today, or
    ``WIREGATE_TODAY``). With ``new_since`` (a git ref of each checkout) the findings the copy
    already had at that ref (judged against the same contract) do not fail it either.
    """
    config = config or load_mirrors(contract)
    baseline = baseline if baseline is not None else load_baseline(contract)
    on = on or today(environ)
    overrides = dict(overrides or {})
    for name in overrides:
        config.repository(name)  # an unknown name is a usage error
    results: list[CopyResult] = []
    texts = _ContractTexts(contract)
    for repository, specs in config.select(repositories, copies):
        checkout, explicit = config.checkout(repository, overrides, environ)
        checked = _check_repository(
            contract, config, repository, specs, checkout, explicit, ref, texts
        )
        if new_since is not None:
            checked = _mark_old(contract, config, repository, checked, checkout, new_since)
        results.extend(_accept(result, baseline, on) for result in checked)
    return DriftReport(
        results=tuple(results),
        ref=ref,
        strict=strict,
        new_since=new_since,
        baseline=baseline.path if baseline.entries else None,
        stale=_stale(config, baseline, results),
        contract_root=str(contract.directory.parent),
    )


_JUDGED = frozenset({Verdict.IDENTICAL, Verdict.EQUIVALENT, Verdict.COMPATIBLE, Verdict.BREAKING})


def _accept(result: CopyResult, baseline: Baseline, on: date) -> CopyResult:
    """``result`` with each finding's baseline entry (and whether it has expired)."""
    triage = []
    for change, known in zip(result.changes, result.triage, strict=True):
        entry = None
        if change.level != "info":
            entry = baseline.find(result.repository, result.copy_id, known.fingerprint)
        expired = entry is not None and entry.expired(on)
        triage.append(replace(known, accepted=entry, expired=expired))
    return replace(result, triage=tuple(triage))


def _stale(
    config: MirrorsConfig, baseline: Baseline, results: list[CopyResult]
) -> tuple[BaselineEntry, ...]:
    """Entries that match no finding of a copy judged now, or name a copy that is not
    configured. Copies that were not judged (skipped, unreadable) keep theirs."""
    configured = {(r.name, spec.id) for r in config.repositories for spec in r.copies}
    found = {
        (r.repository, r.copy_id): {t.fingerprint for _, t in r.findings if t is not None}
        for r in results
        if r.verdict in _JUDGED
    }
    return tuple(
        entry
        for entry in baseline.entries
        if (entry.repository, entry.copy) not in configured
        or entry.fingerprint not in found.get((entry.repository, entry.copy), {entry.fingerprint})
    )


def _mark_old(
    contract: Contract,
    config: MirrorsConfig,
    repository: RepositorySpec,
    results: list[CopyResult],
    checkout: Path,
    ref: str,
) -> list[CopyResult]:
    """``results`` with the findings each copy already had at ``ref`` marked ``old``. In a
    repository with no commit yet nothing came before: every finding is new."""
    judged = [r for r in results if r.verdict in _JUDGED]
    if not judged:
        return results
    try:
        tree = GitTree(checkout, ref, config.max_file_bytes, bounds=config.ref_bounds)
    except UserError as exc:
        if not _unborn(checkout):
            return [_not_judged(r, str(exc)) for r in results]
        return results
    known: dict[str, frozenset[str]] = {}
    try:
        for result in judged:
            spec = repository.copy(result.copy_id)
            known[spec.id] = _findings_at(contract, repository, spec, tree)
    finally:
        tree.close()
    marked = []
    for result in results:
        if result.copy_id not in known or result.verdict not in _JUDGED:
            marked.append(result)
            continue
        old = known[result.copy_id]
        triage = tuple(
            replace(t, old=change.level != "info" and t.fingerprint in old)
            for change, t in zip(result.changes, result.triage, strict=True)
        )
        marked.append(replace(result, triage=triage, new_since_commit=tree.commit))
    return marked


def _not_judged(result: CopyResult, message: str) -> CopyResult:
    """A copy that could not be judged after all (its state at --new-since cannot be read):
    an error, with nothing of the comparison that cannot count."""
    return replace(
        result,
        verdict=Verdict.ERROR,
        message=message,
        changes=(),
        failed=(),
        triage=(),
        judged=(),
        reproduce=None,
    )


def _unborn(checkout: Path) -> bool:
    """Whether ``checkout`` is a git repository without any commit yet."""
    from wiregate.gitsource import open_repo

    try:
        with open_repo(checkout) as repo:
            return not repo.head.is_valid()
    except UserError:
        return False


def _findings_at(
    contract: Contract, repository: RepositorySpec, spec: CopySpec, tree: GitTree
) -> frozenset[str]:
    """The fingerprints of the findings of the copy as committed in ``tree``; none when it
    is not there or cannot be judged (then every finding now is new)."""
    if spec.kind == "generated":
        return frozenset()  # staleness is never old: the file must be regenerated now
    try:
        found = tree.find(spec)
        if found is None:
            return frozenset()
        canonical = contract.schemas[spec.schema]
        if spec.code:
            from wiregate.drift.code import CodeCopies, judge_code

            document = CodeCopies(tree.code_root(), [spec]).schema(spec, found.path)
            _, changes, _ = judge_code(
                canonical, document, spec, repository.policy, label=found.label
            )
        else:
            document = parse_document(found.data, found.label)
            _, changes, _ = judge(canonical, document, spec, repository.policy, label=found.label)
    except UserError:
        return frozenset()
    findings = [c for c in changes if c.level != "info"]
    return frozenset(finding_fingerprints(findings, canonical, document, repository.name, spec.id))


class _ContractTexts:
    """Each canonical schema's file (relative to the contract's repository) and position
    index, read and built once per run, only for the schemas a drifted copy needs."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self._read: dict[str, tuple[str | None, PositionIndex | None]] = {}

    def get(self, schema: str) -> tuple[str | None, PositionIndex | None]:
        if schema not in self._read:
            path = self.contract.schema_path(schema)
            try:
                shown = path.relative_to(self.contract.directory.parent).as_posix()
                index = PositionIndex.build(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                shown, index = None, None  # a bundled contract: no file to point at
            self._read[schema] = (shown, index)
        return self._read[schema]


def _place(error: UserError, found: FoundCopy | None, spec: CopySpec) -> dict[str, Any]:
    """Where a copy that cannot be read goes wrong, from the error's own fields: the file
    (relative to the checkout) and, for a schema copy's parse error, its line and column (a
    code copy's errors are about other files too)."""
    file = found.path if found is not None else None
    if isinstance(error, CopyUnreadable):
        file = error.path
    if file is None:
        return {}
    if isinstance(error, DocumentError) and found is not None and spec.kind == "schema":
        return {"error_file": file, "error_line": error.line, "error_column": error.column}
    return {"error_file": file}


def _check_repository(
    contract: Contract,
    config: MirrorsConfig,
    repository: RepositorySpec,
    specs: tuple[CopySpec, ...],
    checkout: Path,
    explicit: bool,
    ref: str | None,
    texts: _ContractTexts,
) -> list[CopyResult]:
    def result(spec: CopySpec, verdict: Verdict, **fields: Any) -> CopyResult:
        return CopyResult(
            **copy_identity(repository, spec, checkout),
            copy_at=spec.copy_at,
            verdict=verdict,
            tried=spec.paths,
            optional=spec.optional,
            **fields,
        )

    problem = not_a_directory(checkout)
    if problem is not None:
        if explicit:
            message = f"{checkout}: checkout of {repository.name!r} not found: {problem}"
            return [result(spec, Verdict.ERROR, message=message) for spec in specs]
        message = (
            f"{checkout}: no checkout of {repository.name!r} "
            f"(set --repo {repository.name}=PATH or {env_var_name(repository.name)})"
        )
        return [result(spec, Verdict.SKIPPED, message=message) for spec in specs]

    source: CopySource
    commit: str | None = None
    try:
        if ref is None:
            source = WorkTree(checkout, config.max_file_bytes, str(config.path))
        else:
            tree = GitTree(checkout, ref, config.max_file_bytes, bounds=config.ref_bounds)
            source, commit = tree, tree.commit
    except UserError as exc:
        return [result(spec, Verdict.ERROR, message=str(exc)) for spec in specs]

    from wiregate.drift.code import CodeCopies, code_reproduce_command, judge_code

    results = []
    try:  # the temporary checkout of a --ref goes on every path out, Ctrl-C included
        code = CodeCopies(source.code_root(), specs) if any(s.code for s in specs) else None
        for spec in specs:
            found: FoundCopy | None = None
            try:
                found = source.find(spec)
                if found is None:
                    message = source.missing_message(spec.id, spec.paths)
                    results.append(result(spec, Verdict.NOT_FOUND, commit=commit, message=message))
                    continue
                if spec.kind == "generated":
                    from wiregate.drift.generated import check_generated

                    fields = check_generated(contract, repository, spec, found, checkout)
                    results.append(result(spec, commit=commit, **fields))
                    continue
                if code is not None and spec.code:
                    document = code.schema(spec, found.path)
                else:
                    document = parse_document(found.data, found.label)
                canonical = contract.schemas[spec.schema]
                verdict, changes, failed = (judge_code if spec.code else judge)(
                    canonical, document, spec, repository.policy, label=found.label
                )
            except UserError as exc:
                results.append(
                    result(
                        spec,
                        Verdict.ERROR,
                        commit=commit,
                        message=str(exc),
                        **_place(exc, found, spec),
                    )
                )
                continue
            fingerprints = finding_fingerprints(
                changes, canonical, document, repository.name, spec.id
            )
            command = None
            if changes and spec.code:
                command = code_reproduce_command(repository.name, spec, checkout, commit)
            elif changes:
                command = reproduce_command(
                    contract, spec, repository.policy, checkout, found.path, commit
                )
            contract_file, contract_index = texts.get(spec.schema) if changes else (None, None)
            # The copy's bytes were read once already: its index is built from them. A code
            # copy's pointers name the schema extracted from it: the extraction placed them.
            copy_index = PositionIndex.of_json(found.data) if changes and not spec.code else None
            locate = code.locations(spec, found.path) if code is not None and spec.code else None
            findings = tuple(
                make_finding(
                    change,
                    breaking=is_breaking(change, failed),
                    repository=repository.name,
                    role=spec.role,
                    schema=spec.schema,
                    canonical_at=spec.canonical_at,
                    contract=canonical,
                    copy=document,
                    copy_file=found.path,
                    copy_index=copy_index,
                    contract_file=contract_file,
                    contract_index=contract_index,
                    fingerprint=fingerprint,
                    copy_locate=locate,
                )
                for change, fingerprint in zip(changes, fingerprints, strict=True)
            )
            results.append(
                result(
                    spec,
                    verdict,
                    path=found.path,
                    commit=commit,
                    changes=changes,
                    failed=failed,
                    reproduce=command,
                    triage=tuple(Triage(f) for f in fingerprints),
                    judged=findings,
                    contract_file=contract_file,
                )
            )
    finally:
        source.close()  # git's helper processes, after a --ref read
    return results
