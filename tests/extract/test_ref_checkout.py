"""The temporary checkout a code copy is extracted from at a ref (``--ref``, ``--new-since``,
``history``) holds a hostile commit's files within bounds: a blob of gigabytes, or thousands
of large ones, cannot fill the disk; a crafted path cannot leave the folder; the folder is
gone however the run ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.extract.checkouts import (
    commit_all,
    commit_with_pkg,
    crafted_tree,
    git_output,
    wiregate_root,
    write_files,
)
from wiregate.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and paths")

MIRRORS = """\
version = 1
{top}
[[repository]]
name = "gov"
checkout = "gov"
role = "producer"
{copies}
"""
TS_COPY = """
[[repository.copy]]
id = "ts"
schema = "rollout-wire"
kind = "typescript"
canonical_at = "#/$defs/DpoProvenance"
type = "T"
paths = ["a.ts"]
"""
PY_COPY = """
[[repository.copy]]
id = "py"
schema = "rollout-wire"
kind = "python"
canonical_at = "#/$defs/RolloutTreeRecord"
model = "m:M"
"""
TS_TYPE = 'export interface T { objective_score: { chosen: "yes"; rejected: 0 | 1 } }\n'
PY_MODEL = "from pydantic import BaseModel\n\n\nclass M(BaseModel):\n    task: str\n"


@pytest.fixture
def root(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wiregate root with an empty governed checkout ``gov``; temporary folders go to
    ``tmp_path/tmp``, so a test sees what is left there."""
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return wiregate_root(tmp_path, repo_root)


def _configure(root: Path, copies: str, top: str = "") -> None:
    text = MIRRORS.format(top=top, copies=copies)
    (root / "contracts/mirrors.toml").write_text(text, encoding="utf-8")


def _drift(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), "drift", *args])


def _error(result: Result) -> str:
    """The one error line of a run that exits 2, without wiregate's prefix."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.output
    return lines[0].removeprefix("wiregate: error: ")


def _left_behind(root: Path) -> list[str]:
    return sorted(p.name for p in (root.parent / "tmp").iterdir())


def test_a_file_over_max_ref_file_bytes_is_an_error_naming_it(root: Path) -> None:
    """A generated module of 2,001 bytes under a bound of 1,000: refused before a byte is
    written, never left out (the type would be extracted without it)."""
    gov = root / "gov"
    write_files(gov, {"a.ts": TS_TYPE, "gen.ts": "// " + "x" * 1997 + "\n"})
    commit_all(gov)
    _configure(root, TS_COPY, "max_ref_file_bytes = 1000")
    assert _error(_drift(root, "--ref", "HEAD")) == (
        f"{gov}@HEAD:gen.ts: 2001 bytes, over the limit of 1000 for one file written from git "
        "(max_ref_file_bytes in mirrors.toml)"
    )
    assert _left_behind(root) == []
    assert _drift(root).exit_code == 1  # the work tree holds the files: no bound to pass


def test_files_over_max_ref_bytes_in_all_are_an_error_naming_the_one_past_it(root: Path) -> None:
    gov = root / "gov"
    write_files(gov, {"m.py": PY_MODEL, "pad_a.py": "#" * 599 + "\n", "pad_b.py": "#" * 599 + "\n"})
    commit_all(gov)
    _configure(root, PY_COPY, "max_ref_bytes = 1000")
    total = len(PY_MODEL) + 1200
    assert _error(_drift(root, "--ref", "HEAD")) == (
        f"{gov}@HEAD:pad_b.py: 600 bytes, taking the files written from git to {total} bytes, "
        "over the limit of 1000 (max_ref_bytes in mirrors.toml)"
    )
    assert _left_behind(root) == []


def test_a_file_over_the_bound_behind_a_symbolic_link(root: Path) -> None:
    """A committed link is followed inside the commit: its target is written, and bounded."""
    gov = root / "gov"
    write_files(gov, {"a.ts": TS_TYPE, "big/gen.txt": "// " + "x" * 1997 + "\n"})
    (gov / "gen.ts").symlink_to("big/gen.txt")
    commit_all(gov)
    _configure(root, TS_COPY, "max_ref_file_bytes = 1000")
    assert _error(_drift(root, "--ref", "HEAD")) == (
        f"{gov}@HEAD:gen.ts: 2001 bytes, over the limit of 1000 for one file written from git "
        "(max_ref_file_bytes in mirrors.toml)"
    )


def test_a_bound_below_one_byte_is_a_configuration_error(root: Path) -> None:
    _configure(root, PY_COPY, "max_ref_bytes = 0")
    mirrors = root / "contracts/mirrors.toml"
    assert _error(_drift(root)) == f"{mirrors}: max_ref_bytes: 0 is less than the minimum of 1"


def test_a_crafted_tree_with_a_dot_dot_entry_writes_nothing_outside(root: Path) -> None:
    """``pkg/../../../evil.py`` (pkg's tree holds ``..``, which holds ``..``...) was written
    beside the temporary folder: a module wiregate's own Python could import."""
    gov = root / "gov"
    write_files(gov, {"m.py": PY_MODEL})
    commit_all(gov)
    evil = git_output(gov, "hash-object", "-w", "--stdin", data=b"print('owned')\n")
    tree = git_output(gov, "mktree", data=f"100644 blob {evil}\tevil.py\n".encode())
    for _ in range(3):
        tree = crafted_tree(gov, ("..", tree))
    commit = commit_with_pkg(gov, tree)
    _configure(root, PY_COPY)
    assert _error(_drift(root, "--ref", commit)) == (
        f"{gov}@{commit}:pkg/../../../evil.py: a committed path with a '.', '..' or empty "
        "component: refused"
    )
    assert not (root.parent / "evil.py").exists()
    assert _left_behind(root) == []


def test_a_crafted_tree_on_a_copy_s_path_is_an_error_not_a_crash(root: Path) -> None:
    """GitPython refuses to read such a tree: its ValueError was an internal error (exit 3)."""
    gov = root / "gov"
    write_files(gov, {"m.py": PY_MODEL})
    commit_all(gov)
    commit = commit_with_pkg(
        gov, crafted_tree(gov, ("..", git_output(gov, "rev-parse", "HEAD^{tree}")))
    )
    _configure(root, PY_COPY.replace('model = "m:M"', 'model = "pkg.m:M"'))
    assert _error(_drift(root, "--ref", commit)) == (
        f"pkg/m.py at {commit[:12]}: a tree git itself would refuse: "
        "Invalid repository path 'tree/..'"
    )


def test_typescript_and_python_copies_of_one_checkout_at_a_ref(root: Path) -> None:
    """Both write the checkout's root folder: the second language's files were never written
    (its materialisation counted as done), so its import failed at the ref alone."""
    gov = root / "gov"
    write_files(gov, {"a.ts": TS_TYPE, "m.py": PY_MODEL})
    commit_all(gov)
    _configure(root, TS_COPY + PY_COPY)
    outcomes = []
    for args in ([], ["--ref", "HEAD"]):
        result = _drift(root, "--format", "json", *args)
        copies = json.loads(result.stdout)["copies"]
        outcomes.append(
            (result.exit_code, [(c["copy"], c["verdict"], c["message"]) for c in copies])
        )
    expected = (1, [("ts", "breaking-drift", None), ("py", "breaking-drift", None)])
    assert outcomes == [expected, expected]


def test_the_temporary_checkout_goes_on_ctrl_c(root: Path, tmp_path: Path) -> None:
    """Interrupted while the model's import runs, the run exits 130 and leaves no folder."""
    gov = root / "gov"
    started = tmp_path / "started"
    write_files(gov, {
        "m.py": f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\n"
        "time.sleep(60)\n" + PY_MODEL,
    })  # fmt: skip
    commit_all(gov)
    _configure(root, PY_COPY)
    environ = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    process = subprocess.Popen(
        [sys.executable, "-m", "wiregate", "--root", str(root), "drift", "--ref", "HEAD"],
        env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not started.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), process.communicate()
    assert _left_behind(root) != []  # the checkout is there while the import runs
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert (process.returncode, stderr.decode()) == (130, "wiregate: interrupted\n")
    assert _left_behind(root) == []
