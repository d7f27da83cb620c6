"""Finding and reading a copy of the contract inside a checkout: in its work tree, or at a git
ref through GitPython without touching the work tree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from wiregate.drift.config import CopySpec
from wiregate.errors import UserError
from wiregate.files import DEFAULT_MAX_BYTES, NotReadable, read_regular

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

    def find(self, spec: CopySpec) -> FoundCopy | None:
        """The first of the copy's candidate paths that exists, read."""

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        """One line saying none of the candidates exists."""

    def close(self) -> None:
        """Release what reading needed (git's helper processes)."""


class WorkTree:
    """Files as they are on disk (no git needed: an installed site-packages works too)."""

    def __init__(
        self, checkout: Path, max_bytes: int = DEFAULT_MAX_BYTES, config: str = "mirrors.toml"
    ) -> None:
        self.checkout = checkout
        self.max_bytes = max_bytes
        self.config = config  # names the file in errors about a configured path

    def find(self, spec: CopySpec) -> FoundCopy | None:
        root = os.path.realpath(self.checkout)
        for index, candidate in enumerate(spec.paths):
            path = self.checkout / candidate
            if not os.path.lexists(path):
                continue
            # A configured path must stay inside the checkout once its symlinks are resolved:
            # a link to /etc/passwd or /dev/zero is a configuration problem, not a copy.
            real = os.path.realpath(path)
            if os.path.commonpath([root, real]) != root:
                raise UserError(
                    f"{self.config}: {spec.path_key(index)}: {candidate!r} resolves to {real}, "
                    f"outside the checkout {self.checkout}"
                )
            if not os.path.exists(real) or os.path.isdir(real):
                continue  # a dangling link or a folder: no copy there
            try:
                # Resolved already: O_NOFOLLOW refuses a link swapped in meanwhile.
                data = read_regular(real, self.max_bytes, follow=False)
            except NotReadable as exc:
                raise UserError(f"{path}: {exc}") from None
            return FoundCopy(candidate, data, str(path))
        return None

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        return f"{self.checkout}: copy {copy_id!r} not found (tried: {', '.join(candidates)})"

    def close(self) -> None:
        pass


class GitTree:
    """Files as committed at a ref; one-line UserError for not-a-repository or unknown ref."""

    def __init__(self, checkout: Path, ref: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        # GitPython is imported only when a ref is read: it would double the start-up time of
        # every plain `wiregate drift` run in a pre-commit hook.
        from wiregate.gitsource import open_repo, resolve_commit

        self.checkout = checkout
        self.ref = ref
        self.max_bytes = max_bytes
        self.repo: git.Repo = open_repo(checkout)
        try:
            self.commit = resolve_commit(self.repo, ref)
        except UserError:
            self.repo.close()
            raise

    def find(self, spec: CopySpec) -> FoundCopy | None:
        from wiregate.gitsource import file_at, path_in_repo

        for candidate in spec.paths:
            path = path_in_repo(self.repo, self.checkout, candidate)
            data = file_at(self.repo, self.commit, path, self.max_bytes)
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
