"""Every ref form git accepts, on a real repository; a ref git rejects is one exit-2 line.
Sources ending in ``#POINTER``, in files and at git refs."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from wiregate.cli import main

DAY = 24 * 3600
ANY: dict[str, Any] = {"$defs": {"X": {}}}
STRING: dict[str, Any] = {"$defs": {"X": {"type": "string"}}}
INTEGER: dict[str, Any] = {"$defs": {"X": {"type": "integer"}}}
DEFS = "2020-12 (detected: $defs at #/$defs)"
NO_SIGNAL = "2020-12 (default: no draft-specific keyword)"
NARROWED = (
    f"old: {DEFS}\nnew: {DEFS}\n"
    "error: type-narrowed at #/$defs/X -> #/$defs/X/type: type narrowed from any type to "
    "string (backward: no, forward: yes)\n"
    "INCOMPATIBLE (backward, strict): 1 change (1 error)\n"
)
SAME = f"old: {DEFS}\nnew: {DEFS}\ncompatible (backward, strict): no changes\n"


def _git(repo: Path, *args: str, when: float | None = None) -> str:
    env = dict(os.environ)
    if when is not None:  # the reflog records the committer date: HEAD@{yesterday} needs it
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = f"@{int(when)} +0000"
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()


def _commit(repo: Path, document: dict[str, Any], message: str, when: float) -> None:
    (repo / "s.json").write_text(json.dumps(document), encoding="utf-8")
    _git(repo, "add", "s.json", when=when)
    _git(repo, "commit", "-q", "-m", message, when=when)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: "accept anything" (three days ago), then "strings only" (now); a branch side@2
    ("integers only") visited once, so ``@{-1}`` names it; a tag v1 on the first commit."""
    root = tmp_path_factory.mktemp("refs") / "repo"
    root.mkdir()
    now = time.time()
    _git(root, "init", "-q", "-b", "main")
    _commit(root, ANY, "accept anything", now - 3 * DAY)
    _git(root, "tag", "v1")
    _commit(root, STRING, "strings only", now)
    _git(root, "checkout", "-q", "-b", "side@2")
    _commit(root, INTEGER, "integers only", now)
    _git(root, "checkout", "-q", "main")
    return root


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("ref", "out"),
    [
        ("HEAD@{yesterday}", NARROWED),
        ("main@{3.days.ago}", NARROWED),  # still the first commit (its reflog entry is older)
        ("HEAD~1", NARROWED),
        ("HEAD^", NARROWED),
        ("v1", NARROWED),
        ("v1^{commit}", NARROWED),
        (":/accept anything", NARROWED),
        ("HEAD^{/accept}", NARROWED),
        ("main^{commit}", SAME),
        ("HEAD@{0}", SAME),
        ("@", SAME),
    ],
)
def test_ref_forms_git_accepts(repo: Path, ref: str, out: str) -> None:
    assert run(f"{repo}@{ref}:s.json", f"{repo}@main:s.json") == (1 if out != SAME else 0, out, "")


def test_shas_and_the_previous_branch(repo: Path) -> None:
    first = _git(repo, "rev-parse", "v1")
    for sha in (first, first[:7]):
        assert run(f"{repo}@{sha}:s.json", f"{repo}@main:s.json") == (1, NARROWED, "")
    # @{-1} is side@2, a branch whose name holds an "@" too: integers only.
    for ref in ("@{-1}", "side@2"):
        code, out, err = run(f"{repo}@main:s.json", f"{repo}@{ref}:s.json", "--format", "json")
        assert (code, err) == (1, "")
        assert [c["id"] for c in json.loads(out)["changes"]] == ["type-changed"]


@pytest.mark.parametrize(
    "ref", ["HEAD@{999999}", "nope", ":/no commit says this", "-h", "--all", "HEAD^{blob}", "@{-9}"]
)
def test_a_ref_git_rejects_is_one_exit_2_line(repo: Path, ref: str) -> None:
    spec = f"{repo}@{ref}:s.json"
    assert run(spec, f"{repo}@main:s.json") == (
        2,
        "",
        f"wiregate: error: {spec}: unknown git ref {ref!r}\n",
    )


@pytest.mark.parametrize(("ref", "kind"), [("v1^{tree}", "tree"), ("HEAD:s.json", "blob")])
def test_a_ref_to_what_is_not_a_commit_says_what_it_names(repo: Path, ref: str, kind: str) -> None:
    """git accepts it, but files are read at commits (it was "unknown git ref")."""
    spec = f"{repo}@{ref}:s.json"
    if ":" in ref:  # a blob's sha, as `git rev-parse HEAD:s.json` gives it
        ref = _git(repo, "rev-parse", ref)
        spec = f"{repo}@{ref}:s.json"
    assert run(spec, f"{repo}@main:s.json") == (
        2,
        "",
        f"wiregate: error: {spec}: git ref {ref!r} names a {kind}, not a commit\n",
    )


def test_a_pointer_after_a_git_source(repo: Path) -> None:
    old, new = f"{repo}@HEAD~1:s.json#/$defs/X", f"{repo}@HEAD:s.json#/$defs/X"
    assert run(old, new) == (1, NARROWED, "")


RECORD = {"type": "object", "properties": {"id": {"type": "integer"}}}
COPY = {"type": "object", "properties": {"id": {"type": "number"}}}
WIDENED = (
    f"old: {DEFS}\nnew: {NO_SIGNAL}\n"
    "warning: type-widened at #/$defs/Rec/properties/id/type -> #/properties/id/type: "
    "type widened from integer to number (backward: yes, forward: no)\n"
    "compatible (backward, strict): 1 change (1 warning)\n"
)


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.json").write_text(json.dumps({"$defs": {"Rec": RECORD}}), "utf-8")
    (tmp_path / "copy.json").write_text(json.dumps(COPY), encoding="utf-8")
    (tmp_path / "odd#name.json").write_text(json.dumps(COPY), encoding="utf-8")
    return tmp_path


def test_file_sources_with_a_pointer(files: Path) -> None:
    assert run("contract.json#/$defs/Rec", "copy.json") == (0, WIDENED, "")
    assert run("contract.json#/$defs/Rec", "copy.json#") == (0, WIDENED, "")
    assert run("contract.json#/%24defs/Rec", "odd#name.json") == (0, WIDENED, "")
    # A file whose name holds "#" works as typed, and with a pointer after it.
    assert run("odd#name.json#/properties/id", "copy.json#/properties/id")[:2] == (
        0,
        f"old: {NO_SIGNAL}\nnew: {NO_SIGNAL}\ncompatible (backward, strict): no changes\n",
    )


def test_a_pointer_copied_from_the_findings_names_what_they_name(files: Path) -> None:
    """Findings show pointers unencoded: one through a name holding "%" (here "p%0Aq", not
    the newline %0A encodes) was "points to nothing" when given back as a source's #POINTER."""
    for name, kind in (("old.json", "string"), ("new.json", "integer")):
        document = {"properties": {"p%0Aq": {"properties": {"x": {"type": kind}}}}}
        (files / name).write_text(json.dumps(document), encoding="utf-8")
    code, out, _ = run("old.json", "new.json")
    shown = "#/properties/p%0Aq"
    assert code == 1 and f"at {shown}/properties/x/type:" in out
    encoded = "#/properties/p%250Aq"
    assert run(f"old.json{shown}", f"new.json{shown}") == run(
        f"old.json{encoded}", f"new.json{encoded}"
    )
    assert run(f"old.json{shown}", f"new.json{shown}")[0] == 1


def test_def_is_the_same_pointer_on_both_sides(files: Path) -> None:
    (files / "new.json").write_text(json.dumps({"$defs": {"Rec": COPY}}), encoding="utf-8")
    by_def = run("--def", "Rec", "contract.json", "new.json")
    assert by_def == run("contract.json#/$defs/Rec", "new.json#/$defs/Rec")
    assert by_def[0] == 0


def test_def_and_a_source_pointer_conflict(files: Path) -> None:
    assert run("--def", "Rec", "contract.json", "copy.json#/properties") == (
        2,
        "",
        "wiregate: error: --def Rec cannot be combined with a #POINTER (copy.json#/properties)\n",
    )


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("copy.json#/nope", "copy.json#/nope: schema location '#/nope' points to nothing"),
        (
            "copy.json#/properties/i~2d",
            "copy.json#/properties/i~2d: schema location '#/properties/i~2d' is malformed: "
            "holds a ~ that is neither ~0 nor ~1",
        ),
        ("copy.json#/type", "copy.json#/type: '#/type' is not a schema"),
        ("missing.json#/x", "missing.json#/x: no such file"),
    ],
)
def test_bad_pointers_are_one_exit_2_line(files: Path, new: str, message: str) -> None:
    assert run("contract.json#/$defs/Rec", new) == (2, "", f"wiregate: error: {message}\n")


def test_an_unknown_ref_in_a_shallow_clone_says_so(repo: Path, tmp_path: Path) -> None:
    """CI checks out one commit: ``--new-since origin/main`` was just "unknown git ref"."""
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "main", f"file://{repo}", str(shallow)],
        check=True, capture_output=True,
    )  # fmt: skip
    spec = f"{shallow}@v1:s.json"
    assert run(spec, f"{shallow}@HEAD:s.json") == (
        2,
        "",
        f"wiregate: error: {spec}: unknown git ref 'v1' (a shallow clone: fetch the ref, `git "
        "fetch origin main`, or clone with fetch-depth: 0)\n",
    )
