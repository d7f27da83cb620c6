"""Reading files from any git ref through GitPython, without touching the work tree."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import git
from gitdb.exc import BadName, BadObject

from wiregate.errors import UserError

__all__ = ["open_repo", "read_at_ref", "resolve_commit"]


def open_repo(directory: str | Path) -> git.Repo:
    """The git repository at ``directory`` (its work tree root or any folder inside it)."""
    try:
        return git.Repo(directory, search_parent_directories=True)
    except git.NoSuchPathError:
        raise UserError(f"{directory}: no such directory") from None
    except git.InvalidGitRepositoryError:
        raise UserError(f"{directory}: not a git repository") from None


def resolve_commit(repo: git.Repo, ref: str) -> git.Commit:
    """The commit a ref names (branch, tag, sha, ``HEAD~2`` ...)."""
    try:
        return repo.commit(ref)
    except (BadName, BadObject, ValueError, git.BadName):
        raise UserError(f"{repo.working_dir}: unknown git ref {ref!r}") from None


def read_at_ref(directory: str | Path, ref: str, path: str) -> bytes:
    """The bytes of ``path`` (relative to the repository root) as committed at ``ref``."""
    repo = open_repo(directory)
    commit = resolve_commit(repo, ref)
    relative = PurePosixPath(path.lstrip("/")).as_posix()
    try:
        blob = commit.tree / relative
    except KeyError:
        raise UserError(
            f"{repo.working_dir}@{ref}:{relative}: path not found at that ref"
        ) from None
    if blob.type != "blob":
        raise UserError(f"{repo.working_dir}@{ref}:{relative}: is a directory, not a file")
    data: bytes = blob.data_stream.read()
    return data
