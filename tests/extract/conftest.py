"""Throwaway checkouts of the real producer's TypeScript package and the real consumer's
Pydantic models (``../shared/corpus/code``), in the work tree or committed revision by
revision, laid out as the real repositories."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import git
import pytest

from contracts import Contract, locate

#: wasmagent-js commits that changed RolloutExporter.ts or RolloutSFTAnnotator.ts, in order
#: (1e83a05, "biome auto-fix", sorted the imports 842dfa5 wrote).
WASMAGENT = ["711b817", "842dfa5", "1e83a05", "b0d9e2d", "31af5ae", "8c9cd5d", "6a62876"]
#: trace-pipeline commits that changed evomerge/schemas, in order.
TRACE = ["556ef10", "63fd741", "692ee62"]
AUTHOR = git.Actor("Replay", "replay@example.invalid")


@pytest.fixture(scope="session")
def contract(repo_root: Path) -> Contract:
    return locate(repo_root)


def _corpus_file(corpus_dir: Path, repository: str, commit: str, suffix: str) -> Path:
    (found,) = (corpus_dir / "code" / repository).glob(f"*-{commit}-{suffix}")
    return found


def lay_out_wasmagent(corpus_dir: Path, commit: str, root: Path) -> Path:
    """``packages/core`` and ``tsconfig.base.json`` of wasmagent-js at ``commit``."""
    if (root / "packages").exists():
        shutil.rmtree(root / "packages")
    root.mkdir(parents=True, exist_ok=True)
    tarball = _corpus_file(corpus_dir, "wasmagent-js", commit, "packages-core.tar.gz")
    with tarfile.open(tarball) as archive:
        archive.extractall(root, filter="data")
    return root


def lay_out_trace(corpus_dir: Path, commit: str, root: Path) -> Path:
    """``evomerge/schemas/*.py`` of trace-pipeline at ``commit`` (an empty evomerge/__init__)."""
    schemas = root / "evomerge" / "schemas"
    schemas.mkdir(parents=True, exist_ok=True)
    (root / "evomerge" / "__init__.py").write_text("", encoding="utf-8")
    for name in ("__init__", "rollout", "training", "compliance"):
        source = _corpus_file(corpus_dir, "trace-pipeline", commit, f"{name}.py")
        shutil.copyfile(source, schemas / f"{name}.py")
    return root


def _replay(root: Path, commits: list[str], lay_out: object, corpus_dir: Path) -> Path:
    repo = git.Repo.init(root, initial_branch="main")
    for minute, commit in enumerate(commits):
        lay_out(corpus_dir, commit, root)  # type: ignore[operator]
        # The tarballs give every file the same mtime: git's stat cache would take an edit of
        # the same size for no change, so the index is rebuilt from the content.
        if minute:
            repo.git.rm("-r", "--cached", "-q", ".")
        repo.git.add("--all")
        date = f"{1_782_864_000 + 60 * minute} +0000"
        repo.index.commit(
            f"orig {commit}", author=AUTHOR, committer=AUTHOR, author_date=date, commit_date=date
        )
        repo.create_tag(f"orig-{commit}")
    repo.close()
    return root


@pytest.fixture(scope="session")
def code_repos(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both repositories' real code, one commit per real revision, tagged ``orig-<commit>``."""
    base = tmp_path_factory.mktemp("code-repos")
    return {
        "wasmagent-js": _replay(base / "wasmagent-js", WASMAGENT, lay_out_wasmagent, corpus_dir),
        "trace-pipeline": _replay(base / "trace-pipeline", TRACE, lay_out_trace, corpus_dir),
    }
