"""``wiregate drift``: judge every configured copy against the canonical contract."""

from __future__ import annotations

import os
import shlex
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from contracts import Contract
from wiregate.diff import Change, SchemaLoadError, diff
from wiregate.drift.config import (
    CopySpec,
    MirrorsConfig,
    RepositorySpec,
    copy_identity,
    env_var_name,
    load_mirrors,
)
from wiregate.drift.copies import CopySource, GitTree, WorkTree
from wiregate.drift.findings import make_finding
from wiregate.drift.result import CopyResult, DriftReport, Verdict, is_breaking
from wiregate.errors import UserError
from wiregate.positions import PositionIndex
from wiregate.sources import parse_document

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
) -> DriftReport:
    """Check the copies in ``contracts/mirrors.toml`` against ``contract``.

    ``overrides`` maps repository names to checkouts (``--repo NAME=PATH``; None keeps the
    configured place); ``repositories`` and ``copies`` (copy ids) limit the check to those
    names (default: all). A copy that cannot be read becomes an ``error`` result, so one bad
    repository never hides the others; a bad config or an unknown name raises UserError.
    """
    config = config or load_mirrors(contract)
    overrides = dict(overrides or {})
    for name in overrides:
        config.repository(name)  # an unknown name is a usage error
    results: list[CopyResult] = []
    texts = _ContractTexts(contract)
    for repository, specs in config.select(repositories, copies):
        checkout, explicit = config.checkout(repository, overrides, environ)
        results.extend(
            _check_repository(contract, config, repository, specs, checkout, explicit, ref, texts)
        )
    return DriftReport(results=tuple(results), ref=ref, strict=strict)


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

    if not checkout.is_dir():
        if explicit:
            message = f"{checkout}: checkout of {repository.name!r} not found: no such directory"
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
            tree = GitTree(checkout, ref, config.max_file_bytes)
            source, commit = tree, tree.commit
    except UserError as exc:
        return [result(spec, Verdict.ERROR, message=str(exc)) for spec in specs]

    results = []
    try:
        for spec in specs:
            try:
                found = source.find(spec)
                if found is None:
                    message = source.missing_message(spec.id, spec.paths)
                    results.append(result(spec, Verdict.NOT_FOUND, commit=commit, message=message))
                    continue
                document = parse_document(found.data, found.label)
                canonical = contract.schemas[spec.schema]
                verdict, changes, failed = judge(
                    canonical, document, spec, repository.policy, label=found.label
                )
            except UserError as exc:
                results.append(result(spec, Verdict.ERROR, commit=commit, message=str(exc)))
                continue
            command = None
            if changes:
                command = reproduce_command(
                    contract, spec, repository.policy, checkout, found.path, commit
                )
            contract_file, contract_index = texts.get(spec.schema) if changes else (None, None)
            # The copy's bytes were read once already: its index is built from them.
            copy_index = (
                PositionIndex.build(found.data.decode("utf-8", "replace")) if changes else None
            )
            findings = tuple(
                make_finding(
                    change,
                    breaking=is_breaking(change, failed),
                    repository=repository.name,
                    copy_id=spec.id,
                    role=spec.role,
                    schema=spec.schema,
                    canonical_at=spec.canonical_at,
                    contract=canonical,
                    copy=document,
                    copy_file=found.path,
                    copy_index=copy_index,
                    contract_file=contract_file,
                    contract_index=contract_index,
                )
                for change in changes
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
                    findings=findings,
                    contract_file=contract_file,
                )
            )
    finally:
        source.close()  # git's helper processes, after a --ref read
    return results
