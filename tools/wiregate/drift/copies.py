"""Finding and reading a copy of the contract inside a checkout: in its work tree, or at a git
ref through GitPython without touching the work tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from wiregate.errors import UserError

if TYPE_CHECKING:
    import git

__all__ = ["CopySource", "FoundCopy", "GitTree", "WorkTree"]


@dataclass(frozen=True)
class FoundCopy:
    path: str  # the candidate that matched, relative to the checkout
    data: bytes
    label: str  # how error messages name it


class CopySource(Protocol):
    """Where the files of one checkout are read from."""

    def find(self, candidates: tuple[str, ...]) -> FoundCopy | None:
        """The first candidate that exists, read."""

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        """One line saying none of the candidates exists."""

    def close(self) -> None:
        """Release what reading needed (git's helper processes)."""


class WorkTree:
    """Files as they are on disk (no git needed: an installed site-packages works too)."""

    def __init__(self, checkout: Path) -> None:
        self.checkout = checkout

    def find(self, candidates: tuple[str, ...]) -> FoundCopy | None:
        for candidate in candidates:
            path = self.checkout / candidate
            if path.is_file():
                try:
                    data = path.read_bytes()
                except OSError as exc:
                    raise UserError(f"{path}: cannot read: {exc.strerror}") from None
                return FoundCopy(candidate, data, str(path))
        return None

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        return f"{self.checkout}: copy {copy_id!r} not found (tried: {', '.join(candidates)})"

    def close(self) -> None:
        pass


class GitTree:
    """Files as committed at a ref; one-line UserError for not-a-repository or unknown ref."""

    def __init__(self, checkout: Path, ref: str) -> None:
        # GitPython is imported only when a ref is read: it would double the start-up time of
        # every plain `wiregate drift` run in a pre-commit hook.
        from wiregate.gitsource import open_repo, resolve_commit

        self.checkout = checkout
        self.ref = ref
        self.repo: git.Repo = open_repo(checkout)
        try:
            self.commit = resolve_commit(self.repo, ref)
        except UserError:
            self.repo.close()
            raise

    def find(self, candidates: tuple[str, ...]) -> FoundCopy | None:
        from wiregate.gitsource import file_at, path_in_repo

        for candidate in candidates:
            path = path_in_repo(self.repo, self.checkout, candidate)
            data = file_at(self.repo, self.commit, path)
            if data is not None:
                return FoundCopy(candidate, data, f"{self.checkout}@{self.ref}:{candidate}")
        return None

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        return (
            f"{self.checkout}@{self.ref}: copy {copy_id!r} not found at that ref "
            f"(tried: {', '.join(candidates)})"
        )

    def close(self) -> None:
        self.repo.close()
