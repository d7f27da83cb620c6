"""Throwaway git repositories, and replays of the real schema histories in
``../shared/corpus/schemas`` (commit by commit, at their original paths)."""

from __future__ import annotations

import json
from pathlib import Path

import git

#: The order the real commits were made in. The corpus index sorts commits of the same day by
#: hash; their content and subjects give the real order: 842dfa5 wrote the long one-line
#: arrays that 1e83a05 ("biome auto-fix") wrapped and bcdd2be extends; bbf64c7 broke the
#: training-record JSON that 33b8735 ("training-record schema fix") repaired; b1750b5 ("add
#: tool_call_sequence to schema required array") added the key that 1947f4a (regenerated
#: from the models) only moved to the end of `required`.
REPLAY_ORDER = {
    "wasmagent-js": [
        "842dfa5",
        "1e83a05",
        "bbf64c7",
        "33b8735",
        "bcdd2be",
        "1e0fcfa",
        "cfebd44",
        "8c9cd5d",
    ],
    "trace-pipeline": ["8679835", "755234b", "692ee62", "b1750b5", "1947f4a"],
}

AUTHOR = git.Actor("Replay", "replay@example.invalid")


def commit_files(repo: git.Repo, files: dict[str, bytes], message: str, date: str) -> git.Commit:
    """Write ``files`` (path -> bytes) into the work tree and commit them."""
    root = Path(repo.working_dir)
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    repo.index.add(list(files))
    return repo.index.commit(
        message, author=AUTHOR, committer=AUTHOR, author_date=date, commit_date=date
    )


def init_repo(directory: Path) -> git.Repo:
    directory.mkdir(parents=True, exist_ok=True)
    return git.Repo.init(directory, initial_branch="main")


def replay(corpus_dir: Path, name: str, directory: Path, upto: str | None = None) -> git.Repo:
    """A repository named like the real ``name`` holding its schema revisions, one commit per
    real commit (files at their original paths, original subjects and dates)."""
    index = json.loads((corpus_dir / "schemas" / "index.json").read_text(encoding="utf-8"))
    entries = [e for e in index["entries"] if e["repo"] == f"WasmAgent/{name}"]
    repo = init_repo(directory)
    for minute, short in enumerate(REPLAY_ORDER[name]):
        in_commit = [e for e in entries if e["commit"].startswith(short)]
        files = {e["path_in_repo"]: (corpus_dir / e["file"]).read_bytes() for e in in_commit}
        date = f"{in_commit[0]['date']}T12:{minute:02d}:00+0000"
        commit_files(repo, files, in_commit[0]["commit_subject"], date)
        repo.create_tag(f"orig-{short}")  # the real commit, by its real short hash
        if upto is not None and short == upto:
            break
    return repo
