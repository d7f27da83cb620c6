"""The schema of a code copy (an exported TypeScript type, a Python class), extracted from the
checkout (or from the files committed at a ref) with the language's own tools, so the gate
judges it exactly like a schema copy."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiregate.drift.config import CopySpec
from wiregate.drift.copies import CodeRoot
from wiregate.drift.result import Verdict
from wiregate.errors import UserError

if TYPE_CHECKING:
    from wiregate.diff import Change
    from wiregate.drift.check import Judgement
    from wiregate.drift.findings import Location
    from wiregate.extract.typescript import Extracted

__all__ = ["CodeCopies", "code_reproduce_command", "judge_code"]

_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


def _is_ts_input(name: str) -> bool:
    """What a TypeScript program reads of a checkout: sources and declarations, the
    ``package.json`` files and the tsconfig files (what they extend under another name is
    followed by ``CodeRoot.materialise_extends``). Not every JSON file: a lock file or a
    data fixture is no input, and a monorepo holds thousands."""
    return name.endswith(_TS_SUFFIXES) or name == "package.json" or _is_config(name)


def _is_config(name: str) -> bool:
    return name.endswith(".json") and name.startswith(("tsconfig", "jsconfig"))


def _is_python(name: str) -> bool:
    return name.endswith((".py", ".pyi"))


class CodeCopies:
    """Extracts the code copies of one checkout, each batch in one subprocess: the TypeScript
    types declared in one file, the Python classes under one ``python_path`` and mode."""

    def __init__(self, root: CodeRoot, specs: Sequence[CopySpec]) -> None:
        self.root = root
        self.specs = [spec for spec in specs if spec.code]
        self._done: dict[tuple[str, str], Extracted | UserError] = {}

    def schema(self, spec: CopySpec, path: str) -> dict[str, Any]:
        """The schema of ``spec``, declared in (TypeScript) or imported from (Python) the file
        at ``path`` (relative to the checkout); a one-line UserError when it cannot be had."""
        key = (path, spec.name if spec.kind == "typescript" else f"{spec.model}|{spec.mode}")
        if key not in self._done:
            if spec.kind == "typescript":
                self._typescript(path)
            else:
                self._python(spec, path)
        outcome = self._done[key]
        if isinstance(outcome, UserError):
            raise outcome
        return outcome.schema

    def locations(self, spec: CopySpec, path: str) -> Callable[[Change], Location | None]:
        """Where a change of the schema of ``spec`` is declared in the checkout: the line and
        column of the TypeScript property or Python field (or of the type or class), or of
        the nearest declared ancestor. A change about one name in ``required`` is placed at
        that property when the copy declares it."""
        from wiregate.drift.findings import Location
        from wiregate.pointer import PointerError, join, split

        self.schema(spec, path)
        key = (path, spec.name if spec.kind == "typescript" else f"{spec.model}|{spec.mode}")
        outcome = self._done[key]

        def locate(change: Change) -> Location | None:
            if isinstance(outcome, UserError):
                return None
            pointer = change.new_pointer
            try:
                tokens = split(pointer)
            except PointerError:
                return None
            if tokens and tokens[-1] == "required" and isinstance(change.subject, str):
                named = join("#", *tokens[:-1], "properties", change.subject)
                if named in outcome.positions:
                    return Location(*outcome.positions[named])
            at = outcome.locate(pointer)
            return None if at is None else Location(*at)

        return locate

    def files(self, spec: CopySpec, path: str) -> tuple[str, ...]:
        """The files (relative to the checkout) the schema of ``spec`` came from."""
        self.schema(spec, path)
        key = (path, spec.name if spec.kind == "typescript" else f"{spec.model}|{spec.mode}")
        outcome = self._done[key]
        return () if isinstance(outcome, UserError) else outcome.files

    def _typescript(self, path: str) -> None:
        from wiregate.extract.typescript import extract_types

        names = sorted({s.name for s in self.specs if s.kind == "typescript" and path in s.paths})
        self._materialise_typescript(path)
        try:
            found: dict[str, Extracted | UserError] = dict(
                extract_types(self.root.path, path, names)
            )
        except UserError as exc:
            found = dict.fromkeys(names, exc)
        for name, outcome in found.items():
            self._done[path, name] = self._named(outcome)

    def _materialise_typescript(self, path: str) -> None:
        """At a ref: every TypeScript file and config of the checkout, as committed. The folder
        of the nearest tsconfig was not enough: an import from outside it (``../../shared``)
        or a tsconfig ``extends`` under another name went missing at the ref alone, and the
        same commit extracted differently there and in the work tree."""
        self.root.materialise("", True, _is_ts_input)
        self.root.materialise_extends(_is_config)

    def _python(self, spec: CopySpec, path: str) -> None:
        from wiregate.extract.python import extract_models

        batch = [
            s
            for s in self.specs
            if s.kind == "python" and (s.python_path, s.mode) == (spec.python_path, spec.mode)
        ]
        models = sorted({s.model or "" for s in batch})
        # At a ref: every module under the python_path, as committed (a sibling package the
        # models import, ``common.base``, went missing when only their own package was).
        base = "" if spec.python_path in ("", ".") else spec.python_path.strip("/")
        self.root.materialise(base, True, _is_python)
        try:
            found: dict[str, Extracted | UserError] = dict(
                extract_models(self.root.path, spec.python_path, models, spec.mode or "")
            )
        except UserError as exc:
            found = dict.fromkeys(models, exc)
        for s in batch:
            for candidate in s.paths:
                self._done[candidate, f"{s.model}|{s.mode}"] = self._named(found[s.model or ""])

    def _named(self, outcome: Extracted | UserError) -> Extracted | UserError:
        return self.root.named(outcome) if isinstance(outcome, UserError) else outcome


def code_reproduce_command(
    repository: str, spec: CopySpec, checkout: Path, commit: str | None
) -> str:
    """The command that gives the same changes for a code copy: the gate on that copy alone
    (``wiregate diff`` reads schema files, not types)."""
    import shlex

    from wiregate.drift.check import _shown

    command = ["wiregate", "drift", "--repo", f"{repository}={_shown(checkout)}", "--copy", spec.id]
    if commit:
        command += ["--ref", commit]
    return shlex.join(command)


def judge_code(
    canonical: Mapping[str, Any],
    extracted: Mapping[str, Any],
    spec: CopySpec,
    policy: str,
    *,
    label: str,
    canonical_at: str | None = None,
    canonical_origin: str = "canonical contract",
) -> Judgement:
    """:func:`~wiregate.drift.check.judge` for a code copy, through its language's lens: the
    lens findings come first, and a copy identical but for them is equivalent."""
    from wiregate.drift.check import judge
    from wiregate.extract.lenses import apply_lenses

    at = spec.canonical_at if canonical_at is None else canonical_at
    document, lensed = apply_lenses(spec.kind, spec.mode, spec.direction, canonical, at, extracted)
    verdict, changes, failed = judge(
        canonical,
        document,
        spec,
        policy,
        label=label,
        canonical_at=canonical_at,
        canonical_origin=canonical_origin,
    )
    if lensed and verdict is Verdict.IDENTICAL:
        verdict = Verdict.EQUIVALENT
    return verdict, (*lensed, *changes), failed
