"""wiregate.gitsource.file_history: the commits that touched a file, through renames and
deletions, newest first."""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest

from wiregate.errors import UserError
from wiregate.gitsource import file_at, file_history, path_in_repo, resolve_commit

from .replay import commit_files, init_repo


def _history(
    repo: git.Repo, paths: list[str], ref: str = "HEAD"
) -> list[tuple[str, str, str, str | None]]:
    return [(r.subject, r.status, r.path, r.old_path) for r in file_history(repo, paths, ref)]


@pytest.fixture
def moved_then_deleted(tmp_path: Path) -> git.Repo:
    repo = init_repo(tmp_path / "repo")
    commit_files(repo, {"a/x.json": b"1"}, "add", "2026-07-01T00:00:00+0000")
    commit_files(repo, {"other.txt": b"-"}, "unrelated", "2026-07-01T00:01:00+0000")
    commit_files(repo, {"a/x.json": b"2"}, "change", "2026-07-01T00:02:00+0000")
    Path(repo.working_dir, "b").mkdir()
    repo.index.move(["a/x.json", "b/y.json"])
    repo.index.commit(
        "move", author_date="2026-07-01T00:03:00+0000", commit_date="2026-07-01T00:03:00+0000"
    )
    commit_files(repo, {"b/y.json": b"3"}, "change again", "2026-07-01T00:04:00+0000")
    repo.index.remove(["b/y.json"], working_tree=True)
    repo.index.commit(
        "drop the copy",
        author_date="2026-07-01T00:05:00+0000",
        commit_date="2026-07-01T00:05:00+0000",
    )
    commit_files(repo, {"other.txt": b"+"}, "later", "2026-07-01T00:06:00+0000")
    return repo


def test_follows_renames_back_from_the_current_path(moved_then_deleted: git.Repo) -> None:
    assert _history(moved_then_deleted, ["b/y.json"], "HEAD~2") == [
        ("change again", "modified", "b/y.json", None),
        ("move", "renamed", "b/y.json", "a/x.json"),
        ("change", "modified", "a/x.json", None),
        ("add", "added", "a/x.json", None),
    ]


def test_a_deleted_copy_is_followed_from_its_deletion(moved_then_deleted: git.Repo) -> None:
    history = file_history(moved_then_deleted, ["a/x.json", "b/y.json"])
    assert [(r.subject, r.status, r.path) for r in history] == [
        ("drop the copy", "deleted", "b/y.json"),
        ("change again", "modified", "b/y.json"),
        ("move", "renamed", "b/y.json"),
        ("change", "modified", "a/x.json"),
        ("add", "added", "a/x.json"),
    ]
    assert history[0].deleted and not history[1].deleted
    assert history[-1].date == "2026-07-01T00:00:00+00:00"


def test_a_rename_to_another_path_is_a_rename_not_a_deletion(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    commit_files(repo, {"a/x.json": b"1"}, "add", "2026-07-01T00:00:00+0000")
    Path(repo.working_dir, "elsewhere").mkdir()
    repo.index.move(["a/x.json", "elsewhere/z.json"])
    repo.index.commit(
        "move out", author_date="2026-07-01T00:01:00+0000", commit_date="2026-07-01T00:01:00+0000"
    )
    assert _history(repo, ["a/x.json"]) == [
        ("move out", "renamed", "elsewhere/z.json", "a/x.json"),
        ("add", "added", "a/x.json", None),
    ]


def test_first_existing_candidate_wins(moved_then_deleted: git.Repo) -> None:
    # At HEAD~2 both names are candidates; only b/y.json exists, so its lineage is walked.
    assert len(file_history(moved_then_deleted, ["a/x.json", "b/y.json"], "HEAD~2")) == 4


def test_never_committed(moved_then_deleted: git.Repo) -> None:
    assert file_history(moved_then_deleted, ["nope.json"]) == []


def test_unknown_ref(moved_then_deleted: git.Repo) -> None:
    with pytest.raises(UserError, match=r": unknown git ref 'v9'$"):
        file_history(moved_then_deleted, ["b/y.json"], "v9")


def test_file_at_and_path_in_repo(moved_then_deleted: git.Repo) -> None:
    commit = resolve_commit(moved_then_deleted, "HEAD~2")
    assert file_at(moved_then_deleted, commit, "b/y.json") == b"3"
    assert file_at(moved_then_deleted, commit, "a/x.json") is None
    assert file_at(moved_then_deleted, commit, "b") is None  # a folder is not a file
    root = Path(moved_then_deleted.working_dir)
    assert path_in_repo(moved_then_deleted, root / "b", "y.json") == "b/y.json"
    assert path_in_repo(moved_then_deleted, root, "/b/y.json") == "b/y.json"


def test_a_merge_that_resolves_the_file_is_a_revision(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    base = commit_files(repo, {"x.json": b"base"}, "base", "2026-07-01T00:00:00")
    branch = repo.create_head("side", base)
    main_tip = commit_files(repo, {"x.json": b"main"}, "on main", "2026-07-01T00:01:00")
    repo.head.reference = branch
    repo.head.reset(index=True, working_tree=True)
    side_tip = commit_files(repo, {"x.json": b"side"}, "on side", "2026-07-01T00:02:00")
    repo.head.reference = repo.heads["main"]
    repo.head.reset(index=True, working_tree=True)
    (Path(repo.working_dir) / "x.json").write_bytes(b"resolved")
    repo.index.add(["x.json"])
    repo.index.commit(
        "merge side", parent_commits=[main_tip, side_tip], author_date="2026-07-01T00:03:00"
    )
    assert _history(repo, ["x.json"]) == [
        ("merge side", "modified", "x.json", None),
        ("on side", "modified", "x.json", None),
        ("on main", "modified", "x.json", None),
        ("base", "added", "x.json", None),
    ]
    # A merge that took one side as it was is not listed again.
    commit_files(repo, {"y.txt": b"-"}, "unrelated", "2026-07-01T00:04:00")
    assert len(file_history(repo, ["x.json"])) == 4


def test_a_committed_symbolic_link_is_followed_inside_the_commit(tmp_path: Path) -> None:
    """A link's blob holds its target's name: read as the file, "real.json" was a schema."""
    repo = init_repo(tmp_path / "repo")
    root = Path(repo.working_dir)
    (root / "schemas").mkdir()
    (root / "schemas" / "real.json").write_bytes(b"{}")
    links = {
        "schemas/link.json": "real.json",
        "schemas/twice.json": "link.json",
        "schemas/up.json": "../../outside.json",
        "schemas/absolute.json": "/etc/passwd",
        "schemas/loop-a.json": "loop-b.json",
        "schemas/loop-b.json": "loop-a.json",
        "schemas/dangling.json": "missing.json",
    }
    for name, target in links.items():
        (root / name).symlink_to(target)
    repo.git.add("-A")
    repo.git.commit("-m", "links")
    commit = resolve_commit(repo, "HEAD")
    assert file_at(repo, commit, "schemas/link.json") == b"{}"
    assert file_at(repo, commit, "schemas/twice.json") == b"{}"
    assert file_at(repo, commit, "schemas/dangling.json") is None
    short = commit[:12]
    # git takes any blob under a link's mode: a target name of 5,000 bytes is not read
    (tmp_path / "target").write_bytes(b"x" * 5000)
    long_name = repo.git.hash_object("-w", str(tmp_path / "target"))
    repo.git.update_index("--add", "--cacheinfo", f"120000,{long_name},schemas/long.json")
    long_commit = repo.index.commit("a long link").hexsha
    with pytest.raises(UserError) as caught:
        file_at(repo, long_commit, "schemas/long.json")
    assert str(caught.value) == (
        f"schemas/long.json at {long_commit[:12]}: a symbolic link of 5000 bytes"
    )
    for name, message in [
        ("up", f"schemas/up.json at {short}: a symbolic link to '../../outside.json', outside "
         "the repository"),
        ("absolute", f"schemas/absolute.json at {short}: a symbolic link to '/etc/passwd', "
         "outside the repository"),
        ("loop-a", f"schemas/loop-a.json at {short}: too many levels of symbolic links"),
    ]:  # fmt: skip
        with pytest.raises(UserError) as caught:
            file_at(repo, commit, f"schemas/{name}.json")
        assert str(caught.value) == message


@pytest.mark.parametrize("ref", ["^HEAD", "^HEAD~1", "HEAD~1..HEAD", "HEAD...HEAD~1"])
def test_a_ref_that_names_no_single_commit_is_unknown(
    moved_then_deleted: git.Repo, ref: str
) -> None:
    # rev-parse prints an exclusion as "^<sha>", which was taken for a commit (exit 3)
    with pytest.raises(UserError) as caught:
        resolve_commit(moved_then_deleted, ref)
    assert str(caught.value).endswith(f": unknown git ref {ref!r}")


def test_a_date_older_than_the_reflog_names_no_commit(tmp_path: Path) -> None:
    """git answers HEAD@{1.year.ago} with the reflog's oldest entry and a warning: the
    comparison was made against a commit the ref never named at that date."""
    repo = init_repo(tmp_path / "repo")
    # git's own commit (the reflog's first entry from nothing), its date set
    date = "2026-07-01T00:00:00+0000"
    repo.git.execute(
        ["git", "-c", "user.name=a", "-c", "user.email=a@example.invalid", "commit",
         "--allow-empty", "-m", "only"],
        env={**os.environ, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date},
    )  # fmt: skip
    with pytest.raises(UserError) as caught:
        resolve_commit(repo, "HEAD@{2001-01-01}")
    assert str(caught.value) == (
        f"{repo.working_dir}: git ref 'HEAD@{{2001-01-01}}': log for 'HEAD' only goes back "
        "to Wed, 1 Jul 2026 00:00:00 +0000"
    )
    assert resolve_commit(repo, "HEAD@{0}") == repo.head.commit.hexsha
